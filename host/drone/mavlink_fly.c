/*
 * The MAVLink driver's exchanges with the autopilot: commands and their
 * acknowledgements, modes, arming, position targets, and the one wait loop
 * every call blocks in (it polls the cancel flag and watches the link's
 * silence).
 *
 * Loss. A COMMAND_LONG or its COMMAND_ACK may be lost: a command is sent
 * again (confirmation counting up, as the protocol asks) until it is
 * answered. The commands sent are safe to repeat (a mode, arming, land); a
 * takeoff repeated while already climbing is refused by ArduPilot, which
 * the takeoff tells apart by looking at the vehicle (mavlink.c). Position
 * targets are streamed, so a lost one is replaced 100 ms later.
 */
#include "clock.h"
#include "drone/heading.h"
#include "drone/mavlink_internal.h"
#include "errmsg.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define ACK_WAIT_MS 700
#define HURRY_ACK_MS 500
#define COMMAND_TRIES 8
#define SLICE_MS 50
#define TEXT_FRESH_MS 5000 /* a STATUSTEXT this recent may say why a command failed */
#define MODE_WAIT_MS 3000

/* position and yaw only: velocity, acceleration and yaw rate ignored */
#define TYPE_MASK_POSITION_YAW 0x09f8

void mavlink_progress(mavlink_drv *m, const char *fmt, ...)
{
    if (!m->cfg.progress) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("mavlink: ", m->cfg.progress);
    vfprintf(m->cfg.progress, fmt, ap);
    fputc('\n', m->cfg.progress);
    va_end(ap);
}

bool mavlink_aborted(mavlink_drv *m)
{
    return m->base.abort && m->base.abort(m->base.abort_ud);
}

static int silent_error(mavlink_drv *m, char *err, size_t errlen)
{
    return errmsg_set(err, errlen,
                      "the link to the vehicle fell silent (nothing heard for %.1f s): the "
                      "mission ends here; the vehicle's own failsafe acts now (as set on it: "
                      "return, land or hold)",
                      m->cfg.silent_ms / 1000.0);
}

int mavlink_wait(mavlink_drv *m, bool (*done)(mavlink_drv *m, void *ud), void *ud, double limit_ms,
                 bool poll_abort, const char *what, char *err, size_t errlen)
{
    double end = clock_now_ms() + limit_ms;
    pthread_mutex_lock(&m->lock);
    for (;;) {
        if (done && done(m, ud)) break;
        double now = clock_now_ms();
        if (m->lost || (m->tm.heard_ms > 0 && now - m->tm.heard_ms > m->cfg.silent_ms)) {
            m->lost = true;
            pthread_mutex_unlock(&m->lock);
            return silent_error(m, err, errlen);
        }
        if (now >= end) {
            pthread_mutex_unlock(&m->lock);
            if (!done) return 0; /* a plain wait */
            return errmsg_set(err, errlen, "timed out: %s", what);
        }
        pthread_mutex_unlock(&m->lock);
        if (poll_abort && mavlink_aborted(m)) return errmsg_set(err, errlen, "cancelled");
        pthread_mutex_lock(&m->lock);
        double slice = fmin(SLICE_MS, fmax(1, end - now));
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long ns = ts.tv_nsec + (long)(slice * 1e6);
        ts.tv_sec += ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&m->cond, &m->lock, &ts);
    }
    pthread_mutex_unlock(&m->lock);
    return 0;
}

int mavlink_send_command(mavlink_drv *m, uint16_t cmd, const float param[7], char *err,
                         size_t errlen)
{
    return mavlink_send_command_confirm(m, cmd, param, 0, err, errlen);
}

int mavlink_send_command_confirm(mavlink_drv *m, uint16_t cmd, const float param[7],
                                 int confirmation, char *err, size_t errlen)
{
    mav_command_long c = {.command = cmd, .confirmation = (uint8_t)confirmation};
    memcpy(c.param, param, sizeof c.param);
    pthread_mutex_lock(&m->lock);
    c.target_system = (uint8_t)mavlink_sub_sysid(m->sub);
    c.target_component = m->tm.compid;
    pthread_mutex_unlock(&m->lock);
    uint8_t payload[MAV_MAX_PAYLOAD];
    size_t len = mav_command_long_pack(&c, payload);
    return mavlink_sub_send(m->sub, MAV_MSG_COMMAND_LONG, payload, len, err, errlen);
}

