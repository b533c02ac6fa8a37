/*
 * The vehicle's telemetry, validated where it enters (SPEC §9): NaN,
 * infinities and values no multirotor can report mark their part unknown
 * (the constraint check then refuses the motions that need it) instead of
 * flowing on as numbers. The ranges are generous: they keep out garbage,
 * not the firmware's judgement.
 */
#include "drone/heading.h"
#include "drone/mavlink_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_HORIZ_M 100000.0 /* 100 km from the local origin */
#define MAX_ALT_M 10000.0    /* 10 km above or below it */
#define MAX_SPEED_M_S 100.0
#define TWO_PI_SLACK (2 * M_PI + 0.01)

static bool in(double v, double lo, double hi)
{
    return isfinite(v) && v >= lo && v <= hi;
}

static void take_heartbeat(mavlink_telemetry *t, const mav_frame *f)
{
    mav_heartbeat hb;
    if (mav_heartbeat_unpack(f, &hb) < 0 || hb.autopilot == MAV_AUTOPILOT_INVALID) return;
    t->heartbeat = true;
    t->compid = f->compid;
    t->autopilot = hb.autopilot, t->type = hb.type;
    t->base_mode = hb.base_mode, t->system_status = hb.system_status;
    t->custom_mode = hb.custom_mode;
}

static void take_local_position(mavlink_telemetry *t, const mav_frame *f, double now_ms)
{
    mav_local_position_ned p;
    mav_local_position_ned_unpack(f, &p);
    bool speeds = in(p.vx, -MAX_SPEED_M_S, MAX_SPEED_M_S) &&
                  in(p.vy, -MAX_SPEED_M_S, MAX_SPEED_M_S) &&
                  in(p.vz, -MAX_SPEED_M_S, MAX_SPEED_M_S);
    t->pos_valid =
        speeds && in(p.x, -MAX_HORIZ_M, MAX_HORIZ_M) && in(p.y, -MAX_HORIZ_M, MAX_HORIZ_M);
    t->z_valid = speeds && in(p.z, -MAX_ALT_M, MAX_ALT_M);
    if (t->pos_valid) t->pos.x = p.x, t->pos.y = p.y;
    if (t->z_valid) t->pos.z = p.z;
    if (speeds) t->vx = p.vx, t->vy = p.vy, t->vz = p.vz;
    t->have_pos = t->have_pos || (t->pos_valid && t->z_valid);
    t->pos_ms = now_ms;
}

static void take_attitude(mavlink_telemetry *t, const mav_frame *f)
{
    mav_attitude a;
    mav_attitude_unpack(f, &a);
    t->yaw_valid = in(a.yaw, -TWO_PI_SLACK, TWO_PI_SLACK);
    t->tilt_valid = in(a.roll, -M_PI, M_PI) && in(a.pitch, -M_PI, M_PI);
    if (t->yaw_valid) t->yaw_deg = heading_wrap(a.yaw * 180 / M_PI);
    if (t->tilt_valid) t->roll_deg = a.roll * 180 / M_PI, t->pitch_deg = a.pitch * 180 / M_PI;
    t->have_att = true;
}

/* BATTERY_STATUS of the first battery wins over SYS_STATUS once seen;
 * -1 means the autopilot does not know, and anything past 100 is garbage. */
static void take_battery(mavlink_telemetry *t, int remaining)
{
    t->battery_valid = remaining >= 0 && remaining <= 100;
    if (t->battery_valid) t->battery = remaining;
}

static void take_home(mavlink_telemetry *t, const mav_frame *f)
{
    mav_home_position h;
    mav_home_position_unpack(f, &h);
    if (!in(h.x, -MAX_HORIZ_M, MAX_HORIZ_M) || !in(h.y, -MAX_HORIZ_M, MAX_HORIZ_M) ||
        !in(h.z, -MAX_ALT_M, MAX_ALT_M))
        return;
    t->home = (mavlink_ned){h.x, h.y, h.z};
    t->have_home = true;
}

/* relative_alt is millimetres above home; the rest of the message is not
 * used (positions come from LOCAL_POSITION_NED). */
