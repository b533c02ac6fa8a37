/*
 * Vision pipeline cost per 960x720 frame (the Tello's), excluding inference:
 * letterbox, output decoding (on tensors the size of real YOLOv5/v8 exports
 * at 640), NMS, colour, tracking and the scene description; then inference
 * time of each generated test model and of HOG, and of the real models
 * named in $ALOFT_BENCH_MODELS (paths separated by ':', e.g. a yolov5n.onnx
 * export, or a Darknet .cfg with its .weights beside it), with frames per
 * second. Prints a table on stderr and one JSON document on stdout.
 */
#include "clock.h"
#include "vision/color.h"
#include "vision/detector.h"
#include "vision/track.h"
#include "vision/yolo.h"

#include "tests/vision/fixtures.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_W 960
#define FRAME_H 720
#define ROUNDS 200

static double now(void)
{
    return clock_now_ms();
}

/* A frame with a dozen coloured blocks on a grey-green background. */
static vision_frame test_frame(void)
{
    vision_frame f = fx_frame(FRAME_W, FRAME_H, 90, 110, 90);
    static const int colours[4][3] = {{220, 20, 20}, {20, 200, 20}, {20, 20, 230}, {240, 200, 30}};
    for (int i = 0; i < 12; i++) {
        int x = 40 + (i % 4) * 230, y = 40 + (i / 4) * 230;
        fx_block(&f, x, y, x + 120, y + 150, colours[i % 4][0], colours[i % 4][1],
                 colours[i % 4][2]);
    }
    return f;
}

/* An output tensor shaped like a real export: low noise everywhere and
 * twelve objects, each predicted by a cluster of three overlapping rows. */
static float *fake_output(vision_layout l, int rows, int nc, vision_tensor *t)
{
    int feats = (l == VISION_LAYOUT_V5 ? 5 : 4) + nc;
    float *d = calloc((size_t)rows * (size_t)feats, sizeof *d);
    srand(7);
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < feats; k++) {
            float v = (float)rand() / (float)RAND_MAX;
            if (k < 4)
                v *= 640;
            else
                v *= 0.05f;
            if (l == VISION_LAYOUT_V5)
                d[(size_t)i * feats + k] = v;
            else
                d[(size_t)k * rows + i] = v;
        }
    for (int o = 0; o < 12; o++)
        for (int j = 0; j < 3; j++) {
            int i = (o * 997 + j * 131) % rows, off = l == VISION_LAYOUT_V5 ? 5 : 4;
            float vals[6] = {60.0f + 45 * o + j, 100.0f + 30 * o, 80.0f + j * 2, 90.0f, 0.95f,
                             0.9f - 0.1f * j};
            for (int k = 0; k < 4; k++)
                vals[k] = vals[k];
            float *row = NULL;
            if (l == VISION_LAYOUT_V5) {
                row = d + (size_t)i * feats;
                memcpy(row, vals, 5 * sizeof *row);
                row[off + o * 5] = vals[5];
            } else {
                for (int k = 0; k < 4; k++)
                    d[(size_t)k * rows + i] = vals[k];
                d[(size_t)(off + o * 5) * rows + i] = vals[5];
            }
        }
    t->ndims = 3;
    t->dims[0] = 1;
    t->dims[1] = l == VISION_LAYOUT_V5 ? rows : feats;
    t->dims[2] = l == VISION_LAYOUT_V5 ? feats : rows;
    t->data = d;
    return d;
}

typedef struct stage {
    const char *name;
    double ms;
} stage;

/* Post-processing of one output (decode + NMS + colour + tracking +
 * description), averaged over ROUNDS. */
