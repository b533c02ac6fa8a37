/*
 * The MAVLink driver behind the drone interface (see mavlink.h): connect,
 * takeoff, moves and turns as position targets, land, and the thread that
 * keeps our HEARTBEAT and the target stream going.
 *
 * PX4 flies the target stream in OFFBOARD, which it accepts only after
 * setpoints arrived for a while (above 2 Hz) and leaves when they stop, so
 * the stream starts a second before the switch and runs all flight.
 * ArduPilot flies GUIDED: arm, MAV_CMD_NAV_TAKEOFF at once (it disarms by
 * itself about 10 s after arming without a takeoff), then targets; a target
 * always carries its yaw (one without resets ArduPilot's heading control).
 * Holding (hover, cancel) is a target where the vehicle is, in the mode
 * flown: never LOITER, ALT_HOLD or POSHOLD, which need a pilot's throttle.
 * Motions are judged done from LOCAL_POSITION_NED within a tolerance and a
 * time limit. Nothing here force-arms, writes parameters or stops motors.
 */
#include "clock.h"
#include "drone/heading.h"
#include "drone/mavlink_internal.h"
#include "errmsg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TICK_MS 100 /* the target stream: 10 Hz */
#define HEARTBEAT_MS 1000
#define REFRESH_MS 2000       /* how often the streams are checked */
#define OFFBOARD_LEAD_MS 1200 /* setpoints before PX4's switch to OFFBOARD */
#define PROGRESS_MS 5000
#define CLIMB_CM_S 50.0 /* assumed for the takeoff's and landing's time limits */
#define SLACK_MS 15000

static mavlink_drv *drv(drone *d)
{
    return d->impl;
}

drone_state mavlink_state_locked(mavlink_drv *m)
{
    const mavlink_telemetry *t = &m->tm;
    drone_state st = {0};
    st.pose = mavlink_world_from_ned(&m->origin, &t->pos, t->yaw_deg);
    st.battery = t->battery;
    if (t->have_pos && t->pos_valid && t->have_att && t->yaw_valid && m->have_origin)
        st.known |= DRONE_KNOWN_POSITION;
    if (t->have_pos && t->z_valid && m->have_origin) st.known |= DRONE_KNOWN_HEIGHT;
    if (t->battery_valid) st.known |= DRONE_KNOWN_BATTERY;
    st.flying = m->flying;
    st.tof_cm = st.baro_cm = st.pose.z;
    st.pitch = t->pitch_deg, st.roll = t->roll_deg;
    /* world axes: x east, y north, z up */
    st.vx = t->vy * 100, st.vy = t->vx * 100, st.vz = -t->vz * 100;
    return st;
}

/* ---- the link's side ------------------------------------------------------- */

/* Every position, height or battery the vehicle reports also goes to the
 * watch on the measured state (drone_measured, SPEC §10). */
static bool measures(uint32_t msgid)
{
    return msgid == MAV_MSG_LOCAL_POSITION_NED || msgid == MAV_MSG_SYS_STATUS ||
           msgid == MAV_MSG_BATTERY_STATUS;
}

/* Locked: heights are above home, and home may move while the vehicle is
 * on the ground (ArduPilot sets it again where it arms), so home's level
 * is followed until the vehicle is up; MAV_CMD_NAV_TAKEOFF's altitude is
 * above that home. */
static void follow_home_locked(mavlink_drv *m)
{
    bool on_ground = !mavlink_armed(&m->tm) || m->tm.landed == MAV_LANDED_STATE_ON_GROUND;
    double z;
    if (m->have_origin && !m->up && on_ground && mavlink_home_level(&m->tm, &z)) m->origin.z = z;
}

