#include "vision/color.h"

#include <string.h>

enum {
    C_RED,
    C_ORANGE,
    C_YELLOW,
    C_GREEN,
    C_BLUE,
    C_PURPLE,
    C_PINK,
    C_BROWN,
    C_BLACK,
    C_WHITE,
    C_GRAY,
    C_COUNT
};

static const char *const palette[C_COUNT] = {"red",  "orange", "yellow", "green", "blue", "purple",
                                             "pink", "brown",  "black",  "white", "gray"};

/* Hue, saturation and value thresholds chosen for names people use: dark
 * oranges read as brown, pale reds as pink, washed-out colours as gray. */
static int classify(int r, int g, int b)
{
    int mx = r > g ? (r > b ? r : b) : (g > b ? g : b);
    int mn = r < g ? (r < b ? r : b) : (g < b ? g : b);
    float v = (float)mx / 255.0f;
    float s = mx ? (float)(mx - mn) / (float)mx : 0.0f;
    if (v < 0.2f) return C_BLACK;
    if (s < 0.25f) return v > 0.8f ? C_WHITE : v < 0.3f ? C_BLACK : C_GRAY;
    float d = (float)(mx - mn), h;
    if (mx == r)
        h = 60.0f * ((float)(g - b) / d);
    else if (mx == g)
        h = 60.0f * ((float)(b - r) / d + 2.0f);
    else
        h = 60.0f * ((float)(r - g) / d + 4.0f);
    if (h < 0) h += 360.0f;
    if (h < 15 || h >= 345) return s < 0.5f && v > 0.7f ? C_PINK : C_RED;
    if (h < 40) return v < 0.6f ? C_BROWN : C_ORANGE;
    if (h < 70) return v < 0.45f ? C_BROWN : C_YELLOW;
    if (h < 170) return C_GREEN;
    if (h < 255) return C_BLUE;
    if (h < 290) return C_PURPLE;
    return C_PINK;
}

const char *vision_color_of_rgb(int r, int g, int b)
{
    return palette[classify(r, g, b)];
}

const char *vision_color_of_box(const vision_frame *f, float x0, float y0, float x1, float y1)
{
    /* The middle 60% of the box, at most 32 x 32 samples: enough for a vote. */
    float mx = (x1 - x0) * 0.2f, my = (y1 - y0) * 0.2f;
    int ax = (int)(x0 + mx), bx = (int)(x1 - mx + 0.5f);
    int ay = (int)(y0 + my), by = (int)(y1 - my + 0.5f);
    if (ax < 0) ax = 0;
    if (ay < 0) ay = 0;
    if (bx > f->w) bx = f->w;
    if (by > f->h) by = f->h;
    if (bx <= ax || by <= ay) return "";
    int sx = (bx - ax + 31) / 32, sy = (by - ay + 31) / 32;
    int votes[C_COUNT];
    memset(votes, 0, sizeof votes);
    for (int y = ay; y < by; y += sy) {
        const unsigned char *row = f->bgr + (size_t)y * (size_t)f->stride;
        for (int x = ax; x < bx; x += sx) {
            const unsigned char *p = row + (size_t)x * 3;
            votes[classify(p[2], p[1], p[0])]++;
        }
    }
    int best = 0;
    for (int c = 1; c < C_COUNT; c++)
        if (votes[c] > votes[best]) best = c;
    return palette[best];
}
