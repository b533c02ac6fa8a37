/*
 * The MAVLink driver's pure parts: SPEC §3's world frame against MAVLink's
 * local NED frame, yaw and PX4 mode encodings, the telemetry validation
 * (NaN, infinities, out-of-range values mark their part unknown), the
 * STATUSTEXT sanitising, and the link URLs (each form, bad ones, limits).
 * labels: mavlink
 */
#include "drone/mavlink_internal.h"

#include <math.h>
#include <string.h>

#include "check.h"

static bool close_to(double a, double b)
{
    return fabs(a - b) < 1e-6;
}

static void test_world_and_ned(void)
{
    mavlink_ned origin = {10, -20, -1}; /* NED of the take-off point */
    /* 1 m north of it, 2 m east, 3 m higher */
    mavlink_ned p = {11, -18, -4};
    drone_pose w = mavlink_world_from_ned(&origin, &p, 90);
    CHECK(close_to(w.x, 200), "x is east: %g", w.x);
    CHECK(close_to(w.y, 100), "y is north: %g", w.y);
    CHECK(close_to(w.z, 300), "z is up: %g", w.z);
    CHECK(close_to(w.yaw, 90));
    mavlink_ned back = mavlink_ned_from_world(&origin, &w);
    CHECK(close_to(back.x, 11) && close_to(back.y, -18) && close_to(back.z, -4));

    /* forward at heading 90 (east) in the world is +y east in NED */
    drone_pose start = {0, 0, 250, 90};
    drone_pose to = drone_pose_after(&start, DRONE_FORWARD, 100);
    mavlink_ned n = mavlink_ned_from_world(&(mavlink_ned){0, 0, 0}, &to);
    CHECK(close_to(n.x, 0) && close_to(n.y, 1) && close_to(n.z, -2.5), "%g %g %g", n.x, n.y, n.z);
    /* right at heading 0 (north) is east */
    start.yaw = 0;
    to = drone_pose_after(&start, DRONE_RIGHT, 50);
    n = mavlink_ned_from_world(&(mavlink_ned){0, 0, 0}, &to);
    CHECK(close_to(n.x, 0) && close_to(n.y, 0.5));
}

static void test_yaw_and_modes(void)
{
    CHECK(close_to(mavlink_yaw_rad(0), 0));
    CHECK(fabs(mavlink_yaw_rad(90) - M_PI / 2) < 1e-6);
    CHECK(fabs(mavlink_yaw_rad(180) - M_PI) < 1e-6, "180 stays +pi");
    CHECK(fabs(mavlink_yaw_rad(270) + M_PI / 2) < 1e-6, "270 is -pi/2");
    CHECK(fabs(mavlink_yaw_rad(-90) + M_PI / 2) < 1e-6);
    CHECK(mavlink_px4_mode(PX4_MAIN_OFFBOARD, 0) == 0x00060000u);
    CHECK(mavlink_px4_mode(PX4_MAIN_AUTO, PX4_SUB_AUTO_LAND) == 0x06040000u);
    char b[40];
    CHECK(strcmp(mavlink_mode_name(MAV_AUTOPILOT_PX4, 0x00060000u, b, sizeof b), "OFFBOARD") == 0);
    CHECK(strcmp(mavlink_mode_name(MAV_AUTOPILOT_PX4, 0x06040000u, b, sizeof b), "AUTO.LAND") == 0);
    CHECK(strcmp(mavlink_mode_name(MAV_AUTOPILOT_ARDUPILOTMEGA, 4, b, sizeof b), "GUIDED") == 0);
    CHECK(strcmp(mavlink_mode_name(MAV_AUTOPILOT_ARDUPILOTMEGA, 99, b, sizeof b), "mode 99") == 0);

    mavlink_telemetry t = {0};
    t.base_mode = MAV_MODE_FLAG_CUSTOM_MODE_ENABLED;
    t.autopilot = MAV_AUTOPILOT_PX4, t.custom_mode = 0x00060000u;
    CHECK(mavlink_in_guided_mode(&t));
    t.custom_mode = 0x03040000u; /* AUTO.LOITER */
    CHECK(!mavlink_in_guided_mode(&t));
    t.autopilot = MAV_AUTOPILOT_ARDUPILOTMEGA, t.custom_mode = ARDUCOPTER_GUIDED;
    CHECK(mavlink_in_guided_mode(&t));
    t.custom_mode = 5; /* LOITER */
    CHECK(!mavlink_in_guided_mode(&t));
}

