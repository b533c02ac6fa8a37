#include "vision/yolo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *vision_layout_name(vision_layout l)
{
    switch (l) {
    case VISION_LAYOUT_V5: return "yolov5";
    case VISION_LAYOUT_V8: return "yolov8";
    case VISION_LAYOUT_DARKNET: return "darknet";
    }
    return "?";
}

/* The two trailing dimensions of T after dropping leading 1s: rows x cols. */
static int tensor_matrix(const vision_tensor *t, int *rows, int *cols)
{
    int d = 0;
    while (d < t->ndims - 2 && t->dims[d] == 1)
        d++;
    if (t->ndims - d != 2) return -1;
    *rows = t->dims[d];
    *cols = t->dims[d + 1];
    return *rows > 0 && *cols > 0 ? 0 : -1;
}

int vision_yolo_layout(const vision_tensor *t, int nc_hint, vision_layout *layout, int *nc,
                       char *err, size_t errlen)
{
    int a, b;
    if (tensor_matrix(t, &a, &b) != 0) goto unknown;
    if (nc_hint > 0 && b == nc_hint + 5) {
        *layout = VISION_LAYOUT_V5, *nc = nc_hint;
        return 0;
    }
    if (nc_hint > 0 && a == nc_hint + 4) {
        *layout = VISION_LAYOUT_V8, *nc = nc_hint;
        return 0;
    }
    /* Predictions outnumber features in every real model. */
    if (a < b && a > 4) {
        *layout = VISION_LAYOUT_V8, *nc = a - 4;
        return 0;
    }
    if (b < a && b > 5) {
        *layout = VISION_LAYOUT_V5, *nc = b - 5;
        return 0;
    }
unknown:
    if (errlen) {
        char shape[64] = "";
        size_t k = 0;
        for (int i = 0; i < t->ndims && k < sizeof shape - 12; i++)
            k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%d", i ? "," : "", t->dims[i]);
        snprintf(err, errlen,
                 "model output [%s] is neither YOLOv5 [1,N,5+nc] nor YOLOv8 [1,4+nc,N]", shape);
    }
    return -1;
}

void vision_boxes_free(vision_boxes *b)
{
    free(b->v);
    memset(b, 0, sizeof *b);
}

