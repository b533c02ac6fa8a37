/*
 * What the vision pipeline gives its users (pipeline.h): objects for the
 * skills, the frame for pictures and the web UI, and its counts for the
 * mission's report. pipeline.c runs the source and the threads.
 */
#include "vision/pipeline_internal.h"

#include "clock.h"

#include <stdio.h>
#include <string.h>

void vision_pipeline_motion_ended(vision_pipeline *p)
{
    pthread_mutex_lock(&p->mu);
    p->motion_marked = true;
    p->motion_end_ms = clock_now_ms();
    pthread_mutex_unlock(&p->mu);
}

void vision_pipeline_set_start(vision_pipeline *p, double ms)
{
    pthread_mutex_lock(&p->mu);
    p->start_ms = ms;
    pthread_mutex_unlock(&p->mu);
}

bool vision_pipeline_detects(const vision_pipeline *p)
{
    return p->det != NULL;
}

bool vision_pipeline_has_pixels(const vision_pipeline *p)
{
    return !p->sim;
}

/* A frame served to a skill, captured at T_MS (lock held). */
static void count_use(vision_pipeline *p, double t_ms)
{
    double age = clock_now_ms() - t_ms;
    if (age < 0) age = 0;
    p->used++;
    p->age_sum_ms += age;
    if (age > p->age_max_ms) p->age_max_ms = age;
}

/* The sim detector runs in the caller's thread: the simulator's projection
 * is instant and already reflects the drone's current pose. */
