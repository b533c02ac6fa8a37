#include "vision/pipeline.h"

#include "clock.h"
#include "vision/track.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define STILL_INTERVAL_MS 100.0 /* how often a still image is "captured" again */
#define DEFAULT_TIMEOUT_MS 5000

struct vision_pipeline {
    vision_detector *det;
    vision_tracker *tracker;
    vision_capture *cap; /* video, webcam, stream; NULL for a still image or sim */
    vision_frame still;
    bool is_still, sim;
    double fps; /* video files are paced at their frame rate; 0 = live */
    int timeout_ms;
    char desc[300];

    pthread_mutex_t mu;
    pthread_cond_t cond; /* any change: frame, result, end, stop */
    pthread_t capture_thread, vision_thread;
    bool capture_started, vision_started;
    bool stop;

    vision_frame slot; /* the newest captured frame, waiting for the detector */
    bool slot_full;
    bool capture_ended, vision_ended;
    char source_error[256];

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
};

static void timespec_at(struct timespec *ts, double ms)
{
    ts->tv_sec = (time_t)(ms / 1e3);
    ts->tv_nsec = (long)((ms - (double)ts->tv_sec * 1e3) * 1e6);
    if (ts->tv_nsec >= 1000000000L) ts->tv_sec++, ts->tv_nsec -= 1000000000L;
    if (ts->tv_nsec < 0) ts->tv_nsec = 0;
}

/* Waits on the pipeline's condition until DEADLINE_MS (monotonic). */
static void wait_until(vision_pipeline *p, double deadline_ms)
{
    struct timespec ts;
    timespec_at(&ts, deadline_ms);
    pthread_cond_timedwait(&p->cond, &p->mu, &ts);
}

static void swap_frames(vision_frame *a, vision_frame *b)
{
    vision_frame t = *a;
    *a = *b;
    *b = t;
}

/* Hands a captured frame to the vision thread, replacing one it has not
 * taken yet: a stale frame is worth nothing. */
static void publish_frame(vision_pipeline *p, vision_frame *f)
{
    pthread_mutex_lock(&p->mu);
    if (p->slot_full) p->stats.dropped++;
    swap_frames(&p->slot, f);
    p->slot_full = true;
    p->stats.captured++;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->mu);
}

static void *capture_main(void *arg)
{
    vision_pipeline *p = arg;
    vision_frame f = {0};
    char err[256] = "";
    long seq = 1; /* frame 1 was read by vision_pipeline_open */
    double t0 = clock_now_ms();
    for (;;) {
        /* Pace still images and video files; live sources block in read. */
        double period = p->is_still ? STILL_INTERVAL_MS : p->fps > 0 ? 1e3 / p->fps : 0;
        pthread_mutex_lock(&p->mu);
        if (period > 0)
            while (!p->stop && clock_now_ms() < t0 + (double)seq * period)
                wait_until(p, t0 + (double)seq * period);
        bool stop = p->stop;
        pthread_mutex_unlock(&p->mu);
        if (stop) break;
        int r = p->is_still ? (vision_frame_copy(&f, &p->still) == 0 ? 1 : -1)
                            : vision_capture_read(p->cap, &f, err, sizeof err);
        if (r <= 0) {
            pthread_mutex_lock(&p->mu);
            p->capture_ended = true;
            snprintf(p->source_error, sizeof p->source_error, "%s",
                     r < 0 ? err : "the camera source has ended");
            pthread_cond_broadcast(&p->cond);
            pthread_mutex_unlock(&p->mu);
            break;
        }
        f.t_ms = clock_now_ms();
        f.seq = ++seq;
        publish_frame(p, &f);
    }
    vision_frame_clear(&f);
    return NULL;
}

