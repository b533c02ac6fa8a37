#include "vision/pipeline_internal.h"

#include "clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define STILL_INTERVAL_MS 100.0 /* how often a still image is "captured" again */
#define DEFAULT_TIMEOUT_MS 5000
#define REOPEN_MS 100.0 /* between tries to open the decoder on a feed */

static void timespec_at(struct timespec *ts, double ms)
{
    ts->tv_sec = (time_t)(ms / 1e3);
    ts->tv_nsec = (long)((ms - (double)ts->tv_sec * 1e3) * 1e6);
    if (ts->tv_nsec >= 1000000000L) ts->tv_sec++, ts->tv_nsec -= 1000000000L;
    if (ts->tv_nsec < 0) ts->tv_nsec = 0;
}

/* Waits on the pipeline's condition until DEADLINE_MS (monotonic). */
void pipeline_wait_until(vision_pipeline *p, double deadline_ms)
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
    /* Without a detector the slot is the camera's newest frame, never
     * taken: replacing it drops nothing. */
    if (p->slot_full && p->det) p->stats.dropped++;
    swap_frames(&p->slot, f);
    p->slot_full = true;
    p->stats.captured++;
    if (p->first_frame_ms < 0) p->first_frame_ms = p->slot.t_ms;
    p->last_frame_ms = p->slot.t_ms;
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
                pipeline_wait_until(p, t0 + (double)seq * period);
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

/* Whether P must stop (takes the lock). */
static bool stopping(vision_pipeline *p)
{
    pthread_mutex_lock(&p->mu);
    bool stop = p->stop;
    pthread_mutex_unlock(&p->mu);
    return stop;
}

/* Opens a decoder on a fresh pipe of the feed; it returns once the feed
 * passed parameter sets and a frame on, or the feed ended. NULL if not. */
static vision_capture *open_feed(vision_pipeline *p, int *fd, char *err, size_t errlen)
{
    *fd = h264_feed_attach(p->feed, err, errlen);
    if (*fd < 0) return NULL;
    char uri[32];
    snprintf(uri, sizeof uri, "pipe:%d", *fd);
    vision_capture *c = vision_capture_open(uri, err, errlen);
    if (!c) {
        close(*fd);
        *fd = -1;
    }
    return c;
}

/* The capture thread of the Tello's stream: decodes the feed's pipe, and
 * opens a new one whenever the decoder gives up (a stream that broke or
 * went dark), until the pipeline stops. */
static void *feed_main(void *arg)
{
    vision_pipeline *p = arg;
    vision_frame f = {0};
    char err[256] = "";
    long seq = 0;
    int fd = -1;
    while (!stopping(p)) {
        if (!p->cap && !(p->cap = open_feed(p, &fd, err, sizeof err))) {
            pthread_mutex_lock(&p->mu);
            snprintf(p->decoder_error, sizeof p->decoder_error, "%s", err);
            if (!p->stop) pipeline_wait_until(p, clock_now_ms() + REOPEN_MS);
            pthread_mutex_unlock(&p->mu);
            continue;
        }
        if (vision_capture_read(p->cap, &f, err, sizeof err) <= 0) {
            vision_capture_close(p->cap);
            p->cap = NULL;
            close(fd);
            fd = -1;
            continue;
        }
        f.t_ms = clock_now_ms();
        f.seq = ++seq;
        publish_frame(p, &f);
    }
    if (p->cap) vision_capture_close(p->cap);
    p->cap = NULL;
    if (fd >= 0) close(fd);
    vision_frame_clear(&f);
    pthread_mutex_lock(&p->mu);
    p->capture_ended = true;
    snprintf(p->source_error, sizeof p->source_error, "the camera was closed");
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->mu);
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

/* The video port of a "tello" or "tello:PORT" source, else 0. */
static int tello_port(const char *source)
{
    if (strcmp(source, "tello") == 0) return 11111;
    if (strncmp(source, "tello:", 6) != 0) return 0;
    char *end;
    long port = strtol(source + 6, &end, 10);
    return *end == '\0' && port >= 1 && port <= 65535 ? (int)port : -1;
}

/* Opens the source. The Tello's stream is only bound here (its frames come
 * later, on the capture thread); anything else has its first frame read
 * into the slot, so that a source without frames fails here with a clear
 * message. */
