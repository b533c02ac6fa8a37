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

typedef struct guard {
    drone self;
    drone *inner;
    scene_limits lim;
    double home_x, home_y;
    bool refused;
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
    g->refused = false;
    return g;
}

static int state_of(guard *g, drone_state *st, char *err, size_t errlen)
{
    if (g->inner->ops->get_state(g->inner, st) == 0) return 0;
    snprintf(err, errlen, "cannot read the drone's state");
    return -1;
}

/* Reads the state for a check and applies the battery reserve (which
 * descending, ALWAYS_OK, is exempt from). */
static int begin_check(guard *g, drone_state *st, bool always_ok, char *err, size_t errlen)
{
    if (state_of(g, st, err, errlen)) return -1;
    g->stats.checked++;
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
    if (begin_check(g, &st, false, err, errlen)) return -1;
    g->stats.passed++;
    return g->inner->ops->takeoff(g->inner, err, errlen);
}

static int g_land(drone *d, char *err, size_t errlen)
{
    guard *g = enter(d);
    return g->inner->ops->land(g->inner, err, errlen);
}

static const char *dir_word(drone_dir dir)
{
    static const char *const w[] = {"forward", "backward", "left", "right", "up", "down"};
    return (unsigned)dir < 6 ? w[dir] : "?";
}

static int g_move(drone *d, drone_dir dir, int cm, char *err, size_t errlen)
{
    guard *g = enter(d);
    drone_state st;
    if (begin_check(g, &st, dir == DRONE_DOWN, err, errlen)) return -1;
    if (cm < 0) return refuse(g, err, errlen, "distance: %d cm is negative", cm);
    const drone_pose *p = &st.pose;
    if (dir == DRONE_UP || dir == DRONE_DOWN) {
        double target = p->z + (dir == DRONE_UP ? cm : -cm);
        double clamped = fmin(fmax(target, g->lim.min_z), g->lim.max_z);
        /* Outside the band already (just after takeoff, say): only moves
         * back toward it are allowed. */
        if (dir == DRONE_UP && clamped < p->z) clamped = p->z;
        if (dir == DRONE_DOWN && clamped > p->z) clamped = p->z;
        if (clamped != target) g->stats.clamped++;
        cm = (int)lround(fabs(clamped - p->z));
        if (cm == 0) return 0; /* already at the edge of the band */
    }
    /* Checked after clamping: a climb "to the ceiling" is a short move. */
    if (cm > g->lim.max_move)
        return refuse(g, err, errlen, "longest move: %d cm is more than the %.0f cm limit", cm,
                      g->lim.max_move);
    if (dir != DRONE_UP && dir != DRONE_DOWN) {
        double rad = p->yaw * M_PI / 180, fx = sin(rad), fy = cos(rad), dx, dy;
        switch (dir) {
        case DRONE_FORWARD: dx = fx, dy = fy; break;
        case DRONE_BACK: dx = -fx, dy = -fy; break;
        case DRONE_RIGHT: dx = fy, dy = -fx; break;
        default: dx = -fy, dy = fx; break;
        }
        double nx = p->x + dx * cm - g->home_x, ny = p->y + dy * cm - g->home_y;
        double now = hypot(p->x - g->home_x, p->y - g->home_y), after = hypot(nx, ny);
        if (after > g->lim.geofence_radius && after > now)
            return refuse(g, err, errlen,
                          "geofence: moving %s %d cm would end %.0f cm from home, outside the "
                          "%.0f cm geofence",
                          dir_word(dir), cm, after, g->lim.geofence_radius);
    }
    g->stats.passed++;
    return g->inner->ops->move(g->inner, dir, cm, err, errlen);
}

static int g_turn(drone *d, int degrees, char *err, size_t errlen)
{
    guard *g = enter(d);
    drone_state st;
    if (begin_check(g, &st, false, err, errlen)) return -1;
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
