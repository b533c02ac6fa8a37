/*
 * The Tello driver: SDK 2.0 text commands over UDP (see tello.h).
 *
 * One command in flight. Every exchange holds cmd_lock from send to reply,
 * so the keep-alive thread and the caller never interleave. Before each send
 * the socket is drained: whatever is waiting there answers a command we have
 * given up on (a late reply) and is dropped. While waiting, replies of the
 * wrong shape are dropped too: a control command expects "ok" or an error
 * text, a query expects a number ("87", "8dm"), so a late "ok" can never be
 * read as a battery level and a late "87" never as "ok".
 *
 * Lost replies. The Tello answers a motion with "ok" only once the motion is
 * over, and UDP may lose the command or the reply. Re-sending "forward 50"
 * after a lost "ok" would fly 100 cm. So, on a timeout, a motion is never
 * re-sent blindly; the state stream (10 Hz, its own port) decides:
 *   - the drone moved since the send (a non-zero speed, a height change for
 *     up/down/takeoff/land, a yaw change for turns): the command arrived. We
 *     wait until the drone is still again and count the command as done;
 *   - the drone stayed still, with fresh state showing it: the command never
 *     arrived, so it is sent again (at most cfg.retries times);
 *   - no state arrives: we cannot know, so the command is NOT re-sent and
 *     the skill fails with a message saying the drone may have moved
 *     (except `land`, which is safe to repeat).
 * Horizontal moves are seen only through the speeds, so the check relies on
 * at least one state packet sent during the move getting through (a Tello
 * flies at most 100 cm/s, so a move of D cm spans about D/10 packets, plus
 * its acceleration). If all of them and the reply are lost, the move is
 * flown again: the one case the driver cannot tell apart. Where the signs
 * are unclear (a hovering drone's speeds and yaw jitter a little) the check
 * leans toward "it moved": a motion reported done that was not flown is a
 * smaller error than one flown twice.
 * A late "ok" that arrives while we are checking is taken as the answer.
 * Commands without effect on the pose (command, streamon, stop, queries) are
 * simply re-sent.
 *
 * Pose. The Tello senses no position. x/y are dead-reckoned from the moves
 * the drone completed, along the heading at the start of each move. z and
 * yaw follow the commands too, and are corrected from the state stream
 * whenever the drone is between motions: z is then its own height above the
 * take-off point (h), yaw its IMU yaw relative to the first one it reported,
 * added to cfg.start.yaw. Without a state stream they stay dead-reckoned.
 * Every state field is validated where it enters (tello_telemetry.c): while
 * the last yaw, h or bat the drone sent was not valid, the position, height
 * or battery is unknown (drone_state.known) and the constraint check refuses
 * the motions that need it. Battery answers are checked the same way.
 *
 * Steps. A move becomes SDK steps (tello_steps.h); each one is submitted to
 * the constraint guard's step check (drone.check_step) before anything is
 * sent, and again just before it is sent: a move under 20 cm, flown as a
 * pair, takes the order that keeps inside the geofence and the altitude
 * band, or is refused.
 *
 * Keep-alive. The Tello lands by itself when it hears nothing for 15 s. A
 * thread sends `battery?` (a query: its answer cannot be mistaken for a
 * motion's "ok", and it refreshes the battery level) when no command got an
 * answer for cfg.keepalive_ms while flying.
 *
 * Cancel. Long calls poll d->abort; when it fires during a command the
 * driver sends `stop` (which the Tello accepts at any time, the one
 * exception to one-in-flight) and returns "cancelled" with the drone
 * hovering. `stop` is not retried at length: it waits a quarter second for
 * its "ok" and is sent once more without one, so that a cancel takes
 * effect within a second even when the drone does not answer. land never
 * polls abort: landing after a cancel must work.
 */
#include "drone/tello_internal.h"
#include "clock.h"
#include "drone/tello_steps.h"