static float clampf(float v, float lo, float hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Adds a box given in network-input pixels, mapped back to the frame and
 * clipped to it; a box left with no area is dropped. */
static int push_box(vision_boxes *out, const vision_letterbox *lb, int fw, int fh, float cx,
                    float cy, float w, float h, float score, int cls)
{
    float x0 = clampf((cx - w / 2 - (float)lb->pad_x) / lb->scale, 0, (float)fw);
    float x1 = clampf((cx + w / 2 - (float)lb->pad_x) / lb->scale, 0, (float)fw);
    float y0 = clampf((cy - h / 2 - (float)lb->pad_y) / lb->scale, 0, (float)fh);
    float y1 = clampf((cy + h / 2 - (float)lb->pad_y) / lb->scale, 0, (float)fh);
    if (x1 - x0 < 1 || y1 - y0 < 1) return 0; /* all padding, or less than a pixel */
    if (out->n == out->cap) {
        int cap = out->cap ? out->cap * 2 : 64;
        vision_box *v = realloc(out->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        out->v = v, out->cap = cap;
    }
    vision_box *b = &out->v[out->n++];
    b->x0 = x0, b->x1 = x1, b->y0 = y0, b->y1 = y1;
    b->score = score;
    b->cls = cls;
    return 0;
}

/* The best class of NC scores spaced STEP floats apart. */
static int best_class(const float *s, int nc, size_t step, float *score)
{
    int best = 0;
    float v = s[0];
    for (int c = 1; c < nc; c++)
        if (s[(size_t)c * step] > v) v = s[(size_t)c * step], best = c;
    *score = v;
    return best;
}

/* YOLOv8 output is feature-major: score of class c for prediction i is at
 * d[(4 + c) * n + i]. Walking it class by class keeps the reads sequential;
 * going prediction by prediction would stride through memory 80 times. */
static int decode_v8(const float *d, int n, int nc, const vision_letterbox *lb, int fw, int fh,
                     float conf, vision_boxes *out)
{
    float *best = malloc((size_t)n * sizeof *best);
    if (!best) return -1;
    /* First only the best score (a branch-free loop the compiler can
     * vectorise), then the class of the few predictions that pass. */
    memcpy(best, d + (size_t)4 * (size_t)n, (size_t)n * sizeof *best);
    for (int c = 1; c < nc; c++) {
        const float *s = d + (size_t)(4 + c) * (size_t)n;
        for (int i = 0; i < n; i++)
            best[i] = s[i] > best[i] ? s[i] : best[i];
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        if (best[i] < conf) continue;
        float score;
        int c = best_class(d + (size_t)4 * (size_t)n + (size_t)i, nc, (size_t)n, &score);
        rc = push_box(out, lb, fw, fh, d[i], d[n + i], d[2 * n + i], d[3 * n + i], score, c);
    }
    free(best);
    return rc;
}

int vision_yolo_decode(vision_layout layout, const vision_tensor *ts, int nt, int nc,
                       const vision_letterbox *lb, int frame_w, int frame_h, float conf,
                       vision_boxes *out, char *err, size_t errlen)
{
    for (int t = 0; t < nt; t++) {
        int rows, cols;
        const float *d = ts[t].data;
        if (tensor_matrix(&ts[t], &rows, &cols) != 0) goto shape;
        if (layout == VISION_LAYOUT_V8) {
            if (rows != 4 + nc) goto shape;
            if (decode_v8(d, cols, nc, lb, frame_w, frame_h, conf, out) != 0) goto oom;
            continue;
        }
        if (cols != 5 + nc) goto shape;
        for (int i = 0; i < rows; i++) {
            const float *p = d + (size_t)i * (size_t)cols;
            float score;
            if (layout == VISION_LAYOUT_V5 && p[4] < conf) continue;
            int c = best_class(p + 5, nc, 1, &score);
            if (layout == VISION_LAYOUT_V5) score *= p[4];
            if (score < conf) continue;
            float sx = 1, sy = 1; /* Darknet boxes are fractions of the input */
            if (layout == VISION_LAYOUT_DARKNET) sx = (float)lb->in_w, sy = (float)lb->in_h;
            if (push_box(out, lb, frame_w, frame_h, p[0] * sx, p[1] * sy, p[2] * sx, p[3] * sy,
                         score, c) != 0)
                goto oom;
        }
    }
    return 0;
shape:
    if (errlen)
        snprintf(err, errlen, "model output does not fit the %s layout with %d classes",
                 vision_layout_name(layout), nc);
    return -1;
oom:
    if (errlen) snprintf(err, errlen, "out of memory");
    return -1;
}

float vision_iou(const vision_box *a, const vision_box *b)
{
    float ix = (a->x1 < b->x1 ? a->x1 : b->x1) - (a->x0 > b->x0 ? a->x0 : b->x0);
    float iy = (a->y1 < b->y1 ? a->y1 : b->y1) - (a->y0 > b->y0 ? a->y0 : b->y0);
    if (ix <= 0 || iy <= 0) return 0;
    float inter = ix * iy;
    float ua = (a->x1 - a->x0) * (a->y1 - a->y0) + (b->x1 - b->x0) * (b->y1 - b->y0) - inter;
    return ua > 0 ? inter / ua : 0;
}

static int by_score_desc(const void *pa, const void *pb)
{
    const vision_box *a = pa, *b = pb;
    return (a->score < b->score) - (a->score > b->score);
}

int vision_nms(vision_box *boxes, int n, float iou)
{
    if (n <= 1) return n < 0 ? 0 : n;
    qsort(boxes, (size_t)n, sizeof *boxes, by_score_desc);
    int kept = 0;
    for (int i = 0; i < n; i++) {
        int keep = 1;
        for (int j = 0; j < kept && keep; j++)
            if (boxes[j].cls == boxes[i].cls && vision_iou(&boxes[j], &boxes[i]) > iou) keep = 0;
        if (keep) boxes[kept++] = boxes[i];
    }
    return kept;
}
