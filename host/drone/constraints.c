/*
 * The constraint guard: a driver that checks every motion against the
 * mission's limits and forwards what passes to the driver it wraps.
 */
#include "drone/constraints.h"

#include "errmsg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Positions are doubles from sines and sums: a move that ends exactly on a
 * limit may compute a hair beyond it. */
#define EPS_CM 1e-6

typedef struct guard {
    drone self;
    drone *inner;
    scene_limits lim;
    double home_x, home_y;
    bool refused;
    /* A step check refused a step during the current motion (counted as a
     * refusal only if the driver then gives the motion up: a pair may pass
     * in its other order). */
    bool step_refused;
    constraint_stats stats;
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

/* Every call starts here: the inner driver polls the same abort callback. */
static guard *enter(drone *d)
{
    guard *g = d->impl;
    g->inner->abort = d->abort;
    g->inner->abort_ud = d->abort_ud;
    g->inner->hurry = d->hurry;
    g->refused = false;
    g->step_refused = false;
    return g;
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

static int g_connect(drone *d, char *err, size_t errlen)
{
    guard *g = enter(d);
    return g->inner->ops->connect(g->inner, err, errlen);
}

static int g_takeoff(drone *d, char *err, size_t errlen)
{
    guard *g = enter(d);
    drone_state st;
    if (begin_check(g, &st, 0, false, "taking off", err, errlen)) return -1;
    g->stats.passed++;
    return count_step_refusal(g, g->inner->ops->takeoff(g->inner, err, errlen));
}

static int g_land(drone *d, char *err, size_t errlen)
{
    guard *g = enter(d);
    return g->inner->ops->land(g->inner, err, errlen);
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

static int g_move(drone *d, drone_dir dir, int cm, char *err, size_t errlen)
{
    guard *g = enter(d);
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
    if (begin_check(g, &st, 0, false, "turning", err, errlen)) return -1;
    g->stats.passed++;
    return g->inner->ops->turn(g->inner, degrees, err, errlen);
}

static int g_hover(drone *d)
{
    guard *g = enter(d);
    return g->inner->ops->hover(g->inner);
}

static int g_emergency(drone *d)
{
    guard *g = enter(d);
    return g->inner->ops->emergency(g->inner);
}

static int g_get_state(drone *d, drone_state *out)
{
    guard *g = d->impl;
    return g->inner->ops->get_state(g->inner, out);
}

static int g_wait(drone *d, int ms, char *err, size_t errlen)
{
    guard *g = enter(d);
    return g->inner->ops->wait(g->inner, ms, err, errlen);
}

static void g_destroy(drone *d)
{
    guard *g = d->impl;
    g->inner->ops->destroy(g->inner);
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
    g->inner = inner;
    g->lim = *lim;
    g->home_x = home->x;
    g->home_y = home->y;
    g->self.ops = &guard_ops;
    g->self.impl = g;
    inner->check_step = g_check_step;
    inner->check_step_ud = g;
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
