/*
 * The vision pipeline: still-image and video sources, the newest-frame
 * policy, freshness after a motion, stable ids over a video, the sim
 * detector wrapper, option parsing, and clear errors for sources that do not
 * open or hold no frames.
 */
#include "clock.h"
#include "vision/pipeline.h"

#include "tests/vision/fixtures.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static char *models;
static char v5[700];

static void write_ppm(const char *path, const vision_frame *f)
{
    FILE *out = fopen(path, "wb");
    if (!out) return;
    fprintf(out, "P6\n%d %d\n255\n", f->w, f->h);
    for (int i = 0; i < f->w * f->h; i++) {
        const unsigned char *p = f->bgr + (size_t)i * 3;
        fputc(p[2], out), fputc(p[1], out), fputc(p[0], out);
    }
    fclose(out);
}

static vision_options yolo_on(const char *source)
{
    vision_options o;
    vision_options_init(&o);
    o.det.kind = VISION_DETECTOR_YOLO;
    o.det.model = v5;
    o.source = source;
    o.frame_timeout_ms = 20000; /* generous: the machine may be loaded */
    return o;
}

/* A still image is a camera that keeps seeing the same thing: every
 * observation after a motion comes from a frame captured after it. */
static void test_still_image(void)
{
    char path[700], err[256];
    snprintf(path, sizeof path, "%s/still.ppm", models);
    vision_frame f = fx_frame(256, 128, 0, 0, 0);
    fx_block(&f, 64, 32, 96, 64, 220, 0, 0); /* cell (2,3) of the 128 model */
    write_ppm(path, &f);
    vision_frame_clear(&f);

    vision_options o = yolo_on(path);
    vision_pipeline *p = vision_pipeline_open(&o, NULL, NULL, err, sizeof err);
    CHECK(p != NULL, "open: %s", err);
    if (!p) return;
    CHECK(strstr(vision_pipeline_describe(p), "yolov5 on ") != NULL, "%s",
          vision_pipeline_describe(p));
    vision_object obj[VISION_MAX_OBJECTS];
    double t;
    int n = vision_pipeline_observe(p, obj, VISION_MAX_OBJECTS, err, sizeof err);
    CHECK(n == 1, "observe: %d (%s)", n, err);
    if (n == 1) {
        CHECK(strcmp(obj[0].name, "apple_1") == 0 && strcmp(obj[0].color, "red") == 0, "%s %s",
              obj[0].name, obj[0].color);
        CHECK(fabsf(obj[0].x - 0.3125f) < 0.01f && fabsf(obj[0].y - 0.375f) < 0.01f, "at %.3f,%.3f",
              obj[0].x, obj[0].y);
    }
    for (int k = 0; k < 3; k++) {
        vision_pipeline_motion_ended(p);
        double mark = clock_now_ms();
        n = vision_pipeline_observe_at(p, obj, VISION_MAX_OBJECTS, &t, err, sizeof err);
        CHECK(n == 1 && strcmp(obj[0].name, "apple_1") == 0, "after motion %d: %d (%s)", k, n, err);
        CHECK(t >= mark - 0.01, "after motion %d: frame from %.1f ms before the motion ended", k,
              mark - t);
    }
    unsigned char *jpeg = NULL;
    size_t len = 0;
    n = vision_pipeline_latest(p, obj, VISION_MAX_OBJECTS, &t, &jpeg, &len);
    CHECK(n == 1 && t > 0, "latest: %d", n);
    CHECK(jpeg && len > 100 && jpeg[0] == 0xff && jpeg[1] == 0xd8, "latest JPEG");
    free(jpeg);
    vision_stats st;
    vision_pipeline_stats(p, &st);
    CHECK(st.captured >= 4 && st.processed >= 4 && !st.ended, "stats %ld %ld", st.captured,
          st.processed);
    vision_pipeline_close(p);
}

/* A video is played at its frame rate; a block crossing it stays apple_1,
 * every frame is either processed or dropped for a newer one, and once it
 * ends vision says so instead of waiting. */