static void post_stages(vision_layout l, int rows, const vision_frame *f, stage *st)
{
    vision_tensor t;
    float *d = fake_output(l, rows, 80, &t);
    vision_letterbox lb = {640, 640, 640.0f / FRAME_W, 0, (640 - FRAME_H * 640 / FRAME_W) / 2};
    vision_boxes boxes = {0};
    vision_tracker *tr = vision_tracker_new(0);
    vision_object objs[VISION_MAX_OBJECTS];
    char err[128], scene[8192];
    double t_dec = 0, t_nms = 0, t_col = 0, t_trk = 0, t_desc = 0;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now();
        boxes.n = 0;
        vision_yolo_decode(l, &t, 1, 80, &lb, f->w, f->h, 0.25f, &boxes, err, sizeof err);
        double t1 = now();
        int n = vision_nms(boxes.v, boxes.n, 0.45f);
        double t2 = now();
        for (int i = 0; i < n; i++) {
            memset(&objs[i], 0, sizeof objs[i]);
            snprintf(objs[i].cls, sizeof objs[i].cls, "class%d", boxes.v[i].cls);
            objs[i].x = (boxes.v[i].x0 + boxes.v[i].x1) / 2 / f->w;
            objs[i].y = (boxes.v[i].y0 + boxes.v[i].y1) / 2 / f->h;
            objs[i].w = (boxes.v[i].x1 - boxes.v[i].x0) / f->w;
            objs[i].h = (boxes.v[i].y1 - boxes.v[i].y0) / f->h;
            snprintf(
                objs[i].color, sizeof objs[i].color, "%s",
                vision_color_of_box(f, boxes.v[i].x0, boxes.v[i].y0, boxes.v[i].x1, boxes.v[i].y1));
        }
        double t3 = now();
        vision_tracker_update(tr, objs, n);
        double t4 = now();
        vision_describe(objs, n, scene, sizeof scene);
        double t5 = now();
        t_dec += t1 - t0, t_nms += t2 - t1, t_col += t3 - t2, t_trk += t4 - t3, t_desc += t5 - t4;
    }
    st[0] = (stage){"decode", t_dec / ROUNDS};
    st[1] = (stage){"nms", t_nms / ROUNDS};
    st[2] = (stage){"colour", t_col / ROUNDS};
    st[3] = (stage){"tracking", t_trk / ROUNDS};
    st[4] = (stage){"description", t_desc / ROUNDS};
    vision_tracker_free(tr);
    vision_boxes_free(&boxes);
    free(d);
}

static double time_letterbox(const vision_frame *f)
{
    float *blob = malloc(640 * 640 * 3 * sizeof *blob);
    vision_letterbox lb;
    char err[128];
    double t0 = now();
    for (int r = 0; r < ROUNDS; r++)
        vision_letterbox_frame(f, 640, 640, blob, &lb, err, sizeof err);
    double ms = (now() - t0) / ROUNDS;
    free(blob);
    return ms;
}

/* Whole detector runs on the frame: mean inference and mean rest. */
static int time_detector(const vision_detector_config *cfg, const vision_frame *f, int rounds,
                         double *infer, double *rest)
{
    char err[256];
    vision_detector *d = vision_detector_new(cfg, err, sizeof err);
    if (!d) {
        fprintf(stderr, "bench_vision: %s\n", err);
        return -1;
    }
    vision_object objs[VISION_MAX_OBJECTS];
    vision_detector_run(d, f, objs, VISION_MAX_OBJECTS, err, sizeof err); /* warm up */
    double ti = 0, tt = 0;
    for (int r = 0; r < rounds; r++) {
        double t0 = now();
        vision_detector_run(d, f, objs, VISION_MAX_OBJECTS, err, sizeof err);
        tt += now() - t0;
        ti += vision_detector_last_inference_ms(d);
    }
    *infer = ti / rounds;
    *rest = (tt - ti) / rounds;
    vision_detector_free(d);
    return 0;
}

/* S as a JSON string (a path may hold any byte but NUL). */
static void json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            printf("\\u%04x", *p); /* a path's non-ASCII bytes, as Latin-1: readable, valid */
        else
            putchar(*p);
    }
    putchar('"');
}

/* The models of $ALOFT_BENCH_MODELS: real exports are some 100 times
 * costlier than the generated ones, so a few rounds each. */
static void time_user_models(const vision_frame *f)
{
    const char *list = getenv("ALOFT_BENCH_MODELS");
    printf(",\"user_models\":[");
    if (!list || !*list) {
        fprintf(stderr, "  (set ALOFT_BENCH_MODELS=model.onnx[:...] to time real models)\n");
        printf("]");
        return;
    }
    char *copy = strdup(list);
    int n = 0;
    for (char *save = NULL, *m = strtok_r(copy, ":", &save); m; m = strtok_r(NULL, ":", &save)) {
        vision_detector_config cfg = {.kind = VISION_DETECTOR_YOLO, .model = m};
        double infer, rest;
        if (time_detector(&cfg, f, 10, &infer, &rest) != 0) {
            fprintf(stderr, "  %-28s cannot be timed\n", m);
            continue;
        }
        double fps = 1000.0 / (infer + rest);
        fprintf(stderr, "  %-28s %8.3f  %8.3f  %6.1f frames/s\n", m, infer, rest, fps);
        printf("%s{\"model\":", n++ ? "," : "");
        json_string(m);
        printf(",\"inference_ms\":%.4f,\"overhead_ms\":%.4f,\"fps\":%.3f}", infer, rest, fps);
    }
    free(copy);
    printf("]");
}

