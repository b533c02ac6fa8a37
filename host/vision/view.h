/*
 * Camera frames for the web UI: a view drawn as an image with its detection
 * boxes and encoded as JPEG (host/vision/view_jpeg.cpp, OpenCV).
 */
#ifndef ALOFT_VISION_VIEW_H
#define ALOFT_VISION_VIEW_H

#include "vision/objects.h"

#include <stddef.h>

/* Draws WIDTH x HEIGHT pixels: the simulated room (floor, sky, the objects
 * as filled boxes), then each of the N detections as an outlined box
 * labelled "name conf", and CAPTION (may be NULL) along the bottom. Returns
 * the JPEG bytes (malloc'd, *LEN of them), or NULL with a message. */
unsigned char *vision_view_jpeg(int width, int height, const vision_object *objs, int n,
                                const char *caption, size_t *len, char *err, size_t errlen);

#endif
