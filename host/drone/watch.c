/* The watch on the measured state: see watch.h. */
#include "drone/watch.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct watch {
    scene_limits lim;
    drone_pose home;
    pthread_mutex_t lock; /* guards what follows */
    bool armed[WATCH_BATTERY + 1];
    bool paused;
    bool have_trip; /* TRIP waits to be taken */
    watch_trip trip;
    double excursion;
    drone_state last;    /* the latest measured state */
    unsigned long seq;   /* states measured so far */
    atomic_bool tripped; /* have_trip, read without the lock by abort polls */
};

watch *watch_new(const scene_limits *lim, const drone_pose *home)
{
    watch *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->lim = *lim;
    w->home = *home;
    for (int r = WATCH_FENCE; r <= WATCH_BATTERY; r++)
        w->armed[r] = true;
    pthread_mutex_init(&w->lock, NULL);
    atomic_init(&w->tripped, false);
    return w;
}

void watch_free(watch *w)
{
    if (!w) return;
    pthread_mutex_destroy(&w->lock);
    free(w);
}

double watch_beyond(const scene_limits *lim, const drone_pose *home, const drone_state *st,
                    watch_rule rule)
{
    const drone_pose *p = &st->pose;
    switch (rule) {
    case WATCH_FENCE: return hypot(p->x - home->x, p->y - home->y) - lim->geofence_radius;
    case WATCH_CEILING: return p->z - lim->max_z;
    case WATCH_FLOOR: return lim->min_z - p->z;
    default: return -INFINITY;
    }
}

double watch_margin(const scene_limits *lim, watch_rule rule)
{
    if (rule == WATCH_FENCE) return fmin(WATCH_REARM_CM, lim->geofence_radius / 2);
    return fmin(WATCH_REARM_CM, (lim->max_z - lim->min_z) / 2);
}

/* Which parts of ST are numbers the watch may judge (watch.h: an unknown
 * part is not judged; NaN would compare false and pass anyway). */
static bool judged(const drone_state *st, watch_rule rule)
{
    const drone_pose *p = &st->pose;
    switch (rule) {
    case WATCH_FENCE: return (st->known & DRONE_KNOWN_POSITION) && isfinite(p->x) && isfinite(p->y);
    case WATCH_CEILING:
    case WATCH_FLOOR: return (st->known & DRONE_KNOWN_HEIGHT) && isfinite(p->z);
    case WATCH_BATTERY:
        return (st->known & DRONE_KNOWN_BATTERY) && st->battery >= 0 && st->battery <= 100;
    default: return false;
    }
}

/* Under the lock: a trip of RULE by ST, BEYOND cm past its limit. */
static void trip(watch *w, watch_rule rule, const drone_state *st, double beyond)
{
    w->armed[rule] = false;
    w->have_trip = true;
    watch_trip *t = &w->trip;
    t->rule = rule;
    t->state = *st;
    t->beyond_cm = beyond;
    const drone_pose *p = &st->pose;
    if (rule == WATCH_BATTERY)
        snprintf(t->reason, sizeof t->reason,
                 "battery: the measured %d%% is below the %d%% reserve at (%.0f, %.0f, "
                 "%.0f)",
                 st->battery, w->lim.battery_reserve, p->x, p->y, p->z);
    else if (rule == WATCH_FENCE)
        snprintf(t->reason, sizeof t->reason,
                 "geofence: the measured position (%.0f, %.0f, %.0f) is %.0f cm outside the "
                 "%.0f cm geofence",
                 p->x, p->y, p->z, ceil(beyond), w->lim.geofence_radius);
    else
        snprintf(t->reason, sizeof t->reason,
                 "altitude: the measured height %.0f cm is %.0f cm %s the altitude band "
                 "%.0f-%.0f cm",
                 p->z, ceil(beyond), rule == WATCH_CEILING ? "above" : "below", w->lim.min_z,
                 w->lim.max_z);
    atomic_store(&w->tripped, true);
}

void watch_measured(void *ud, const drone_state *st)
{
    watch *w = ud;
    pthread_mutex_lock(&w->lock);
    w->last = *st;
    w->seq++;
    if (!st->flying || w->paused) {
        pthread_mutex_unlock(&w->lock);
        return;
    }
    for (int r = WATCH_FENCE; r <= WATCH_FLOOR; r++) {
        if (!judged(st, r)) continue;
        double beyond = watch_beyond(&w->lim, &w->home, st, r);
        if (beyond > w->excursion) w->excursion = beyond;
        if (beyond <= -watch_margin(&w->lim, r)) w->armed[r] = true;
    }
    /* One trip at a time: the first waiting is the one acted on; the
     * others stay armed and trip again if the return does not cure them. */
    if (!w->have_trip && judged(st, WATCH_BATTERY) && w->armed[WATCH_BATTERY] &&
        st->battery < w->lim.battery_reserve)
        trip(w, WATCH_BATTERY, st, 0);
    for (int r = WATCH_FENCE; r <= WATCH_FLOOR && !w->have_trip; r++) {
        if (!judged(st, r) || !w->armed[r]) continue;
        double beyond = watch_beyond(&w->lim, &w->home, st, r);
        if (beyond > 0) trip(w, r, st, beyond);
    }
    pthread_mutex_unlock(&w->lock);
}

bool watch_tripped(watch *w)
{
    return w && atomic_load(&w->tripped);
}

bool watch_take(watch *w, watch_trip *out)
{
    pthread_mutex_lock(&w->lock);
    bool had = w->have_trip;
    if (had) *out = w->trip;
    w->have_trip = false;
    atomic_store(&w->tripped, false);
    pthread_mutex_unlock(&w->lock);
    return had;
}

void watch_pause(watch *w, bool paused)
{
    pthread_mutex_lock(&w->lock);
    w->paused = paused;
    pthread_mutex_unlock(&w->lock);
}

double watch_excursion_cm(watch *w)
{
    pthread_mutex_lock(&w->lock);
    double e = w->excursion;
    pthread_mutex_unlock(&w->lock);
    return e;
}

unsigned long watch_latest(watch *w, drone_state *st)
{
    pthread_mutex_lock(&w->lock);
    unsigned long seq = w->seq;
    if (seq) *st = w->last;
    pthread_mutex_unlock(&w->lock);
    return seq;
}

bool watch_paused(watch *w)
{
    pthread_mutex_lock(&w->lock);
    bool paused = w->paused;
    pthread_mutex_unlock(&w->lock);
    return paused;
}
