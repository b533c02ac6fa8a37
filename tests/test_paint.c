/* The simulated view painted in C (host/vision/paint.h) and written as
 * PNG by libpng (sim_picture_encode): colours, the painting order, clipping
 * of boxes that leave the image or hold NaN, the font, and a PNG that the
 * OpenCV module reads back with the same pixels. */
#include "check.h"
#include "drone/sim.h"
#include "vision/paint.h"
#include "vision/opencv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 160
#define H 120

static const unsigned char *px(const paint_image *img, int x, int y)
{
    return img->bgr + ((size_t)y * (size_t)img->w + (size_t)x) * 3;
}

static int same(const unsigned char *p, const unsigned char c[3])
{
    return p[0] == c[0] && p[1] == c[1] && p[2] == c[2];
}

static vision_object obj(const char *name, const char *color, float x, float y, float w, float h)
{
    vision_object o;
    memset(&o, 0, sizeof o);
    snprintf(o.name, sizeof o.name, "%s", name);
    snprintf(o.color, sizeof o.color, "%s", color);
    o.x = x, o.y = y, o.w = w, o.h = h, o.conf = 0.9f;
    return o;
}

static void test_view(void)
{
    static const unsigned char sky[3] = {235, 215, 190}, floor_[3] = {150, 170, 180};
    unsigned char red[3], white[3], grey[3];
    paint_color("red", red);
    paint_color("white", white);
    paint_color("no such colour", grey);
    CHECK(red[2] > red[0] && red[2] > red[1], "red is red in BGR: %d %d %d", red[0], red[1],
          red[2]);
    CHECK(!same(grey, red) && !same(grey, white), "an unknown colour is a neutral grey");

    paint_image img = {W, H, malloc(W * H * 3)};
    /* The small red box is listed first but painted last (larger first). */
    vision_object objs[] = {obj("apple_1", "red", 0.5f, 0.5f, 0.1f, 0.1f),
                            obj("table_1", "white", 0.5f, 0.6f, 0.5f, 0.5f)};
    int order[2];
    paint_view(&img, objs, 2, order);
    CHECK(order[0] == 1 && order[1] == 0, "larger first: %d %d", order[0], order[1]);
    CHECK(same(px(&img, 0, 0), sky), "sky at the top");
    CHECK(same(px(&img, 0, H - 1), floor_), "floor at the bottom");
    CHECK(same(px(&img, W / 2, H / 2), red), "the apple on top of the table");
    CHECK(same(px(&img, W / 2, (int)(0.8 * H)), white), "the table around it");

    /* Boxes partly or wholly outside, or with NaN and huge coordinates, are
     * clipped: nothing outside the buffer is touched (ASan would say). */
    vision_object odd[] = {
        obj("a", "red", -0.2f, 0.5f, 0.5f, 0.5f), obj("b", "red", 1.2f, 1.2f, 0.5f, 0.5f),
        obj("c", "red", NAN, NAN, NAN, NAN), obj("d", "red", 1e30f, -1e30f, 1e30f, 1e30f)};
    paint_view(&img, odd, 4, NULL);
    CHECK(same(px(&img, 0, H / 2), red), "a box leaving on the left is painted up to the edge");
    CHECK(same(px(&img, W - 1, H - 1), red), "a box leaving at the bottom right too");

    /* Outlines are THICKNESS wide, inside the box. */
    paint_view(&img, NULL, 0, NULL);
    paint_rect r = {10, 10, 20, 20};
    paint_rect_draw(&img, r, red, 2);
    CHECK(same(px(&img, 10, 10), red) && same(px(&img, 11, 20), red), "the outline");
    CHECK(same(px(&img, 12, 20), sky) && same(px(&img, 20, 20), sky), "inside stays");
    CHECK(same(px(&img, 9, 9), sky) && same(px(&img, 30, 30), sky), "outside stays");

    /* Text: glyphs are drawn inside the size the text reports, and only there. */
    paint_view(&img, NULL, 0, NULL);
    int tw, th;
    paint_text_size("ab_1", 2, &tw, &th);
    CHECK(tw == 4 * 12 - 2 && th == 14, "text size %dx%d", tw, th);
    CHECK(paint_text(&img, 5, 5, "ab_1", red, 2) == 4 * 12, "advance");
    int inside = 0, outside = 0;
    for (int y = 0; y < H / 2; y++)
        for (int x = 0; x < W; x++) {
            int in = x >= 5 && x < 5 + tw && y >= 5 && y < 5 + th;
            if (same(px(&img, x, y), red)) in ? inside++ : outside++;
        }
    CHECK(inside > 40 && outside == 0, "text pixels: %d inside, %d outside", inside, outside);
    /* '_' is the bottom row of its cell, "a" and "A" look the same */
    CHECK(same(px(&img, 5 + 2 * 12, 5 + 13), red), "the underscore's bottom row");
    paint_view(&img, NULL, 0, NULL);
    paint_text(&img, W - 3, H - 3, "\x01\xff?", red, 3); /* clipped, unknown glyphs */
    free(img.bgr);
}

static void test_png(void)
{
    vision_object objs[] = {obj("apple_1", "red", 0.5f, 0.75f, 0.2f, 0.2f)};
    unsigned char *png = NULL;
    size_t len = 0;
    char err[256] = "";
    CHECK(sim_picture_encode(W, H, objs, 1, &png, &len, err, sizeof err) == 0, "%s", err);
    CHECK(len > 8 && memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0, "a PNG signature");
    char path[] = "/tmp/aloft-test-paint-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    CHECK(f && fwrite(png, 1, len, f) == len);
    if (f) fclose(f);
    free(png);
    /* Read back through the OpenCV module: the same size, sky, and the apple. */
    vision_frame fr = {0};
    CHECK(vision_image_read(path, &fr, err, sizeof err) == 0, "%s", err);
    unsigned char red[3];
    paint_color("red", red);
    CHECK(fr.w == W && fr.h == H, "size %dx%d", fr.w, fr.h);
    if (fr.bgr && fr.w == W && fr.h == H) {
        const unsigned char *c = fr.bgr + ((size_t)(0.75 * H) * fr.stride + (W / 2) * 3);
        CHECK(same(c, red), "the apple's centre is its colour: %d %d %d", c[0], c[1], c[2]);
        CHECK(fr.bgr[0] == 235 && fr.bgr[1] == 215 && fr.bgr[2] == 190, "the sky");
    }
    vision_frame_clear(&fr);
    remove(path);

    CHECK(sim_picture_encode(0, H, objs, 1, &png, &len, err, sizeof err) == -1 && !png,
          "a zero width is refused");
    CHECK(sim_picture_encode(W, 100000, objs, 1, &png, &len, err, sizeof err) == -1,
          "a huge height is refused: %s", err);
    CHECK(strstr(err, "out of range") != NULL, "%s", err);
}

int main(void)
{
    test_view();
    test_png();
    return failures ? 1 : 0;
}