/* A frame of message ID with PAYLOAD as the link would hand it over. */
static mav_frame frame_of(uint32_t id, const uint8_t *payload, size_t len)
{
    mav_frame f = {.version = 2, .len = (uint8_t)len, .sysid = 1, .compid = 1, .msgid = id};
    memcpy(f.payload, payload, len);
    return f;
}

static void apply_position(mavlink_telemetry *t, float x, float y, float z)
{
    uint8_t p[MAV_MAX_PAYLOAD];
    mav_local_position_ned m = {0, x, y, z, 0, 0, 0};
    mav_frame f = frame_of(MAV_MSG_LOCAL_POSITION_NED, p, mav_local_position_ned_pack(&m, p));
    mavlink_telemetry_apply(t, &f, 1000);
}

static void apply_battery(mavlink_telemetry *t, int8_t sys_status, int battery_status)
{
    uint8_t p[MAV_MAX_PAYLOAD];
    if (battery_status > -1000) {
        mav_battery_status b = {.battery_remaining = (int8_t)battery_status};
        mav_frame f = frame_of(MAV_MSG_BATTERY_STATUS, p, mav_battery_status_pack(&b, p));
        mavlink_telemetry_apply(t, &f, 1000);
    } else {
        mav_sys_status s = {.battery_remaining = sys_status};
        mav_frame f = frame_of(MAV_MSG_SYS_STATUS, p, mav_sys_status_pack(&s, p));
        mavlink_telemetry_apply(t, &f, 1000);
    }
}

static void test_telemetry_validated(void)
{
    mavlink_telemetry t = {0};
    apply_position(&t, 1, 2, -3);
    CHECK(t.have_pos && t.pos_valid && t.z_valid && close_to(t.pos.z, -3));
    apply_position(&t, NAN, 2, -3);
    CHECK(!t.pos_valid && t.z_valid && close_to(t.pos.x, 1), "NaN x: position unknown, last kept");
    apply_position(&t, 1, 2, INFINITY);
    CHECK(t.pos_valid && !t.z_valid && close_to(t.pos.z, -3), "infinite z: height unknown");
    apply_position(&t, 1, 2, -10000.5f);
    CHECK(!t.z_valid, "just past 10 km");
    apply_position(&t, 1, 2, -9999.5f);
    CHECK(t.z_valid, "just inside 10 km");
    apply_position(&t, 100001, 2, -3);
    CHECK(!t.pos_valid, "past 100 km");

    uint8_t p[MAV_MAX_PAYLOAD];
    mav_attitude a = {0, 0.1f, 0.2f, -(float)M_PI / 2, 0, 0, 0};
    mav_frame f = frame_of(MAV_MSG_ATTITUDE, p, mav_attitude_pack(&a, p));
    mavlink_telemetry_apply(&t, &f, 1000);
    CHECK(t.yaw_valid && fabs(t.yaw_deg - 270) < 1e-3, "yaw -pi/2 is heading 270: %g", t.yaw_deg);
    a.yaw = NAN;
    f = frame_of(MAV_MSG_ATTITUDE, p, mav_attitude_pack(&a, p));
    mavlink_telemetry_apply(&t, &f, 1000);
    CHECK(!t.yaw_valid && fabs(t.yaw_deg - 270) < 1e-3);

    apply_battery(&t, 55, -1000);
    CHECK(t.battery_valid && t.battery == 55, "SYS_STATUS");
    apply_battery(&t, -1, -1000);
    CHECK(!t.battery_valid, "-1: the autopilot does not know");
    apply_battery(&t, 0, 100);
    CHECK(t.battery_valid && t.battery == 100, "BATTERY_STATUS 100");
    apply_battery(&t, 0, 101);
    CHECK(!t.battery_valid, "BATTERY_STATUS 101");
    apply_battery(&t, 90, -1000);
    CHECK(!t.battery_valid, "SYS_STATUS ignored once BATTERY_STATUS was seen");
}

