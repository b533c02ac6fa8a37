/*
 * The MAVLink telemetry's checks where it enters (host/drone/mavlink_telemetry.c,
 * SPEC §9), each range at, just inside and just outside its limit: speeds
 * (100 m/s), the horizontal position (100 km), attitude (roll and pitch within
 * pi, yaw within 2 pi and a little), the home position, the battery's sources,
 * the landed state, acknowledgements, heartbeats of no autopilot, and the
 * texts that say why arming is refused. A part out of range is unknown, and
 * its last good value is kept.
 * labels: mavlink safety
 */
#include "drone/mavlink_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static mav_frame frame_of(uint32_t id, const uint8_t *payload, size_t len)
{
    mav_frame f = {.version = 2, .len = (uint8_t)len, .sysid = 1, .compid = 1, .msgid = id};
    memcpy(f.payload, payload, len);
    return f;
}

#define APPLY(t, name, id, msg)                                                                    \
    do {                                                                                           \
        uint8_t p_[MAV_MAX_PAYLOAD];                                                               \
        mav_frame f_ = frame_of(id, p_, mav_##name##_pack(&(msg), p_));                            \
        mavlink_telemetry_apply(t, &f_, 1000);                                                     \
    } while (0)

static void position(mavlink_telemetry *t, float x, float y, float z, float vx, float vy, float vz)
{
    mav_local_position_ned m = {0, x, y, z, vx, vy, vz};
    APPLY(t, local_position_ned, MAV_MSG_LOCAL_POSITION_NED, m);
}

static void test_speeds(void)
{
    mavlink_telemetry t = {0};
    position(&t, 1, 2, -3, 100, -100, 100);
    CHECK(t.pos_valid && t.z_valid && t.vx == 100, "100 m/s is a speed");
    /* each speed just past 100 m/s, or not a number: position and height
     * unknown, the last speeds kept */
    const float bad[] = {100.01f, -100.01f, NAN, INFINITY};
    for (int axis = 0; axis < 3; axis++)
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            float v[3] = {0, 0, 0};
            v[axis] = bad[i];
            position(&t, 5, 6, -7, v[0], v[1], v[2]);
            CHECK(!t.pos_valid && !t.z_valid, "speed %g on axis %d accepted", bad[i], axis);
            CHECK(t.vx == 100 && t.pos.x == 1 && t.pos.z == -3, "the last good values kept");
        }
    position(&t, 5, 6, -7, 99.99f, 0, 0);
    CHECK(t.pos_valid && t.z_valid && t.pos.x == 5, "just inside 100 m/s");
}

static void test_horizontal(void)
{
    mavlink_telemetry t = {0};
    position(&t, 0, 100000, -1, 0, 0, 0);
    CHECK(t.pos_valid, "east 100 km: at the limit");
    position(&t, 0, 100001, -1, 0, 0, 0);
    CHECK(!t.pos_valid && t.z_valid, "east past 100 km");
    position(&t, 0, -100001, -1, 0, 0, 0);
    CHECK(!t.pos_valid, "west past 100 km");
    position(&t, -100001, 0, -1, 0, 0, 0);
    CHECK(!t.pos_valid, "south past 100 km");
    position(&t, 0, NAN, -1, 0, 0, 0);
    CHECK(!t.pos_valid, "east NaN");
    position(&t, 0, 99999, -1, 0, 0, 0);
    CHECK(t.pos_valid && t.pos.y == 99999, "just inside");
    /* never a whole fix yet: no position */
    mavlink_telemetry u = {0};
    position(&u, 1, 1, NAN, 0, 0, 0);
    CHECK(!u.have_pos, "a position without a height is not a fix");
}

static void attitude(mavlink_telemetry *t, float roll, float pitch, float yaw)
{
    mav_attitude a = {0, roll, pitch, yaw, 0, 0, 0};
    APPLY(t, attitude, MAV_MSG_ATTITUDE, a);
}

