/*
 * The MAVLink driver (SPEC §9): PX4 and ArduPilot vehicles behind the drone
 * interface of drone/drone.h, over a link of mavlink_link.h.
 *
 * How a mission uses it (as the Tello, see tello.h):
 *   mavlink_config cfg; mavlink_config_init(&cfg);
 *   getopt table: {"drone", ...} plus MAVLINK_LONG_OPTIONS(OPT_MAVLINK);
 *   each of them: mavlink_config_option(&cfg, name, optarg, err, len)
 *     (for --drone, 1 means MAVLink, 0 another driver)
 *   drone *drv = mavlink_new(&cfg, err, len);
 *   mission_world_wrap(&w, drv, scene_or_NULL, ...)  constraints in front
 *   mission_world_launch(&w, ...)   connect: the vehicle's HEARTBEAT, its
 *                                   streams, a position; takeoff: mode,
 *                                   arm, climb to cfg.takeoff_cm
 *   ... the plan; Ctrl-C makes the abort callback fire: the call holds
 *   position (a position target in the mode flown) and returns "cancelled"
 *   mission_world_land(&w, ...)     MAV_CMD_NAV_LAND unless --no-land; done
 *                                   when on the ground and disarmed
 *   mission_world_close(&w, false)
 *
 * Frames. World pose (SPEC §3: x east, y north, z up, cm; compass yaw) is
 * the vehicle's LOCAL_POSITION_NED (x north, y east, z down, metres) taken
 * relative to where it was when connect found it ready (its take-off
 * point): x = east offset, y = north offset, z = height above that point.
 */
#ifndef ALOFT_DRONE_MAVLINK_H
#define ALOFT_DRONE_MAVLINK_H

#include "drone/drone.h"
#include "drone/mavlink_link.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct mavlink_config {
    mavlink_url url;          /* default udpin:0.0.0.0:14540 */
    int sysid;                /* the vehicle's system id; 0 = the first heard */
    int our_sysid;            /* ours, 255 (a ground station's) */
    int our_compid;           /* ours, 190 (MAV_COMP_ID_MISSIONPLANNER) */
    int ready_timeout_ms;     /* connect and arming readiness, 90000 */
    int takeoff_cm;           /* height after takeoff, 250 */
    int battery_min;          /* percent under which takeoff is refused, 20 */
    int silent_ms;            /* a link silent this long ends the mission, 3000 */
    double tolerance_cm;      /* a position target is reached within this, 30 */
    double yaw_tolerance_deg; /* a heading target within this, 5 */
    double speed_cm_s;        /* assumed for time limits, 100 */
    bool land_at_end;         /* false: --no-land */
    FILE *progress;           /* waiting, arming, takeoff, landing lines; NULL: quiet */
} mavlink_config;

/* Fills CFG with the defaults above (progress: stderr). */
void mavlink_config_init(mavlink_config *cfg);

/*
 * Applies one command-line option, named without its dashes:
 *   drone ("mavlink" or "mavlink:URL"), mavlink-sysid, mavlink-our-sysid,
 *   mavlink-our-compid, mavlink-takeoff-cm, mavlink-ready-timeout-ms (VALUE
 *   required), no-land (VALUE ignored).
 * Returns 1 if applied, 0 if NAME is not a MAVLink option (or --drone names
 * another driver), -1 with a message for a bad value.
 */
int mavlink_config_option(mavlink_config *cfg, const char *name, const char *value, char *err,
                          size_t errlen);

/* Applies a drone spec of `aloft serve`, "mavlink[:URL][,sysid=N]": the
 * link as --drone, the suffix as --mavlink-sysid N for this drone alone
 * (mavlink_spec.c). Returns as mavlink_config_option. */
int mavlink_config_spec(mavlink_config *cfg, const char *spec, char *err, size_t errlen);

/* getopt_long entries for the options above except --drone and --no-land
 * (which the run command shares with the Tello), all with the code CODE. */
#define MAVLINK_LONG_OPTIONS(code)                                                                 \
    {"mavlink-sysid", required_argument, 0, (code)},                                               \
        {"mavlink-our-sysid", required_argument, 0, (code)},                                       \
        {"mavlink-our-compid", required_argument, 0, (code)},                                      \
        {"mavlink-takeoff-cm", required_argument, 0, (code)},                                      \
    {                                                                                              \
        "mavlink-ready-timeout-ms", required_argument, 0, (code)                                   \
    }

/* "mavlink:URL" for the record. */
const char *mavlink_config_name(const mavlink_config *cfg, char *buf, size_t len);

/*
 * Creates the driver: opens (or shares) the link and subscribes to the
 * vehicle; starts the thread that sends our HEARTBEAT at 1 Hz and, while
 * flying, the position target at 10 Hz. Nothing else is sent before
 * connect. Returns NULL with a message. Free with d->ops->destroy(d).
 */
drone *mavlink_new(const mavlink_config *cfg, char *err, size_t errlen);

#endif
