/*
 * Vision: detectors on self-made models (YOLOv5 and YOLOv8 ONNX layouts, a
 * Darknet cfg/weights pair), letterbox mapping, NMS, thresholds, colours,
 * instance ids, HOG on a real photo, and clear errors for bad input.
 */
#include "vision/color.h"
#include "vision/detector.h"
#include "vision/names.h"
#include "vision/onnx_shape.h"
#include "vision/track.h"
#include "vision/yolo.h"

#include "tests/vision/fixtures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static char *models;

static vision_detector *load(const fx_model *m, float conf, float nms)
{
    char path[700], err[512];
    snprintf(path, sizeof path, "%s/%s", models, m->file);
    vision_detector_config cfg = {
        .kind = VISION_DETECTOR_YOLO, .model = path, .conf = conf, .nms = nms};
    vision_detector *d = vision_detector_new(&cfg, err, sizeof err);
    CHECK(d != NULL, "%s: %s", m->file, err);
    return d;
}

/* A block filling grid cell (COL, ROW) of the letterboxed input, drawn into
 * frame F (of any size); its frame rectangle goes to BOX (pixels). */
typedef struct placed {
    float x0, y0, x1, y1;
} placed;

static placed place(const fx_model *m, vision_frame *f, int col, int row, int r, int g, int b)
{
    float scale = fminf((float)m->size / (float)f->w, (float)m->size / (float)f->h);
    int nw = (int)(f->w * scale + 0.5f), nh = (int)(f->h * scale + 0.5f);
    int pad_x = (m->size - nw) / 2, pad_y = (m->size - nh) / 2;
    placed p = {(float)(col * m->cell - pad_x) / scale, (float)(row * m->cell - pad_y) / scale,
                (float)((col + 1) * m->cell - pad_x) / scale,
                (float)((row + 1) * m->cell - pad_y) / scale};
    CHECK(p.x0 >= 0 && p.y0 >= 0 && p.x1 <= f->w && p.y1 <= f->h, "cell %d,%d off the image", col,
          row);
    fx_block(f, (int)lroundf(p.x0), (int)lroundf(p.y0), (int)lroundf(p.x1), (int)lroundf(p.y1), r,
             g, b);
    return p;
}

static const vision_object *find_cls(const vision_object *o, int n, const char *cls)
{
    for (int i = 0; i < n; i++)
        if (strcmp(o[i].cls, cls) == 0) return &o[i];
    return NULL;
}

/* The object of class CLS must sit on box P of frame F with colour COLOR and
 * confidence CONF (within TOL). */
static void expect(const char *what, const vision_object *o, int n, const vision_frame *f,
                   const char *cls, placed p, const char *color, float conf, float tol)
{
    const vision_object *x = find_cls(o, n, cls);
    CHECK(x != NULL, "%s: no %s among %d objects", what, cls, n);
    if (!x) return;
    float px = 1.5f / f->w, py = 1.5f / f->h; /* a pixel and a half */
    CHECK(fabsf(x->x - (p.x0 + p.x1) / 2 / f->w) < px, "%s: %s x %.4f", what, cls, x->x);
    CHECK(fabsf(x->y - (p.y0 + p.y1) / 2 / f->h) < py, "%s: %s y %.4f", what, cls, x->y);
    CHECK(fabsf(x->w - (p.x1 - p.x0) / f->w) < px, "%s: %s w %.4f", what, cls, x->w);
    CHECK(fabsf(x->h - (p.y1 - p.y0) / f->h) < py, "%s: %s h %.4f", what, cls, x->h);
    CHECK(strcmp(x->color, color) == 0, "%s: %s colour %s, want %s", what, cls, x->color, color);
    CHECK(fabsf(x->conf - conf) <= tol, "%s: %s conf %.3f, want %.3f", what, cls, x->conf, conf);
}

