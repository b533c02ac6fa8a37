/*
 * Remembered objects out of view, for the planning prompt. See memory.h.
 */
#include "mission/memory.h"

#include "drone/heading.h"
#include "mission/sighting.h"
#include "textbuf.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER "Remembered, out of view (direction from the drone's heading now; rough):\n"

/* One object's place relative to the drone. */
typedef struct placed {
    const store_object *o;
    double age_s;
    double dist_cm;
    int metres; /* rounded, the sort key */
} placed;

static double distance_cm(const drone_pose *p, const store_object *o)
{
    double dx = o->x - p->x, dy = o->y - p->y, dz = o->z - p->z;
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The bearing of O off the drone's heading, degrees in [0, 360): 0 ahead,
 * 90 to the right (the simulator's frame: forward (sin yaw, cos yaw)). */
static double relative_bearing(const drone_pose *p, const store_object *o)
{
    double b = atan2(o->x - p->x, o->y - p->y) * 180 / M_PI;
    return heading_wrap(b - p->yaw);
}

/* Is O one of the objects in VIEW? Same class, and near where that object
 * is estimated to be; an object in view whose position the picture cannot
 * tell (cut by the border) covers every remembered one of its class inside
 * the camera's field of view. */
static bool in_view(const store_object *o, const drone_pose *pose, const scene_camera *cam,
                    const vision_object *view, int nview)
{
    for (int i = 0; i < nview; i++) {
        if (strcmp(view[i].cls, o->cls) != 0) continue;
        double pos[3];
        if (cam && sighting_locate(pose, cam, &view[i], pos)) {
            double dx = pos[0] - o->x, dy = pos[1] - o->y, dz = pos[2] - o->z;
            if (dx * dx + dy * dy + dz * dz <= MEMORY_SAME_CM * MEMORY_SAME_CM) return true;
        } else {
            double rel = relative_bearing(pose, o);
            double half = cam && cam->hfov > 0 ? cam->hfov / 2 : 45;
            if (rel <= half || rel >= 360 - half) return true;
        }
    }
    return false;
}

static int by_distance_then_age(const void *a, const void *b)
{
    const placed *x = a, *y = b;
    if (x->metres != y->metres) return x->metres < y->metres ? -1 : 1;
    if (x->age_s != y->age_s) return x->age_s < y->age_s ? -1 : 1;
    return x->o->id < y->o->id ? -1 : x->o->id > y->o->id;
}

static const char *direction(const drone_pose *p, const store_object *o)
{
    double dx = o->x - p->x, dy = o->y - p->y, dz = o->z - p->z;
    /* Nearly straight up or down: no heading says where it is. */
    if (sqrt(dx * dx + dy * dy) < fabs(dz) / 2) return dz < 0 ? "below" : "above";
    double rel = relative_bearing(p, o);
    if (rel < 45 || rel >= 315) return "ahead";
    if (rel < 135) return "to the right";
    if (rel < 225) return "behind";
    return "to the left";
}

/* "12 s", "2 min", "3 h", "2 days": rounded to the nearest unit. */
static void age_words(double s, char *out, size_t n)
{
    if (!(s >= 0)) s = 0;
    if (s < 59.5)
        snprintf(out, n, "%.0f s", s);
    else if (s < 59.5 * 60)
        snprintf(out, n, "%.0f min", s / 60);
    else if (s < 47.5 * 3600)
        snprintf(out, n, "%.0f h", s / 3600);
    else
        snprintf(out, n, "%.0f days", s / 86400);
}

/* A class name as one line can carry it: a detector's names file is the
 * user's, and a line break or control byte in it must not shape the prompt. */
static void one_line(const char *in, char *out, size_t n)
{
    size_t k = 0;
    for (; *in && k + 1 < n; in++)
        out[k++] = (unsigned char)*in < 0x20 || *in == 0x7f ? ' ' : *in;
    out[k] = '\0';
}

static int line_of(const placed *p, const drone_pose *pose, char *out, size_t n)
{
    char age[32], dist[32], cls[sizeof p->o->cls];
    one_line(p->o->cls, cls, sizeof cls);
    age_words(p->age_s, age, sizeof age);
    if (p->metres < 1)
        snprintf(dist, sizeof dist, "under 1 m");
    else
        snprintf(dist, sizeof dist, "about %d m", p->metres);
    return snprintf(out, n, "%s #%lld: %s %s, seen %s ago\n", cls, (long long)p->o->id, dist,
                    direction(pose, p->o), age);
}

static long tokens_of(size_t bytes)
{
    return (long)((bytes + 3) / 4);
}

size_t memory_describe(const store_object *objs, const double *age_s, int n, const drone_pose *pose,
                       const scene_camera *cam, const vision_object *view, int nview,
                       const memory_limits *lim, char *out, size_t outlen)
{
    if (outlen) out[0] = '\0';
    int max_lines = lim && lim->max_lines > 0 ? lim->max_lines : MEMORY_PROMPT_LINES;
    long max_tokens = lim && lim->max_tokens > 0 ? lim->max_tokens : MEMORY_PROMPT_TOKENS;
    placed *ps = n > 0 ? calloc((size_t)n, sizeof *ps) : NULL;
    int k = 0;
    for (int i = 0; ps && i < n; i++) {
        if (!isfinite(objs[i].x) || !isfinite(objs[i].y) || !isfinite(objs[i].z)) continue;
        if (in_view(&objs[i], pose, cam, view, nview)) continue;
        double d = distance_cm(pose, &objs[i]);
        ps[k++] =
            (placed){&objs[i], age_s ? age_s[i] : 0, d, d < 1e8 ? (int)lround(d / 100) : 1000000};
    }
    if (k > 1) qsort(ps, (size_t)k, sizeof *ps, by_distance_then_age);
    textbuf b = {0};
    int listed = 0;
    for (; listed < k && listed < max_lines; listed++) {
        char line[160];
        int len = line_of(&ps[listed], pose, line, sizeof line);
        size_t with = (listed ? b.len : strlen(HEADER)) + (size_t)len;
        if (tokens_of(with) > max_tokens) break;
        if (!listed) textbuf_adds(&b, HEADER);
        textbuf_add(&b, line, (size_t)len);
    }
    if (listed < k) {
        char tail[80];
        snprintf(tail, sizeof tail, "(%d more remembered object%s not listed)\n", k - listed,
                 k - listed == 1 ? "" : "s");
        if (!listed) textbuf_adds(&b, HEADER);
        textbuf_adds(&b, tail);
    }
    free(ps);
    size_t need = b.len;
    if (outlen) snprintf(out, outlen, "%s", b.len ? b.s : "");
    textbuf_free(&b);
    return need;
}