static int open_source(vision_pipeline *p, const char *source, char *err, size_t errlen)
{
    snprintf(p->source, sizeof p->source, "%s", source);
    int port = tello_port(source);
    if (port < 0) {
        snprintf(err, errlen, "--source %s: the port is not a number in 1..65535", source);
        return -1;
    }
    if (port > 0) {
        char why[200];
        if ((p->feed = h264_feed_open(port, why, sizeof why))) return 0;
        snprintf(err, errlen, "camera %s: %s", source, why);
        return -1;
    }
    vision_frame first = {0};
    if (is_image_path(source)) {
        if (vision_image_read(source, &p->still, err, errlen) != 0) return -1;
        p->is_still = true;
        if (vision_frame_copy(&first, &p->still) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    } else {
        if (!(p->cap = vision_capture_open(source, err, errlen))) return -1;
        char why[256] = "";
        int r = vision_capture_read(p->cap, &first, why, sizeof why);
        if (r <= 0) {
            vision_frame_clear(&first);
            snprintf(err, errlen, "%s: %s", source,
                     r < 0 ? why : "no frames (empty or not a video)");
            return -1;
        }
        /* Files are played in real time; cameras and streams set the pace. */
        bool file = strstr(source, "://") == NULL && strncmp(source, "webcam:", 7) != 0 &&
                    strspn(source, "0123456789") != strlen(source);
        if (file) p->fps = vision_capture_fps(p->cap) > 0 ? vision_capture_fps(p->cap) : 25;
    }
    first.t_ms = clock_now_ms();
    first.seq = 1;
    publish_frame(p, &first);
    vision_frame_clear(&first);
    return 0;
}

static vision_pipeline *pipeline_new(int frame_timeout_ms, char *err, size_t errlen)
{
    vision_pipeline *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    atomic_init(&p->refs, 1);
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cond, &ca);
    pthread_condattr_destroy(&ca);
    p->timeout_ms = frame_timeout_ms > 0 ? frame_timeout_ms : DEFAULT_TIMEOUT_MS;
    p->result_t = -1;
    p->start_ms = clock_now_ms();
    p->first_frame_ms = p->last_frame_ms = -1;
    return p;
}

/* Starts the threads: the detector's (if any), then the capture's. */
static int start_threads(vision_pipeline *p, char *err, size_t errlen)
{
    if (p->det) {
        if (pthread_create(&p->vision_thread, NULL, vision_main, p) != 0) goto fail;
        p->vision_started = true;
    }
    if (pthread_create(&p->capture_thread, NULL, p->feed ? feed_main : capture_main, p) != 0)
        goto fail;
    p->capture_started = true;
    return 0;
fail:
    snprintf(err, errlen, "cannot start the vision threads: %s", strerror(errno));
    return -1;
}

vision_pipeline *vision_pipeline_open(const vision_options *o, vision_observe_fn sim_observe,
                                      void *sim_ud, char *err, size_t errlen)
{
    if (vision_options_check(o, err, errlen) != 0) return NULL;
    vision_pipeline *p = pipeline_new(o->frame_timeout_ms, err, errlen);
    if (!p) return NULL;
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
    if (start_threads(p, err, errlen) == 0) return p;
fail:
    vision_pipeline_close(p);
    return NULL;
}

vision_pipeline *vision_pipeline_open_camera(const char *source, int frame_timeout_ms, char *err,
                                             size_t errlen)
{
    vision_pipeline *p = pipeline_new(frame_timeout_ms, err, errlen);
    if (!p) return NULL;
    if (open_source(p, source, err, errlen) == 0) {
        snprintf(p->desc, sizeof p->desc, "no detector on %s", source);
        if (start_threads(p, err, errlen) == 0) return p;
    }
    vision_pipeline_close(p);
    return NULL;
}

vision_pipeline *vision_pipeline_ref(vision_pipeline *p)
{
    atomic_fetch_add(&p->refs, 1);
    return p;
}

void vision_pipeline_unref(vision_pipeline *p)
{
    if (!p || atomic_fetch_sub(&p->refs, 1) != 1) return;
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

void vision_pipeline_close(vision_pipeline *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->mu);
    /* The feed's end wakes a decoder blocked on its pipe at once; another
     * live capture may block in read until its next packet, which the
     * stream's own timeout bounds. */
    if (p->feed) h264_feed_end(p->feed);
    if (p->capture_started) pthread_join(p->capture_thread, NULL);
    if (p->vision_started) pthread_join(p->vision_thread, NULL);
    if (p->cap) vision_capture_close(p->cap);
    p->cap = NULL;
    /* Other holders may still ask for frames and counts: none are left. */
    pthread_mutex_lock(&p->mu);
    h264_feed *feed = p->feed;
    p->feed = NULL;
    p->closed = true;
    vision_frame_clear(&p->still);
    vision_frame_clear(&p->slot);
    p->slot_full = false;
    vision_frame_clear(&p->result_frame);
    vision_detector *det = p->det;
    vision_tracker *tracker = p->tracker;
    p->det = NULL;
    p->tracker = NULL;
    pthread_mutex_unlock(&p->mu);
    h264_feed_close(feed);
    vision_detector_free(det);
    vision_tracker_free(tracker);
    vision_pipeline_unref(p);
}