static void test_attitude(void)
{
    mavlink_telemetry t = {0};
    attitude(&t, 0.1f, -0.2f, 0);
    CHECK(t.have_att && t.tilt_valid && t.yaw_valid && fabs(t.roll_deg - 5.7296) < 1e-3);
    attitude(&t, 3.2f, 0, 0);
    CHECK(!t.tilt_valid && t.yaw_valid && fabs(t.roll_deg - 5.7296) < 1e-3, "roll past pi");
    attitude(&t, 0, -3.2f, 0);
    CHECK(!t.tilt_valid, "pitch past -pi");
    attitude(&t, 0, NAN, 0);
    CHECK(!t.tilt_valid, "pitch NaN");
    attitude(&t, 3.14f, -3.14f, 0);
    CHECK(t.tilt_valid, "just inside pi");
    attitude(&t, 0, 0, 6.29f);
    CHECK(t.yaw_valid, "yaw a little past 2 pi (some autopilots send [0, 2 pi])");
    attitude(&t, 0, 0, 6.30f);
    CHECK(!t.yaw_valid, "yaw past 2 pi and its slack");
    attitude(&t, 0, 0, -6.30f);
    CHECK(!t.yaw_valid, "yaw below -2 pi and its slack");
}

static void home(mavlink_telemetry *t, float x, float y, float z)
{
    mav_home_position h = {0};
    h.x = x, h.y = y, h.z = z;
    APPLY(t, home_position, MAV_MSG_HOME_POSITION, h);
}

static void test_home(void)
{
    mavlink_telemetry t = {0};
    home(&t, 1, 2, 0.5f);
    CHECK(t.have_home && t.home.z == 0.5f);
    home(&t, 100001, 2, 0);
    CHECK(t.home.x == 1, "home north past 100 km ignored");
    home(&t, 1, -100001, 0);
    CHECK(t.home.y == 2, "home west past 100 km ignored");
    home(&t, 1, 2, 10001);
    CHECK(t.home.z == 0.5f, "home 10 km below ignored");
    home(&t, 1, 2, NAN);
    CHECK(t.home.z == 0.5f, "home NaN ignored");
    mavlink_telemetry u = {0};
    home(&u, NAN, 0, 0);
    CHECK(!u.have_home, "no home from garbage");
}

static void test_battery_sources(void)
{
    mavlink_telemetry t = {0};
    mav_sys_status s = {0};
    s.battery_remaining = 0;
    APPLY(&t, sys_status, MAV_MSG_SYS_STATUS, s);
    CHECK(t.battery_valid && t.battery == 0, "0 %% is a reading");
    /* a second battery's status is not the one that flies the vehicle */
    mav_battery_status b = {0};
    b.id = 1, b.battery_remaining = 70;
    APPLY(&t, battery_status, MAV_MSG_BATTERY_STATUS, b);
    CHECK(!t.battery_status_seen && t.battery == 0, "battery 1 ignored");
    s.battery_remaining = 40;
    APPLY(&t, sys_status, MAV_MSG_SYS_STATUS, s);
    CHECK(t.battery == 40, "SYS_STATUS still counts");
    b.id = 0, b.battery_remaining = -2;
    APPLY(&t, battery_status, MAV_MSG_BATTERY_STATUS, b);
    CHECK(t.battery_status_seen && !t.battery_valid && t.battery == 40, "-2 is garbage");
}

