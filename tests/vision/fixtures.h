/*
 * Shared by the vision tests and benchmark: the block-scoring models of
 * gen_models.py (generated into a temporary directory at run time) and
 * synthetic frames with coloured blocks.
 */
#ifndef ALOFT_TESTS_VISION_FIXTURES_H
#define ALOFT_TESTS_VISION_FIXTURES_H

#include "vision/opencv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What each generated model does (see gen_models.py). */
typedef struct fx_model {
    const char *file;   /* in the model directory */
    const char *layout; /* what the detector should report */
    int size, cell;
    int anchors; /* 2: every cell also predicts a duplicate box */
} fx_model;

static const fx_model fx_models[] = {
    {"yolov5.onnx", "yolov5", 128, 16, 2},
    {"yolov8.onnx", "yolov8", 160, 32, 2},
    {"tiny.cfg", "darknet", 64, 16, 1},
};

static inline float fx_sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/* The confidence MODEL gives a block whose own channel is V (0..1) and the
 * others 0. */
static inline float fx_expected_conf(const fx_model *m, float v)
{
    if (strcmp(m->layout, "yolov5") == 0) return 0.9f * v;
    if (strcmp(m->layout, "yolov8") == 0) return v;
    return fx_sigmoid(8.0f) * fx_sigmoid(10.0f * v - 3.0f);
}

/* Generates the models into a fresh temporary directory (under $BUILD when
 * set) and returns its path, or NULL. */
static char *fx_make_models(int bench)
{
    static char dir[512];
    const char *base = getenv("BUILD");
    snprintf(dir, sizeof dir, "%s/vision_models_XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) return NULL;
    /* The generator sits beside this header in the source tree. */
    char here[512];
    snprintf(here, sizeof here, "%s", __FILE__);
    char *slash = strrchr(here, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(here, sizeof here, ".");
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s/gen_models.py' '%s'%s", here, dir,
             bench ? " --bench" : "");
    if (system(cmd) != 0) return NULL;
    return dir;
}

static inline void fx_remove_dir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static inline vision_frame fx_frame(int w, int h, int r, int g, int b)
{
    vision_frame f = {.w = w, .h = h, .stride = w * 3};
    f.bgr = malloc((size_t)w * (size_t)h * 3);
    for (int i = 0; i < w * h; i++) {
        f.bgr[i * 3] = (unsigned char)b;
        f.bgr[i * 3 + 1] = (unsigned char)g;
        f.bgr[i * 3 + 2] = (unsigned char)r;
    }
    return f;
}

static inline void fx_block(vision_frame *f, int x0, int y0, int x1, int y1, int r, int g, int b)
{
    for (int y = y0 < 0 ? 0 : y0; y < y1 && y < f->h; y++)
        for (int x = x0 < 0 ? 0 : x0; x < x1 && x < f->w; x++) {
            unsigned char *p = f->bgr + (size_t)y * (size_t)f->stride + (size_t)x * 3;
            p[0] = (unsigned char)b, p[1] = (unsigned char)g, p[2] = (unsigned char)r;
        }
}

#endif
