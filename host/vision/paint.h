/*
 * The simulated view painted into a BGR buffer, in plain C so that a
 * simulated mission's take_picture needs no OpenCV (sim_picture.c writes it
 * as PNG with libpng); the web UI's camera (vision/view_jpeg.cpp, in the
 * OpenCV module) paints the same view before drawing its overlay.
 *
 * A sky/floor background and each detection as a box filled with its colour,
 * larger boxes first so that things standing on furniture (the usual nesting
 * in a room) stay visible on top of it. Everything drawn is clipped to the
 * image.
 */
#ifndef ALOFT_VISION_PAINT_H
#define ALOFT_VISION_PAINT_H

#include "vision/objects.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A WIDTH x HEIGHT image, 3 bytes (B, G, R) a pixel, rows of WIDTH * 3. */
typedef struct paint_image {
    int w, h;
    unsigned char *bgr;
} paint_image;

/* A rectangle in pixels: top left, width and height (at least 1 each). */
typedef struct paint_rect {
    int x, y, w, h;
} paint_rect;

/* The fill of a colour name as B, G, R; a neutral grey for names not listed. */
void paint_color(const char *name, unsigned char bgr[3]);

/* Object O's box in pixels of a WIDTH x HEIGHT image. */
paint_rect paint_box(const vision_object *o, int width, int height);

/* Fills R (THICKNESS <= 0) or outlines it THICKNESS pixels wide, inside R. */
void paint_rect_draw(paint_image *img, paint_rect r, const unsigned char bgr[3], int thickness);

/* Writes TEXT with its top left at (X, Y), each font pixel SCALE pixels
 * wide. Letters are drawn as capitals; a character the font lacks as '?'.
 * Returns the width drawn in pixels. */
int paint_text(paint_image *img, int x, int y, const char *text, const unsigned char bgr[3],
               int scale);

/* The width and height TEXT takes at SCALE. */
void paint_text_size(const char *text, int scale, int *w, int *h);

/* Paints the N objects OBJS over the background into IMG, whose buffer the
 * caller allocated. Writes the painting order (largest box first) to ORDER
 * (N entries; may be NULL) for callers that draw more over each box. */
void paint_view(paint_image *img, const vision_object *objs, int n, int *order);

#ifdef __cplusplus
}
#endif

#endif
