/*
 * The Tello driver (SPEC §9): a DJI/Ryze Tello flown through its text SDK
 * 2.0 over UDP, behind the drone interface of drone/drone.h.
 *
 * The drone listens for commands on HOST:port (8889) and answers each one
 * from there; it sends its state string to our state_port (8890) ten times a
 * second and, after `streamon`, H.264 video to our video_port (11111). The
 * driver keeps one command in flight, retries lost ones with care for
 * motions (see tello.c), keeps the drone from auto-landing during pauses and
 * turns the state string into drone_state.
 *
 * How a mission uses it (the `run` command, with host/mission/runner.h):
 *   tello_config cfg; tello_config_init(&cfg);
 *   getopt table: {"drone", ...} plus TELLO_LONG_OPTIONS(OPT_TELLO);
 *   each of them: tello_config_option(&cfg, name, optarg, err, len)
 *     (for --drone, 1 means Tello, 0 another driver such as "sim")
 *   drone *drv = tello_new(&cfg, err, len);
 *   mission_world_wrap(&w, drv, scene_or_NULL, ...)  constraints in front
 *   mission_world_launch(&w, ...)   connect: `command` (its tries share
 *                                   cfg.timeout_ms), `battery?`,
 *                                   `streamon`; takeoff: refuses under
 *                                   cfg.battery_min, then `takeoff`
 *   with cfg.video: vision source = tello_video_source(&cfg, ...)
 *   ... run the plan; Ctrl-C makes the abort callback fire ...
 *   mission_world_land(&w, ...)     `stop`, then `land` (cfg.land_at_end);
 *                                   a failure is the mission's failure
 *   mission_world_close(&w, false)
 * A call cut by the abort callback has already sent `stop` (the drone
 * hovers) and returns -1 with "cancelled"; land never polls the callback,
 * so landing after a cancel works.
 */
#ifndef ALOFT_DRONE_TELLO_H
#define ALOFT_DRONE_TELLO_H

#include "drone/drone.h"

#include <stdbool.h>
#include <stddef.h>

#define TELLO_DEFAULT_HOST "192.168.10.1"

typedef struct tello_config {
    char host[256];         /* the drone's address (IPv4 literal or name) */
    int port;               /* the drone's command port, 8889 */
    int state_port;         /* local port for the state string, 8890 */
    int video_port;         /* local port for the H.264 stream, 11111 */
    int timeout_ms;         /* reply timeout, 7000 */
    int takeoff_timeout_ms; /* reply timeout of takeoff and land, 20000 */
    int retries;            /* re-sends after a timeout (control commands), 3 */
    int battery_min;        /* percent under which takeoff is refused, 20 */
    int keepalive_ms;       /* idle time before a keep-alive query, 10000; 0 = none */
    bool video;             /* send `streamon` at connect (false: --no-video) */
    bool land_at_end;       /* the mission lands at the end (false: --no-land) */
    drone_pose start;       /* world pose of the take-off point (x, y, yaw) */
} tello_config;

/* Fills CFG with the defaults above (SPEC §9). */
void tello_config_init(tello_config *cfg);

/*
 * Applies one command-line option, named without its dashes:
 *   drone (VALUE "tello" or "tello:HOST"), tello-port, tello-state-port,
 *   tello-video-port, tello-timeout-ms (VALUE required), no-video, no-land
 *   (VALUE ignored).
 * Returns 1 if applied, 0 if NAME is not a Tello option (or --drone names
 * another driver, e.g. "sim"), -1 with a message for a bad value.
 */
int tello_config_option(tello_config *cfg, const char *name, const char *value, char *err,
                        size_t errlen);

/* getopt_long entries for the options above except --drone (which the run
 * command shares with the simulator), all with the code CODE: dispatch them
 * with tello_config_option(&cfg, long_options[index].name, optarg, ...). */
#define TELLO_LONG_OPTIONS(code)                                                                   \
    {"tello-port", required_argument, 0, (code)},                                                  \
        {"tello-state-port", required_argument, 0, (code)},                                        \
        {"tello-video-port", required_argument, 0, (code)},                                        \
        {"tello-timeout-ms", required_argument, 0, (code)}, {"no-video", no_argument, 0, (code)},  \
    {                                                                                              \
        "no-land", no_argument, 0, (code)                                                          \
    }

/* Writes the camera source the vision pipeline opens for this drone's
 * stream, "tello:PORT" (video_port), into BUF and returns BUF; give it as
 * vision_options.source (the pipeline receives the stream on that port,
 * vision/h264_feed.h). Only meaningful with cfg->video: connect sends
 * `streamon`. */
const char *tello_video_source(const tello_config *cfg, char *buf, size_t len);

/* When D (a Tello driver, else -1) sent `streamon`, on the clock_now_ms
 * clock; -1 before. */
double tello_streamon_ms(drone *d);

/*
 * Creates the driver: resolves the host and binds the local command and
 * state sockets (nothing is sent yet; connect does the handshake). Starts
 * the state listener and keep-alive threads. Returns NULL with a message
 * (e.g. the state port is taken). Free with d->ops->destroy(d).
 */
drone *tello_new(const tello_config *cfg, char *err, size_t errlen);

#endif
