/*
 * The watch on the measured state (SPEC §10): the constraint check judges
 * where a motion sends the drone; the watch judges where the drone is.
 *
 * Drivers hand it every measured state (drone_measured in drone.h, from any
 * thread); it judges each one against
 *   - the geofence: farther than geofence_radius from home (x, y);
 *   - the altitude band: above max_z or below min_z;
 *   - the battery reserve: below battery_reserve percent (at the reserve
 *     the check already refuses all but descending; below it the drone
 *     flies home and lands),
 * and trips on the first state that breaks one. A tripped watch makes the
 * driver's current call give up (the guard's abort callback asks
 * watch_tripped), and the guard in front of the driver then takes the trip
 * (watch_take), holds and brings the drone back (watch_return.c).
 *
 * Hysteresis: once a rule tripped, the watch ignores that rule until a
 * measured state lies at least WATCH_REARM_CM inside its limit again (the
 * return aims there), so that a drone hovering on the edge with a noisy
 * sensor trips once, not at every datagram. A battery trip never re-arms:
 * the drone lands.
 *
 * Only states of a drone in the air count, and none while the watch is
 * paused (a landing goes below min_z on purpose). A part of the state the
 * driver reports unknown is not judged (the check refuses the motions that
 * need it). excursion_cm is the farthest a judged state went beyond the
 * fence or the band.
 */
#ifndef ALOFT_DRONE_WATCH_H
#define ALOFT_DRONE_WATCH_H

#include "drone/drone.h"
#include "drone/scene.h"

#include <stdbool.h>
#include <stddef.h>

/* How far inside a limit the drone must be for the watch to re-arm, and
 * where a return aims (less in a band narrower than twice this). */
#define WATCH_REARM_CM 20.0

typedef enum watch_rule {
    WATCH_NONE = 0,
    WATCH_FENCE,   /* left the geofence */
    WATCH_CEILING, /* above max_z */
    WATCH_FLOOR,   /* below min_z */
    WATCH_BATTERY, /* below the reserve */
} watch_rule;

/* A trip: the rule, the measured state that broke it, and its reason. */
typedef struct watch_trip {
    watch_rule rule;
    drone_state state;
    double beyond_cm; /* how far beyond the limit (0 for the battery) */
    char reason[256];
} watch_trip;

typedef struct watch watch;

/* A watch on LIM with the geofence centred on HOME's x, y. NULL when out of
 * memory. */
watch *watch_new(const scene_limits *lim, const drone_pose *home);
void watch_free(watch *w);

/* The drivers' entry point (a drone_measured_fn; UD is the watch). */
void watch_measured(void *ud, const drone_state *st);

/* True while a trip waits to be taken. */
bool watch_tripped(watch *w);

/* Takes the waiting trip into OUT (true), or false when there is none. */
bool watch_take(watch *w, watch_trip *out);

/* While paused, states are not judged (landing, the return's own moves are
 * judged but do not trip the rule being handled: see the top). */
void watch_pause(watch *w, bool paused);

/* True while paused (watch_pause). */
bool watch_paused(watch *w);

/* The latest measured state into ST, and how many came so far (0: none
 * yet, ST untouched). */
unsigned long watch_latest(watch *w, drone_state *st);

/* The farthest a judged state went beyond the fence or the band, cm. */
double watch_excursion_cm(watch *w);

/* The distance of the measured state ST beyond the geofence (FENCE), above
 * max_z (CEILING) or below min_z (FLOOR); negative inside. */
double watch_beyond(const scene_limits *lim, const drone_pose *home, const drone_state *st,
                    watch_rule rule);

/* How far inside its limit a return aims for RULE: WATCH_REARM_CM, or less
 * in a narrow band. */
double watch_margin(const scene_limits *lim, watch_rule rule);

#endif