static void *vision_main(void *arg)
{
    vision_pipeline *p = arg;
    vision_frame work = {0};
    vision_object *objs = p->work;
    char err[256];
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && !p->slot_full && !p->capture_ended)
            pthread_cond_wait(&p->cond, &p->mu);
        if (p->stop || !p->slot_full) break;
        swap_frames(&work, &p->slot);
        p->slot_full = false;
        pthread_mutex_unlock(&p->mu);

        double t0 = clock_now_ms();
        int n = vision_detector_run(p->det, &work, objs, VISION_MAX_OBJECTS, err, sizeof err);
        if (n >= 0) vision_tracker_update(p->tracker, objs, n);
        double total = clock_now_ms() - t0, infer = vision_detector_last_inference_ms(p->det);

        pthread_mutex_lock(&p->mu);
        p->stats.processed++;
        p->stats.infer_ms = infer;
        p->stats.overhead_ms = total - infer;
        if (n < 0) {
            snprintf(p->detect_error, sizeof p->detect_error, "%s", err);
        } else {
            p->detect_error[0] = '\0';
            memcpy(p->result, objs, (size_t)n * sizeof *objs);
            p->n_result = n;
            p->result_t = work.t_ms;
            p->result_seq = work.seq;
            swap_frames(&p->result_frame, &work);
        }
        pthread_cond_broadcast(&p->cond);
    }
    p->vision_ended = true;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->mu);
    vision_frame_clear(&work);
    return NULL;
}

static bool is_image_path(const char *s)
{
    static const char *const ext[] = {".jpg", ".jpeg", ".png", ".bmp",  ".ppm", ".pgm",
                                      ".pnm", ".webp", ".tif", ".tiff", NULL};
    const char *dot = strrchr(s, '.');
    if (!dot || strchr(dot, '/')) return false;
    for (int i = 0; ext[i]; i++)
        if (strcasecmp(dot, ext[i]) == 0) return true;
    return false;
}

/* Opens the source and reads its first frame into the slot, so that a
 * source without frames fails here with a clear message. */
static int open_source(vision_pipeline *p, const char *source, char *err, size_t errlen)
{
    char buf[300];
    const char *uri = vision_source_uri(source, buf, sizeof buf);
    vision_frame first = {0};
    if (is_image_path(uri)) {
        if (vision_image_read(uri, &p->still, err, errlen) != 0) return -1;
        p->is_still = true;
        if (vision_frame_copy(&first, &p->still) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    } else {
        if (!(p->cap = vision_capture_open(uri, err, errlen))) {
            /* Said in the user's terms: the source they named, not the
             * URI it became. */
            if (uri != source)
                snprintf(err, errlen,
                         "camera %s: no video arrived (a Tello streams after `streamon`; "
                         "--no-video flies without a camera)",
                         source);
            return -1;
        }
        char why[256] = "";
        int r = vision_capture_read(p->cap, &first, why, sizeof why);
        if (r <= 0) {
            vision_frame_clear(&first);
            snprintf(err, errlen, "%s: %s", source,
                     r < 0 ? why : "no frames (empty or not a video)");
            return -1;
        }
        /* Files are played in real time; cameras and streams set the pace. */
        bool file = strstr(uri, "://") == NULL && strncmp(uri, "webcam:", 7) != 0 &&
                    strspn(uri, "0123456789") != strlen(uri);
        if (file) p->fps = vision_capture_fps(p->cap) > 0 ? vision_capture_fps(p->cap) : 25;
    }
    first.t_ms = clock_now_ms();
    first.seq = 1;
    publish_frame(p, &first);
    vision_frame_clear(&first);
    return 0;
}

vision_pipeline *vision_pipeline_open(const vision_options *o, vision_observe_fn sim_observe,
                                      void *sim_ud, char *err, size_t errlen)
{
    if (vision_options_check(o, err, errlen) != 0) return NULL;
    vision_pipeline *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cond, &ca);
    pthread_condattr_destroy(&ca);
    p->timeout_ms = o->frame_timeout_ms > 0 ? o->frame_timeout_ms : DEFAULT_TIMEOUT_MS;
    p->result_t = -1;
    p->tracker = vision_tracker_new(0);
    vision_detector_config dc = o->det;
    if (dc.kind == VISION_DETECTOR_SIM) {
        dc.observe = sim_observe;
        dc.observe_ud = sim_ud;
    }
    if (!p->tracker || !(p->det = vision_detector_new(&dc, err, errlen))) goto fail;
    if (dc.kind == VISION_DETECTOR_SIM) {
        p->sim = true;
        snprintf(p->desc, sizeof p->desc, "sim");
        return p;
    }
    if (!o->source) {
        snprintf(err, errlen,
                 "--detector %s needs a camera: --source FILE|webcam:N|udp://HOST:PORT|tello",
                 vision_detector_describe(p->det));
        goto fail;
    }
    if (open_source(p, o->source, err, errlen) != 0) goto fail;
    snprintf(p->desc, sizeof p->desc, "%s on %s", vision_detector_describe(p->det), o->source);
    if (pthread_create(&p->vision_thread, NULL, vision_main, p) != 0) goto threads;
    p->vision_started = true;
    if (pthread_create(&p->capture_thread, NULL, capture_main, p) != 0) goto threads;
    p->capture_started = true;
    return p;
threads:
    snprintf(err, errlen, "cannot start the vision threads: %s", strerror(errno));
fail:
    vision_pipeline_close(p);
    return NULL;
}