#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SETTLE_PACKETS 4     /* still state packets in a row that mean "still" */
#define STATE_FRESH_MS 1000  /* state older than this is stale */
#define HURRY_MS 600         /* after a cancel, `land` must show a descent by then */
#define TAKEOFF_HEIGHT_CM 80 /* where the Tello hovers after takeoff (dead reckoning) */
#define POLL_SLICE_MS 50
#define SETTLED_MS 150   /* state this long after a motion's end shows its result */
#define STOP_WAIT_MS 250 /* for the answer to `stop`: a cancel must act within 1 s */

static bool aborted(tello *t)
{
    return t->base.abort && t->base.abort(t->base.abort_ud);
}

/* ---- one exchange -------------------------------------------------------- */

static void mark_heard(tello *t, double sent)
{
    pthread_mutex_lock(&t->lock);
    if (sent > t->heard_ms) t->heard_ms = sent;
    pthread_mutex_unlock(&t->lock);
}

/* ---- the lost-reply check ------------------------------------------------ */

enum { CHECK_DONE, CHECK_NOT_DONE, CHECK_UNKNOWN, CHECK_REPLY, CHECK_CANCEL };

/* Did the drone start the motion M since BEFORE? */
static bool moved_since(const motion *m, const telemetry *before, const telemetry *now)
{
    if (!now->have || !before->have) return now->have && now->moving > 0;
    switch (m->kind) {
    case MOTION_HORIZ: return now->moving > before->moving || now->odo_h - before->odo_h >= 5;
    case MOTION_VERT: return now->moving > before->moving || fabs(now->h - before->h) >= 10;
    case MOTION_TURN: {
        double thr = m->amount >= 10 ? 5 : fmax(1, floor(m->amount / 2));
        return heading_diff(now->yaw, before->yaw) >= thr || now->odo_yaw - before->odo_yaw >= thr;
    }
    case MOTION_TAKEOFF: return now->h - before->h >= 20;
    case MOTION_LAND: return now->h <= 10;
    default: return false;
    }
}

/*
 * After a timeout on motion M sent when the telemetry was BEFORE: watches
 * the state stream (and the socket, for a late answer) until it can tell
 * whether the drone did it.
 */
static int check_executed(tello *t, const motion *m, const telemetry *before, char *reply,
                          size_t replylen)
{
    double start = clock_now_ms();
    double quiet_limit = start + fmax(t->cfg.timeout_ms, 1500); /* no evidence either way */
    double hard_limit = start + 4.0 * fmax(t->cfg.timeout_ms, 1500);
    long packets0 = tello_telemetry_now(t).packets;
    for (;;) {
        int r = tello_link_await(&t->link, TELLO_REPLY_CONTROL, clock_now_ms() + POLL_SLICE_MS,
                                 &t->base, reply, replylen);
        if (r == TELLO_LINK_REPLY) return CHECK_REPLY;
        if (r == TELLO_LINK_CANCEL) return CHECK_CANCEL;
        telemetry tm = tello_telemetry_now(t);
        double now = clock_now_ms();
        bool fresh = tm.have && now - tm.at_ms < STATE_FRESH_MS;
        bool still = fresh && tm.still_run >= SETTLE_PACKETS;
        bool moved = moved_since(m, before, &tm);
        if (moved && still) return CHECK_DONE;
        if (!moved && still && tm.packets - packets0 >= SETTLE_PACKETS) return CHECK_NOT_DONE;
        if (now >= hard_limit || (now >= quiet_limit && !(moved && fresh)))
            return moved ? CHECK_DONE : CHECK_UNKNOWN;
    }
}

/* Sends `stop` so that the drone hovers where it is, and waits at most
 * STOP_WAIT_MS for its "ok"; without one it sends `stop` once more and
 * returns at once: a cancel must take effect within a second even when the
 * drone does not answer (cmd_lock held). Returns 0 if the drone said ok. */
static int send_stop(tello *t)
{
    char reply[512], err[256];
    tello_link_drain(&t->link);
    if (tello_link_send(&t->link, "stop", err, sizeof err) < 0) return -1;
    double sent = clock_now_ms();
    if (tello_link_await(&t->link, TELLO_REPLY_CONTROL, sent + STOP_WAIT_MS, NULL, reply,
                         sizeof reply) == TELLO_LINK_REPLY) {
        mark_heard(t, sent);
        return strcasecmp(reply, "ok") == 0 ? 0 : -1;
    }
    tello_link_send(&t->link, "stop", err, sizeof err);
    return -1;
}