typedef struct ack_wait {
    unsigned seq0;
    uint16_t cmd;
    bool got;
    uint8_t result;
    bool (*done)(mavlink_drv *m, void *ud); /* the vehicle shows it done */
} ack_wait;

static bool ack_came(mavlink_drv *m, void *ud)
{
    ack_wait *a = ud;
    if (a->done && a->done(m, NULL)) {
        a->got = true;
        a->result = MAV_RESULT_ACCEPTED;
        return true;
    }
    /* The answers since the last look (at most the ring). Two may answer
     * this command (a repeat whose first answer came late): an acceptance
     * wins, as the command then took effect. */
    unsigned seq = m->tm.ack_seq;
    if (seq - a->seq0 > MAVLINK_ACKS) a->seq0 = seq - MAVLINK_ACKS;
    for (; a->seq0 != seq; a->seq0++) {
        unsigned i = a->seq0 % MAVLINK_ACKS;
        if (m->tm.ack_cmd[i] != a->cmd) continue; /* the answer to another command */
        if (m->tm.ack_result[i] == MAV_RESULT_IN_PROGRESS) continue;
        if (!a->got || a->result != MAV_RESULT_ACCEPTED) a->result = m->tm.ack_result[i];
        a->got = true;
    }
    return a->got;
}

/* The autopilot's refusal of WHAT, with the text it sent about it. */
static int refused(mavlink_drv *m, const char *what, int result, char *err, size_t errlen)
{
    char text[64] = "";
    pthread_mutex_lock(&m->lock);
    double now = clock_now_ms();
    if (m->tm.prearm[0] && now - m->tm.prearm_ms < TEXT_FRESH_MS)
        snprintf(text, sizeof text, "%s", m->tm.prearm);
    else if (m->tm.text[0] && m->tm.text_severity <= 4) /* warning or worse */
        snprintf(text, sizeof text, "%s", m->tm.text);
    pthread_mutex_unlock(&m->lock);
    return errmsg_set(err, errlen, "the autopilot refused %s (%s)%s%s", what,
                      mavlink_result_name(result), *text ? ": " : "", text);
}

static bool in_guided(mavlink_drv *m, void *ud);
static bool armed(mavlink_drv *m, void *ud);

int mavlink_command(mavlink_drv *m, uint16_t cmd, const float param[7], const char *what,
                    bool (*done)(mavlink_drv *m, void *ud), bool hurry, char *err, size_t errlen)
{
    int tries = hurry ? 1 : COMMAND_TRIES;
    for (int i = 0; i < tries; i++) {
        ack_wait a = {.cmd = cmd, .done = done};
        pthread_mutex_lock(&m->lock);
        a.seq0 = m->tm.ack_seq;
        pthread_mutex_unlock(&m->lock);
        if (mavlink_send_command_confirm(m, cmd, param, i, err, errlen)) return -1;
        char werr[300];
        int rc = mavlink_wait(m, ack_came, &a, hurry ? HURRY_ACK_MS : ACK_WAIT_MS, !hurry, what,
                              werr, sizeof werr);
        if (a.got)
            return a.result == MAV_RESULT_ACCEPTED ? 0 : refused(m, what, a.result, err, errlen);
        if (rc && strncmp(werr, "timed out", 9) != 0) return errmsg_set(err, errlen, "%s", werr);
    }
    return errmsg_set(err, errlen, "no answer from the autopilot to %s (%d tries)", what, tries);
}

/* ArduPilot sends nothing but HEARTBEAT until asked; PX4 takes the
 * request too. Intervals in microseconds. */