static void test_layout_and_boxes(const fx_model *m)
{
    vision_detector *d = load(m, 0, 0);
    if (!d) return;
    CHECK(strcmp(vision_detector_describe(d), m->layout) == 0, "%s detected as %s", m->file,
          vision_detector_describe(d));
    int in_w, in_h;
    vision_detector_input_size(d, &in_w, &in_h);
    CHECK(in_w == m->size && in_h == m->size, "%s: input %dx%d from the model", m->file, in_w,
          in_h);
    vision_object o[VISION_MAX_OBJECTS];
    char err[256], what[128];
    int g = m->size / m->cell;

    /* Square, at the model's own size: three classes at once. */
    vision_frame f = fx_frame(m->size, m->size, 0, 0, 0);
    placed red = place(m, &f, 1, 2, 200, 0, 0);
    placed green = place(m, &f, g - 1, 0, 0, 220, 0);
    placed blue = place(m, &f, 0, g - 1, 0, 0, 240);
    int n = vision_detector_run(d, &f, o, VISION_MAX_OBJECTS, err, sizeof err);
    snprintf(what, sizeof what, "%s square", m->file);
    CHECK(n == 3, "%s: %d objects (%s)", what, n, n < 0 ? err : "");
    expect(what, o, n, &f, "apple", red, "red", fx_expected_conf(m, 200 / 255.f), 0.01f);
    expect(what, o, n, &f, "broccoli", green, "green", fx_expected_conf(m, 220 / 255.f), 0.01f);
    expect(what, o, n, &f, "car", blue, "blue", fx_expected_conf(m, 240 / 255.f), 0.01f);
    for (int i = 1; i < n; i++)
        CHECK(o[i - 1].conf >= o[i].conf, "%s: not best first", what);
    vision_frame_clear(&f);

    /* Wide and twice the model size: scaled down by 2, padded top and bottom. */
    f = fx_frame(2 * m->size, m->size, 0, 0, 0);
    red = place(m, &f, g / 2, g / 2, 200, 0, 0);
    n = vision_detector_run(d, &f, o, VISION_MAX_OBJECTS, err, sizeof err);
    snprintf(what, sizeof what, "%s wide, scaled down", m->file);
    CHECK(n == 1, "%s: %d objects", what, n);
    expect(what, o, n, &f, "apple", red, "red", fx_expected_conf(m, 200 / 255.f), 0.01f);
    vision_frame_clear(&f);

    /* Tall and small: scaled up by 2, padded left and right. Interpolation
     * blurs the block's edges, so its score drops a little. */
    f = fx_frame(m->size / 4, m->size / 2, 0, 0, 0);
    placed blue2 = place(m, &f, g / 2, g / 2 - 1, 0, 0, 230);
    n = vision_detector_run(d, &f, o, VISION_MAX_OBJECTS, err, sizeof err);
    snprintf(what, sizeof what, "%s tall, scaled up", m->file);
    CHECK(n == 1, "%s: %d objects", what, n);
    expect(what, o, n, &f, "car", blue2, "blue", fx_expected_conf(m, 230 / 255.f), 0.08f);
    vision_frame_clear(&f);
    vision_detector_free(d);
}

/* Every cell of the ONNX models also predicts a box 1.25x larger scoring
 * 0.8x as much (IoU 0.64 with the exact one): NMS at 0.45 must merge them,
 * NMS at 0.7 must keep both. */
static void test_nms(const fx_model *m)
{
    if (m->anchors < 2) return;
    vision_object o[VISION_MAX_OBJECTS];
    char err[256];
    vision_frame f = fx_frame(m->size, m->size, 0, 0, 0);
    placed red = place(m, &f, 1, 1, 255, 0, 0);
    place(m, &f, 3, 3, 0, 255, 0);

    vision_detector *d = load(m, 0, 0);
    int n = d ? vision_detector_run(d, &f, o, VISION_MAX_OBJECTS, err, sizeof err) : -1;
    CHECK(n == 2, "%s nms 0.45: %d objects, want 2", m->file, n);
    vision_detector_free(d);

    d = load(m, 0, 0.7f);
    n = d ? vision_detector_run(d, &f, o, VISION_MAX_OBJECTS, err, sizeof err) : -1;
    CHECK(n == 4, "%s nms 0.7: %d objects, want 4", m->file, n);
    int apples = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(o[i].cls, "apple") != 0) continue;
        float want = (apples == 0 ? 1.0f : 1.25f) * (red.x1 - red.x0) / f.w;
        CHECK(fabsf(o[i].w - want) < 1.5f / f.w, "%s apple %d width %.3f want %.3f", m->file,
              apples, o[i].w, want);
        apples++;
    }
    CHECK(apples == 2, "%s: %d apples", m->file, apples);
    vision_detector_free(d);
    vision_frame_clear(&f);

    /* The same through vision_nms directly: other classes never suppress. */
    vision_box b[4] = {{0, 0, 10, 10, 0.9f, 1},
                       {1, 1, 11, 11, 0.8f, 1},
                       {1, 1, 11, 11, 0.7f, 2},
                       {20, 20, 30, 30, 0.6f, 1}};
    CHECK(vision_nms(b, 4, 0.45f) == 3, "vision_nms");
    CHECK(b[0].score == 0.9f && b[1].cls == 2 && b[2].x0 == 20, "vision_nms keeps the best");
}