/* ---- control commands and queries --------------------------------------- */

static void set_in_motion(tello *t, bool on)
{
    pthread_mutex_lock(&t->lock);
    t->in_motion = on;
    if (!on) {
        t->motion_end_ms = clock_now_ms();
        t->settled_ms = t->motion_end_ms + SETTLED_MS;
    }
    pthread_mutex_unlock(&t->lock);
}

/*
 * Before a motion that follows another: waits (at most 250 ms) for a state
 * packet that left the drone after the previous motion ended. Without it,
 * the last packet may date from the middle of the previous motion, and the
 * lost-reply check would see that motion's tail as this one's start.
 */
static void await_settled_state(tello *t)
{
    pthread_mutex_lock(&t->lock);
    double after = t->motion_end_ms + 30; /* a packet in flight at the end is older */
    pthread_mutex_unlock(&t->lock);
    double limit = clock_now_ms() + 250;
    while (clock_now_ms() < limit) {
        telemetry tm = tello_telemetry_now(t);
        if (!tm.have || clock_now_ms() - tm.at_ms >= STATE_FRESH_MS || tm.at_ms >= after) return;
        struct timespec ts = {0, 5 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/*
 * Sends control command CMD and waits for "ok", with the retry policy of the
 * top of this file (M = NULL: the command has no effect on the pose and is
 * simply re-sent). Error replies fail at once with the drone's text.
 */
static ctrl_result control(tello *t, const char *cmd, int timeout_ms, const motion *m,
                           bool abortable, char *err, size_t errlen)
{
    char reply[512];
    ctrl_result res = CTRL_FAILED;
    bool moves = m && m->kind != MOTION_NONE;
    const char *why = !m ? ": is this computer on the Tello's Wi-Fi?" : "; the drone did not move";
    pthread_mutex_lock(&t->cmd_lock);
    double began = clock_now_ms();
    if (moves) {
        await_settled_state(t);
        set_in_motion(t, true);
    }
    int tries = 1 + (t->cfg.retries > 0 ? t->cfg.retries : 0);
    int i;
    for (i = 0; i < tries; i++) {
        telemetry before = tello_telemetry_now(t);
        tello_link_drain(&t->link);
        if (tello_link_send(&t->link, cmd, err, errlen) < 0) goto out;
        double sent = clock_now_ms();
        int r = tello_link_await(&t->link, TELLO_REPLY_CONTROL, sent + timeout_ms,
                                 abortable ? &t->base : NULL, reply, sizeof reply);
        if (r == TELLO_LINK_TIMEOUT && moves) {
            int c = check_executed(t, m, &before, reply, sizeof reply);
            if (c == CHECK_DONE) {
                res = CTRL_OK;
                goto out;
            }
            if (c == CHECK_UNKNOWN && m->kind == MOTION_LAND) {
                why = " and no state from it";
                continue; /* safe to repeat */
            }
            if (c == CHECK_UNKNOWN) {
                snprintf(err, errlen,
                         "no reply from the Tello to '%s' within %d ms and no state from it: not "
                         "sent again, as the drone may have moved",
                         cmd, timeout_ms);
                goto out;
            }
            r = c == CHECK_REPLY    ? TELLO_LINK_REPLY
                : c == CHECK_CANCEL ? TELLO_LINK_CANCEL
                                    : TELLO_LINK_TIMEOUT;
        }
        if (r == TELLO_LINK_CANCEL) {
            send_stop(t);
            snprintf(err, errlen, "cancelled");
            res = CTRL_CANCELLED;
            goto out;
        }
        if (r == TELLO_LINK_REPLY) {
            mark_heard(t, sent);
            if (strcasecmp(reply, "ok") == 0) {
                res = CTRL_OK;
            } else {
                snprintf(err, errlen, "the Tello refused '%s': %s", cmd, reply);
            }
            goto out;
        }
    }
    /* The total too: watching the state after a motion's timeout adds to
     * the tries' own timeouts, and the message must say how long it took. */
    snprintf(err, errlen,
             "no reply from the Tello at %s:%d to '%s' (%d tries, %d ms each, %.1f s in all)%s",
             t->cfg.host, t->cfg.port, cmd, i, timeout_ms, (clock_now_ms() - began) / 1000, why);
out:
    if (moves) set_in_motion(t, false);
    pthread_mutex_unlock(&t->cmd_lock);
    return res;
}

/*
 * `land` after a cancel (drone.hurry): sent once, then the answer is awaited
 * only while the drone shows that it is landing. A drone whose state goes
 * stale, or that has not begun to descend HURRY_MS after the command, is
 * given up at once: the process must end within 2 s of a signal (SPEC §6),
 * and the caller reports that the drone may still be flying. A drone that is
 * landing is waited for, to the end of the usual landing timeout.
 */
static ctrl_result land_hurried(tello *t, char *err, size_t errlen)
{
    char reply[512];
    ctrl_result res = CTRL_FAILED;
    pthread_mutex_lock(&t->cmd_lock);
    telemetry before = tello_telemetry_now(t);
    tello_link_drain(&t->link);
    if (tello_link_send(&t->link, "land", err, errlen) < 0) goto out;
    double sent = clock_now_ms();
    for (;;) {
        int r = tello_link_await(&t->link, TELLO_REPLY_CONTROL, clock_now_ms() + POLL_SLICE_MS,
                                 NULL, reply, sizeof reply);
        if (r == TELLO_LINK_REPLY) {
            mark_heard(t, sent);
            if (strcasecmp(reply, "ok") == 0)
                res = CTRL_OK;
            else
                snprintf(err, errlen, "the Tello refused 'land': %s", reply);
            goto out;
        }
        telemetry tm = tello_telemetry_now(t);
        double now = clock_now_ms();
        bool fresh = tm.have && now - tm.at_ms < STATE_FRESH_MS;
        if (fresh && tm.h <= 10) {
            res = CTRL_OK; /* down, by its own state */
            goto out;
        }
        bool descending = fresh && before.have && tm.h < before.h - 5;
        if (now - sent >= HURRY_MS && !descending) {
            snprintf(err, errlen,
                     "no answer from the Tello to 'land' within %d ms after the cancel, and %s",
                     HURRY_MS, fresh ? "its state shows no descent" : "no state from it");
            goto out;
        }
        if (now - sent >= t->cfg.takeoff_timeout_ms) {
            snprintf(err, errlen, "the Tello did not finish landing within %d ms",
                     t->cfg.takeoff_timeout_ms);
            goto out;
        }
    }
out:
    pthread_mutex_unlock(&t->cmd_lock);
    return res;
}

/* Sends query CMD and stores the numeric answer in *OUT. */
static int query_number(tello *t, const char *cmd, double *out, char *err, size_t errlen)
{
    char reply[512];
    int rc = -1;
    pthread_mutex_lock(&t->cmd_lock);
    int tries = 1 + (t->cfg.retries > 0 ? t->cfg.retries : 0);
    for (int i = 0; i < tries; i++) {
        tello_link_drain(&t->link);
        if (tello_link_send(&t->link, cmd, err, errlen) < 0) goto out;
        double sent = clock_now_ms();
        int r = tello_link_await(&t->link, TELLO_REPLY_QUERY, sent + t->cfg.timeout_ms, &t->base,
                                 reply, sizeof reply);
        if (r == TELLO_LINK_CANCEL) {
            snprintf(err, errlen, "cancelled");
            goto out;
        }
        if (r != TELLO_LINK_REPLY) continue;
        mark_heard(t, sent);
        char *end;
        double v = strtod(reply, &end);
        if (end == reply) {
            snprintf(err, errlen, "the Tello answered '%s' to '%s'", reply, cmd);
            goto out;
        }
        *out = v;
        rc = 0;
        goto out;
    }
    snprintf(err, errlen, "no reply from the Tello at %s:%d to '%s' (%d tries, %d ms each)",
             t->cfg.host, t->cfg.port, cmd, tries, t->cfg.timeout_ms);
out:
    pthread_mutex_unlock(&t->cmd_lock);
    return rc;
}

/* Asks the drone its battery level into *PCT (and the state). An answer
 * that is not a percentage is an error and leaves the battery unknown. */
static int query_battery(tello *t, int *pct, char *err, size_t errlen)
{
    double v;
    if (query_number(t, "battery?", &v, err, errlen) < 0) return -1;
    bool valid = tello_battery_valid(v);
    pthread_mutex_lock(&t->lock);
    t->bat_bad = !valid;
    if (valid) t->battery = *pct = (int)lround(v);
    pthread_mutex_unlock(&t->lock);
    if (!valid)
        snprintf(err, errlen,
                 "the Tello answered %g to 'battery?', which is not a battery level (0-100%%)", v);
    return valid ? 0 : -1;
}

/* ---- keep-alive ------------------------------------------------------------ */

static void keepalive_once(tello *t)
{
    char reply[512], err[256];
    if (pthread_mutex_trylock(&t->cmd_lock) != 0) return; /* a command is on its way */
    tello_link_drain(&t->link);
    double sent = clock_now_ms();
    /* Short: a cancel that comes meanwhile waits for this lock. */
    bool ok = tello_link_send(&t->link, "battery?", err, sizeof err) == 0 &&
              tello_link_await(&t->link, TELLO_REPLY_QUERY, sent + fmin(t->cfg.timeout_ms, 500),
                               NULL, reply, sizeof reply) == TELLO_LINK_REPLY;
    pthread_mutex_unlock(&t->cmd_lock);
    pthread_mutex_lock(&t->lock);
    if (ok) {
        if (sent > t->heard_ms) t->heard_ms = sent;
        double v = strtod(reply, NULL);
        if (tello_reply_is_query(reply)) {
            /* Checked before the conversion: a huge answer is no level. */
            t->bat_bad = !tello_battery_valid(v);
            if (!t->bat_bad) t->battery = (int)lround(v);
        }
    } else {
        t->keepalive_retry_ms = clock_now_ms() + 300; /* lost: try again soon, not in 10 s */
    }
    pthread_mutex_unlock(&t->lock);
}

static void *keepalive_main(void *arg)
{
    tello *t = arg;
    pthread_mutex_lock(&t->lock);
    while (!t->stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&t->wake, &t->lock, &ts);
        double now = clock_now_ms();
        bool due = t->flying && t->cfg.keepalive_ms > 0 && !t->stopping &&
                   now - t->heard_ms >= t->cfg.keepalive_ms && now >= t->keepalive_retry_ms;
        if (!due) continue;
        pthread_mutex_unlock(&t->lock);
        keepalive_once(t);
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

/* ---- pose ------------------------------------------------------------------ */

/* Moves the dead-reckoned pose by CM in direction DIR at heading YAW. */
static void dead_reckon(tello *t, drone_dir dir, double cm, double yaw)
{
    pthread_mutex_lock(&t->lock);
    drone_pose p = {t->x, t->y, t->z, yaw};
    drone_pose q = drone_pose_after(&p, dir, cm);
    t->x = q.x;
    t->y = q.y;
    t->z = fmax(0, q.z);
    pthread_mutex_unlock(&t->lock);
}

/* The pose in the world frame (lock held). */
static drone_pose world_pose(const tello *t)
{
    return (drone_pose){t->cfg.start.x + t->x, t->cfg.start.y + t->y, t->z, t->yaw};
}

/* ---- the drone operations -------------------------------------------------- */

static tello *impl(drone *d)
{
    return d->impl;
}

static int tello_connect(drone *d, char *err, size_t errlen)
{
    tello *t = impl(d);
    /* An absent drone must not keep the user waiting for every try's full
     * timeout: the tries share one timeout (and the message says so). */
    int tries = 1 + (t->cfg.retries > 0 ? t->cfg.retries : 0);
    int per_try = t->cfg.timeout_ms / tries > 0 ? t->cfg.timeout_ms / tries : 1;
    if (control(t, "command", per_try, NULL, true, err, errlen) != CTRL_OK) return -1;
    int bat;
    if (query_battery(t, &bat, err, errlen) < 0) return -1;
    pthread_mutex_lock(&t->lock);
    t->connected = true;
    pthread_mutex_unlock(&t->lock);
    pthread_mutex_lock(&t->lock);
    if (t->cfg.video) t->streamon_ms = clock_now_ms();
    pthread_mutex_unlock(&t->lock);
    if (t->cfg.video &&
        control(t, "streamon", t->cfg.timeout_ms, NULL, true, err, errlen) != CTRL_OK) {
        size_t n = strlen(err);
        snprintf(err + n, errlen - n, " (--no-video flies without the camera)");
        return -1;
    }
    return 0;
}

static int tello_takeoff(drone *d, char *err, size_t errlen)
{
    tello *t = impl(d);
    if (!t->connected) {
        snprintf(err, errlen, "the Tello is not connected");
        return -1;
    }
    int bat;
    if (query_battery(t, &bat, err, errlen) < 0) return -1;
    if (bat < t->cfg.battery_min) {
        snprintf(err, errlen, "battery at %d%%, under the %d%% needed to take off: not taking off",
                 bat, t->cfg.battery_min);
        return -1;
    }
    /* The climb to the hover height is a step like any other. */
    pthread_mutex_lock(&t->lock);
    drone_pose from = world_pose(t), to = from;
    pthread_mutex_unlock(&t->lock);
    to.z = TAKEOFF_HEIGHT_CM;
    if (d->check_step && d->check_step(d->check_step_ud, &from, &to, "takeoff", err, errlen))
        return -1;
    motion m = {MOTION_TAKEOFF, TAKEOFF_HEIGHT_CM};
    ctrl_result r = control(t, "takeoff", t->cfg.takeoff_timeout_ms, &m, true, err, errlen);
    if (r == CTRL_FAILED) return -1;
    pthread_mutex_lock(&t->lock);
    t->flying = true; /* also when cancelled: the drone may be up, land it */
    t->z = TAKEOFF_HEIGHT_CM;
    t->heard_ms = clock_now_ms();
    pthread_mutex_unlock(&t->lock);
    return r == CTRL_OK ? 0 : -1;
}

static int tello_land(drone *d, char *err, size_t errlen)
{
    tello *t = impl(d);
    pthread_mutex_lock(&t->lock);
    bool up = t->flying || (t->tm.have && t->tm.h > 10);
    pthread_mutex_unlock(&t->lock);
    if (!up) return 0;
    motion m = {MOTION_LAND, 0};
    ctrl_result r = d->hurry
                        ? land_hurried(t, err, errlen)
                        : control(t, "land", t->cfg.takeoff_timeout_ms, &m, false, err, errlen);
    if (r != CTRL_OK) {
        /* Refused because it is down already (it lands by itself on a low
         * battery or a lost link): that is what we asked for. */
        telemetry tm = tello_telemetry_now(t);
        if (!tm.have || clock_now_ms() - tm.at_ms >= STATE_FRESH_MS || tm.h > 10 ||
            !strstr(err, "refused"))
            return -1;
    }
    pthread_mutex_lock(&t->lock);
    t->flying = false;
    t->z = 0;
    pthread_mutex_unlock(&t->lock);
    return 0;
}

static int tello_move(drone *d, drone_dir dir, int cm, char *err, size_t errlen)
{
    tello *t = impl(d);
    if ((unsigned)dir > DRONE_DOWN || cm < 0) {
        snprintf(err, errlen, "bad move: direction %d, %d cm", (int)dir, cm);
        return -1;
    }
    /* Every step goes to the constraint check before anything is sent (a
     * pair in the order that keeps to the limits), and each again just
     * before it is sent, from the pose the drone has then. */
    pthread_mutex_lock(&t->lock);
    drone_pose from = world_pose(t);
    pthread_mutex_unlock(&t->lock);
    tello_step steps[TELLO_MAX_STEPS];
    int n = tello_plan_move(dir, cm, &from, d->check_step, d->check_step_ud, steps, TELLO_MAX_STEPS,
                            err, errlen);
    if (n < 0) return -1;
    bool vertical = dir == DRONE_UP || dir == DRONE_DOWN;
    for (int i = 0; i < n; i++) {
        if (aborted(t)) {
            snprintf(err, errlen, "cancelled");
            return -1;
        }
        char cmd[64];
        tello_step_command(dir, &steps[i], cmd, sizeof cmd);
        double sign = steps[i].reverse ? -1 : 1;
        pthread_mutex_lock(&t->lock);
        drone_pose at = world_pose(t);
        pthread_mutex_unlock(&t->lock);
        drone_pose to = drone_pose_after(&at, dir, sign * steps[i].amount);
        if (d->check_step && d->check_step(d->check_step_ud, &at, &to, cmd, err, errlen)) return -1;
        telemetry before = tello_telemetry_now(t);
        motion m = {vertical ? MOTION_VERT : MOTION_HORIZ, steps[i].amount};
        ctrl_result r = control(t, cmd, t->cfg.timeout_ms, &m, true, err, errlen);
        if (r == CTRL_OK) {
            dead_reckon(t, dir, sign * steps[i].amount, at.yaw);
            continue;
        }
        if (r == CTRL_CANCELLED && !vertical) {
            /* Part of the step was flown: estimate it from the speeds. */
            double flown = fmin(tello_telemetry_now(t).odo_h - before.odo_h, steps[i].amount);
            dead_reckon(t, dir, sign * flown, at.yaw);
        }
        return -1;
    }
    return 0;
}

static int tello_turn(drone *d, int degrees, char *err, size_t errlen)
{
    tello *t = impl(d);
    int steps[TELLO_MAX_STEPS];
    int n = tello_split_turn(abs(degrees), steps, TELLO_MAX_STEPS);
    if (n < 0) {
        snprintf(err, errlen, "a turn of %d degrees is too long for one skill call", degrees);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (aborted(t)) {
            snprintf(err, errlen, "cancelled");
            return -1;
        }
        char cmd[64];
        snprintf(cmd, sizeof cmd, "%s %d", degrees > 0 ? "cw" : "ccw", steps[i]);
        motion m = {MOTION_TURN, steps[i]};
        if (control(t, cmd, t->cfg.timeout_ms, &m, true, err, errlen) != CTRL_OK) return -1;
        pthread_mutex_lock(&t->lock);
        t->yaw = heading_wrap(t->yaw + (degrees > 0 ? steps[i] : -steps[i]));
        pthread_mutex_unlock(&t->lock);
    }
    return 0;
}

static int tello_hover(drone *d)
{
    tello *t = impl(d);
    pthread_mutex_lock(&t->lock);
    bool up = t->connected && t->flying;
    pthread_mutex_unlock(&t->lock);
    /* Nothing to stop on the ground, and a drone that never answered
     * `command` takes no other command. */
    if (!up) return 0;
    pthread_mutex_lock(&t->cmd_lock);
    int rc = send_stop(t);
    pthread_mutex_unlock(&t->cmd_lock);
    return rc;
}

/* Motors off at once, wherever the drone is. Sent twice without waiting: a
 * lost emergency must not wait for a timeout. */
static int tello_emergency(drone *d)
{
    tello *t = impl(d);
    char err[256];
    int ok = tello_link_send(&t->link, "emergency", err, sizeof err) == 0;
    ok |= tello_link_send(&t->link, "emergency", err, sizeof err) == 0;
    pthread_mutex_lock(&t->lock);
    t->flying = false;
    t->z = 0; /* it falls */
    pthread_mutex_unlock(&t->lock);
    return ok ? 0 : -1;
}

static int tello_get_state(drone *d, drone_state *out)
{
    tello *t = impl(d);
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&t->lock);
    out->pose = world_pose(t);
    out->battery = t->battery;
    out->known = (t->yaw_bad ? 0 : DRONE_KNOWN_POSITION) | (t->h_bad ? 0 : DRONE_KNOWN_HEIGHT) |
                 (t->bat_bad || t->battery < 0 ? 0 : DRONE_KNOWN_BATTERY);
    out->flying = t->flying;
    if (t->tm.have) {
        out->tof_cm = t->sdk.tof;
        out->baro_cm = t->sdk.baro * 100; /* sent in metres */
        out->pitch = t->sdk.pitch;
        out->roll = t->sdk.roll;
        out->vx = t->sdk.vgx * 10;
        out->vy = t->sdk.vgy * 10;
        out->vz = t->sdk.vgz * 10;
        out->flight_time_s = t->sdk.time;
    }
    pthread_mutex_unlock(&t->lock);
    return 0;
}

static int tello_wait(drone *d, int ms, char *err, size_t errlen)
{
    tello *t = impl(d);
    double end = clock_now_ms() + ms;
    for (;;) {
        if (aborted(t)) {
            snprintf(err, errlen, "cancelled");
            return -1;
        }
        double left = end - clock_now_ms();
        if (left <= 0) return 0;
        struct timespec ts = {0, (long)(fmin(left, 20) * 1e6)};
        nanosleep(&ts, NULL);
    }
}

static void tello_destroy(drone *d)
{
    if (!d) return;
    tello *t = impl(d);
    pthread_mutex_lock(&t->lock);
    t->stopping = true;
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->keepalive_thread, NULL);
    pthread_join(t->state_thread, NULL);
    if (t->connected && t->cfg.video) {
        /* One try: the video stops anyway when the drone is switched off. */
        char err[256];
        t->cfg.retries = 0;
        control(t, "streamoff", (int)fmin(t->cfg.timeout_ms, 1000), NULL, false, err, sizeof err);
    }
    tello_link_close(&t->link);
    close(t->state_fd);
    pthread_mutex_destroy(&t->cmd_lock);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->wake);
    free(t);
}

static const drone_ops tello_ops = {
    .name = "tello",
    .connect = tello_connect,
    .takeoff = tello_takeoff,
    .land = tello_land,
    .move = tello_move,
    .turn = tello_turn,
    .hover = tello_hover,
    .emergency = tello_emergency,
    .get_state = tello_get_state,
    .wait = tello_wait,
    .destroy = tello_destroy,
};

double tello_streamon_ms(drone *d)
{
    if (!d || d->ops != &tello_ops) return -1;
    tello *t = impl(d);
    pthread_mutex_lock(&t->lock);
    double ms = t->streamon_ms;
    pthread_mutex_unlock(&t->lock);
    return ms;
}

/* ---- creation ---------------------------------------------------------------- */

drone *tello_new(const tello_config *cfg, char *err, size_t errlen)
{
    tello *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->cfg = *cfg;
    t->base.ops = &tello_ops;
    t->base.impl = t;
    t->battery = -1;
    t->streamon_ms = -1;
    t->yaw = heading_wrap(cfg->start.yaw);
    t->state_fd = -1;
    if (tello_link_open(&t->link, cfg->host, cfg->port, err, errlen) < 0) {
        free(t);
        return NULL;
    }
    t->state_fd = tello_link_bind(&t->link, cfg->state_port, "state", err, errlen);
    if (t->state_fd < 0) goto fail;
    pthread_mutex_init(&t->cmd_lock, NULL);
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->wake, NULL);
    if (pthread_create(&t->state_thread, NULL, tello_state_main, t) != 0) goto fail_threads;
    if (pthread_create(&t->keepalive_thread, NULL, keepalive_main, t) != 0) {
        pthread_mutex_lock(&t->lock);
        t->stopping = true;
        pthread_mutex_unlock(&t->lock);
        pthread_join(t->state_thread, NULL);
        goto fail_threads;
    }
    return &t->base;
fail_threads:
    snprintf(err, errlen, "cannot start the Tello driver's threads");
    pthread_mutex_destroy(&t->cmd_lock);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->wake);
fail:
    tello_link_close(&t->link);
    if (t->state_fd >= 0) close(t->state_fd);
    free(t);
    return NULL;
}