static void test_statustext(void)
{
    mavlink_telemetry t = {0};
    uint8_t p[MAV_MAX_PAYLOAD];
    mav_statustext s = {3, "PreArm: GPS\x1b[31m \xff fix", 0, 0};
    mav_frame f = frame_of(MAV_MSG_STATUSTEXT, p, mav_statustext_pack(&s, p));
    mavlink_telemetry_apply(&t, &f, 5000);
    CHECK(strcmp(t.text, "PreArm: GPS?[31m ? fix") == 0, "%s", t.text);
    CHECK(strcmp(t.prearm, t.text) == 0 && t.prearm_ms == 5000);
    snprintf(s.text, sizeof s.text, "EKF3 IMU0 is using GPS");
    f = frame_of(MAV_MSG_STATUSTEXT, p, mav_statustext_pack(&s, p));
    mavlink_telemetry_apply(&t, &f, 6000);
    CHECK(strcmp(t.prearm, "PreArm: GPS?[31m ? fix") == 0, "other texts keep the reason");
}

static void test_urls(void)
{
    mavlink_url u;
    char err[400], buf[300];
    CHECK(mavlink_url_parse("udpin:0.0.0.0:14540", &u, err, sizeof err) == 0 &&
          u.kind == MAVLINK_UDPIN && u.port == 14540 && strcmp(u.host, "0.0.0.0") == 0);
    CHECK(mavlink_url_parse("udpout:127.0.0.1:14550", &u, err, sizeof err) == 0 &&
          u.kind == MAVLINK_UDPOUT);
    CHECK(mavlink_url_parse("tcp:localhost:5760", &u, err, sizeof err) == 0 &&
          u.kind == MAVLINK_TCP &&
          strcmp(mavlink_url_format(&u, buf, sizeof buf), "tcp:localhost:5760") == 0);
    CHECK(mavlink_url_parse("serial:/dev/ttyACM0:115200", &u, err, sizeof err) == 0 &&
          u.kind == MAVLINK_SERIAL && u.port == 115200 && strcmp(u.host, "/dev/ttyACM0") == 0);
    CHECK(mavlink_url_parse("udpin:h:1", &u, err, sizeof err) == 0, "port 1");
    CHECK(mavlink_url_parse("udpin:h:65535", &u, err, sizeof err) == 0, "port 65535");
    static const char *const bad[] = {
        "udpin:h:0",
        "udpin:h:65536",
        "udpin:h:",
        "udpin::14540",
        "udpin:14540",
        "udp:h:14540",
        "tcp:h:-1",
        "tcp:h:+80",
        "tcp:h:80x",
        "serial:/dev/ttyS0:115201",
        "serial:/dev/ttyS0",
        "udpin:a/b:1",
        "",
        "udpin:h h:1",
        "tcp:h:99999999999999999999",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK(mavlink_url_parse(bad[i], &u, err, sizeof err) == -1, "%s accepted", bad[i]);
        CHECK(strstr(err, "udpin:HOST:PORT, udpout:HOST:PORT, tcp:HOST:PORT or serial:DEVICE:BAUD"),
              "%s: %s", bad[i], err);
    }
}

int main(void)
{
    test_world_and_ned();
    test_yaw_and_modes();
    test_telemetry_validated();
    test_statustext();
    test_urls();
    return failures ? 1 : 0;
}
