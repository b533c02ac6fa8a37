#include "vision/objects.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

size_t vision_describe(const vision_object *objs, int n, char *out, size_t outlen)
{
    size_t used = 0;
    if (outlen) out[0] = '\0';
    for (int i = 0; i < n; i++) {
        const vision_object *o = &objs[i];
        char line[256];
        int k = snprintf(line, sizeof line, "%s x:%.2f y:%.2f width:%.2f height:%.2f%s%s\n",
                         o->name[0] ? o->name : o->cls, o->x, o->y, o->w, o->h,
                         o->color[0] ? " color:" : "", o->color);
        if (k < 0) continue;
        if (used + (size_t)k < outlen) memcpy(out + used, line, (size_t)k + 1);
        used += (size_t)k;
    }
    if (used >= outlen && outlen) out[outlen - 1] = '\0';
    return used;
}

/* Names compare with ' ' and '_' alike: detectors name classes "sports
 * ball", scene files and plans write sports_ball, and TypeFly's plans use
 * either (SPEC §4). */
static bool name_eq(const char *a, const char *b)
{
    for (;; a++, b++) {
        char x = *a == ' ' ? '_' : *a, y = *b == ' ' ? '_' : *b;
        if (x != y) return false;
        if (!x) return true;
    }
}

const vision_object *vision_find(const vision_object *objs, int n, const char *name)
{
    const vision_object *best = NULL;
    for (int i = 0; i < n; i++)
        if (name_eq(objs[i].name, name)) return &objs[i];
    for (int i = 0; i < n; i++)
        if (name_eq(objs[i].cls, name) && (!best || objs[i].w * objs[i].h > best->w * best->h))
            best = &objs[i];
    return best;
}
