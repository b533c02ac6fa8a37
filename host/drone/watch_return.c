/* The watch's return: see watch_return.h. */
#include "drone/watch_return.h"

#include "errmsg.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

/* Tries of the fence or band return before it counts as failed, and how
 * many in a row may gain less than STALL_CM. */
#define RETURN_TRIES 12
#define STALL_CM 1.0
#define STALL_TRIES 2
/* Beyond the margin a return aims so far farther in: the wind blows while
 * the drone flies back, and the aim must still be reached. */
#define AIM_EXTRA_CM 10.0

static int state_now(drone *d, drone_state *st)
{
    if (d->ops->get_state(d, st) != 0) return -1;
    const drone_pose *p = &st->pose;
    return isfinite(p->x) && isfinite(p->y) && isfinite(p->z) && isfinite(p->yaw) ? 0 : -1;
}

/* The measured state (watch_latest) at least FRESH states after AFTER: a
 * telemetry thread sends a few per second, and the ones sent during a
 * motion are stale once it ended. A simulator (drone_ops.pass_time) hands
 * its states over as its time passes: the latest is current. Without any
 * measured state: the driver's own. */
#define FRESH 3
#define FRESH_WAIT_MS 1000

static int measured_after(drone *d, watch *w, unsigned long after, drone_state *st)
{
    for (int waited = 0;; waited += 10) {
        unsigned long seq = watch_latest(w, st);
        if (seq == 0) return state_now(d, st);
        if (d->ops->pass_time || seq >= after + FRESH || waited >= FRESH_WAIT_MS ||
            (d->abort && d->abort(d->abort_ud)))
            break;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    const drone_pose *p = &st->pose;
    return isfinite(p->x) && isfinite(p->y) && isfinite(p->z) ? 0 : -1;
}

/* One move of the return, approved by the check before the driver gets it
 * (the step check refuses a step that ends farther out than it starts). */
static int return_move(drone *d, drone_dir dir, int cm, char *err, size_t errlen)
{
    if (cm <= 0) return 0;
    drone_state st;
    if (state_now(d, &st)) return errmsg_set(err, errlen, "the drone's state cannot be read");
    drone_pose to = drone_pose_after(&st.pose, dir, cm);
    static const char *const names[] = {"forward", "back", "left", "right", "up", "down"};
    char what[64];
    snprintf(what, sizeof what, "return: %s %d", names[dir], cm);
    if (d->check_step && d->check_step(d->check_step_ud, &st.pose, &to, what, err, errlen))
        return -1;
    return d->ops->move(d, dir, cm, err, errlen);
}

/* Flies the world-frame vector (DX, DY) as two moves along the drone's own
 * axes (no turn: a turn takes time in which the wind blows), each cut into
 * pieces of at most MAX_MOVE. */
static int fly_vector(drone *d, double dx, double dy, double max_move, char *err, size_t errlen)
{
    drone_state st;
    if (state_now(d, &st)) return errmsg_set(err, errlen, "the drone's state cannot be read");
    double r = st.pose.yaw * M_PI / 180;
    double fwd = dx * sin(r) + dy * cos(r), right = dx * cos(r) - dy * sin(r);
    struct {
        drone_dir dir;
        double cm;
    } legs[2] = {{fwd >= 0 ? DRONE_FORWARD : DRONE_BACK, fabs(fwd)},
                 {right >= 0 ? DRONE_RIGHT : DRONE_LEFT, fabs(right)}};
    int piece = max_move >= 1 ? (int)max_move : 1;
    for (int i = 0; i < 2; i++) {
        int left = (int)lround(legs[i].cm);
        while (left > 0) {
            int cm = left < piece ? left : piece;
            if (return_move(d, legs[i].dir, cm, err, errlen)) return -1;
            left -= cm;
        }
    }
    return 0;
}

/* One try of the return from ST toward the aim of RULE. */
static int try_back(drone *d, const scene_limits *lim, const drone_pose *home, watch_rule rule,
                    const drone_state *st, char *err, size_t errlen)
{
    double need = watch_beyond(lim, home, st, rule) + watch_margin(lim, rule);
    if (rule == WATCH_FENCE) {
        need += AIM_EXTRA_CM;
        double dx = home->x - st->pose.x, dy = home->y - st->pose.y, dist = hypot(dx, dy);
        if (dist < 1e-9) return 0;
        double go = fmin(need, dist);
        return fly_vector(d, dx / dist * go, dy / dist * go, lim->max_move, err, errlen);
    }
    int cm = (int)ceil(need);
    return return_move(d, rule == WATCH_CEILING ? DRONE_DOWN : DRONE_UP, cm, err, errlen);
}

/* Lands where the drone is (the watch paused: a landing leaves the band). */
static watch_end land_here(drone *d, watch *w, watch_end ok, char *why, size_t whylen,
                           const char *before)
{
    watch_pause(w, true);
    drone_state st;
    bool known = state_now(d, &st) == 0;
    char err[256];
    /* A landing must end, also after a cancel (the guard sets the abort
     * callback again at its next call). */
    d->abort = NULL;
    if (d->ops->land(d, err, sizeof err) != 0) {
        errmsg_set(why, whylen, "%s; landing failed: %s: the drone may still be flying", before,
                   err);
        return WATCH_UP;
    }
    if (known)
        errmsg_set(why, whylen, "%s; landed at (%.0f, %.0f)", before, st.pose.x, st.pose.y);
    else
        errmsg_set(why, whylen, "%s; landed", before);
    return ok;
}

/* Fence or band: back inside, or land. */
static watch_end back_inside(drone *d, watch *w, const scene_limits *lim, const drone_pose *home,
                             watch_rule rule, char *why, size_t whylen)
{
    char err[256] = "", msg[400];
    int stalled = 0;
    double margin = watch_margin(lim, rule);
    drone_state st;
    if (measured_after(d, w, 0, &st)) {
        snprintf(msg, sizeof msg, "the return could not be made: the drone's state is unknown");
        return land_here(d, w, WATCH_LANDED_OUT, why, whylen, msg);
    }
    for (int i = 0; i < RETURN_TRIES; i++) {
        double beyond = watch_beyond(lim, home, &st, rule);
        if (beyond <= -margin) {
            errmsg_set(why, whylen, "returned inside to (%.0f, %.0f, %.0f)", st.pose.x, st.pose.y,
                       st.pose.z);
            return WATCH_BACK;
        }
        if (try_back(d, lim, home, rule, &st, err, sizeof err)) {
            snprintf(msg, sizeof msg, "the return could not be made (%s)", err);
            return land_here(d, w, WATCH_LANDED_OUT, why, whylen, msg);
        }
        if (measured_after(d, w, watch_latest(w, &st), &st)) {
            snprintf(msg, sizeof msg, "the return could not be made: the drone's state is unknown");
            return land_here(d, w, WATCH_LANDED_OUT, why, whylen, msg);
        }
        stalled = watch_beyond(lim, home, &st, rule) > beyond - STALL_CM ? stalled + 1 : 0;
        if (stalled >= STALL_TRIES) {
            snprintf(msg, sizeof msg,
                     "the return could not be made: flying back gained nothing (a wind "
                     "stronger than the drone?)");
            return land_here(d, w, WATCH_LANDED_OUT, why, whylen, msg);
        }
    }
    snprintf(msg, sizeof msg, "the return could not be made in %d tries", RETURN_TRIES);
    return land_here(d, w, WATCH_LANDED_OUT, why, whylen, msg);
}

/* Battery: straight toward home, then land (there if it got there). */
static watch_end battery_home(drone *d, watch *w, const scene_limits *lim, const drone_pose *home,
                              char *why, size_t whylen)
{
    drone_state st;
    char err[256] = "", msg[400];
    if (state_now(d, &st) == 0 &&
        fly_vector(d, home->x - st.pose.x, home->y - st.pose.y, lim->max_move, err, sizeof err)) {
        snprintf(msg, sizeof msg, "flying home failed (%s)", err);
        return land_here(d, w, WATCH_LANDED, why, whylen, msg);
    }
    return land_here(d, w, WATCH_LANDED, why, whylen, "flew toward home");
}

watch_end watch_return(drone *inner, watch *w, const scene_limits *lim, const drone_pose *home,
                       const watch_trip *trip, char *why, size_t whylen)
{
    inner->ops->hover(inner);
    if (trip->rule == WATCH_BATTERY) return battery_home(inner, w, lim, home, why, whylen);
    return back_inside(inner, w, lim, home, trip->rule, why, whylen);
}