/* The confidence threshold is configurable: a dim block (0.35) falls below
 * 0.5 but not below the default 0.25. */
static void test_conf_threshold(const fx_model *m)
{
    vision_object o[VISION_MAX_OBJECTS];
    char err[256];
    vision_frame f = fx_frame(m->size, m->size, 0, 0, 0);
    place(m, &f, 1, 1, 0, 0, 90); /* 0.353 */
    float c = fx_expected_conf(m, 90 / 255.f);
    vision_detector *d = load(m, 0, 0);
    int n = d ? vision_detector_run(d, &f, o, VISION_MAX_OBJECTS, err, sizeof err) : -1;
    CHECK(n == (c >= 0.25f), "%s: dim block (conf %.2f) at 0.25: %d objects", m->file, c, n);
    vision_detector_free(d);
    d = load(m, 0.5f, 0);
    n = d ? vision_detector_run(d, &f, o, VISION_MAX_OBJECTS, err, sizeof err) : -1;
    CHECK(n == (c >= 0.5f), "%s: dim block (conf %.2f) at 0.5: %d objects", m->file, c, n);
    vision_detector_free(d);
    vision_frame_clear(&f);
}

/* Two [yolo] heads, as in YOLOv3-tiny: detections from both outputs come
 * back (a cell-sized box and one twice that, IoU 0.25), and NMS below 0.25
 * merges them into the better one. */
static void test_darknet_two_heads(void)
{
    fx_model m = {"tiny2.cfg", "darknet", 64, 16, 1};
    vision_object o[VISION_MAX_OBJECTS];
    char err[256];
    vision_frame f = fx_frame(64, 64, 0, 0, 0);
    placed red = place(&m, &f, 1, 1, 200, 0, 0);
    float v = 200 / 255.f;
    vision_detector *d = load(&m, 0, 0);
    int n = d ? vision_detector_run(d, &f, o, VISION_MAX_OBJECTS, err, sizeof err) : -1;
    CHECK(n == 2, "two heads: %d objects (%s)", n, n < 0 ? err : "");
    if (n == 2) {
        expect("head 1", o, 1, &f, "apple", red, "red", fx_expected_conf(&m, v), 0.01f);
        placed big = {red.x0 - 8, red.y0 - 8, red.x1 + 8, red.y1 + 8};
        expect("head 2", o + 1, 1, &f, "apple", big, "red",
               fx_sigmoid(8.0f) * fx_sigmoid(10.0f * v - 4.0f), 0.01f);
    }
    vision_detector_free(d);
    d = load(&m, 0, 0.2f);
    n = d ? vision_detector_run(d, &f, o, VISION_MAX_OBJECTS, err, sizeof err) : -1;
    CHECK(n == 1 && fabsf(o[0].w - 0.25f) < 0.01f, "two heads, NMS 0.2: %d objects", n);
    vision_detector_free(d);
    vision_frame_clear(&f);
}

/* The input size is read from the model file's own protobuf; truncated or
 * scrambled files must give "unknown", never a read out of bounds. */
