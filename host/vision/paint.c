/*
 * The simulated view in plain C (paint.h). The font is our own 5 x 7
 * pixel face: enough for object names ("apple_2"), numbers and captions.
 */
#include "vision/paint.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define FONT_W 5
#define FONT_H 7

/* Each glyph is 7 rows of 5 bits, the leftmost pixel in bit 4. */
static const struct {
    char c;
    unsigned char rows[FONT_H];
} font[] = {
    {' ', {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
    {'A', {0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}},
    {'B', {0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e}},
    {'C', {0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e}},
    {'D', {0x1e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1e}},
    {'E', {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f}},
    {'F', {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10}},
    {'G', {0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f}},
    {'H', {0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}},
    {'I', {0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e}},
    {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c}},
    {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}},
    {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f}},
    {'M', {0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11}},
    {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
    {'O', {0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}},
    {'P', {0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10}},
    {'Q', {0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d}},
    {'R', {0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11}},
    {'S', {0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e}},
    {'T', {0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}},
    {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04}},
    {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a}},
    {'X', {0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11}},
    {'Y', {0x11, 0x11, 0x0a, 0x04, 0x04, 0x04, 0x04}},
    {'Z', {0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f}},
    {'0', {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e}},
    {'1', {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e}},
    {'2', {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f}},
    {'3', {0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e}},
    {'4', {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02}},
    {'5', {0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e}},
    {'6', {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e}},
    {'7', {0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e}},
    {'9', {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c}},
    {'_', {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f}},
    {'-', {0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00}},
    {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c}},
    {':', {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00}},
    {'/', {0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x10}},
    {'(', {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}},
    {')', {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}},
    {'?', {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}},
};

static const unsigned char *glyph(char c)
{
    char up = (char)toupper((unsigned char)c);
    size_t unknown = 0;
    for (size_t i = 0; i < sizeof font / sizeof *font; i++) {
        if (font[i].c == up) return font[i].rows;
        if (font[i].c == '?') unknown = i;
    }
    return font[unknown].rows;
}

void paint_color(const char *name, unsigned char bgr[3])
{
    static const struct {
        const char *name;
        unsigned char b, g, r;
    } colors[] = {
        {"red", 40, 40, 210},     {"green", 60, 170, 60},   {"blue", 200, 90, 40},
        {"yellow", 40, 220, 240}, {"orange", 30, 140, 250}, {"purple", 150, 60, 130},
        {"pink", 190, 150, 250},  {"brown", 40, 80, 130},   {"black", 30, 30, 30},
        {"white", 245, 245, 245}, {"gray", 140, 140, 140},  {"grey", 140, 140, 140},
    };
    bgr[0] = 160, bgr[1] = 150, bgr[2] = 140;
    for (size_t i = 0; name && i < sizeof colors / sizeof *colors; i++)
        if (strcmp(colors[i].name, name) == 0) {
            bgr[0] = colors[i].b, bgr[1] = colors[i].g, bgr[2] = colors[i].r;
            return;
        }
}

/* A float pixel coordinate as an int, NaN and the far-off clamped: the
 * objects come from detections, which are checked but never trusted. */
static int to_px(double v)
{
    if (!(v > -1e6)) return -1000000;
    if (v > 1e6) return 1000000;
    return (int)v;
}

paint_rect paint_box(const vision_object *o, int width, int height)
{
    paint_rect r = {to_px((o->x - o->w / 2) * width), to_px((o->y - o->h / 2) * height),
                    to_px(o->w * width), to_px(o->h * height)};
    if (r.w < 1) r.w = 1;
    if (r.h < 1) r.h = 1;
    return r;
}

/* Fills the pixels [x0, x1) x [y0, y1), clipped to the image. */
static void fill(paint_image *img, long x0, long y0, long x1, long y1, const unsigned char bgr[3])
{
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > img->w) x1 = img->w;
    if (y1 > img->h) y1 = img->h;
    for (long y = y0; y < y1; y++) {
        unsigned char *p = img->bgr + ((size_t)y * (size_t)img->w + (size_t)x0) * 3;
        for (long x = x0; x < x1; x++, p += 3)
            p[0] = bgr[0], p[1] = bgr[1], p[2] = bgr[2];
    }
}

void paint_rect_draw(paint_image *img, paint_rect r, const unsigned char bgr[3], int thickness)
{
    long x0 = r.x, y0 = r.y, x1 = (long)r.x + r.w, y1 = (long)r.y + r.h;
    if (thickness <= 0) {
        fill(img, x0, y0, x1, y1, bgr);
        return;
    }
    fill(img, x0, y0, x1, y0 + thickness, bgr);
    fill(img, x0, y1 - thickness, x1, y1, bgr);
    fill(img, x0, y0, x0 + thickness, y1, bgr);
    fill(img, x1 - thickness, y0, x1, y1, bgr);
}

void paint_text_size(const char *text, int scale, int *w, int *h)
{
    size_t n = strlen(text);
    *w = n ? (int)n * (FONT_W + 1) * scale - scale : 0;
    *h = FONT_H * scale;
}

int paint_text(paint_image *img, int x, int y, const char *text, const unsigned char bgr[3],
               int scale)
{
    int x0 = x;
    for (const char *c = text; *c; c++) {
        const unsigned char *rows = glyph(*c);
        for (int gy = 0; gy < FONT_H; gy++)
            for (int gx = 0; gx < FONT_W; gx++)
                if (rows[gy] & (0x10 >> gx))
                    fill(img, (long)x + gx * scale, (long)y + gy * scale,
                         (long)x + (gx + 1) * scale, (long)y + (gy + 1) * scale, bgr);
        x += (FONT_W + 1) * scale;
    }
    return x - x0;
}

void paint_view(paint_image *img, const vision_object *objs, int n, int *order)
{
    static const unsigned char sky[3] = {235, 215, 190}, floor_[3] = {150, 170, 180};
    fill(img, 0, 0, img->w, img->h / 2, sky);
    fill(img, 0, img->h / 2, img->w, img->h, floor_);
    int local[VISION_MAX_OBJECTS];
    int *ord = order ? order : local;
    if (!order && n > VISION_MAX_OBJECTS) n = VISION_MAX_OBJECTS;
    for (int i = 0; i < n; i++)
        ord[i] = i;
    /* Larger boxes first; an insertion sort is stable (equal boxes keep
     * their order, so a view always paints the same) and needs no global,
     * as qsort's comparison would (views are painted on several threads). */
    for (int i = 1; i < n; i++) {
        int k = ord[i], j = i - 1;
        float sk = objs[k].w * objs[k].h;
        while (j >= 0 && objs[ord[j]].w * objs[ord[j]].h < sk) {
            ord[j + 1] = ord[j];
            j--;
        }
        ord[j + 1] = k;
    }
    for (int i = 0; i < n; i++) {
        unsigned char c[3];
        paint_color(objs[ord[i]].color, c);
        paint_rect_draw(img, paint_box(&objs[ord[i]], img->w, img->h), c, 0);
    }
}
