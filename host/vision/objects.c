#include "vision/objects.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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
static bool name_eq_n(const char *a, const char *b, size_t blen)
{
    for (size_t i = 0;; a++, b++, i++) {
        char y = i < blen ? *b : '\0';
        char x = *a == ' ' ? '_' : *a;
        if (y == ' ') y = '_';
        if (x != y) return false;
        if (!x) return true;
    }
}

static bool name_eq(const char *a, const char *b)
{
    return name_eq_n(a, b, strlen(b));
}

/* TypeFly 2024 tells objects of one class apart by their x in the view:
 * "apple[0.3]" is the apple whose centre is nearest x 0.3. NULL when NAME
 * has no such suffix (or it is not a number in [0, 1]). */
static const vision_object *find_at_x(const vision_object *objs, int n, const char *name,
                                      bool *has_suffix)
{
    size_t len = strlen(name);
    const char *open = strchr(name, '[');
    *has_suffix = false;
    if (!open || open == name || len < 3 || name[len - 1] != ']') return NULL;
    char num[32];
    size_t nlen = (size_t)(name + len - 1 - (open + 1));
    if (nlen == 0 || nlen >= sizeof num) return NULL;
    memcpy(num, open + 1, nlen);
    num[nlen] = '\0';
    char *end;
    double x = strtod(num, &end);
    if (*end || !(x >= 0 && x <= 1)) return NULL;
    *has_suffix = true;
    const vision_object *best = NULL;
    for (int i = 0; i < n; i++) {
        bool match = name_eq_n(objs[i].cls, name, (size_t)(open - name)) ||
                     name_eq_n(objs[i].name, name, (size_t)(open - name));
        if (match && (!best || fabs(objs[i].x - x) < fabs(best->x - x))) best = &objs[i];
    }
    return best;
}

const vision_object *vision_find(const vision_object *objs, int n, const char *name)
{
    bool has_suffix;
    const vision_object *at = find_at_x(objs, n, name, &has_suffix);
    if (has_suffix) return at;
    const vision_object *best = NULL;
    for (int i = 0; i < n; i++)
        if (name_eq(objs[i].name, name)) return &objs[i];
    for (int i = 0; i < n; i++)
        if (name_eq(objs[i].cls, name) && (!best || objs[i].w * objs[i].h > best->w * best->h))
            best = &objs[i];
    return best;
}