void vision_pipeline_motion_ended(vision_pipeline *p)
{
    pthread_mutex_lock(&p->mu);
    p->motion_marked = true;
    p->motion_end_ms = clock_now_ms();
    pthread_mutex_unlock(&p->mu);
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

int vision_pipeline_observe(void *ud, vision_object *out, int max, char *err, size_t errlen)
{
    return vision_pipeline_observe_at(ud, out, max, NULL, err, errlen);
}

int vision_pipeline_observe_at(vision_pipeline *p, vision_object *out, int max, double *t_capture,
                               char *err, size_t errlen)
{
    if (p->sim) return observe_sim(p, out, max, t_capture, err, errlen);
    pthread_mutex_lock(&p->mu);
    double now = clock_now_ms();
    double after = p->motion_marked ? p->motion_end_ms : now;
    double deadline = now + p->timeout_ms;
    int n = -1;
    for (;;) {
        if (p->result_seq > 0 && p->result_t >= after) {
            n = p->n_result < max ? p->n_result : max;
            memcpy(out, p->result, (size_t)n * sizeof *out);
            if (t_capture) *t_capture = p->result_t;
            break;
        }
        if (p->detect_error[0] && !p->slot_full) {
            snprintf(err, errlen, "vision: %s", p->detect_error);
            break;
        }
        if (p->vision_ended || p->stop) {
            snprintf(err, errlen, "vision: no frame captured after the last motion: %s",
                     p->source_error[0] ? p->source_error : "vision stopped");
            break;
        }
        if (clock_now_ms() >= deadline) {
            snprintf(err, errlen,
                     "vision: no camera frame captured after the last motion within %d ms "
                     "(%s)",
                     p->timeout_ms, p->desc);
            break;
        }
        wait_until(p, deadline);
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}

int vision_pipeline_latest(vision_pipeline *p, vision_object *out, int max, double *t_ms,
                           unsigned char **jpeg, size_t *jpeg_len)
{
    pthread_mutex_lock(&p->mu);
    int n = p->n_result < max ? p->n_result : max;
    memcpy(out, p->result, (size_t)n * sizeof *out);
    *t_ms = p->result_seq > 0 ? p->result_t : -1;
    if (jpeg) {
        vision_mark marks[VISION_MAX_OBJECTS];
        for (int i = 0; i < p->n_result; i++) {
            const vision_object *o = &p->result[i];
            marks[i] = (vision_mark){o->x, o->y, o->w, o->h, o->name[0] ? o->name : o->cls};
        }
        *jpeg = p->result_frame.bgr
                    ? vision_jpeg_encode_marked(&p->result_frame, marks, p->n_result, 80, jpeg_len)
                    : NULL;
        if (!*jpeg) *jpeg_len = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}

void vision_pipeline_stats(vision_pipeline *p, vision_stats *out)
{
    pthread_mutex_lock(&p->mu);
    *out = p->stats;
    out->ended = p->vision_ended;
    pthread_mutex_unlock(&p->mu);
}

const char *vision_pipeline_describe(const vision_pipeline *p)
{
    return p->desc;
}

void vision_pipeline_close(vision_pipeline *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->mu);
    /* A live capture may block in read until its next packet; the stream's
     * own timeout bounds that. */
    if (p->capture_started) pthread_join(p->capture_thread, NULL);
    if (p->vision_started) pthread_join(p->vision_thread, NULL);
    if (p->cap) vision_capture_close(p->cap);
    vision_frame_clear(&p->still);
    vision_frame_clear(&p->slot);
    vision_frame_clear(&p->result_frame);
    vision_detector_free(p->det);
    vision_tracker_free(p->tracker);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