static void test_landed_and_acks(void)
{
    mavlink_telemetry t = {0};
    mav_extended_sys_state e = {0, MAV_LANDED_STATE_LANDING};
    APPLY(&t, extended_sys_state, MAV_MSG_EXTENDED_SYS_STATE, e);
    CHECK(t.landed == MAV_LANDED_STATE_LANDING);
    e.landed_state = MAV_LANDED_STATE_LANDING + 1;
    APPLY(&t, extended_sys_state, MAV_MSG_EXTENDED_SYS_STATE, e);
    CHECK(t.landed == MAV_LANDED_STATE_UNDEFINED, "an unknown landed state is undefined");

    mav_command_ack a = {0};
    a.command = 400, a.result = 4;
    APPLY(&t, command_ack, MAV_MSG_COMMAND_ACK, a);
    CHECK(t.ack_seq == 1 && t.ack_cmd[0] == 400 && t.ack_result[0] == 4);
    /* the ring keeps the last MAVLINK_ACKS: ack number N at N % MAVLINK_ACKS,
     * so the one after a full ring replaces the oldest (400) and no other */
    for (int i = 1; i <= MAVLINK_ACKS; i++) {
        a.command = (uint16_t)(400 + i), a.result = 0;
        APPLY(&t, command_ack, MAV_MSG_COMMAND_ACK, a);
    }
    CHECK(t.ack_seq == MAVLINK_ACKS + 1, "every ack counted");
    CHECK(t.ack_cmd[0] == 400 + MAVLINK_ACKS && t.ack_result[0] == 0,
          "the ack after a full ring replaces the oldest");
    CHECK(t.ack_cmd[1] == 401 && t.ack_cmd[MAVLINK_ACKS - 1] == 400 + MAVLINK_ACKS - 1,
          "the other acks of the ring are kept");

    /* a GCS's heartbeat (no autopilot) is not the vehicle's */
    mav_heartbeat hb = {0};
    hb.autopilot = MAV_AUTOPILOT_INVALID, hb.base_mode = MAV_MODE_FLAG_SAFETY_ARMED;
    APPLY(&t, heartbeat, MAV_MSG_HEARTBEAT, hb);
    CHECK(!t.heartbeat && !mavlink_armed(&t), "a heartbeat of no autopilot taken");
    hb.autopilot = MAV_AUTOPILOT_PX4;
    APPLY(&t, heartbeat, MAV_MSG_HEARTBEAT, hb);
    CHECK(t.heartbeat && mavlink_armed(&t));
    /* a message the driver does not read still counts as heard */
    unsigned long frames = t.frames;
    uint8_t p[1] = {0};
    mav_frame f = frame_of(9999, p, 1);
    mavlink_telemetry_apply(&t, &f, 2000);
    CHECK(t.frames == frames + 1 && t.heard_ms == 2000);
    /* not in a custom mode: not guided, whatever the mode number */
    t.base_mode = 0, t.custom_mode = ARDUCOPTER_GUIDED, t.autopilot = MAV_AUTOPILOT_ARDUPILOTMEGA;
    CHECK(!mavlink_in_guided_mode(&t));
}

static void text(mavlink_telemetry *t, const char *s, double now)
{
    mav_statustext m = {0};
    m.severity = 3;
    snprintf(m.text, sizeof m.text, "%s", s);
    uint8_t p[MAV_MAX_PAYLOAD];
    mav_frame f = frame_of(MAV_MSG_STATUSTEXT, p, mav_statustext_pack(&m, p));
    mavlink_telemetry_apply(t, &f, now);
}

static void test_refusal_texts(void)
{
    const char *refusals[] = {"Arm: Throttle too high", "Arming denied: not in a mode",
                              "Disarming denied: in the air", "Preflight Fail: vehicle not ready"};
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        mavlink_telemetry t = {0};
        text(&t, refusals[i], 7000);
        CHECK(strcmp(t.prearm, refusals[i]) == 0 && t.prearm_ms == 7000, "%s", refusals[i]);
    }
    mavlink_telemetry t = {0};
    text(&t, "Armed", 1); /* "Arm" at the start is enough: PX4 says "Arming denied" too */
    text(&t, "Takeoff detected", 2);
    CHECK(strcmp(t.prearm, "Armed") == 0 && t.text_seq == 2);
    /* 50 bytes from the wire, cut to the 63 the text keeps: all kept */
    text(&t, "01234567890123456789012345678901234567890123456789", 3);
    CHECK(strlen(t.text) == 50, "%zu", strlen(t.text));
    /* DEL and bytes past ASCII are no printable text */
    text(&t,
         "a\x7f"
         "b\x80"
         "c",
         4);
    CHECK(strcmp(t.text, "a?b?c") == 0, "%s", t.text);
}

int main(void)
{
    test_speeds();
    test_horizontal();
    test_attitude();
    test_home();
    test_battery_sources();
    test_landed_and_acks();
    test_refusal_texts();
    if (failures) fprintf(stderr, "test_mavlink_telemetry: %d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