static void test_onnx_shape(void)
{
    char path[700];
    snprintf(path, sizeof path, "%s/yolov8.onnx", models);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL, "open %s", path);
    if (!f) return;
    static unsigned char buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    int w = 0, h = 0;
    CHECK(vision_onnx_input_size_mem(buf, len, &w, &h) == 0 && w == 160 && h == 160,
          "yolov8.onnx input %dx%d", w, h);
    int found = 0;
    for (size_t cut = 0; cut < len; cut += 61)
        found += vision_onnx_input_size_mem(buf, cut, &w, &h) == 0;
    CHECK(found < 3, "%d truncated files still gave a size", found);
    srand(1);
    for (int k = 0; k < 300; k++) {
        static unsigned char junk[4096];
        size_t n = (size_t)(rand() % (int)sizeof junk);
        for (size_t i = 0; i < n; i++)
            junk[i] = (unsigned char)rand();
        if (k % 2) memcpy(junk, buf, n < 64 ? n : 64); /* a plausible start */
        vision_onnx_input_size_mem(junk, n, &w, &h);
    }
    CHECK(vision_onnx_input_size("/nonexistent.onnx", &w, &h) == -1, "missing file");
}

/* The real YOLOv3-tiny network from Debian's darknet package (two heads,
 * maxpool, route, upsample, batch norm), with all-zero weights: every class
 * of every prediction then scores exactly 0.5 x 0.5. It must load, take its
 * input size from the cfg and run; at conf 0.3 nothing passes, at 0.2 the
 * boxes that do are real boxes inside the frame. */
static void test_debian_yolov3_tiny(void)
{
    const char *cfg_path = "/usr/share/darknet/cfg/yolov3-tiny.cfg";
    char weights[700], cmd[1600], err[512];
    snprintf(weights, sizeof weights, "%s/yolov3-tiny.weights", models);
    char here[512];
    snprintf(here, sizeof here, "%s", __FILE__);
    *strrchr(here, '/') = '\0';
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/vision/gen_models.py' --zero-weights '%s' '%s'",
             here, cfg_path, weights);
    CHECK(system(cmd) == 0, "zero weights for %s", cfg_path);
    vision_frame f = {0};
    CHECK(vision_image_read("/usr/share/darknet/data/person.jpg", &f, err, sizeof err) == 0, "%s",
          err);
    vision_object o[VISION_MAX_OBJECTS];
    for (int k = 0; k < 2; k++) {
        vision_detector_config c = {.kind = VISION_DETECTOR_YOLO,
                                    .model = cfg_path,
                                    .weights = weights,
                                    .conf = k ? 0.2f : 0.3f};
        vision_detector *d = vision_detector_new(&c, err, sizeof err);
        CHECK(d != NULL, "yolov3-tiny: %s", err);
        if (!d) continue;
        int w, h;
        vision_detector_input_size(d, &w, &h);
        CHECK(w == 416 && h == 416 && strcmp(vision_detector_describe(d), "darknet") == 0,
              "yolov3-tiny: %s at %dx%d", vision_detector_describe(d), w, h);
        int n = vision_detector_run(d, &f, o, VISION_MAX_OBJECTS, err, sizeof err);
        if (k == 0) CHECK(n == 0, "yolov3-tiny at conf 0.3: %d objects (%s)", n, err);
        if (k == 1) CHECK(n > 0, "yolov3-tiny at conf 0.2: %d objects (%s)", n, err);
        for (int i = 0; i < n; i++)
            CHECK(fabsf(o[i].conf - 0.25f) < 1e-3f && o[i].w > 0 && o[i].h > 0 &&
                      o[i].x - o[i].w / 2 >= -1e-4f && o[i].x + o[i].w / 2 <= 1.0001f,
                  "yolov3-tiny box %d: %.3f %.3f %.3f %.3f conf %.3f", i, o[i].x, o[i].y, o[i].w,
                  o[i].h, o[i].conf);
        vision_detector_free(d);
    }
    vision_frame_clear(&f);
    remove(weights);
}

static void test_layout_detection(void)
{
    vision_tensor v5 = {3, {1, 25200, 85, 0}, NULL}, v8 = {3, {1, 84, 8400, 0}, NULL};
    vision_tensor odd = {4, {1, 3, 4, 4}, NULL}, custom = {3, {1, 6, 2100, 0}, NULL};
    vision_layout l;
    int nc;
    char err[256];
    CHECK(vision_yolo_layout(&v5, 80, &l, &nc, err, sizeof err) == 0 && l == VISION_LAYOUT_V5 &&
              nc == 80,
          "v5 shape");
    CHECK(vision_yolo_layout(&v8, 80, &l, &nc, err, sizeof err) == 0 && l == VISION_LAYOUT_V8 &&
              nc == 80,
          "v8 shape");
    CHECK(vision_yolo_layout(&custom, 0, &l, &nc, err, sizeof err) == 0 && l == VISION_LAYOUT_V8 &&
              nc == 2,
          "v8 shape with two classes");
    CHECK(vision_yolo_layout(&odd, 80, &l, &nc, err, sizeof err) == -1 &&
              strstr(err, "neither") != NULL,
          "odd shape: %s", err);
}

