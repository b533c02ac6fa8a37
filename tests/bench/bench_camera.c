/*
 * The Tello's camera, end to end in one process: the emulator's camera
 * (tests/tools/tello_video.h: H.264 at 960x720, 30 frames a second, in
 * datagrams of at most 1,460 bytes) streams to a vision pipeline opened on
 * "tello:PORT" with the generated YOLOv5 test model, as a mission does.
 * Measured: the time from `streamon` (the stream switched on) to the first
 * decoded frame and from the first keyframe to it (SPEC §11: within 1 s),
 * the decode rate (target: the stream's 30 frames a second), the detection
 * rate, and the age of a detection's frame when a skill gets it (capture to
 * use). Prints a table on stderr and one JSON document.
 */
#include "clock.h"
#include "vision/pipeline.h"

#include "tests/bench/bench_out.h"
#include "tests/tools/tello_video.h"
#include "tests/vision/fixtures.h"

#include <pthread.h>
#include <math.h>
#include <stdatomic.h>
#include <time.h>

#define RUN_MS 3000.0 /* how long the stream is decoded for the rates */
#define OBSERVATIONS 30
#define TARGET_FIRST_FRAME_MS 1000.0
#define TARGET_DECODE_FPS 29.0 /* the stream's 30, less rounding at the ends */

typedef struct streamer {
    tello_video v;
    atomic_bool stop;
    double on_ms;
} streamer;

/* The camera's thread: switched on, it sends each frame when due. */
static void *stream_main(void *arg)
{
    streamer *s = arg;
    s->on_ms = clock_now_ms();
    tello_video_switch(&s->v, true, s->on_ms);
    while (!atomic_load(&s->stop)) {
        tello_video_tick(&s->v, clock_now_ms());
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* A free UDP port on loopback (bound, then released). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

/* Detections as skills get them, each after a "motion": the mean and
 * worst age of their frames. */
static void observe_ages(vision_pipeline *p, double *mean, double *worst)
{
    vision_object objs[VISION_MAX_OBJECTS];
    char err[512];
    double sum = 0;
    int n = 0;
    *worst = 0;
    for (int i = 0; i < OBSERVATIONS; i++) {
        vision_pipeline_motion_ended(p);
        double t;
        if (vision_pipeline_observe_at(p, objs, VISION_MAX_OBJECTS, &t, err, sizeof err) < 0) {
            fprintf(stderr, "bench_camera: %s\n", err);
            continue;
        }
        double age = clock_now_ms() - t;
        sum += age;
        n++;
        if (age > *worst) *worst = age;
    }
    *mean = n ? sum / n : -1;
}

int main(int argc, char **argv)
{
    FILE *out = bench_out(argc, argv);
    char *dir = fx_make_models(1);
    if (!dir) {
        fprintf(stderr, "bench_camera: cannot generate models\n");
        return 1;
    }
    char err[512], model[700], source[32];
    snprintf(model, sizeof model, "%s/yolov5.onnx", dir);
    streamer s = {.v = {.port = free_port()}};
    atomic_init(&s.stop, false);
    if (s.v.port < 0 || tello_video_open(&s.v, 1, err, sizeof err) != 0) {
        fprintf(stderr, "bench_camera: the camera: %s\n", s.v.port < 0 ? "no port" : err);
        return 1;
    }
    snprintf(source, sizeof source, "tello:%d", s.v.port);
    vision_options vo;
    vision_options_init(&vo);
    vo.det.kind = VISION_DETECTOR_YOLO;
    vo.det.model = model;
    vo.source = source;
    /* Opened before `streamon`, as a mission does. */
    double t_open = clock_now_ms();
    vision_pipeline *p = vision_pipeline_open(&vo, NULL, NULL, err, sizeof err);
    pthread_t th;
    if (!p || pthread_create(&th, NULL, stream_main, &s) != 0) {
        fprintf(stderr, "bench_camera: %s\n", p ? "cannot start the camera" : err);
        return 1;
    }
    vision_stats st;
    double deadline = clock_now_ms() + 10000;
    do {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        vision_pipeline_stats(p, &st);
    } while (st.captured == 0 && clock_now_ms() < deadline);
    double first_ms = st.captured ? t_open + st.first_frame_ms - s.on_ms : -1;
    double key_ms = st.keyframe_frame_ms;
    vision_stats a;
    vision_pipeline_stats(p, &a);
    double t0 = clock_now_ms();
    double age_mean, age_max;
    observe_ages(p, &age_mean, &age_max);
    double left = RUN_MS - (clock_now_ms() - t0);
    if (left > 0) {
        struct timespec ts = {(time_t)(left / 1e3), (long)(fmod(left, 1e3) * 1e6)};
        nanosleep(&ts, NULL);
    }
    vision_stats b;
    vision_pipeline_stats(p, &b);
    double secs = (clock_now_ms() - t0) / 1e3;
    double decode_fps = (double)(b.captured - a.captured) / secs;
    double detect_fps = (double)(b.processed - a.processed) / secs;
    atomic_store(&s.stop, true);
    pthread_join(th, NULL);
    vision_pipeline_close(p);
    tello_video_close(&s.v);
    fx_remove_dir(dir);

    bool first_met = st.captured && key_ms >= 0 && key_ms <= TARGET_FIRST_FRAME_MS;
    bool fps_met = decode_fps >= TARGET_DECODE_FPS;
    fprintf(stderr, "the Tello's camera (emulated, 960x720 H.264 at 30 frames/s, yolov5 test "
                    "model)\n");
    fprintf(stderr, "  streamon to first frame        %8.1f ms\n", first_ms);
    fprintf(stderr, "  first keyframe to first frame  %8.1f ms  (target <= %.0f: %s)\n", key_ms,
            TARGET_FIRST_FRAME_MS, first_met ? "met" : "missed");
    fprintf(stderr, "  decode rate                    %8.1f frames/s  (target >= %.0f: %s)\n",
            decode_fps, TARGET_DECODE_FPS, fps_met ? "met" : "missed");
    fprintf(stderr, "  detection rate                 %8.1f frames/s\n", detect_fps);
    fprintf(stderr, "  frame age at use: mean %.1f ms, worst %.1f ms (%d detections)\n", age_mean,
            age_max, OBSERVATIONS);
    if (out) {
        fprintf(out,
                "{\"streamon_to_first_frame_ms\": {\"value\": %.3f, \"unit\": \"ms\"},\n"
                " \"keyframe_to_first_frame_ms\": {\"value\": %.3f, \"unit\": \"ms\"},\n"
                " \"first_frame_target_ms\": {\"value\": %.0f, \"unit\": \"ms\"},\n"
                " \"first_frame_target_met\": %s,\n"
                " \"decode_fps\": {\"value\": %.3f, \"unit\": \"frames/s\"},\n"
                " \"decode_fps_target\": {\"value\": %.0f, \"unit\": \"frames/s\"},\n"
                " \"decode_fps_target_met\": %s,\n"
                " \"detect_fps\": {\"value\": %.3f, \"unit\": \"frames/s\"},\n"
                " \"frame_age_mean_ms\": {\"value\": %.3f, \"unit\": \"ms\"},\n"
                " \"frame_age_max_ms\": {\"value\": %.3f, \"unit\": \"ms\"}}\n",
                first_ms, key_ms, TARGET_FIRST_FRAME_MS, first_met ? "true" : "false", decode_fps,
                TARGET_DECODE_FPS, fps_met ? "true" : "false", detect_fps, age_mean, age_max);
        fclose(out);
    }
    return st.captured ? 0 : 1;
}