static int observe_sim(vision_pipeline *p, vision_object *out, int max, double *t_capture,
                       char *err, size_t errlen)
{
    pthread_mutex_lock(&p->mu);
    int n = vision_detector_run(p->det, NULL, p->result, VISION_MAX_OBJECTS, err, errlen);
    if (n >= 0) {
        vision_tracker_update(p->tracker, p->result, n);
        p->n_result = n;
        p->result_t = clock_now_ms();
        p->result_seq++;
        if (t_capture) *t_capture = p->result_t;
        p->stats.processed++;
        if (n > max) n = max;
        memcpy(out, p->result, (size_t)n * sizeof *out);
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}

void pipeline_silence(vision_pipeline *p, char *out, size_t outlen)
{
    double now = clock_now_ms();
    /* Frames that keep coming but are not ready in time: the detector is
     * slower than the frame timeout. */
    if (p->last_frame_ms >= 0 && now - p->last_frame_ms < 1000) {
        snprintf(out, outlen,
                 "frames arrive, but none captured after the last motion was ready in time%s",
                 p->det ? " (the detector is slower than --frame-timeout-ms)" : "");
        return;
    }
    if (p->last_frame_ms >= 0) {
        snprintf(out, outlen, "the camera went dark: no frame for %.0f ms", now - p->last_frame_ms);
        return;
    }
    if (!p->feed) {
        snprintf(out, outlen, "no frame yet");
        return;
    }
    h264_feed_stats fs;
    h264_feed_stats_get(p->feed, &fs);
    if (fs.datagrams == 0)
        snprintf(out, outlen,
                 "no video arrived in %.0f ms since the camera started (a Tello streams after "
                 "`streamon`; --no-video flies without a camera)",
                 now - p->start_ms);
    else if (fs.first_sps_ms < 0)
        snprintf(out, outlen,
                 "%ld datagrams of video in %.0f ms but no H.264 parameter sets to start "
                 "decoding from (not the Tello's video?)",
                 fs.datagrams, now - p->start_ms);
    else
        snprintf(out, outlen, "video arrives (%ld datagrams) but no frame decoded from it%s%s",
                 fs.datagrams, p->decoder_error[0] ? ": " : "", p->decoder_error);
}

/* The frame the mission sees now (lock held): that of the newest
 * detection, or without a detector the newest captured; NULL if none. */
static const vision_frame *newest(vision_pipeline *p, double *t_ms)
{
    if (p->det) {
        *t_ms = p->result_t;
        return p->result_seq > 0 && p->result_frame.bgr ? &p->result_frame : NULL;
    }
    *t_ms = p->slot.t_ms;
    return p->slot_full && p->slot.bgr ? &p->slot : NULL;
}

/* Waits (lock held) until READY says a frame captured after the last
 * motion is there, or fails with a message: the detector's error, the
 * source's end, or the timeout with what the camera (did not) send. */
static int wait_fresh(vision_pipeline *p, bool (*ready)(vision_pipeline *, double), char *err,
                      size_t errlen)
{
    double now = clock_now_ms();
    double after = p->motion_marked ? p->motion_end_ms : now;
    double deadline = now + p->timeout_ms;
    for (;;) {
        if (ready(p, after)) return 0;
        if (p->det && p->detect_error[0] && !p->slot_full) {
            snprintf(err, errlen, "vision: %s", p->detect_error);
            return -1;
        }
        if ((p->det ? p->vision_ended : p->capture_ended) || p->stop || p->closed) {
            snprintf(err, errlen, "vision: no frame captured after the last motion: %s",
                     p->source_error[0] ? p->source_error : "vision stopped");
            return -1;
        }
        if (clock_now_ms() >= deadline) {
            char why[300];
            pipeline_silence(p, why, sizeof why);
            snprintf(err, errlen,
                     "vision: no camera frame captured after the last motion within %d ms "
                     "(%s); camera %s: %s",
                     p->timeout_ms, p->desc, p->source, why);
            return -1;
        }
        pipeline_wait_until(p, deadline);
    }
}

static bool result_ready(vision_pipeline *p, double after)
{
    return p->result_seq > 0 && p->result_t >= after;
}

int vision_pipeline_observe(void *ud, vision_object *out, int max, char *err, size_t errlen)
{
    return vision_pipeline_observe_at(ud, out, max, NULL, err, errlen);
}

int vision_pipeline_observe_at(vision_pipeline *p, vision_object *out, int max, double *t_capture,
                               char *err, size_t errlen)
{
    if (p->sim) return observe_sim(p, out, max, t_capture, err, errlen);
    if (!p->det) {
        snprintf(err, errlen, "the camera %s has no detector (give --detector yolo|hog)",
                 p->source);
        return -1;
    }
    pthread_mutex_lock(&p->mu);
    int n = -1;
    if (wait_fresh(p, result_ready, err, errlen) == 0) {
        n = p->n_result < max ? p->n_result : max;
        memcpy(out, p->result, (size_t)n * sizeof *out);
        if (t_capture) *t_capture = p->result_t;
        count_use(p, p->result_t);
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}

static bool frame_ready(vision_pipeline *p, double after)
{
    double t;
    return newest(p, &t) && t >= after;
}

int vision_pipeline_picture(vision_pipeline *p, vision_frame *out, char *err, size_t errlen)
{
    if (p->sim) {
        snprintf(err, errlen, "the sim detector has no pixels to picture");
        return -1;
    }
    pthread_mutex_lock(&p->mu);
    int rc = wait_fresh(p, frame_ready, err, errlen);
    if (rc == 0) {
        double t;
        const vision_frame *f = newest(p, &t);
        rc = vision_frame_copy(out, f);
        if (rc == 0) {
            out->t_ms = f->t_ms;
            out->seq = f->seq;
            count_use(p, t);
        } else {
            snprintf(err, errlen, "out of memory for a picture");
        }
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int vision_pipeline_latest(vision_pipeline *p, vision_object *out, int max, double *t_ms,
                           unsigned char **jpeg, size_t *jpeg_len)
{
    pthread_mutex_lock(&p->mu);
    int n = p->n_result < max ? p->n_result : max;
    memcpy(out, p->result, (size_t)n * sizeof *out);
    double t = -1;
    const vision_frame *f = p->closed ? NULL : newest(p, &t);
    *t_ms = f ? t : p->sim && p->result_seq > 0 ? p->result_t : -1;
    if (jpeg) {
        vision_mark marks[VISION_MAX_OBJECTS];
        int nm = p->det ? p->n_result : 0;
        for (int i = 0; i < nm; i++) {
            const vision_object *o = &p->result[i];
            marks[i] = (vision_mark){o->x, o->y, o->w, o->h, o->name[0] ? o->name : o->cls};
        }
        *jpeg = f ? vision_jpeg_encode_marked(f, marks, nm, 80, jpeg_len) : NULL;
        if (!*jpeg) *jpeg_len = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}

void vision_pipeline_stats(vision_pipeline *p, vision_stats *out)
{
    pthread_mutex_lock(&p->mu);
    *out = p->stats;
    out->ended = p->closed || (p->det ? p->vision_ended : p->capture_ended);
    out->used = p->used;
    out->age_ms_mean = p->used ? p->age_sum_ms / (double)p->used : 0;
    out->age_ms_max = p->age_max_ms;
    out->first_frame_ms = p->first_frame_ms >= 0 ? p->first_frame_ms - p->start_ms : -1;
    double span = p->first_frame_ms >= 0 ? (clock_now_ms() - p->first_frame_ms) / 1e3 : 0;
    out->detect_fps = span > 0 ? (double)p->stats.processed / span : 0;
    out->feed = p->feed != NULL;
    out->keyframe_frame_ms = -1;
    if (p->feed) {
        h264_feed_stats fs;
        h264_feed_stats_get(p->feed, &fs);
        out->datagrams = fs.datagrams;
        out->datagrams_dropped = fs.dropped;
        out->datagrams_skipped = fs.skipped;
        if (fs.first_sps_ms >= 0 && p->first_frame_ms >= 0)
            out->keyframe_frame_ms = p->first_frame_ms - fs.first_sps_ms;
    }
    pthread_mutex_unlock(&p->mu);
}

const char *vision_pipeline_source(const vision_pipeline *p)
{
    return p->source;
}

const char *vision_pipeline_describe(const vision_pipeline *p)
{
    return p->desc;
}