static const struct {
    uint32_t msgid;
    float interval_us;
} streams[MAVLINK_STREAMS] = {
    {MAV_MSG_LOCAL_POSITION_NED, 100000},  {MAV_MSG_ATTITUDE, 100000},
    {MAV_MSG_EXTENDED_SYS_STATE, 500000},  {MAV_MSG_SYS_STATUS, 1000000},
    {MAV_MSG_BATTERY_STATUS, 1000000},     {MAV_MSG_HOME_POSITION, 2000000},
    {MAV_MSG_GLOBAL_POSITION_INT, 250000},
};

int mavlink_stream_slot(uint32_t msgid)
{
    for (int i = 0; i < MAVLINK_STREAMS; i++)
        if (streams[i].msgid == msgid) return i;
    return -1;
}

static int request_stream(mavlink_drv *m, int i, char *err, size_t errlen)
{
    float p[7] = {(float)streams[i].msgid, streams[i].interval_us};
    return mavlink_send_command(m, MAV_CMD_SET_MESSAGE_INTERVAL, p, err, errlen);
}

int mavlink_request_streams(mavlink_drv *m, char *err, size_t errlen)
{
    for (int i = 0; i < MAVLINK_STREAMS; i++)
        if (request_stream(m, i, err, errlen)) return -1;
    return 0;
}

/* A request (or the stream itself, on a lossy link) may be lost, and
 * another ground station may set the rates again (MAVProxy's
 * REQUEST_DATA_STREAM): a stream not heard for STALE_INTERVALS of its
 * interval (and at least STALE_MIN_MS), or never, is asked for again. */
#define STALE_INTERVALS 5
#define STALE_MIN_MS 3000

bool mavlink_stream_stale(int slot, double seen, double now)
{
    double stale = fmax(STALE_MIN_MS, STALE_INTERVALS * streams[slot].interval_us / 1000);
    return seen == 0 || now - seen > stale;
}

void mavlink_refresh_streams(mavlink_drv *m)
{
    double now = clock_now_ms();
    for (int i = 0; i < MAVLINK_STREAMS; i++) {
        pthread_mutex_lock(&m->lock);
        double seen = m->stream_ms[i];
        pthread_mutex_unlock(&m->lock);
        char err[256];
        if (mavlink_stream_stale(i, seen, now)) request_stream(m, i, err, sizeof err);
    }
}

static bool in_guided(mavlink_drv *m, void *ud)
{
    (void)ud;
    return mavlink_in_guided_mode(&m->tm);
}

/* Tries ATTEMPT until it succeeds or the readiness deadline passes: a
 * vehicle that is not ready yet refuses with a reason (ArduPilot: GUIDED
 * "requires position" and "PreArm: ..." for a while after its position
 * first streams), so each refusal is a progress line when its reason
 * changes and another try 2 s later. A cancel or a silent link ends it. */
static int until_ready(mavlink_drv *m, int (*attempt)(mavlink_drv *m, char *why, size_t len),
                       const char *waiting, char *err, size_t errlen)
{
    double end = clock_now_ms() + m->cfg.ready_timeout_ms;
    char last[300] = "";
    for (;;) {
        char why[300];
        if (attempt(m, why, sizeof why) == 0) return 0;
        if (strcmp(why, "cancelled") == 0 || strstr(why, "fell silent"))
            return errmsg_set(err, errlen, "%s", why);
        if (clock_now_ms() >= end)
            return errmsg_set(err, errlen, "the vehicle is not ready to fly after %.0f s: %s",
                              m->cfg.ready_timeout_ms / 1000.0, why);
        if (strcmp(why, last) != 0) mavlink_progress(m, "waiting %s: %s", waiting, why);
        snprintf(last, sizeof last, "%s", why);
        if (mavlink_wait(m, NULL, NULL, 2000, true, "", err, errlen)) return -1;
    }
}

static int try_guided(mavlink_drv *m, char *err, size_t errlen)
{
    pthread_mutex_lock(&m->lock);
    bool px4 = m->tm.autopilot == MAV_AUTOPILOT_PX4;
    bool already = mavlink_in_guided_mode(&m->tm);
    pthread_mutex_unlock(&m->lock);
    if (already) return 0;
    const char *what = px4 ? "the switch to OFFBOARD" : "the switch to GUIDED";
    float p[7] = {MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, px4 ? PX4_MAIN_OFFBOARD : ARDUCOPTER_GUIDED};
    if (mavlink_command(m, MAV_CMD_DO_SET_MODE, p, what, in_guided, false, err, errlen)) return -1;
    return mavlink_wait(m, in_guided, NULL, MODE_WAIT_MS, true, what, err, errlen);
}