static void test_video(void)
{
    enum { FRAMES = 24 };
    char path[700], err[256];
    snprintf(path, sizeof path, "%s/moving.avi", models);
    vision_frame frames[FRAMES];
    for (int k = 0; k < FRAMES; k++) {
        frames[k] = fx_frame(128, 128, 0, 0, 0);
        /* One cell further every third frame: the model sees cells. */
        int x = 16 * (k / 3);
        fx_block(&frames[k], x, 48, x + 16, 64, 0, 200, 0);
    }
    int w = vision_video_write(path, frames, FRAMES, 24, err, sizeof err);
    for (int k = 0; k < FRAMES; k++)
        vision_frame_clear(&frames[k]);
    CHECK(w == 0, "write video: %s", err);
    if (w != 0) return;

    vision_options o = yolo_on(path);
    vision_pipeline *p = vision_pipeline_open(&o, NULL, NULL, err, sizeof err);
    CHECK(p != NULL, "open video: %s", err);
    if (!p) return;
    vision_object obj[VISION_MAX_OBJECTS];
    int seen = 0, n;
    double last_t = -1, t;
    while ((n = vision_pipeline_observe_at(p, obj, VISION_MAX_OBJECTS, &t, err, sizeof err)) >= 0) {
        CHECK(t > last_t, "observations go forward in time");
        last_t = t;
        for (int i = 0; i < n; i++)
            CHECK(strcmp(obj[i].name, "broccoli_1") == 0, "video: %s", obj[i].name);
        seen += n;
        if (seen > 1000) break;
    }
    CHECK(seen >= 2, "video: seen %d times", seen);
    CHECK(strstr(err, "ended") != NULL, "end of video: %s", err);
    vision_stats st;
    vision_pipeline_stats(p, &st);
    CHECK(st.captured == FRAMES, "captured %ld", st.captured);
    CHECK(st.processed + st.dropped == st.captured, "processed %ld + dropped %ld != %ld",
          st.processed, st.dropped, st.captured);
    CHECK(st.ended, "stats say ended");
    vision_pipeline_close(p);
}

/* The Tello streams raw H.264 in UDP datagrams of at most 1460 bytes; this
 * sender does the same on loopback, looping a short clip until told to stop. */
typedef struct udp_sender {
    unsigned char *data;
    size_t len;
    int port;
    atomic_int stop;
} udp_sender;

static void *send_stream(void *arg)
{
    udp_sender *s = arg;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct timespec pause = {0, 2000000};
    while (!atomic_load(&s->stop)) {
        for (size_t off = 0; off < s->len && !atomic_load(&s->stop); off += 1460) {
            size_t n = s->len - off < 1460 ? s->len - off : 1460;
            sendto(fd, s->data + off, n, 0, (struct sockaddr *)&to, sizeof to);
            nanosleep(&pause, NULL);
        }
    }
    close(fd);
    return NULL;
}