static void test_colors(void)
{
    static const struct {
        int r, g, b;
        const char *name;
    } cases[] = {
        {220, 30, 30, "red"},     {255, 140, 0, "orange"}, {240, 220, 30, "yellow"},
        {30, 180, 40, "green"},   {30, 60, 220, "blue"},   {140, 40, 200, "purple"},
        {255, 105, 180, "pink"},  {120, 70, 20, "brown"},  {10, 10, 10, "black"},
        {245, 245, 245, "white"}, {128, 128, 128, "gray"}, {0, 200, 200, "blue"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = vision_color_of_rgb(cases[i].r, cases[i].g, cases[i].b);
        CHECK(strcmp(got, cases[i].name) == 0, "(%d,%d,%d) is %s, want %s", cases[i].r, cases[i].g,
              cases[i].b, got, cases[i].name);
    }
    /* The middle of the box decides, not the background around it. */
    vision_frame f = fx_frame(100, 100, 255, 255, 255);
    fx_block(&f, 30, 30, 70, 70, 255, 140, 0);
    CHECK(strcmp(vision_color_of_box(&f, 20, 20, 80, 80), "orange") == 0, "box colour");
    CHECK(strcmp(vision_color_of_box(&f, 50, 50, 50, 50), "") == 0, "empty box colour");
    vision_frame_clear(&f);
}

static vision_object obj(const char *cls, float x, float y, float w, float h)
{
    vision_object o;
    memset(&o, 0, sizeof o);
    snprintf(o.cls, sizeof o.cls, "%s", cls);
    o.x = x, o.y = y, o.w = w, o.h = h, o.conf = 0.9f;
    return o;
}

/* Two people walking towards each other, a ball that vanishes for a few
 * frames, and a newcomer: ids follow the objects, not their order. */
static void test_tracker(void)
{
    vision_tracker *t = vision_tracker_new(0);
    vision_object o[4];
    for (int k = 0; k < 12; k++) {
        float s = 0.03f * (float)k;
        int n = 0;
        /* Listed in a different order every other frame. */
        vision_object a = obj("person", 0.1f + s, 0.5f, 0.1f, 0.3f);
        vision_object b = obj("person", 0.9f - s, 0.4f, 0.1f, 0.3f);
        o[n++] = k % 2 ? b : a;
        o[n++] = k % 2 ? a : b;
        if (k < 4 || k > 7) o[n++] = obj("sports_ball", 0.5f, 0.8f + 0.005f * k, 0.05f, 0.05f);
        if (k >= 10) o[n++] = obj("person", 0.5f, 0.1f, 0.1f, 0.2f);
        vision_tracker_update(t, o, n);
        const char *left = k % 2 ? o[1].name : o[0].name, *right = k % 2 ? o[0].name : o[1].name;
        CHECK(strcmp(left, "person_1") == 0, "frame %d: left walker is %s", k, left);
        CHECK(strcmp(right, "person_2") == 0, "frame %d: right walker is %s", k, right);
        if (k < 4 || k > 7)
            CHECK(strcmp(o[2].name, "sports_ball_1") == 0, "frame %d: ball is %s", k, o[2].name);
        if (k >= 10)
            CHECK(strcmp(o[n - 1].name, "person_3") == 0, "frame %d: newcomer is %s", k,
                  o[n - 1].name);
    }
    /* Named objects (the simulator's) keep their names. */
    vision_object named = obj("apple", 0.2f, 0.2f, 0.1f, 0.1f);
    snprintf(named.name, sizeof named.name, "apple_7");
    vision_tracker_update(t, &named, 1);
    CHECK(strcmp(named.name, "apple_7") == 0, "named object renamed to %s", named.name);
    vision_tracker_free(t);
}

/* A red block crossing the frame one cell per frame, seen by the YOLOv5
 * model: detection + tracking keep it apple_1 while a second apple appears. */
static void test_ids_through_detector(void)
{
    const fx_model *m = &fx_models[0];
    vision_detector *d = load(m, 0, 0);
    vision_tracker *t = vision_tracker_new(0);
    if (!d || !t) return;
    vision_object o[VISION_MAX_OBJECTS];
    char err[256];
    int g = m->size / m->cell;
    for (int k = 0; k < g; k++) {
        vision_frame f = fx_frame(m->size, m->size, 0, 0, 0);
        place(m, &f, k, 2, 210, 0, 0);
        if (k >= 3) place(m, &f, g - 1, g - 1, 220, 0, 0);
        int n = vision_detector_run(d, &f, o, VISION_MAX_OBJECTS, err, sizeof err);
        vision_tracker_update(t, o, n > 0 ? n : 0);
        CHECK(n == (k >= 3 ? 2 : 1), "frame %d: %d objects", k, n);
        for (int i = 0; i < n; i++) {
            bool mover = fabsf(o[i].y - (2.5f / g)) < 0.01f;
            const char *want = mover ? "apple_1" : "apple_2";
            CHECK(strcmp(o[i].name, want) == 0, "frame %d: %s, want %s", k, o[i].name, want);
        }
        vision_frame_clear(&f);
    }
    char scene[512];
    vision_describe(o, 2, scene, sizeof scene);
    CHECK(strstr(scene, "apple_1 x:") && strstr(scene, " color:red\n"), "scene: %s", scene);
    vision_tracker_free(t);
    vision_detector_free(d);
}

/* Debian's darknet package ships a photo of a woman between a dog and a
 * horse; she stands at about x 0.30-0.42, y 0.23-0.89 of the frame. */
static void test_hog_person(void)
{
    const char *photo = "/usr/share/darknet/data/person.jpg";
    vision_frame f = {0};
    char err[256];
    if (vision_image_read(photo, &f, err, sizeof err) != 0) {
        CHECK(0, "%s", err);
        return;
    }
    vision_detector_config cfg = {.kind = VISION_DETECTOR_HOG};
    vision_detector *d = vision_detector_new(&cfg, err, sizeof err);
    CHECK(d != NULL, "hog: %s", err);
    vision_object o[VISION_MAX_OBJECTS];
    int n = d ? vision_detector_run(d, &f, o, VISION_MAX_OBJECTS, err, sizeof err) : -1;
    CHECK(n >= 1, "hog found %d people", n);
    const vision_object *p = find_cls(o, n, "person");
    if (p) {
        float cx = 0.36f, cy = 0.56f;
        CHECK(fabsf(p->x - cx) < 0.1f && fabsf(p->y - cy) < 0.15f, "person at %.2f,%.2f", p->x,
              p->y);
        CHECK(p->x - p->w / 2 < cx && p->x + p->w / 2 > cx && p->y - p->h / 2 < cy &&
                  p->y + p->h / 2 > cy,
              "person box misses her");
        CHECK(p->w < 0.5f && p->h > p->w, "person box %.2fx%.2f", p->w, p->h);
        CHECK(p->conf > 0 && p->conf <= 1, "conf %.2f", p->conf);
    }
    vision_detector_free(d);
    vision_frame_clear(&f);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
}

static void expect_load_error(const char *model, const char *weights, const char *names,
                              const char *want)
{
    char err[512] = "";
    vision_detector_config cfg = {
        .kind = VISION_DETECTOR_YOLO, .model = model, .weights = weights, .names = names};
    vision_detector *d = vision_detector_new(&cfg, err, sizeof err);
    CHECK(d == NULL && strstr(err, want) != NULL, "%s: got '%s', want '%s'", model ? model : "-",
          err, want);
    vision_detector_free(d);
}

static void test_bad_input(void)
{
    char path[700], path2[700], ok[700];
    snprintf(ok, sizeof ok, "%s/yolov5.onnx", models);
    expect_load_error("/nonexistent/model.onnx", NULL, NULL, "model file not found");
    expect_load_error(NULL, NULL, NULL, "needs a model");
    snprintf(path, sizeof path, "%s/corrupt.onnx", models);
    write_file(path, "this is not a protobuf\n");
    expect_load_error(path, NULL, NULL, "cannot load model");
    snprintf(path, sizeof path, "%s/orphan.cfg", models);
    write_file(path, "[net]\nwidth=64\nheight=64\n");
    expect_load_error(path, NULL, NULL, "weights file not found");
    snprintf(path2, sizeof path2, "%s/tiny.weights", models);
    snprintf(path, sizeof path, "%s/broken.cfg", models);
    write_file(path, "[net]\nwidth=64\nheight=64\n\n[bogus_layer]\nsize=3\n");
    expect_load_error(path, path2, NULL, "cannot load model");
    expect_load_error(ok, NULL, "/nonexistent/names.txt", "cannot open names file");

    vision_frame f = {0};
    char err[256] = "";
    snprintf(path, sizeof path, "%s/notes.jpg", models);
    write_file(path, "plain text, not a JPEG\n");
    CHECK(vision_image_read(path, &f, err, sizeof err) == -1 && strstr(err, "not an image"),
          "non-image: %s", err);
    CHECK(vision_image_read("/nonexistent.png", &f, err, sizeof err) == -1 &&
              strstr(err, "cannot read"),
          "missing image: %s", err);
    vision_detector_config hog = {.kind = VISION_DETECTOR_HOG};
    vision_detector *d = vision_detector_new(&hog, err, sizeof err);
    vision_object o[4];
    CHECK(d && vision_detector_run(d, NULL, o, 4, err, sizeof err) == -1, "no frame");
    vision_detector_free(d);
    vision_detector_config sim = {.kind = VISION_DETECTOR_SIM};
    d = vision_detector_new(&sim, err, sizeof err);
    CHECK(!d && strstr(err, "simulator"), "sim without a camera: %s", err);
}

/* A names file replaces COCO: class 47 of a two-line file has no name. */
static void test_names_file(void)
{
    char path[700], model[700], err[256];
    snprintf(path, sizeof path, "%s/few.names", models);
    write_file(path, "first thing\n\nsecond\n");
    vision_names names;
    CHECK(vision_names_load(&names, path, err, sizeof err) == 0 && names.n == 2, "names: %s", err);
    char buf[32];
    CHECK(strcmp(vision_names_get(&names, 0, buf, sizeof buf), "first_thing") == 0, "name 0");
    CHECK(strcmp(vision_names_get(&names, 47, buf, sizeof buf), "class_47") == 0, "name 47");
    vision_names_free(&names);
    snprintf(model, sizeof model, "%s/yolov5.onnx", models);
    vision_detector_config cfg = {.kind = VISION_DETECTOR_YOLO, .model = model, .names = path};
    vision_detector *d = vision_detector_new(&cfg, err, sizeof err);
    CHECK(d != NULL, "%s", err);
    if (!d) return;
    /* With the names not matching, the shape alone settles the layout. */
    CHECK(strcmp(vision_detector_describe(d), "yolov5") == 0, "layout with a short names file");
    vision_frame f = fx_frame(128, 128, 0, 0, 0);
    fx_block(&f, 32, 32, 48, 48, 250, 0, 0);
    vision_object o[8];
    int n = vision_detector_run(d, &f, o, 8, err, sizeof err);
    CHECK(n == 1 && strcmp(o[0].cls, "class_47") == 0, "unnamed class: %d %s", n,
          n > 0 ? o[0].cls : "");
    vision_frame_clear(&f);
    vision_detector_free(d);
}

int main(void)
{
    models = fx_make_models(0);
    if (!models) {
        fprintf(stderr, "cannot generate the test models\n");
        return 1;
    }
    for (size_t i = 0; i < sizeof fx_models / sizeof fx_models[0]; i++) {
        test_layout_and_boxes(&fx_models[i]);
        test_nms(&fx_models[i]);
        test_conf_threshold(&fx_models[i]);
    }
    test_darknet_two_heads();
    test_onnx_shape();
    test_debian_yolov3_tiny();
    test_layout_detection();
    test_colors();
    test_tracker();
    test_ids_through_detector();
    test_hog_person();
    test_bad_input();
    test_names_file();
    fx_remove_dir(models);
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
