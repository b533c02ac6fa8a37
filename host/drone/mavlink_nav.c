/*
 * Frames and names for the MAVLink driver. SPEC §3's world is x east,
 * y north, z up in centimetres with a compass heading; MAVLink's local
 * frame is x north, y east, z down in metres with yaw in radians from
 * north, clockwise: so x and y swap, z changes sign, and the yaw is the
 * compass heading in other units.
 */
#include "drone/heading.h"
#include "drone/mavlink_internal.h"

#include <math.h>
#include <stdio.h>

drone_pose mavlink_world_from_ned(const mavlink_ned *origin, const mavlink_ned *p, double yaw_deg)
{
    return (drone_pose){
        .x = (p->y - origin->y) * 100,
        .y = (p->x - origin->x) * 100,
        .z = -(p->z - origin->z) * 100,
        .yaw = heading_wrap(yaw_deg),
    };
}

mavlink_ned mavlink_ned_from_world(const mavlink_ned *origin, const drone_pose *w)
{
    return (mavlink_ned){
        .x = origin->x + w->y / 100,
        .y = origin->y + w->x / 100,
        .z = origin->z - w->z / 100,
    };
}

float mavlink_yaw_rad(double compass_deg)
{
    double d = heading_wrap(compass_deg);
    if (d > 180) d -= 360;
    return (float)(d * M_PI / 180);
}

uint32_t mavlink_px4_mode(int main_mode, int sub_mode)
{
    return (uint32_t)(main_mode & 0xff) << 16 | (uint32_t)(sub_mode & 0xff) << 24;
}

const char *mavlink_mode_name(uint8_t autopilot, uint32_t custom_mode, char *buf, size_t len)
{
    if (autopilot == MAV_AUTOPILOT_PX4) {
        static const char *const main_names[] = {"?",        "MANUAL",     "ALTCTL",
                                                 "POSCTL",   "AUTO",       "ACRO",
                                                 "OFFBOARD", "STABILIZED", "RATTITUDE"};
        static const char *const auto_names[] = {"?",   "READY", "TAKEOFF", "LOITER", "MISSION",
                                                 "RTL", "LAND",  "?",       "FOLLOW", "PRECLAND"};
        unsigned mm = (custom_mode >> 16) & 0xff, sm = custom_mode >> 24;
        if (mm == PX4_MAIN_AUTO && sm < sizeof auto_names / sizeof auto_names[0])
            snprintf(buf, len, "AUTO.%s", auto_names[sm]);
        else if (mm < sizeof main_names / sizeof main_names[0])
            snprintf(buf, len, "%s", main_names[mm]);
        else
            snprintf(buf, len, "mode 0x%08x", (unsigned)custom_mode);
        return buf;
    }
    static const char *const copter[] = {"STABILIZE", "ACRO",    "ALT_HOLD", "AUTO",  "GUIDED",
                                         "LOITER",    "RTL",     "CIRCLE",   "?",     "LAND",
                                         "?",         "DRIFT",   "?",        "SPORT", "FLIP",
                                         "AUTOTUNE",  "POSHOLD", "BRAKE",    "THROW"};
    if (autopilot == MAV_AUTOPILOT_ARDUPILOTMEGA && custom_mode < sizeof copter / sizeof copter[0])
        snprintf(buf, len, "%s", copter[custom_mode]);
    else
        snprintf(buf, len, "mode %u", (unsigned)custom_mode);
    return buf;
}

const char *mavlink_result_name(int result)
{
    static const char *const names[] = {
        "accepted", "temporarily rejected", "denied",   "unsupported",
        "failed",   "in progress",          "cancelled"};
    return result >= 0 && result < 7 ? names[result] : "an unknown result";
}
