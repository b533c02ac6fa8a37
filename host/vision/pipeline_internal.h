/*
 * The vision pipeline's state, shared by its two files: pipeline.c (the
 * source, the threads, opening and closing) and pipeline_use.c (what
 * skills, pictures, the web UI and the report read from it).
 */
#ifndef ALOFT_VISION_PIPELINE_INTERNAL_H
#define ALOFT_VISION_PIPELINE_INTERNAL_H

#include "vision/h264_feed.h"
#include "vision/pipeline.h"
#include "vision/track.h"

#include <pthread.h>
#include <stdatomic.h>

struct vision_pipeline {
    atomic_int refs;      /* vision_pipeline_ref; the struct is freed at 0 */
    vision_detector *det; /* NULL: a camera without a detector */
    vision_tracker *tracker;
    vision_capture *cap; /* video, webcam, stream; NULL for a still image or sim */
    h264_feed *feed;     /* the Tello's stream, received by us (h264_feed.h) */
    vision_frame still;
    bool is_still, sim;
    double fps; /* video files are paced at their frame rate; 0 = live */
    int timeout_ms;
    char desc[300];
    char source[160]; /* as the user named it */

    pthread_mutex_t mu;
    pthread_cond_t cond; /* any change: frame, result, end, stop */
    pthread_t capture_thread, vision_thread;
    bool capture_started, vision_started;
    bool stop;
    bool closed; /* vision_pipeline_close ran: no frames any more */

    vision_frame slot; /* the newest captured frame, waiting for the detector */
    bool slot_full;
    bool capture_ended, vision_ended;
    char source_error[256];
    char decoder_error[256]; /* the feed's decoder did not open: why */

    vision_object work[VISION_MAX_OBJECTS]; /* the vision thread's own */
    vision_object result[VISION_MAX_OBJECTS];
    int n_result;
    double result_t;
    long result_seq;
    vision_frame result_frame;
    char detect_error[256];

    bool motion_marked;
    double motion_end_ms;
    vision_stats stats;
    double start_ms;       /* when the pipeline opened */
    double first_frame_ms; /* when the first frame was captured, -1 before */
    double last_frame_ms;  /* the latest, -1 before */
    long used;             /* observations and pictures served */
    double age_sum_ms, age_max_ms;
};

/* Waits on the pipeline's condition until DEADLINE_MS (monotonic). */
void pipeline_wait_until(vision_pipeline *p, double deadline_ms);

/* What the camera has (not) sent, for a message after "camera SOURCE: "
 * (lock held): nothing since it started, no parameter sets, dark since
 * its last frame. */
void pipeline_silence(vision_pipeline *p, char *out, size_t outlen);

#endif
