/*
 * The constraint guard: a driver that checks every motion against the
 * mission's limits and forwards what passes to the driver it wraps.
 */
#include "drone/constraints.h"

#include "clock.h"
#include "drone/watch_return.h"
#include "errmsg.h"

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Positions are doubles from sines and sums: a move that ends exactly on a
 * limit may compute a hair beyond it. */
#define EPS_CM 1e-6

/* Real time between two calls that counts as none: the plan's own Lua
 * between two skills takes microseconds, and a run must not depend on how
 * fast it ran (SPEC §3: the track depends on the seed, not the time
 * scale). A longer gap is the LLM thinking, and the drone hovers through
 * all of it. */
#define WATCH_IDLE_GRACE_MS 100.0

typedef struct guard {
    drone self;
    drone *inner;
    scene_limits lim;
    double home_x, home_y;
    drone_pose home;
    bool refused;
    /* A step check refused a step during the current motion (counted as a
     * refusal only if the driver then gives the motion up: a pair may pass
     * in its other order). */
    bool step_refused;
    constraint_stats stats;

    /* The watch on the measured state (watch.h) and what it did. */
    watch *watch;
    /* Held by every call that drives the drone, and by the watch's tick
     * between calls: one thread drives the drone at a time. */
    pthread_mutex_t lock;
    double idle_since_ms; /* when the last call ended (clock_now_ms) */
    /* The abort callback of the caller, which the driver's abort (guard_abort)
     * asks after the watch. */
    bool (*outer_abort)(void *ud);
    void *outer_abort_ud;
    bool monitor;             /* the last refusal was the watch's */
    drone_pose monitor_pose;  /* the measured pose of that trip */
    bool pending;             /* a trip handled between calls, not yet reported */
    char pending_reason[600]; /* its reason */
    drone_pose pending_pose;
    bool ended; /* the watch landed the drone: no motion from now on */
    char ended_why[600];
} guard;

