/*
 * Frames (vision/opencv.h) as plain memory: freeing and copying need no
 * OpenCV, so they stay in the program rather than in the OpenCV module.
 */
#include "vision/opencv.h"

#include <stdlib.h>
#include <string.h>

void vision_frame_clear(vision_frame *f)
{
    free(f->bgr);
    memset(f, 0, sizeof *f);
}

int vision_frame_copy(vision_frame *dst, const vision_frame *src)
{
    size_t need = (size_t)src->w * 3 * (size_t)src->h;
    size_t have = dst->bgr ? (size_t)dst->stride * (size_t)dst->h : 0;
    if (!dst->bgr || have < need) {
        free(dst->bgr);
        dst->bgr = malloc(need ? need : 1);
        if (!dst->bgr) return -1;
    }
    dst->w = src->w;
    dst->h = src->h;
    dst->stride = src->w * 3;
    for (int y = 0; y < src->h; y++)
        memcpy(dst->bgr + (size_t)y * (size_t)dst->stride,
               src->bgr + (size_t)y * (size_t)src->stride, (size_t)dst->stride);
    dst->t_ms = src->t_ms;
    dst->seq = src->seq;
    return 0;
}