static void on_frame(void *ud, const mav_frame *f)
{
    mavlink_drv *m = ud;
    pthread_mutex_lock(&m->lock);
    double now = clock_now_ms();
    mavlink_telemetry_apply(&m->tm, f, now);
    int slot = mavlink_stream_slot(f->msgid);
    if (slot >= 0) m->stream_ms[slot] = now;
    if (f->msgid == MAV_MSG_GLOBAL_POSITION_INT || f->msgid == MAV_MSG_HOME_POSITION)
        follow_home_locked(m);
    bool measured = measures(f->msgid);
    drone_state st = measured ? mavlink_state_locked(m) : (drone_state){0};
    st.flying = st.flying && m->up; /* not judged while it climbs or lands */
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
    /* Outside the lock: the watch only judges, but the guard's thread may
     * be waiting for this lock meanwhile. */
    if (measured) drone_measured(&m->base, &st);
}

static void send_heartbeat(mavlink_drv *m)
{
    mav_heartbeat hb = {0, MAV_TYPE_GCS, MAV_AUTOPILOT_INVALID, 0, MAV_STATE_ACTIVE, 3};
    uint8_t payload[MAV_MAX_PAYLOAD];
    size_t len = mav_heartbeat_pack(&hb, payload);
    char err[256];
    /* before the vehicle is heard on udpin there is nowhere to send: fine */
    mavlink_sub_send(m->sub, MAV_MSG_HEARTBEAT, payload, len, err, sizeof err);
}

