#include "vision/detector.h"

#include "clock.h"
#include "vision/color.h"
#include "vision/names.h"
#include "vision/onnx_shape.h"
#include "vision/yolo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_OUTPUTS 8

struct vision_detector {
    vision_detector_kind kind;
    vision_layout layout;
    vision_net *net;
    vision_names names;
    int nc;
    int in_w, in_h;
    float conf, nms;
    float *blob;
    vision_boxes boxes;
    vision_observe_fn observe;
    void *observe_ud;
    double infer_ms;
};

int vision_detector_kind_parse(const char *s, vision_detector_kind *kind)
{
    if (strcmp(s, "yolo") == 0)
        *kind = VISION_DETECTOR_YOLO;
    else if (strcmp(s, "hog") == 0)
        *kind = VISION_DETECTOR_HOG;
    else if (strcmp(s, "sim") == 0)
        *kind = VISION_DETECTOR_SIM;
    else
        return -1;
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* PATH with its extension OLD replaced by NEW, malloc'd. */
static char *swap_extension(const char *path, const char *old, const char *new_ext)
{
    size_t base = strlen(path) - strlen(old);
    char *s = malloc(base + strlen(new_ext) + 1);
    if (s) {
        memcpy(s, path, base);
        strcpy(s + base, new_ext);
    }
    return s;
}

/* width= and height= of a Darknet cfg's [net] section. */
static void darknet_input_size(const char *cfg, int *w, int *h)
{
    FILE *f = fopen(cfg, "r");
    if (!f) return;
    char line[256];
    bool in_net = false;
    while (fgets(line, sizeof line, f)) {
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '[') {
            if (in_net) break;
            in_net = strncmp(s, "[net]", 5) == 0 || strncmp(s, "[network]", 9) == 0;
            continue;
        }
        if (!in_net) continue;
        if (sscanf(s, "width = %d", w) == 1 || sscanf(s, "width=%d", w) == 1) continue;
        if (sscanf(s, "height = %d", h) == 1) continue;
        sscanf(s, "height=%d", h);
    }
    fclose(f);
}

/* Loads the net, settles its input size and, by one run on a grey frame,
 * its output layout. */
