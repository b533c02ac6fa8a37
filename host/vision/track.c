#include "vision/track.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACK_MAX 256
#define CLASS_MAX 256

typedef struct track {
    char cls[VISION_NAME_MAX];
    char name[VISION_NAME_MAX];
    float x, y, w, h;
    int missed;
} track;

typedef struct class_counter {
    char cls[VISION_NAME_MAX];
    int next;
} class_counter;

struct vision_tracker {
    track tracks[TRACK_MAX];
    int n_tracks;
    class_counter counters[CLASS_MAX];
    int n_counters;
    int max_missed;
};

vision_tracker *vision_tracker_new(int max_missed)
{
    vision_tracker *t = calloc(1, sizeof *t);
    if (t) t->max_missed = max_missed > 0 ? max_missed : 15;
    return t;
}

void vision_tracker_reset(vision_tracker *t)
{
    t->n_tracks = 0;
    t->n_counters = 0;
}

void vision_tracker_free(vision_tracker *t)
{
    free(t);
}

static float overlap(float ax, float ay, float aw, float ah, float bx, float by, float bw, float bh)
{
    float ix = fminf(ax + aw / 2, bx + bw / 2) - fmaxf(ax - aw / 2, bx - bw / 2);
    float iy = fminf(ay + ah / 2, by + bh / 2) - fmaxf(ay - ah / 2, by - bh / 2);
    if (ix <= 0 || iy <= 0) return 0;
    float u = aw * ah + bw * bh - ix * iy;
    return u > 0 ? ix * iy / u : 0;
}

/* How well object O continues track T: its overlap, or for a fast object
 * that no longer overlaps, a small score falling with the distance and zero
 * beyond two box sizes. Negative: not the same object. */
static float affinity(const track *t, const vision_object *o)
{
    if (strcmp(t->cls, o->cls) != 0) return -1;
    float iou = overlap(t->x, t->y, t->w, t->h, o->x, o->y, o->w, o->h);
    if (iou > 0.05f) return iou;
    float reach = 2.0f * fmaxf(fmaxf(t->w, t->h), fmaxf(o->w, o->h));
    float d = hypotf(t->x - o->x, t->y - o->y);
    return d < reach ? 0.05f * (1 - d / reach) : -1;
}

static int next_number(vision_tracker *t, const char *cls)
{
    for (int i = 0; i < t->n_counters; i++)
        if (strcmp(t->counters[i].cls, cls) == 0) return ++t->counters[i].next;
    if (t->n_counters == CLASS_MAX) return 0;
    class_counter *c = &t->counters[t->n_counters++];
    snprintf(c->cls, sizeof c->cls, "%s", cls);
    c->next = 1;
    return 1;
}

void vision_tracker_update(vision_tracker *t, vision_object *objs, int n)
{
    enum { MAX_OBJ = VISION_MAX_OBJECTS };
    if (n > MAX_OBJ) n = MAX_OBJ;
    int track_of[MAX_OBJ];
    unsigned char used[TRACK_MAX] = {0};
    for (int i = 0; i < n; i++)
        track_of[i] = objs[i].name[0] ? -2 : -1;

    /* Greedy matching, best pair first: with a handful of objects per class
     * this gives the same answer as an optimal assignment in practice. */
    for (;;) {
        float best = -1;
        int bi = -1, bt = -1;
        for (int i = 0; i < n; i++) {
            if (track_of[i] != -1) continue;
            for (int k = 0; k < t->n_tracks; k++) {
                if (used[k]) continue;
                float a = affinity(&t->tracks[k], &objs[i]);
                if (a > best) best = a, bi = i, bt = k;
            }
        }
        if (bi < 0 || best < 0) break;
        track_of[bi] = bt;
        used[bt] = 1;
    }

    for (int k = 0; k < t->n_tracks; k++)
        if (!used[k]) t->tracks[k].missed++;
    for (int i = 0; i < n; i++) {
        vision_object *o = &objs[i];
        if (track_of[i] == -2) continue;
        track *tr;
        if (track_of[i] >= 0) {
            tr = &t->tracks[track_of[i]];
        } else {
            /* A new track; when full, reuse the stalest one. */
            int slot = t->n_tracks;
            if (slot == TRACK_MAX) {
                slot = 0;
                for (int k = 1; k < TRACK_MAX; k++)
                    if (t->tracks[k].missed > t->tracks[slot].missed) slot = k;
            } else {
                t->n_tracks++;
            }
            tr = &t->tracks[slot];
            used[slot] = 1;
            snprintf(tr->cls, sizeof tr->cls, "%s", o->cls);
            snprintf(tr->name, sizeof tr->name, "%.*s_%d", VISION_NAME_MAX - 13, o->cls,
                     next_number(t, o->cls));
        }
        tr->x = o->x, tr->y = o->y, tr->w = o->w, tr->h = o->h;
        tr->missed = 0;
        memcpy(o->name, tr->name, sizeof o->name);
    }

    /* Forget tracks unseen for too long (order does not matter). */
    for (int k = 0; k < t->n_tracks;)
        if (t->tracks[k].missed > t->max_missed)
            t->tracks[k] = t->tracks[--t->n_tracks];
        else
            k++;
}