static void take_global_position(mavlink_telemetry *t, const mav_frame *f, double now_ms)
{
    mav_global_position_int g;
    mav_global_position_int_unpack(f, &g);
    double h = g.relative_alt / 1000.0;
    if (!in(h, -MAX_ALT_M, MAX_ALT_M)) return;
    t->rel_alt = h;
    t->rel_alt_ms = now_ms;
    t->have_rel_alt = true;
}

/* The text with anything but printable ASCII replaced: it reaches
 * terminals, JSON and the web page. */
static void printable(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++)
        dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
    dst[i] = '\0';
}

static void take_text(mavlink_telemetry *t, const mav_frame *f, double now_ms)
{
    mav_statustext s;
    mav_statustext_unpack(f, &s);
    printable(t->text, sizeof t->text, s.text);
    t->text_severity = s.severity;
    t->text_seq++;
    if (strncmp(t->text, "PreArm", 6) == 0 || strncmp(t->text, "Arm", 3) == 0 ||
        strstr(t->text, "rming denied") || strstr(t->text, "not ready")) {
        snprintf(t->prearm, sizeof t->prearm, "%s", t->text);
        t->prearm_ms = now_ms;
    }
}

void mavlink_telemetry_apply(mavlink_telemetry *t, const mav_frame *f, double now_ms)
{
    /* The link's silence is judged on what the vehicle sends of itself: an
     * answer to one of our requests (asked again every few seconds once a
     * stream stops) would keep a vehicle that streams nothing "heard". */
    if (f->msgid != MAV_MSG_COMMAND_ACK) t->heard_ms = now_ms;
    t->frames++;
    switch (f->msgid) {
    case MAV_MSG_HEARTBEAT: take_heartbeat(t, f); break;
    case MAV_MSG_LOCAL_POSITION_NED: take_local_position(t, f, now_ms); break;
    case MAV_MSG_ATTITUDE: take_attitude(t, f); break;
    case MAV_MSG_SYS_STATUS: {
        mav_sys_status s;
        mav_sys_status_unpack(f, &s);
        if (!t->battery_status_seen) take_battery(t, s.battery_remaining);
        break;
    }
    case MAV_MSG_BATTERY_STATUS: {
        mav_battery_status b;
        mav_battery_status_unpack(f, &b);
        if (b.id != 0) break;
        t->battery_status_seen = true;
        take_battery(t, b.battery_remaining);
        break;
    }
    case MAV_MSG_EXTENDED_SYS_STATE: {
        mav_extended_sys_state e;
        mav_extended_sys_state_unpack(f, &e);
        t->landed_seen = true;
        t->landed = e.landed_state <= MAV_LANDED_STATE_LANDING ? e.landed_state
                                                               : MAV_LANDED_STATE_UNDEFINED;
        break;
    }
    case MAV_MSG_HOME_POSITION: take_home(t, f); break;
    case MAV_MSG_GLOBAL_POSITION_INT: take_global_position(t, f, now_ms); break;
    case MAV_MSG_COMMAND_ACK: {
        mav_command_ack a;
        mav_command_ack_unpack(f, &a);
        t->ack_cmd[t->ack_seq % MAVLINK_ACKS] = a.command;
        t->ack_result[t->ack_seq % MAVLINK_ACKS] = a.result;
        t->ack_seq++;
        break;
    }
    case MAV_MSG_STATUSTEXT: take_text(t, f, now_ms); break;
    default: break;
    }
}

#define SAME_MOMENT_MS 1000

bool mavlink_home_level(const mavlink_telemetry *t, double *z)
{
    if (t->have_rel_alt && t->have_pos && t->z_valid &&
        fabs(t->rel_alt_ms - t->pos_ms) <= SAME_MOMENT_MS) {
        *z = t->pos.z + t->rel_alt;
        return true;
    }
    if (t->have_home) {
        *z = t->home.z;
        return true;
    }
    return false;
}

bool mavlink_armed(const mavlink_telemetry *t)
{
    return t->base_mode & MAV_MODE_FLAG_SAFETY_ARMED;
}

bool mavlink_in_guided_mode(const mavlink_telemetry *t)
{
    if (!(t->base_mode & MAV_MODE_FLAG_CUSTOM_MODE_ENABLED)) return false;
    if (t->autopilot == MAV_AUTOPILOT_PX4)
        return ((t->custom_mode >> 16) & 0xff) == PX4_MAIN_OFFBOARD;
    return t->custom_mode == ARDUCOPTER_GUIDED;
}