int main(int argc, char **argv)
{
    /* aloft bench passes the file the JSON goes to; else it goes to stdout. */
    if (argc > 1 && !freopen(argv[1], "w", stdout)) {
        perror(argv[1]);
        return 1;
    }
    char *dir = fx_make_models(1);
    if (!dir) {
        fprintf(stderr, "bench_vision: cannot generate models\n");
        return 1;
    }
    vision_frame f = test_frame();
    printf("{\"frame\":\"%dx%d\"", FRAME_W, FRAME_H);

    /* JPEG decoding of a camera frame, for reference: a stream's frames
     * arrive decoded by FFmpeg, image files pay this. */
    size_t len = 0;
    unsigned char *jpeg = vision_jpeg_encode(&f, 90, &len);
    char path[700];
    snprintf(path, sizeof path, "%s/frame.jpg", dir);
    FILE *out = fopen(path, "wb");
    if (out && jpeg) fwrite(jpeg, 1, len, out);
    if (out) fclose(out);
    free(jpeg);
    vision_frame g = {0};
    char err[256];
    double t0 = now();
    for (int r = 0; r < 50; r++)
        vision_image_read(path, &g, err, sizeof err);
    double jpeg_ms = (now() - t0) / 50;
    vision_frame_clear(&g);

    double lb_ms = time_letterbox(&f);
    fprintf(stderr, "vision pipeline overhead per %dx%d frame (ms, mean of %d)\n", FRAME_W, FRAME_H,
            ROUNDS);
    fprintf(stderr, "  %-28s %8.3f\n", "jpeg decode (file sources)", jpeg_ms);
    fprintf(stderr, "  %-28s %8.3f\n", "letterbox to 640", lb_ms);
    printf(",\"jpeg_decode_ms\":%.4f,\"letterbox_ms\":%.4f", jpeg_ms, lb_ms);
    static const struct {
        vision_layout l;
        int rows;
        const char *name;
    } outs[] = {{VISION_LAYOUT_V5, 25200, "yolov5"}, {VISION_LAYOUT_V8, 8400, "yolov8"}};
    for (int k = 0; k < 2; k++) {
        stage st[5];
        post_stages(outs[k].l, outs[k].rows, &f, st);
        double total = lb_ms;
        printf(",\"%s_overhead\":{\"letterbox_ms\":%.4f", outs[k].name, lb_ms);
        fprintf(stderr, "  %s output (%d predictions):\n", outs[k].name, outs[k].rows);
        for (int i = 0; i < 5; i++) {
            fprintf(stderr, "    %-26s %8.3f\n", st[i].name, st[i].ms);
            printf(",\"%s_ms\":%.4f", st[i].name, st[i].ms);
            total += st[i].ms;
        }
        fprintf(stderr, "    %-26s %8.3f  (target < 2)\n", "total, letterbox included", total);
        printf(",\"total_ms\":%.4f}", total);
    }

    fprintf(stderr, "inference per frame (ms) and the detector's own overhead (ms); "
                    "yolov3-tiny.cfg is the real network with zero weights\n");
    printf(",\"models\":[");
    static const struct {
        const char *file;
        int rounds;
    } ms[] = {{"yolov5_640.onnx", 30},
              {"yolov8_640.onnx", 30},
              {"yolov5.onnx", 100},
              {"yolov8.onnx", 100},
              {"tiny.cfg", 100},
              {"yolov3-tiny.cfg", 10},
              {NULL, 10}};
    int shown = 0;
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) {
        char model[700];
        vision_detector_config cfg = {.kind = VISION_DETECTOR_HOG};
        if (ms[i].file) {
            snprintf(model, sizeof model, "%s/%s", dir, ms[i].file);
            cfg.kind = VISION_DETECTOR_YOLO;
            cfg.model = model;
        }
        double infer, rest;
        if (time_detector(&cfg, &f, ms[i].rounds, &infer, &rest) != 0) continue;
        const char *name = ms[i].file ? ms[i].file : "hog";
        double fps = 1000.0 / (infer + rest);
        fprintf(stderr, "  %-28s %8.3f  %8.3f  %7.1f frames/s\n", name, infer, rest, fps);
        printf("%s{\"model\":\"%s\",\"inference_ms\":%.4f,\"overhead_ms\":%.4f,\"fps\":%.3f}",
               shown++ ? "," : "", name, infer, rest, fps);
    }
    printf("]");
    time_user_models(&f);
    printf("}\n");
    vision_frame_clear(&f);
    fx_remove_dir(dir);
    return 0;
}
