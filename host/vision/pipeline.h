/*
 * The vision pipeline of a mission: a frame source, a detector, colours and
 * instance ids, and the `observe` callback of host/skills/skills.h on top.
 *
 * Frame sources: an image file (a still camera: the same picture, freshly
 * stamped ten times a second), a video file (played at its own frame rate),
 * a webcam (webcam:N), a network stream such as the Tello's H.264 over UDP
 * (udp://..., tello[:PORT]); or none, for the sim detector, which sees the
 * simulator's world directly. The Tello's stream (tello[:PORT]) is received
 * by vision/h264_feed.h from the moment the pipeline opens (open it before
 * `streamon`) and decoded from its first parameter sets on; the pipeline
 * does not wait for its first frame, and reopens the decoder when the
 * stream breaks.
 *
 * Threads: a capture thread reads frames as they come and keeps only the
 * newest; a vision thread takes the newest frame, detects, colours and
 * tracks, and publishes the result with the frame's capture time. Frames
 * that arrive while the detector is busy are dropped, so vision never lags
 * behind the camera.
 *
 * Freshness: a vision skill must see the world as it is after the last
 * motion. vision_pipeline_observe waits for a result whose frame was
 * captured after the last vision_pipeline_motion_ended mark, or, when no
 * mark was ever given, after the call itself; it gives up after the frame
 * timeout with a clear error.
 *
 * A mission (aloft run) wires it up like this:
 *
 *   vision_options vo;  vision_options_init(&vo);
 *   ... in the getopt loop, over a table holding VISION_RUN_OPTIONS:
 *   r = vision_options_parse(&vo, opt, optarg, err, sizeof err);  // 1 mine, -1 bad
 *   ... after it: vision_options_check(&vo, ...); with --drone tello and no
 *   --source, vo.source = "tello:<video port>" (after the driver's streamon);
 *   p = vision_pipeline_open(&vo, sim_observe, sim, err, sizeof err);
 *   ctx.observe = vision_pipeline_observe;  ctx.observe_ud = p;
 *   ... after each drone motion (optional): vision_pipeline_motion_ended(p);
 *   vision_pipeline_close(p);
 */
#ifndef ALOFT_VISION_PIPELINE_H
#define ALOFT_VISION_PIPELINE_H

#include "vision/detector.h"
#include "vision/options.h"

#include <stdbool.h>

typedef struct vision_pipeline vision_pipeline;

/* Opens the pipeline O describes: loads the detector, opens the source and
 * starts the threads. For --detector sim, SIM_OBSERVE (the simulator's
 * projection) is wrapped as the detector and no thread runs. Returns NULL
 * with a message for a bad model, a source that does not open, or a video
 * with no frames. */
vision_pipeline *vision_pipeline_open(const vision_options *o, vision_observe_fn sim_observe,
                                      void *sim_ud, char *err, size_t errlen);

/* A camera without a detector (the Tello's stream when no --detector was
 * given): frames for pictures and the web UI, no objects. SOURCE as for
 * --source. Returns NULL with a message. */
vision_pipeline *vision_pipeline_open_camera(const char *source, int frame_timeout_ms, char *err,
                                             size_t errlen);

/* The moment the camera was switched on (a Tello's `streamon`, clock_now_ms),
 * from which the stats' first_frame_ms counts instead of P's opening. */
void vision_pipeline_set_start(vision_pipeline *p, double ms);

/* Whether P runs a detector (its observe gives objects). */
bool vision_pipeline_detects(const vision_pipeline *p);

/* Whether P has a camera with pixels (not the sim detector's projection). */
bool vision_pipeline_has_pixels(const vision_pipeline *p);

/* Copies into OUT the camera frame the mission sees now: the frame of the
 * newest detection (or the newest frame, without a detector), captured
 * after the last motion, waiting as vision_pipeline_observe does. Returns
 * 0, or -1 with a message (no frame yet, the camera dark or ended, no
 * pixels: the sim detector). Thread-safe. */
int vision_pipeline_picture(vision_pipeline *p, vision_frame *out, char *err, size_t errlen);

/* The observe callback for skill_ctx (UD is the pipeline): fills OUT with up
 * to MAX objects of the first result captured after the last motion (see
 * above). Returns how many, or -1 with a message (timeout, source ended,
 * detector error). Thread-safe. */
int vision_pipeline_observe(void *ud, vision_object *out, int max, char *err, size_t errlen);

/* vision_pipeline_observe, also telling the capture time of the frame the
 * objects come from (T_CAPTURE may be NULL). */
int vision_pipeline_observe_at(vision_pipeline *p, vision_object *out, int max, double *t_capture,
                               char *err, size_t errlen);

/* Records that a drone motion has just ended: later observations must come
 * from frames captured after now. Thread-safe; cheap. */
void vision_pipeline_motion_ended(vision_pipeline *p);

/* The newest result without waiting (for the web UI): up to MAX objects, and
 * the capture time of its frame in *T_MS (-1 if none yet). With JPEG non-NULL,
 * also that frame with the boxes drawn and labelled, as a malloc'd JPEG
 * (NULL for sim, which has no pixels). Returns how many objects. Thread-safe. */
int vision_pipeline_latest(vision_pipeline *p, vision_object *out, int max, double *t_ms,
                           unsigned char **jpeg, size_t *jpeg_len);

typedef struct vision_stats {
    long captured;      /* frames read from the source */
    long processed;     /* frames the detector ran on */
    long dropped;       /* frames replaced by a newer one before processing */
    double infer_ms;    /* last inference */
    double overhead_ms; /* last letterbox + decode + NMS + colour + tracking */
    bool ended;         /* the source has no more frames (or the pipeline closed) */
    /* Filled by vision_pipeline_stats: */
    long used;          /* frames served to skills (observe, picture) */
    double age_ms_mean; /* their age (now - capture) when served; 0 if none */
    double age_ms_max;
    double first_frame_ms;    /* from the pipeline's open to its first frame, -1 if none */
    double detect_fps;        /* detections per second since the first frame */
    bool feed;                /* the source is the Tello's stream (h264_feed.h): */
    double keyframe_frame_ms; /* from its first parameter sets to the first frame, -1 */
    long datagrams;           /* received */
    long datagrams_dropped;   /* lost because the decoder fell behind */
    long datagrams_skipped;   /* passed over while waiting for the first keyframe */
} vision_stats;

void vision_pipeline_stats(vision_pipeline *p, vision_stats *out);

/* The camera as the user named it ("tello:11111", "photo.ppm"), "" for
 * the sim detector. */
const char *vision_pipeline_source(const vision_pipeline *p);

/* What the pipeline runs, e.g. "yolov5 on video.mp4". */
const char *vision_pipeline_describe(const vision_pipeline *p);

/* Another holder of P (the web UI's camera view): P's memory stays until
 * each holder has let go (vision_pipeline_unref; vision_pipeline_close
 * lets go of the opener's). A closed pipeline has no frames. */
vision_pipeline *vision_pipeline_ref(vision_pipeline *p);
void vision_pipeline_unref(vision_pipeline *p);

/* Stops the threads and frees everything (the memory once no holder is
 * left). NULL is fine. */
void vision_pipeline_close(vision_pipeline *p);

#endif