static int refuse(guard *g, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int refuse(guard *g, char *err, size_t errlen, const char *fmt, ...)
{
    g->refused = true;
    g->stats.refused++;
    va_list ap;
    va_start(ap, fmt);
    errmsg_vset(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* The driver's abort callback: a trip of the watch stops its call, as does
 * whatever stops the caller (cancel, deadline). */
static bool guard_abort(void *ud)
{
    guard *g = ud;
    if (watch_tripped(g->watch)) return true;
    return g->outer_abort && g->outer_abort(g->outer_abort_ud);
}

/* Every call starts here: takes the lock (see lock_for_landing for the
 * calls that must not wait for it forever); the driver polls the caller's
 * abort callback behind the watch's. */
static guard *enter_locked(drone *d)
{
    guard *g = d->impl;
    g->outer_abort = d->abort;
    g->outer_abort_ud = d->abort_ud;
    g->inner->abort = guard_abort;
    g->inner->abort_ud = g;
    g->inner->hurry = d->hurry;
    g->refused = false;
    g->step_refused = false;
    g->monitor = false;
    return g;
}

static guard *enter(drone *d)
{
    guard *g = d->impl;
    pthread_mutex_lock(&g->lock);
    return enter_locked(d);
}

/* Hover, land and emergency run also from the watchdog's thread while the
 * flying thread may be stuck inside a call: they wait for the lock a second
 * (within the watchdog's 2 s after a signal), then go ahead without it
 * (*HELD says whether they hold it). */
static guard *enter_urgent(drone *d, bool *held)
{
    guard *g = d->impl;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    *held = pthread_mutex_timedlock(&g->lock, &ts) == 0;
    return enter_locked(d);
}

/* Every call ends here (RC its result). */
static int leave(guard *g, int rc)
{
    g->idle_since_ms = clock_now_ms();
    pthread_mutex_unlock(&g->lock);
    return rc;
}

static int leave_urgent(guard *g, bool held, int rc)
{
    if (held) return leave(g, rc);
    return rc;
}

/* After a motion handed to the driver (RC its result): if the driver gave
 * it up because the step check refused a step, the motion was refused. */
static int count_step_refusal(guard *g, int rc)
{
    if (rc != 0 && g->step_refused) {
        g->refused = true;
        g->stats.refused++;
    }
    return rc;
}

/* Reads the driver's state. A part that holds no finite, plausible number
 * counts as unknown whatever the driver says: the check never compares
 * with NaN (every comparison with it is false, so it would pass). */
static int state_of(guard *g, drone_state *st, char *err, size_t errlen)
{
    if (g->inner->ops->get_state(g->inner, st) != 0) {
        snprintf(err, errlen, "cannot read the drone's state");
        return -1;
    }
    const drone_pose *p = &st->pose;
    if (!isfinite(p->x) || !isfinite(p->y) || !isfinite(p->yaw))
        st->known &= ~(unsigned)DRONE_KNOWN_POSITION;
    if (!isfinite(p->z)) st->known &= ~(unsigned)DRONE_KNOWN_HEIGHT;
    if (st->battery < 0 || st->battery > 100) st->known &= ~(unsigned)DRONE_KNOWN_BATTERY;
    return 0;
}

/* What a motion needs to be checked: the parts of the state it reads. */
static const char *unknown_part(const drone_state *st, unsigned need)
{
    unsigned missing = need & ~st->known;
    if (missing & DRONE_KNOWN_BATTERY) return "battery";
    if (missing & DRONE_KNOWN_POSITION) return "position";
    if (missing & DRONE_KNOWN_HEIGHT) return "height";
    return NULL;
}

/* Reads the state for a check, refuses when a part NEED names is unknown,
 * and applies the battery reserve (which descending, ALWAYS_OK, is exempt
 * from). WHAT names the motion in the refusal. */
static int begin_check(guard *g, drone_state *st, unsigned need, bool always_ok, const char *what,
                       char *err, size_t errlen)
{
    if (state_of(g, st, err, errlen)) return -1;
    g->stats.checked++;
    if (!always_ok) need |= DRONE_KNOWN_BATTERY;
    const char *part = unknown_part(st, need);
    if (part)
        return refuse(g, err, errlen,
                      "unknown %s: the drone reported no valid %s, so %s cannot be checked "
                      "(the drone stays where it is)",
                      part, part, what);
    if (!always_ok && st->battery <= g->lim.battery_reserve)
        return refuse(g, err, errlen, "battery: %d%% is at or below the %d%% reserve", st->battery,
                      g->lim.battery_reserve);
    return 0;
}

/* ---- the watch: what the guard does when it trips ---------------------- */

/* Takes the watch's trip, holds, brings the drone back (watch_return.h)
 * and refuses the motion under way with the trip's reason and what became
 * of the drone. When the drone could not come back, it was landed and the
 * guard refuses every motion from now on. */
static int monitor_act(guard *g, char *err, size_t errlen)
{
    watch_trip t;
    if (!watch_take(g->watch, &t)) return 0;
    char why[400];
    watch_end end = watch_return(g->inner, g->watch, &g->lim, &g->home, &t, why, sizeof why);
    g->monitor = true;
    g->monitor_pose = t.state.pose;
    refuse(g, err, errlen, "%s; %s", t.reason, why);
    if (end != WATCH_BACK) {
        g->ended = true;
        snprintf(g->ended_why, sizeof g->ended_why, "%s", err);
    }
    return -1;
}

/* Before a motion: the end of the flight by the watch, a trip waiting, or
 * one handled between calls that the plan has not been told of yet. */
static int monitor_before(guard *g, char *err, size_t errlen)
{
    if (g->pending) {
        g->pending = false;
        g->monitor = true;
        g->monitor_pose = g->pending_pose;
        return refuse(g, err, errlen, "%s", g->pending_reason);
    }
    if (watch_tripped(g->watch)) return monitor_act(g, err, errlen);
    if (g->ended) return refuse(g, err, errlen, "the watch ended the flight: %s", g->ended_why);
    return 0;
}

/* After a call to the driver that returned RC: a trip during it (which
 * stopped it) or at its last measured state. */
static int monitor_after(guard *g, int rc, char *err, size_t errlen)
{
    if (watch_tripped(g->watch)) return monitor_act(g, err, errlen);
    return rc;
}

static int g_connect(drone *d, char *err, size_t errlen)
{
    guard *g = enter(d);
    return leave(g, g->inner->ops->connect(g->inner, err, errlen));
}

static int takeoff_checked(guard *g, char *err, size_t errlen)
{
    drone_state st;
    if (g->ended) return refuse(g, err, errlen, "the watch ended the flight: %s", g->ended_why);
    if (begin_check(g, &st, 0, false, "taking off", err, errlen)) return -1;
    g->stats.passed++;
    return count_step_refusal(g, g->inner->ops->takeoff(g->inner, err, errlen));
}

static int g_takeoff(drone *d, char *err, size_t errlen)
{
    guard *g = enter(d);
    return leave(g, takeoff_checked(g, err, errlen));
}

/* A landing goes below the band on purpose: the watch looks away. */
static int g_land(drone *d, char *err, size_t errlen)
{
    bool held;
    guard *g = enter_urgent(d, &held);
    watch_pause(g->watch, true);
    int rc = g->inner->ops->land(g->inner, err, errlen);
    watch_pause(g->watch, false);
    return leave_urgent(g, held, rc);
}

static const char *dir_word(drone_dir dir)
{
    static const char *const w[] = {"forward", "backward", "left", "right", "up", "down"};
    return w[dir]; /* g_move refused any other value first */
}

/* Is a horizontal position X, Y farther from home than the geofence, and
 * farther than FROM (a drone outside may always come back toward home)?
 * Sets *DIST to its distance from home. */
static bool leaves_fence(const guard *g, const drone_pose *from, double x, double y, double *dist)
{
    double now = hypot(from->x - g->home_x, from->y - g->home_y);
    *dist = hypot(x - g->home_x, y - g->home_y);
    return *dist > g->lim.geofence_radius + EPS_CM && *dist > now + EPS_CM;
}

/* Is height Z outside the altitude band, and farther from it than FROM? */
static bool leaves_band(const guard *g, const drone_pose *from, double z)
{
    if (z > g->lim.max_z + EPS_CM) return z > from->z + EPS_CM;
    if (z < g->lim.min_z - EPS_CM) return z < from->z - EPS_CM;
    return false;
}

static int move_checked(guard *g, drone_dir dir, int cm, char *err, size_t errlen)
{
    /* Not one of the six: nothing could say where it would take the drone. */
    if ((unsigned)dir > DRONE_DOWN)
        return refuse(g, err, errlen, "direction: %d is not a direction", (int)dir);
    drone_state st;
    bool vertical = dir == DRONE_UP || dir == DRONE_DOWN;
    char what[48];
    snprintf(what, sizeof what, "moving %s", dir_word(dir));
    if (begin_check(g, &st, vertical ? DRONE_KNOWN_HEIGHT : DRONE_KNOWN_POSITION, dir == DRONE_DOWN,
                    what, err, errlen))
        return -1;
    if (cm < 0) return refuse(g, err, errlen, "distance: %d cm is negative", cm);
    const drone_pose *p = &st.pose;
    if (vertical) {
        double target = p->z + (dir == DRONE_UP ? cm : -cm);
        double clamped = fmin(fmax(target, g->lim.min_z), g->lim.max_z);
        /* Outside the band already (just after takeoff, say): only moves
         * back toward it are allowed. */
        if (dir == DRONE_UP && clamped < p->z) clamped = p->z;
        if (dir == DRONE_DOWN && clamped > p->z) clamped = p->z;
        if (clamped != target) {
            g->stats.clamped++;
            /* Whole centimetres toward the band's edge, never past it. */
            cm = (int)floor(fabs(clamped - p->z) + EPS_CM);
        }
        if (cm == 0) return 0; /* already at the edge of the band */
    }
    /* Checked after clamping: a climb "to the ceiling" is a short move. */
    if (cm > g->lim.max_move)
        return refuse(g, err, errlen, "longest move: %d cm is more than the %.0f cm limit", cm,
                      g->lim.max_move);
    drone_pose to = drone_pose_after(p, dir, cm);
    double after;
    if (!vertical && leaves_fence(g, p, to.x, to.y, &after))
        return refuse(g, err, errlen,
                      "geofence: moving %s %d cm would end %.0f cm from home, outside the "
                      "%.0f cm geofence",
                      dir_word(dir), cm, after, g->lim.geofence_radius);
    g->stats.passed++;
    return count_step_refusal(g, g->inner->ops->move(g->inner, dir, cm, err, errlen));
}

static int g_move(drone *d, drone_dir dir, int cm, char *err, size_t errlen)
{
    guard *g = enter(d);
    if (monitor_before(g, err, errlen)) return leave(g, -1);
    int rc = move_checked(g, dir, cm, err, errlen);
    return leave(g, monitor_after(g, rc, err, errlen));
}

/* A refused step: counted by g_move only if the motion then fails. */
static int step_refuse(guard *g, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int step_refuse(guard *g, char *err, size_t errlen, const char *fmt, ...)
{
    g->step_refused = true;
    va_list ap;
    va_start(ap, fmt);
    errmsg_vset(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* The check of each physical step (drone_step_check), which the driver
 * calls before sending it: the step's end must lie inside the geofence and
 * the altitude band (or no farther out than its start), and the parts of
 * the state it needs must be known. */
static int g_check_step(void *ud, const drone_pose *from, const drone_pose *to, const char *what,
                        char *err, size_t errlen)
{
    guard *g = ud;
    drone_state st;
    if (state_of(g, &st, err, errlen)) return -1;
    bool finite = isfinite(from->x) && isfinite(from->y) && isfinite(from->z) && isfinite(to->x) &&
                  isfinite(to->y) && isfinite(to->z);
    bool horizontal = !finite || to->x != from->x || to->y != from->y;
    bool vertical = !finite || to->z != from->z;
    unsigned need = (horizontal ? DRONE_KNOWN_POSITION : 0) | (vertical ? DRONE_KNOWN_HEIGHT : 0);
    const char *part = finite ? unknown_part(&st, need) : "position";
    if (part)
        return step_refuse(g, err, errlen,
                           "unknown %s: the drone reported no valid %s, so the step '%s' cannot be "
                           "checked (the drone stays where it is)",
                           part, part, what);
    double dist;
    if (leaves_fence(g, from, to->x, to->y, &dist))
        return step_refuse(
            g, err, errlen,
            "geofence: the step '%s' would end %.0f cm from home, outside the %.0f cm "
            "geofence",
            what, dist, g->lim.geofence_radius);
    if (leaves_band(g, from, to->z))
        return step_refuse(
            g, err, errlen,
            "altitude: the step '%s' would end at %.0f cm, outside the altitude band "
            "%.0f-%.0f cm",
            what, to->z, g->lim.min_z, g->lim.max_z);
    return 0;
}

static int g_turn(drone *d, int degrees, char *err, size_t errlen)
{
    guard *g = enter(d);
    drone_state st;
    if (monitor_before(g, err, errlen) || begin_check(g, &st, 0, false, "turning", err, errlen))
        return leave(g, -1);
    g->stats.passed++;
    int rc = g->inner->ops->turn(g->inner, degrees, err, errlen);
    return leave(g, monitor_after(g, rc, err, errlen));
}

static int g_hover(drone *d)
{
    bool held;
    guard *g = enter_urgent(d, &held);
    return leave_urgent(g, held, g->inner->ops->hover(g->inner));
}

static int g_emergency(drone *d)
{
    bool held;
    guard *g = enter_urgent(d, &held);
    return leave_urgent(g, held, g->inner->ops->emergency(g->inner));
}

static int g_get_state(drone *d, drone_state *out)
{
    guard *g = d->impl;
    return g->inner->ops->get_state(g->inner, out);
}

/* A delay: the drone hovers, and the wind may carry it out. */
static int g_wait(drone *d, int ms, char *err, size_t errlen)
{
    guard *g = enter(d);
    if (monitor_before(g, err, errlen)) return leave(g, -1);
    int rc = g->inner->ops->wait(g->inner, ms, err, errlen);
    return leave(g, monitor_after(g, rc, err, errlen));
}

static void g_destroy(drone *d)
{
    guard *g = d->impl;
    g->inner->ops->destroy(g->inner);
    watch_free(g->watch);
    pthread_mutex_destroy(&g->lock);
    free(g);
}

static const drone_ops guard_ops = {
    .name = "constraints",
    .connect = g_connect,
    .takeoff = g_takeoff,
    .land = g_land,
    .move = g_move,
    .turn = g_turn,
    .hover = g_hover,
    .emergency = g_emergency,
    .get_state = g_get_state,
    .wait = g_wait,
    .destroy = g_destroy,
};

drone *constraints_wrap(drone *inner, const scene_limits *lim, const drone_pose *home, char *err,
                        size_t errlen)
{
    guard *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    g->watch = watch_new(lim, home);
    if (!g->watch) {
        free(g);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&g->lock, NULL);
    g->idle_since_ms = clock_now_ms();
    g->inner = inner;
    g->lim = *lim;
    g->home = *home;
    g->home_x = home->x;
    g->home_y = home->y;
    g->self.ops = &guard_ops;
    g->self.impl = g;
    inner->check_step = g_check_step;
    inner->check_step_ud = g;
    inner->measured = watch_measured;
    inner->measured_ud = g->watch;
    return &g->self;
}

bool constraints_is(const drone *d)
{
    return d && d->ops == &guard_ops;
}

bool constraints_refused(const drone *d)
{
    return constraints_is(d) && ((const guard *)d->impl)->refused;
}

constraint_stats constraints_get_stats(const drone *d)
{
    constraint_stats none = {0, 0, 0, 0};
    return constraints_is(d) ? ((const guard *)d->impl)->stats : none;
}

drone *constraints_inner(drone *d)
{
    return constraints_is(d) ? ((guard *)d->impl)->inner : NULL;
}

/* ---- the watch between calls -------------------------------------------- */

int constraints_watch_tick(drone *d, double hover_scale, bool (*abort)(void *ud), void *abort_ud)
{
    if (!constraints_is(d)) return 0;
    guard *g = d->impl;
    /* A call under way drives the drone and is watched by its driver. */
    if (pthread_mutex_trylock(&g->lock) != 0) return 0;
    /* Not the last caller's abort (its sandbox may be gone): the tick's
     * own (the mission's cancel) and a trip stop the hover and a return. */
    g->outer_abort = abort;
    g->outer_abort_ud = abort_ud;
    g->inner->abort = guard_abort;
    g->inner->abort_ud = g;
    double now = clock_now_ms(), idle = now - g->idle_since_ms;
    char err[256];
    drone_state st;
    bool flying = g->inner->ops->get_state(g->inner, &st) == 0 && st.flying;
    /* The simulator hovers through the time that passed (scaled): the wind
     * carries it while nothing else runs, the LLM's wait included. */
    /* At most an hour at once: a huge time scale must not overflow. */
    int ms = idle >= WATCH_IDLE_GRACE_MS ? (int)fmin(idle * hover_scale, 3600000) : 0;
    if (flying && !g->ended && ms > 0 && g->inner->ops->pass_time)
        g->inner->ops->pass_time(g->inner, ms, err, sizeof err);
    int acted = 0;
    /* Every trip is acted on at once; the plan hears of the first one not
     * reported yet (the later ones are the same wind again). */
    char why[sizeof g->pending_reason];
    /* What the plan's thread may still read of its last call stays. */
    bool monitor = g->monitor, refused = g->refused;
    drone_pose at = g->monitor_pose;
    if (watch_tripped(g->watch) && monitor_act(g, why, sizeof why)) {
        acted = 1;
        if (!g->pending) {
            snprintf(g->pending_reason, sizeof g->pending_reason, "%s", why);
            g->pending = true;
            g->pending_pose = g->monitor_pose;
        }
    }
    g->monitor = monitor;
    g->refused = refused;
    g->monitor_pose = at;
    /* The part of a millisecond not hovered yet waits for the next tick. */
    if (ms > 0)
        g->idle_since_ms += ms / hover_scale;
    else if (hover_scale <= 0)
        g->idle_since_ms = now;
    pthread_mutex_unlock(&g->lock);
    return acted;
}

bool constraints_monitor(const drone *d, drone_pose *pose)
{
    if (!constraints_is(d)) return false;
    const guard *g = d->impl;
    if (g->monitor && pose) *pose = g->monitor_pose;
    return g->monitor;
}

bool constraints_take_pending(drone *d, char *reason, size_t len, drone_pose *pose)
{
    if (!constraints_is(d)) return false;
    guard *g = d->impl;
    pthread_mutex_lock(&g->lock);
    bool had = g->pending;
    if (had) {
        snprintf(reason, len, "%s", g->pending_reason);
        *pose = g->pending_pose;
        g->pending = false;
    }
    pthread_mutex_unlock(&g->lock);
    return had;
}

bool constraints_watch_ended(const drone *d, char *why, size_t len)
{
    if (!constraints_is(d)) return false;
    const guard *g = d->impl;
    if (g->ended && why) snprintf(why, len, "%s", g->ended_why);
    return g->ended;
}

double constraints_excursion_cm(const drone *d)
{
    return constraints_is(d) ? watch_excursion_cm(((const guard *)d->impl)->watch) : 0;
}

struct watch *constraints_watch(drone *d)
{
    return constraints_is(d) ? ((guard *)d->impl)->watch : NULL;
}