static int free_udp_port(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static void test_udp_stream(void)
{
    enum { FRAMES = 30 };
    char path[700], err[256], uri[200];
    snprintf(path, sizeof path, "%s/tello.h264", models);
    vision_frame frames[FRAMES];
    for (int k = 0; k < FRAMES; k++) {
        frames[k] = fx_frame(128, 128, 0, 0, 0);
        fx_block(&frames[k], 32, 64, 48, 80, 230, 0, 0);
    }
    int w = vision_video_write(path, frames, FRAMES, 30, err, sizeof err);
    for (int k = 0; k < FRAMES; k++)
        vision_frame_clear(&frames[k]);
    CHECK(w == 0, "write H.264: %s", err);
    udp_sender s = {.port = free_udp_port()};
    FILE *f = fopen(path, "rb");
    if (w != 0 || !f || s.port <= 0) {
        if (f) fclose(f);
        return;
    }
    s.data = malloc(1 << 20);
    s.len = fread(s.data, 1, 1 << 20, f);
    fclose(f);
    pthread_t th;
    pthread_create(&th, NULL, send_stream, &s);

    snprintf(uri, sizeof uri, "udp://127.0.0.1:%d?overrun_nonfatal=1", s.port);
    vision_options o = yolo_on(uri);
    vision_pipeline *p = vision_pipeline_open(&o, NULL, NULL, err, sizeof err);
    CHECK(p != NULL, "open %s: %s", uri, err);
    if (p) {
        vision_object obj[VISION_MAX_OBJECTS];
        vision_pipeline_motion_ended(p);
        int n = vision_pipeline_observe(p, obj, VISION_MAX_OBJECTS, err, sizeof err);
        CHECK(n == 1 && strcmp(obj[0].name, "apple_1") == 0 && strcmp(obj[0].color, "red") == 0,
              "stream: %d %s %s", n, n > 0 ? obj[0].name : err, n > 0 ? obj[0].color : "");
        if (n == 1)
            CHECK(fabsf(obj[0].x - 0.3125f) < 0.02f && fabsf(obj[0].y - 0.5625f) < 0.02f,
                  "stream: at %.3f,%.3f", obj[0].x, obj[0].y);
        vision_pipeline_close(p);
    }
    atomic_store(&s.stop, 1);
    pthread_join(th, NULL);
    free(s.data);
}

/* The H.264 test clip of test_udp_stream, loaded into S (0, or -1). */
static int load_clip(udp_sender *s)
{
    char path[700];
    snprintf(path, sizeof path, "%s/tello.h264", models);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    s->data = malloc(1 << 20);
    s->len = s->data ? fread(s->data, 1, 1 << 20, f) : 0;
    fclose(f);
    return s->len ? 0 : -1;
}

/* "tello:PORT": the stream received by the pipeline itself (h264_feed.h),
 * bound before the first datagram; a camera without a detector gives
 * pictures (and says why it has none), never objects. */
static void test_tello_source(void)
{
    char err[512] = "", src[32];
    udp_sender s = {.port = free_udp_port()};
    CHECK(load_clip(&s) == 0 && s.port > 0, "the clip of test_udp_stream");
    if (!s.len) return;
    snprintf(src, sizeof src, "tello:%d", s.port);
    vision_options o = yolo_on(src);
    vision_pipeline *p = vision_pipeline_open(&o, NULL, NULL, err, sizeof err);
    CHECK(p != NULL, "open %s: %s", src, err);
    pthread_t th;
    pthread_create(&th, NULL, send_stream, &s);
    if (p) {
        vision_object obj[VISION_MAX_OBJECTS];
        vision_pipeline_motion_ended(p);
        int n = vision_pipeline_observe(p, obj, VISION_MAX_OBJECTS, err, sizeof err);
        CHECK(n == 1 && fabsf(obj[0].x - 0.3125f) < 0.02f && fabsf(obj[0].y - 0.5625f) < 0.02f,
              "tello source: %d %s", n, n > 0 ? obj[0].name : err);
        vision_stats st;
        vision_pipeline_stats(p, &st);
        CHECK(st.feed && st.datagrams > 0 && st.captured > 0 && st.first_frame_ms >= 0 &&
                  st.keyframe_frame_ms >= 0 && st.used == 1,
              "stats: %ld datagrams, %ld frames", st.datagrams, st.captured);
        vision_pipeline_close(p);
    }
    atomic_store(&s.stop, 1);
    pthread_join(th, NULL);

    /* A camera alone, before its stream arrives, then with it. */
    s.port = free_udp_port();
    atomic_store(&s.stop, 0);
    snprintf(src, sizeof src, "tello:%d", s.port);
    p = vision_pipeline_open_camera(src, 300, err, sizeof err);
    CHECK(p != NULL, "camera %s: %s", src, err);
    if (p) {
        vision_frame f = {0};
        CHECK(!vision_pipeline_detects(p) && vision_pipeline_has_pixels(p), "a camera alone");
        CHECK(vision_pipeline_picture(p, &f, err, sizeof err) == -1 &&
                  strstr(err, "no video arrived") && strstr(err, src),
              "no frame yet: %s", err);
        vision_object obj[VISION_MAX_OBJECTS];
        CHECK(vision_pipeline_observe(p, obj, VISION_MAX_OBJECTS, err, sizeof err) == -1 &&
                  strstr(err, "no detector"),
              "observe without a detector: %s", err);
        pthread_create(&th, NULL, send_stream, &s);
        int rc = -1;
        for (int i = 0; i < 20 && rc != 0; i++)
            rc = vision_pipeline_picture(p, &f, err, sizeof err);
        CHECK(rc == 0 && f.w == 128 && f.h == 128 && f.bgr, "a picture: %d %dx%d %s", rc, f.w, f.h,
              err);
        /* the red block of the clip, at (40, 72) */
        if (rc == 0) {
            const unsigned char *px = f.bgr + (size_t)72 * f.stride + 40 * 3;
            CHECK(px[2] > 150 && px[1] < 80 && px[0] < 80, "red: %d %d %d", px[2], px[1], px[0]);
        }
        vision_frame_clear(&f);
        vision_pipeline_close(p);
        atomic_store(&s.stop, 1);
        pthread_join(th, NULL);
    }
    free(s.data);
    CHECK(vision_pipeline_open_camera("tello:70000", 300, err, sizeof err) == NULL &&
              strstr(err, "65535"),
          "a port out of range: %s", err);
}

/* HOG takes far longer than a millisecond on a photo, so no frame captured
 * after the motion can be ready within a 1 ms frame timeout: a clear error,
 * not a stale view. */
static void test_frame_timeout(void)
{
    char err[256] = "";
    vision_options o;
    vision_options_init(&o);
    o.det.kind = VISION_DETECTOR_HOG;
    o.source = "/usr/share/darknet/data/person.jpg";
    o.frame_timeout_ms = 1;
    vision_pipeline *p = vision_pipeline_open(&o, NULL, NULL, err, sizeof err);
    CHECK(p != NULL, "hog on a photo: %s", err);
    if (!p) return;
    vision_object obj[8];
    vision_pipeline_motion_ended(p);
    int n = vision_pipeline_observe(p, obj, 8, err, sizeof err);
    CHECK(n == -1 && strstr(err, "no camera frame captured after the last motion within 1 ms"),
          "timeout: %d '%s'", n, err);
    vision_pipeline_close(p);
}

static void expect_open_error(const char *what, vision_options o, const char *want)
{
    char err[512] = "";
    vision_pipeline *p = vision_pipeline_open(&o, NULL, NULL, err, sizeof err);
    CHECK(p == NULL && strstr(err, want) != NULL, "%s: got '%s', want '%s'", what, err, want);
    vision_pipeline_close(p);
}

static void test_bad_sources(void)
{
    char empty[700], text[700];
    snprintf(empty, sizeof empty, "%s/empty.avi", models);
    FILE *f = fopen(empty, "w");
    if (f) fclose(f);
    snprintf(text, sizeof text, "%s/notes.mp4", models);
    f = fopen(text, "w");
    if (f) fputs("not a video\n", f), fclose(f);
    expect_open_error("empty video", yolo_on(empty), "empty.avi");
    expect_open_error("text as video", yolo_on(text), "notes.mp4");
    expect_open_error("missing video", yolo_on("/nonexistent/clip.mp4"), "not found");
    expect_open_error("no source", yolo_on(NULL), "needs a camera");
    vision_options o = yolo_on(empty);
    o.det.model = "/nonexistent.onnx";
    expect_open_error("missing model", o, "model file not found");
}

/* The simulator's projection, as the tests' stand-in: a named apple and an
 * unnamed cup, or a failure. */
static int fake_sim(void *ud, vision_object *out, int max, char *err, size_t errlen)
{
    int *mode = ud;
    if (*mode) {
        snprintf(err, errlen, "camera off");
        return -1;
    }
    if (max < 2) return 0;
    memset(out, 0, 2 * sizeof *out);
    snprintf(out[0].name, sizeof out[0].name, "apple_4");
    snprintf(out[0].cls, sizeof out[0].cls, "apple");
    snprintf(out[1].cls, sizeof out[1].cls, "cup");
    out[0].x = out[1].x = 0.5f;
    out[0].w = out[1].w = out[0].h = out[1].h = 0.1f;
    out[1].y = 0.2f;
    return 2;
}

static void test_sim(void)
{
    int mode = 0;
    char err[256];
    vision_options o;
    vision_options_init(&o);
    vision_pipeline *p = vision_pipeline_open(&o, fake_sim, &mode, err, sizeof err);
    CHECK(p != NULL, "sim: %s", err);
    if (!p) return;
    vision_object obj[8];
    for (int k = 0; k < 2; k++) {
        int n = vision_pipeline_observe(p, obj, 8, err, sizeof err);
        CHECK(n == 2 && strcmp(obj[0].name, "apple_4") == 0 && strcmp(obj[1].name, "cup_1") == 0,
              "sim names: %d %s %s", n, n > 0 ? obj[0].name : "", n > 1 ? obj[1].name : "");
    }
    mode = 1;
    CHECK(vision_pipeline_observe(p, obj, 8, err, sizeof err) == -1 && strstr(err, "camera off"),
          "sim failure: %s", err);
    vision_pipeline_close(p);

    vision_detector *d = vision_detector_from_observe(fake_sim, &mode, err, sizeof err);
    mode = 0;
    CHECK(d && !vision_detector_needs_frames(d) &&
              vision_detector_run(d, NULL, obj, 8, err, sizeof err) == 2,
          "sim detector");
    vision_detector_free(d);
}

static void test_options(void)
{
    vision_options o;
    vision_options_init(&o);
    char err[256];
    CHECK(vision_options_parse(&o, VISION_OPT_DETECTOR, "yolo", err, sizeof err) == 1 &&
              o.det.kind == VISION_DETECTOR_YOLO,
          "--detector yolo");
    CHECK(vision_options_check(&o, err, sizeof err) == -1 && strstr(err, "model"), "%s", err);
    CHECK(vision_options_parse(&o, VISION_OPT_DETECTOR, "ssd", err, sizeof err) == -1, "ssd");
    CHECK(vision_options_parse(&o, VISION_OPT_CONF, "1.5", err, sizeof err) == -1, "conf 1.5");
    CHECK(vision_options_parse(&o, VISION_OPT_NMS, "0.6", err, sizeof err) == 1 &&
              fabsf(o.det.nms - 0.6f) < 1e-6f,
          "nms");
    CHECK(vision_options_parse(&o, VISION_OPT_INPUT_SIZE, "abc", err, sizeof err) == -1, "size");
    /* Whole numbers by the one rule of host/number.h: limits kept, no '+'. */
    CHECK(vision_options_parse(&o, VISION_OPT_INPUT_SIZE, "4096", err, sizeof err) == 1 &&
              o.det.input_size == 4096,
          "size 4096");
    CHECK(vision_options_parse(&o, VISION_OPT_INPUT_SIZE, "4097", err, sizeof err) == -1, "4097");
    CHECK(vision_options_parse(&o, VISION_OPT_INPUT_SIZE, "+64", err, sizeof err) == -1 &&
              strstr(err, "--input-size: '+64'"),
          "+64: %s", err);
    CHECK(vision_options_parse(&o, VISION_OPT_FRAME_TIMEOUT, " 500", err, sizeof err) == -1,
          "' 500'");
    CHECK(vision_options_parse(&o, 42, "x", err, sizeof err) == 0, "not a vision option");
    vision_options_init(&o);
    o.source = "clip.mp4";
    CHECK(vision_options_check(&o, err, sizeof err) == -1, "sim with a source");
}

int main(void)
{
    models = fx_make_models(0);
    if (!models) {
        fprintf(stderr, "cannot generate the test models\n");
        return 1;
    }
    snprintf(v5, sizeof v5, "%s/yolov5.onnx", models);
    test_still_image();
    test_video();
    test_udp_stream();
    test_tello_source();
    test_frame_timeout();
    test_bad_sources();
    test_sim();
    test_options();
    fx_remove_dir(models);
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
