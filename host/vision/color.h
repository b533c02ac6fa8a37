/*
 * The dominant colour of a box, as one word of a small palette that an LLM
 * and a user both understand: red, orange, yellow, green, blue, purple, pink,
 * brown, black, white, gray.
 */
#ifndef ALOFT_VISION_COLOR_H
#define ALOFT_VISION_COLOR_H

#include "vision/opencv.h"

/* The palette name of one pixel. */
const char *vision_color_of_rgb(int r, int g, int b);

/* The most common palette name among pixels sampled from the middle of the
 * box (x0, y0)-(x1, y1) of F (frame pixels; the border is skipped because
 * boxes include background there). "" for an empty box. */
const char *vision_color_of_box(const vision_frame *f, float x0, float y0, float x1, float y1);

#endif