static int yolo_open(vision_detector *d, const vision_detector_config *cfg, char *err,
                     size_t errlen)
{
    const char *model = cfg->model;
    char *cfg_path = NULL, *weights = NULL;
    if (!model) {
        snprintf(err, errlen, "the yolo detector needs a model (--model FILE)");
        return -1;
    }
    bool darknet = ends_with(model, ".cfg") || ends_with(model, ".weights");
    if (ends_with(model, ".weights")) {
        cfg_path = swap_extension(model, ".weights", ".cfg");
        weights = strdup(cfg->weights ? cfg->weights : model);
    } else if (darknet) {
        cfg_path = strdup(model);
        weights = cfg->weights ? strdup(cfg->weights) : swap_extension(model, ".cfg", ".weights");
    }
    if (darknet && (!cfg_path || !weights)) {
        free(cfg_path), free(weights);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    d->net = vision_net_load(darknet ? cfg_path : model, weights, err, errlen);
    int w = 0, h = 0;
    if (d->net && darknet) darknet_input_size(cfg_path, &w, &h);
    free(cfg_path);
    free(weights);
    if (!d->net) return -1;
    if (!darknet && vision_onnx_input_size(model, &w, &h) != 0) w = h = 0;
    if (cfg->input_size > 0) w = h = cfg->input_size;
    if (w <= 0 || h <= 0) w = h = VISION_DEFAULT_INPUT;
    d->in_w = w, d->in_h = h;
    d->blob = malloc((size_t)w * (size_t)h * 3 * sizeof *d->blob);
    if (!d->blob) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < (size_t)w * (size_t)h * 3; i++)
        d->blob[i] = 114.0f / 255.0f;
    vision_tensor outs[MAX_OUTPUTS];
    char why[256];
    int n = vision_net_forward(d->net, d->blob, w, h, outs, MAX_OUTPUTS, why, sizeof why);
    if (n <= 0) {
        if (n == 0)
            snprintf(err, errlen, "%s: model has no outputs", model);
        else
            snprintf(err, errlen, "%s: the model does not run on a %dx%d input (%s)", model, w, h,
                     why);
        return -1;
    }
    int hint = d->names.n;
    if (darknet) {
        d->layout = VISION_LAYOUT_DARKNET;
        d->nc = outs[0].dims[outs[0].ndims - 1] - 5;
        if (d->nc <= 0) {
            snprintf(err, errlen, "%s: Darknet output has no class scores", model);
            return -1;
        }
    } else if (vision_yolo_layout(&outs[0], hint, &d->layout, &d->nc, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", model, why);
        return -1;
    }
    return 0;
}

vision_detector *vision_detector_new(const vision_detector_config *cfg, char *err, size_t errlen)
{
    vision_detector *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    d->kind = cfg->kind;
    d->conf = cfg->conf > 0 ? cfg->conf : VISION_DEFAULT_CONF;
    d->nms = cfg->nms > 0 ? cfg->nms : VISION_DEFAULT_NMS;
    d->names.n = VISION_COCO_CLASSES;
    switch (cfg->kind) {
    case VISION_DETECTOR_SIM:
        if (!cfg->observe) {
            snprintf(err, errlen, "the sim detector needs the simulator's camera");
            goto fail;
        }
        d->observe = cfg->observe;
        d->observe_ud = cfg->observe_ud;
        return d;
    case VISION_DETECTOR_HOG: return d;
    case VISION_DETECTOR_YOLO:
        if (vision_names_load(&d->names, cfg->names, err, errlen) != 0) goto fail;
        if (yolo_open(d, cfg, err, errlen) != 0) goto fail;
        return d;
    }
    snprintf(err, errlen, "unknown detector");
fail:
    vision_detector_free(d);
    return NULL;
}

vision_detector *vision_detector_from_observe(vision_observe_fn fn, void *ud, char *err,
                                              size_t errlen)
{
    vision_detector_config cfg = {.kind = VISION_DETECTOR_SIM, .observe = fn, .observe_ud = ud};
    return vision_detector_new(&cfg, err, errlen);
}

bool vision_detector_needs_frames(const vision_detector *d)
{
    return d->kind != VISION_DETECTOR_SIM;
}

const char *vision_detector_describe(const vision_detector *d)
{
    switch (d->kind) {
    case VISION_DETECTOR_HOG: return "hog";
    case VISION_DETECTOR_SIM: return "sim";
    case VISION_DETECTOR_YOLO: return vision_layout_name(d->layout);
    }
    return "?";
}

void vision_detector_input_size(const vision_detector *d, int *w, int *h)
{
    *w = d->in_w;
    *h = d->in_h;
}

double vision_detector_last_inference_ms(const vision_detector *d)
{
    return d->infer_ms;
}

/* Boxes in frame pixels -> objects in normalised coordinates, with colour. */
static int boxes_to_objects(vision_detector *d, const vision_frame *f, const vision_box *b, int n,
                            vision_object *out, int max)
{
    int k = 0;
    for (int i = 0; i < n && k < max; i++) {
        vision_object *o = &out[k++];
        memset(o, 0, sizeof *o);
        char buf[32];
        const char *cls = d->kind == VISION_DETECTOR_HOG
                              ? "person"
                              : vision_names_get(&d->names, b[i].cls, buf, sizeof buf);
        snprintf(o->cls, sizeof o->cls, "%s", cls);
        o->x = (b[i].x0 + b[i].x1) / 2 / (float)f->w;
        o->y = (b[i].y0 + b[i].y1) / 2 / (float)f->h;
        o->w = (b[i].x1 - b[i].x0) / (float)f->w;
        o->h = (b[i].y1 - b[i].y0) / (float)f->h;
        o->conf = b[i].score;
        snprintf(o->color, sizeof o->color, "%s",
                 vision_color_of_box(f, b[i].x0, b[i].y0, b[i].x1, b[i].y1));
    }
    return k;
}

static int run_yolo(vision_detector *d, const vision_frame *f, vision_object *out, int max,
                    char *err, size_t errlen)
{
    vision_letterbox lb;
    if (vision_letterbox_frame(f, d->in_w, d->in_h, d->blob, &lb, err, errlen) != 0) return -1;
    vision_tensor outs[MAX_OUTPUTS];
    double t0 = clock_now_ms();
    int nt = vision_net_forward(d->net, d->blob, d->in_w, d->in_h, outs, MAX_OUTPUTS, err, errlen);
    d->infer_ms = clock_now_ms() - t0;
    if (nt < 0) return -1;
    d->boxes.n = 0;
    /* ONNX exports put the detections in their first output; later ones,
     * if any, are the raw per-scale maps. Darknet has one per [yolo] layer. */
    if (d->layout != VISION_LAYOUT_DARKNET && nt > 1) nt = 1;
    if (vision_yolo_decode(d->layout, outs, nt, d->nc, &lb, f->w, f->h, d->conf, &d->boxes, err,
                           errlen) != 0)
        return -1;
    int n = vision_nms(d->boxes.v, d->boxes.n, d->nms);
    return boxes_to_objects(d, f, d->boxes.v, n, out, max);
}

static int run_hog(vision_detector *d, const vision_frame *f, vision_object *out, int max,
                   char *err, size_t errlen)
{
    vision_box boxes[VISION_MAX_OBJECTS];
    double t0 = clock_now_ms();
    int n = vision_hog_detect(f, boxes, VISION_MAX_OBJECTS, err, errlen);
    d->infer_ms = clock_now_ms() - t0;
    if (n < 0) return -1;
    /* The SVM margin is unbounded; m / (1 + m) maps it into 0..1 so that the
     * same confidence threshold means something for every detector. */
    int k = 0;
    for (int i = 0; i < n; i++) {
        float m = boxes[i].score > 0 ? boxes[i].score : 0;
        boxes[i].score = m / (1 + m);
        if (boxes[i].score >= d->conf) boxes[k++] = boxes[i];
    }
    k = vision_nms(boxes, k, d->nms);
    return boxes_to_objects(d, f, boxes, k, out, max);
}

int vision_detector_run(vision_detector *d, const vision_frame *f, vision_object *out, int max,
                        char *err, size_t errlen)
{
    if (d->kind == VISION_DETECTOR_SIM) {
        double t0 = clock_now_ms();
        int n = d->observe(d->observe_ud, out, max, err, errlen);
        d->infer_ms = clock_now_ms() - t0;
        return n;
    }
    if (!f || !f->bgr || f->w <= 0 || f->h <= 0) {
        snprintf(err, errlen, "no frame to detect on");
        return -1;
    }
    return d->kind == VISION_DETECTOR_YOLO ? run_yolo(d, f, out, max, err, errlen)
                                           : run_hog(d, f, out, max, err, errlen);
}

void vision_detector_free(vision_detector *d)
{
    if (!d) return;
    if (d->net) vision_net_free(d->net);
    vision_names_free(&d->names);
    vision_boxes_free(&d->boxes);
    free(d->blob);
    free(d);
}