int mavlink_set_mode_guided(mavlink_drv *m, char *err, size_t errlen)
{
    return until_ready(m, try_guided, "for the mode", err, errlen);
}

static bool armed(mavlink_drv *m, void *ud)
{
    (void)ud;
    return mavlink_armed(&m->tm);
}

/* Arms once (never forced: param2 stays 0); accepted means armed now
 * (ArduPilot disarms again unless the takeoff follows promptly, so no wait
 * for the next HEARTBEAT). */
static int try_arm(mavlink_drv *m, char *err, size_t errlen)
{
    float p[7] = {1, 0};
    return mavlink_command(m, MAV_CMD_COMPONENT_ARM_DISARM, p, "arming", armed, false, err, errlen);
}

int mavlink_arm(mavlink_drv *m, char *err, size_t errlen)
{
    return until_ready(m, try_arm, "to arm", err, errlen);
}

static bool disarmed(mavlink_drv *m, void *ud)
{
    (void)ud;
    return !mavlink_armed(&m->tm);
}

/* Never forced (param2 stays 0): an autopilot that sees itself flying
 * refuses. Hurried (no cancel poll: it follows a cancelled takeoff too),
 * so a few tries for a lossy link. */
#define DISARM_TRIES 3

int mavlink_disarm(mavlink_drv *m, char *err, size_t errlen)
{
    float p[7] = {0, 0};
    int rc = -1;
    for (int i = 0; i < DISARM_TRIES && rc; i++) {
        rc = mavlink_command(m, MAV_CMD_COMPONENT_ARM_DISARM, p, "the disarm", disarmed, true, err,
                             errlen);
        if (rc && (strstr(err, "refused") || strstr(err, "silent"))) break;
    }
    return rc;
}

/* Locked: the target at world pose W. */
static void target_at(mavlink_drv *m, const drone_pose *w)
{
    mavlink_ned n = mavlink_ned_from_world(&m->origin, w);
    mav_position_target t = {
        .x = (float)n.x,
        .y = (float)n.y,
        .z = (float)n.z,
        .yaw = mavlink_yaw_rad(w->yaw),
        .type_mask = TYPE_MASK_POSITION_YAW,
        .target_system = (uint8_t)mavlink_sub_sysid(m->sub),
        .target_component = m->tm.compid,
        .coordinate_frame = MAV_FRAME_LOCAL_NED,
    };
    m->target = t;
}

void mavlink_hold_here(mavlink_drv *m)
{
    pthread_mutex_lock(&m->lock);
    drone_state st = mavlink_state_locked(m);
    target_at(m, &st.pose);
    m->streaming = true;
    m->goal = st.pose;
    m->have_goal = true;
    pthread_mutex_unlock(&m->lock);
    char err[256];
    mavlink_send_target(m, err, sizeof err);
}

int mavlink_set_target(mavlink_drv *m, const drone_pose *world, char *err, size_t errlen)
{
    pthread_mutex_lock(&m->lock);
    target_at(m, world);
    m->streaming = true;
    pthread_mutex_unlock(&m->lock);
    return mavlink_send_target(m, err, errlen);
}

int mavlink_send_target(mavlink_drv *m, char *err, size_t errlen)
{
    pthread_mutex_lock(&m->lock);
    mav_position_target t = m->target;
    bool on = m->streaming;
    pthread_mutex_unlock(&m->lock);
    if (!on) return 0;
    t.time_boot_ms = (uint32_t)clock_now_ms();
    uint8_t payload[MAV_MAX_PAYLOAD];
    size_t len = mav_set_position_target_pack(&t, payload);
    return mavlink_sub_send(m->sub, MAV_MSG_SET_POSITION_TARGET_LOCAL_NED, payload, len, err,
                            errlen);
}