static void *ticker_main(void *arg)
{
    mavlink_drv *m = arg;
    double next_hb = 0, next_refresh = 0;
    while (!m->stop) {
        double now = clock_now_ms();
        if (now >= next_hb) {
            send_heartbeat(m);
            next_hb = now + HEARTBEAT_MS;
        }
        /* once connected (connect asks for the streams itself) */
        pthread_mutex_lock(&m->lock);
        bool connected = m->have_origin && !m->lost;
        pthread_mutex_unlock(&m->lock);
        if (connected && now >= next_refresh) {
            mavlink_refresh_streams(m);
            next_refresh = now + REFRESH_MS;
        }
        char err[256];
        mavlink_send_target(m, err, sizeof err);
        struct timespec ts = {0, TICK_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* ---- connect ----------------------------------------------------------------- */

static bool heard_vehicle(mavlink_drv *m, void *ud)
{
    (void)ud;
    return m->tm.heartbeat;
}

static bool has_pose(mavlink_drv *m, void *ud)
{
    (void)ud;
    const mavlink_telemetry *t = &m->tm;
    /* the battery too: the mission checks it before the takeoff, and
     * SYS_STATUS may come after the first position */
    return t->have_pos && t->pos_valid && t->z_valid && t->have_att && t->yaw_valid &&
           t->battery_valid;
}

static const char *autopilot_name(uint8_t a)
{
    return a == MAV_AUTOPILOT_PX4 ? "PX4" : a == MAV_AUTOPILOT_ARDUPILOTMEGA ? "ArduPilot" : "?";
}

/* What the vehicle still lacks for connect, for the progress line. */
static void missing(mavlink_drv *m, char *buf, size_t len)
{
    pthread_mutex_lock(&m->lock);
    const mavlink_telemetry *t = &m->tm;
    snprintf(buf, len, "%s%s%s%s", !t->have_pos ? "no local position yet" : "",
             t->have_pos && !(t->pos_valid && t->z_valid) ? "its position is not valid" : "",
             !t->have_att || !t->yaw_valid ? (t->have_pos ? "; no heading yet" : "; no heading")
                                           : "",
             !t->battery_valid ? "; no battery reading yet" : "");
    if (t->prearm[0]) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, " (%s)", t->prearm);
    }
    pthread_mutex_unlock(&m->lock);
}

static int await_pose(mavlink_drv *m, double end, char *err, size_t errlen)
{
    for (;;) {
        char werr[300];
        if (mavlink_wait(m, has_pose, NULL, PROGRESS_MS, true, "", werr, sizeof werr) == 0)
            return 0;
        if (strncmp(werr, "timed out", 9) != 0) return errmsg_set(err, errlen, "%s", werr);
        char what[200];
        missing(m, what, sizeof what);
        if (clock_now_ms() >= end)
            return errmsg_set(err, errlen, "the vehicle is not ready after %.0f s: %s",
                              m->cfg.ready_timeout_ms / 1000.0, what);
        mavlink_progress(m, "waiting for the vehicle: %s", what);
        /* the request may have been lost, or the vehicle rebooted */
        if (mavlink_request_streams(m, err, errlen)) return -1;
    }
}

static int mav_connect(drone *d, char *err, size_t errlen)
{
    mavlink_drv *m = drv(d);
    double end = clock_now_ms() + m->cfg.ready_timeout_ms;
    mavlink_progress(m, "waiting for a vehicle on %s", m->name);
    char werr[300];
    if (mavlink_wait(m, heard_vehicle, NULL, m->cfg.ready_timeout_ms, true, "", werr, sizeof werr))
        return strncmp(werr, "timed out", 9) == 0
                   ? errmsg_set(err, errlen, "no vehicle's HEARTBEAT on %s in %.0f s", m->name,
                                m->cfg.ready_timeout_ms / 1000.0)
                   : errmsg_set(err, errlen, "%s", werr);
    pthread_mutex_lock(&m->lock);
    uint8_t ap = m->tm.autopilot;
    char mode[40];
    mavlink_mode_name(ap, m->tm.custom_mode, mode, sizeof mode);
    pthread_mutex_unlock(&m->lock);
    if (ap != MAV_AUTOPILOT_PX4 && ap != MAV_AUTOPILOT_ARDUPILOTMEGA)
        return errmsg_set(err, errlen,
                          "vehicle %d runs autopilot %d: aloft flies PX4 (12) and ArduPilot (3)",
                          mavlink_sub_sysid(m->sub), ap);
    mavlink_progress(m, "vehicle %d: %s, mode %s", mavlink_sub_sysid(m->sub), autopilot_name(ap),
                     mode);
    if (mavlink_request_streams(m, err, errlen) || await_pose(m, end, err, errlen)) return -1;
    pthread_mutex_lock(&m->lock);
    m->origin = m->tm.pos;
    /* heights are home-relative: the home the autopilot set, if it said */
    double home_z;
    if (mavlink_home_level(&m->tm, &home_z)) m->origin.z = home_z;
    m->have_origin = true;
    m->flying = mavlink_armed(&m->tm) && m->tm.landed != MAV_LANDED_STATE_ON_GROUND &&
                m->tm.landed != MAV_LANDED_STATE_UNDEFINED;
    m->up = m->flying;
    pthread_mutex_unlock(&m->lock);
    return 0;
}

/* ---- motions ----------------------------------------------------------------- */

typedef struct goal {
    drone_pose to;
    bool position, heading;
    double tol_cm, tol_deg;
    /* A motion shorter than twice the tolerance would count as done before
     * it started: it must come halfway from FROM first (DEPARTED). */
    drone_pose from;
    double depart_cm;
    bool departed;
} goal;

/* The goal of a motion FROM -> TO, with the position tolerance cut to half
 * the distance for a short one (at least 10 cm), which must also get
 * halfway before it can count as done. */
static goal goal_of(const mavlink_config *cfg, const drone_pose *from, const drone_pose *to,
                    bool heading)
{
    double dx = to->x - from->x, dy = to->y - from->y, dz = to->z - from->z;
    double dist = sqrt(dx * dx + dy * dy + dz * dz);
    goal g = {*to, true, heading, cfg->tolerance_cm, cfg->yaw_tolerance_deg, *from, 0, false};
    if (dist >= 1 && dist < 2 * cfg->tolerance_cm) { /* a turn (no distance) keeps it whole */
        g.tol_cm = fmax(10, dist / 2);
        g.depart_cm = dist / 2;
    }
    return g;
}

#define SETTLED_CM_S 50 /* slower than this at the target: arrived, not passing */

static bool near(const drone_pose *a, const drone_pose *b, double tol_cm)
{
    double dx = a->x - b->x, dy = a->y - b->y, dz = a->z - b->z;
    return sqrt(dx * dx + dy * dy + dz * dz) <= tol_cm;
}

static bool reached(mavlink_drv *m, void *ud)
{
    goal *g = ud;
    drone_state st = mavlink_state_locked(m);
    if (!g->departed) g->departed = !near(&st.pose, &g->from, g->depart_cm - 1e-9);
    if (!g->departed) return false;
    if (g->position && (!near(&st.pose, &g->to, g->tol_cm) ||
                        !(sqrt(st.vx * st.vx + st.vy * st.vy + st.vz * st.vz) < SETTLED_CM_S)))
        return false;
    return !g->heading || heading_diff(st.pose.yaw, g->to.yaw) <= g->tol_deg;
}

/* Where the next motion starts: the last target while the vehicle is
 * there (so that the tolerance of one motion does not add up over a
 * plan), else where it is. */
static drone_state motion_base(mavlink_drv *m)
{
    pthread_mutex_lock(&m->lock);
    drone_state st = mavlink_state_locked(m);
    if (m->have_goal && near(&st.pose, &m->goal, m->cfg.tolerance_cm) &&
        heading_diff(st.pose.yaw, m->goal.yaw) <= m->cfg.yaw_tolerance_deg)
        st.pose = m->goal;
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* Checks the step FROM -> TO with the constraint guard, sends the target,
 * waits until it is reached; on cancel or timeout holds where it is. */
static int fly_to(mavlink_drv *m, const drone_pose *from, goal *g, double limit_ms,
                  const char *what, char *err, size_t errlen)
{
    if (m->base.check_step &&
        m->base.check_step(m->base.check_step_ud, from, &g->to, what, err, errlen))
        return -1;
    if (mavlink_set_target(m, &g->to, err, errlen)) return -1;
    int rc = mavlink_wait(m, reached, g, limit_ms, true, what, err, errlen);
    if (rc && !m->lost) mavlink_hold_here(m);
    if (rc == 0) {
        pthread_mutex_lock(&m->lock);
        m->goal = g->to;
        m->have_goal = true;
        pthread_mutex_unlock(&m->lock);
    }
    return rc;
}

static int usable(mavlink_drv *m, char *err, size_t errlen)
{
    pthread_mutex_lock(&m->lock);
    bool lost = m->lost, flying = m->flying;
    pthread_mutex_unlock(&m->lock);
    if (lost) return errmsg_set(err, errlen, "the link to the vehicle is lost");
    if (!flying) return errmsg_set(err, errlen, "not flying (take off first)");
    return 0;
}

static drone_state state_now(mavlink_drv *m)
{
    pthread_mutex_lock(&m->lock);
    drone_state st = mavlink_state_locked(m);
    pthread_mutex_unlock(&m->lock);
    return st;
}

static int mav_move(drone *d, drone_dir dir, int cm, char *err, size_t errlen)
{
    mavlink_drv *m = drv(d);
    if (usable(m, err, errlen)) return -1;
    if (cm < 0) return errmsg_set(err, errlen, "distance %d cm is negative", cm);
    drone_state st = motion_base(m);
    drone_pose to = drone_pose_after(&st.pose, dir, cm);
    goal g = goal_of(&m->cfg, &st.pose, &to, true);
    g.tol_deg *= 3; /* the heading is only kept */
    static const char *const words[] = {"forward", "back", "left", "right", "up", "down"};
    char what[64];
    snprintf(what, sizeof what, "%s %d", words[dir], cm);
    return fly_to(m, &st.pose, &g, cm / m->cfg.speed_cm_s * 1000 + SLACK_MS, what, err, errlen);
}

static int mav_turn(drone *d, int degrees, char *err, size_t errlen)
{
    mavlink_drv *m = drv(d);
    if (usable(m, err, errlen)) return -1;
    drone_state st = motion_base(m);
    double start = st.pose.yaw;
    char what[64];
    snprintf(what, sizeof what, "turn %d", degrees);
    /* A yaw target takes the short way round: a long turn is flown in
     * steps of at most 120 degrees. */
    int steps = (abs(degrees) + 119) / 120;
    if (steps == 0) steps = 1;
    for (int k = 1; k <= steps; k++) {
        drone_pose to = st.pose;
        to.yaw = heading_wrap(start + (double)degrees * k / steps);
        goal g = goal_of(&m->cfg, &st.pose, &to, true);
        double limit = fabs((double)degrees / steps) / 30 * 1000 + SLACK_MS;
        if (fly_to(m, &st.pose, &g, limit, what, err, errlen)) return -1;
        st.pose = g.to;
    }
    return 0;
}

/* Holds at the last target while the vehicle is there, else where it is. */
static int mav_hover(drone *d)
{
    mavlink_drv *m = drv(d);
    pthread_mutex_lock(&m->lock);
    bool idle = !m->flying || m->lost;
    pthread_mutex_unlock(&m->lock);
    if (idle) return 0;
    drone_state st = motion_base(m);
    char err[256];
    return mavlink_set_target(m, &st.pose, err, sizeof err);
}

static int mav_wait(drone *d, int ms, char *err, size_t errlen)
{
    mavlink_drv *m = drv(d);
    /* mavlink_wait fails at once on a lost link */
    return mavlink_wait(m, NULL, NULL, ms, true, "", err, errlen);
}

static int mav_get_state(drone *d, drone_state *out)
{
    *out = state_now(drv(d));
    return 0;
}

/* ---- takeoff ----------------------------------------------------------------- */

/* Locked: is the vehicle on its way up (or up)? */
static bool climbing_locked(mavlink_drv *m, void *ud)
{
    (void)ud;
    drone_state st = mavlink_state_locked(m);
    return m->tm.landed == MAV_LANDED_STATE_TAKEOFF || m->tm.landed == MAV_LANDED_STATE_IN_AIR ||
           ((st.known & DRONE_KNOWN_HEIGHT) && st.pose.z > 20);
}

static bool climbing(mavlink_drv *m)
{
    pthread_mutex_lock(&m->lock);
    bool up = climbing_locked(m, NULL);
    pthread_mutex_unlock(&m->lock);
    return up;
}

/* PX4: the setpoint stream first (at the take-off point, on the ground),
 * OFFBOARD, arm, then the target at the take-off height. */
static int takeoff_px4(mavlink_drv *m, const drone_pose *ground, const drone_pose *up, char *err,
                       size_t errlen)
{
    if (mavlink_set_target(m, ground, err, errlen) ||
        mavlink_wait(m, NULL, NULL, OFFBOARD_LEAD_MS, true, "", err, errlen) ||
        mavlink_set_mode_guided(m, err, errlen) || mavlink_arm(m, err, errlen))
        return -1;
    return mavlink_set_target(m, up, err, errlen);
}

/* ArduPilot: GUIDED, arm, MAV_CMD_NAV_TAKEOFF at once; the target stream
 * starts once it is up (a target during the climb would replace it). */
static int takeoff_ardupilot(mavlink_drv *m, const drone_pose *up, char *err, size_t errlen)
{
    if (mavlink_set_mode_guided(m, err, errlen) || mavlink_arm(m, err, errlen)) return -1;
    float p[7] = {0, 0, 0, NAN, 0, 0, (float)(up->z / 100)};
    char why[300];
    /* the climb shows it accepted when its answer is lost */
    if (mavlink_command(m, MAV_CMD_NAV_TAKEOFF, p, "the takeoff", climbing_locked, false, why,
                        sizeof why) == 0)
        return 0;
    /* a repeat of a takeoff whose answer was lost is refused while the
     * first one climbs: the telemetry tells (it may be a moment behind) */
    char werr[300];
    if (strcmp(why, "cancelled") != 0 && !strstr(why, "fell silent") &&
        mavlink_wait(m, climbing_locked, NULL, 2000, true, "", werr, sizeof werr) == 0)
        return 0;
    return errmsg_set(err, errlen, "%s", why);
}

static int mav_takeoff(drone *d, char *err, size_t errlen)
{
    mavlink_drv *m = drv(d);
    pthread_mutex_lock(&m->lock);
    drone_state st = mavlink_state_locked(m);
    bool px4 = m->tm.autopilot == MAV_AUTOPILOT_PX4, lost = m->lost, flying = m->flying;
    pthread_mutex_unlock(&m->lock);
    if (lost) return errmsg_set(err, errlen, "the link to the vehicle is lost");
    if (flying) {
        mavlink_hold_here(m);
        return 0;
    }
    if ((st.known & DRONE_KNOWN_BATTERY) && st.battery < m->cfg.battery_min)
        return errmsg_set(err, errlen, "battery %d%% is too low to take off (under %d%%)",
                          st.battery, m->cfg.battery_min);
    drone_pose ground = st.pose, up = st.pose;
    up.z = m->cfg.takeoff_cm;
    if (m->base.check_step &&
        m->base.check_step(m->base.check_step_ud, &ground, &up, "takeoff", err, errlen))
        return -1;
    mavlink_progress(m, "taking off to %.1f m (%s)", up.z / 100, px4 ? "OFFBOARD" : "GUIDED");
    int rc =
        px4 ? takeoff_px4(m, &ground, &up, err, errlen) : takeoff_ardupilot(m, &up, err, errlen);
    if (rc == 0) {
        pthread_mutex_lock(&m->lock);
        m->flying = true;
        m->landing = false;
        pthread_mutex_unlock(&m->lock);
        goal g = goal_of(&m->cfg, &ground, &up, false);
        rc = mavlink_wait(m, reached, &g, up.z / CLIMB_CM_S * 1000 + SLACK_MS, true,
                          "the climb to the take-off height", err, errlen);
    }
    if (rc == 0 && !px4) rc = mavlink_set_target(m, &up, err, errlen);
    if (rc == 0) {
        pthread_mutex_lock(&m->lock);
        m->goal = up;
        m->have_goal = true;
        m->up = true;
        pthread_mutex_unlock(&m->lock);
    }
    if (rc && !m->lost && climbing(m)) mavlink_hold_here(m);
    if (rc && !climbing(m)) {
        pthread_mutex_lock(&m->lock);
        m->flying = false;
        m->up = false;
        m->streaming = false;
        bool armed = mavlink_armed(&m->tm) && !m->lost;
        pthread_mutex_unlock(&m->lock);
        /* A takeoff given up on may still come (its command and answer
         * late, or a repeat): disarmed, the vehicle refuses it, and does
         * not fly off with nobody flying it. */
        char derr[300];
        if (armed && mavlink_disarm(m, derr, sizeof derr))
            mavlink_progress(m, "the takeoff failed and the vehicle stays armed: %s", derr);
    }
    return rc;
}

/* ---- landing ------------------------------------------------------------------ */

/* On the ground and disarmed (both autopilots disarm once their landing
 * detector says so); a vehicle that sends no EXTENDED_SYS_STATE is judged
 * by its disarm alone. */
static bool landed(mavlink_drv *m, void *ud)
{
    (void)ud;
    return (m->tm.landed == MAV_LANDED_STATE_ON_GROUND || !m->tm.landed_seen) &&
           !mavlink_armed(&m->tm);
}

/* Locked: does the vehicle show it lands (its landing mode, or its landed
 * state)? An accepted landing whose answer was lost. */
static bool landing_locked(mavlink_drv *m, void *ud)
{
    (void)ud;
    const mavlink_telemetry *t = &m->tm;
    bool mode = t->autopilot == MAV_AUTOPILOT_PX4
                    ? t->custom_mode == mavlink_px4_mode(PX4_MAIN_AUTO, PX4_SUB_AUTO_LAND)
                    : t->custom_mode == ARDUCOPTER_LAND;
    return mode || t->landed == MAV_LANDED_STATE_LANDING;
}

static int mav_land(drone *d, char *err, size_t errlen)
{
    mavlink_drv *m = drv(d);
    pthread_mutex_lock(&m->lock);
    bool up = m->flying || mavlink_armed(&m->tm), lost = m->lost;
    drone_state st = mavlink_state_locked(m);
    pthread_mutex_unlock(&m->lock);
    if (!up) return 0;
    if (lost)
        return errmsg_set(err, errlen,
                          "cannot land: the link to the vehicle fell silent; the vehicle's own "
                          "failsafe acts (return, land or hold, as set on it)");
    float p[7] = {0, 0, 0, NAN, NAN, NAN, NAN};
    mavlink_progress(m, "landing");
    /* land never polls the cancel flag: landing after a cancel must work */
    if (mavlink_command(m, MAV_CMD_NAV_LAND, p, "landing", landing_locked, d->hurry, err, errlen))
        return -1;
    pthread_mutex_lock(&m->lock);
    m->streaming = false; /* the vehicle lands in its own landing mode now */
    m->landing = true;
    m->up = false;
    pthread_mutex_unlock(&m->lock);
    if (d->hurry) {
        mavlink_progress(m, "the vehicle accepted the landing and lands by itself");
        return 0;
    }
    double limit = fmax(st.pose.z, 0) / 30.0 * 1000 + 2 * SLACK_MS;
    if (mavlink_wait(m, landed, NULL, limit, false, "the landing (on the ground, disarmed)", err,
                     errlen))
        return -1;
    pthread_mutex_lock(&m->lock);
    m->flying = false;
    m->up = false;
    pthread_mutex_unlock(&m->lock);
    return 0;
}

/* Never a motor kill (SPEC §9): an emergency lands. */
static int mav_emergency(drone *d)
{
    char err[300];
    bool hurry = d->hurry;
    d->hurry = true;
    int rc = mav_land(d, err, sizeof err);
    d->hurry = hurry;
    return rc;
}

/* ---- life ------------------------------------------------------------------ */

/* A PX4 vehicle left flying (--no-land) would lose its setpoint stream
 * with us and fall to its offboard-loss failsafe: hand it to its own Hold
 * mode (AUTO.LOITER: an autonomous hold, not a pilot's stick mode) first.
 * ArduPilot holds its last GUIDED target by itself. */
static void leave_holding(mavlink_drv *m)
{
    pthread_mutex_lock(&m->lock);
    /* never after a landing was accepted: Hold would stop it */
    bool px4_up = m->flying && !m->landing && !m->lost && m->tm.autopilot == MAV_AUTOPILOT_PX4;
    pthread_mutex_unlock(&m->lock);
    if (!px4_up) return;
    float p[7] = {MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, PX4_MAIN_AUTO, PX4_SUB_AUTO_LOITER};
    char err[300];
    if (mavlink_command(m, MAV_CMD_DO_SET_MODE, p, "the switch to Hold", NULL, true, err,
                        sizeof err) == 0)
        mavlink_progress(m, "left in the air in PX4's Hold mode");
    else
        mavlink_progress(m, "left in the air: %s; PX4's offboard-loss failsafe acts", err);
}

static void mav_destroy(drone *d)
{
    mavlink_drv *m = drv(d);
    if (m->sub) leave_holding(m);
    if (m->ticker_started) {
        m->stop = 1;
        pthread_join(m->ticker, NULL);
    }
    mavlink_unsubscribe(m->sub);
    pthread_cond_destroy(&m->cond);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static const drone_ops mavlink_ops = {
    .name = "mavlink",
    .connect = mav_connect,
    .takeoff = mav_takeoff,
    .land = mav_land,
    .move = mav_move,
    .turn = mav_turn,
    .hover = mav_hover,
    .emergency = mav_emergency,
    .get_state = mav_get_state,
    .wait = mav_wait,
    .destroy = mav_destroy,
};

drone *mavlink_new(const mavlink_config *cfg, char *err, size_t errlen)
{
    mavlink_drv *m = calloc(1, sizeof *m);
    if (!m) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    m->cfg = *cfg;
    m->base.ops = &mavlink_ops;
    m->base.impl = m;
    m->tm.battery = 0;
    mavlink_config_name(cfg, m->name, sizeof m->name);
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->cond, NULL);
    m->sub = mavlink_subscribe(&cfg->url, cfg->sysid, cfg->our_sysid, cfg->our_compid, on_frame, m,
                               err, errlen);
    if (!m->sub) {
        mav_destroy(&m->base);
        return NULL;
    }
    if (pthread_create(&m->ticker, NULL, ticker_main, m) != 0) {
        errmsg_set(err, errlen, "cannot start the MAVLink heartbeat thread");
        mav_destroy(&m->base);
        return NULL;
    }
    m->ticker_started = true;
    return &m->base;
}
