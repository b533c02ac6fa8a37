/*
 * Pictures of the simulated view (vision/paint.h) with each box outlined and
 * labelled, encoded as PNG (drone/pictures_png.c): a simulated mission's
 * take_picture loads no OpenCV (drone/pictures.c writes the file).
 */
#include "drone/pictures.h"
#include "drone/sim.h"
#include "vision/paint.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest picture drawn: the scene's camera size is checked when the
 * scene is read, this guards the multiplications below all the same. */
#define PICTURE_MAX_SIDE 8192

int sim_picture_encode(int width, int height, const vision_object *objs, int n,
                       unsigned char **data, size_t *len, char *err, size_t errlen)
{
    *data = NULL;
    *len = 0;
    if (width < 1 || height < 1 || width > PICTURE_MAX_SIDE || height > PICTURE_MAX_SIDE) {
        snprintf(err, errlen, "picture size %dx%d is out of range", width, height);
        return -1;
    }
    if (n > VISION_MAX_OBJECTS) n = VISION_MAX_OBJECTS;
    if (n < 0) n = 0;
    paint_image img = {width, height, malloc((size_t)width * (size_t)height * 3)};
    if (!img.bgr) {
        snprintf(err, errlen, "out of memory for a picture");
        return -1;
    }
    int order[VISION_MAX_OBJECTS];
    paint_view(&img, objs, n, order);
    static const unsigned char edge[3] = {20, 20, 20}, ink[3] = {10, 10, 10};
    for (int i = 0; i < n; i++) {
        const vision_object *o = &objs[order[i]];
        paint_rect r = paint_box(o, width, height);
        paint_rect_draw(&img, r, edge, 2);
        int tw, th;
        paint_text_size(o->name, 2, &tw, &th);
        int ty = r.y - th - 4 < 2 ? r.y + 4 : r.y - th - 4;
        paint_text(&img, r.x + 3, ty, o->name, ink, 2);
    }

    int rc = pictures_png(img.bgr, width, height, width * 3, data, len, err, errlen);
    free(img.bgr);
    return rc;
}
