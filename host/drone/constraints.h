/*
 * The constraint check (SPEC §10): the one gate between skills and a driver.
 *
 * constraints_wrap puts a guard driver in front of a real one. The guard has
 * the same interface, so skills cannot tell the difference, and the mission
 * code hands skills only the guard: there is no other way from Lua to a
 * driver. Before each motion the guard checks, in order:
 *   - known state: a part of the state the motion needs (battery for all
 *     but descending and landing, position and heading for a horizontal
 *     move, height for a vertical one) that the driver reports unknown
 *     (drone_state.known) refuses the motion, naming the part;
 *   - battery reserve: no climb or horizontal move or turn at or below it
 *     (descending and landing stay allowed);
 *   - altitude band: a vertical move's target is clamped into [min_z, max_z]
 *     (the move becomes shorter, or nothing);
 *   - longest single move (limits.max_move), after clamping;
 *   - geofence: a horizontal move whose end lies farther than
 *     geofence_radius from the home position is refused (a move back toward
 *     home from outside is allowed).
 * A refused motion returns -1 with the reason in ERR and never reaches the
 * driver; constraints_refused then reports true until the next call.
 *
 * The guard also checks what the driver actually sends: it installs itself
 * as the driver's drone.check_step, which the driver calls with every
 * physical step (a part of a split move, one of a pair, a setpoint) before
 * sending it. A step whose end lies outside the geofence or the altitude
 * band (and farther out than its start) is refused the same way, as is a
 * step that needs an unknown part of the state.
 *
 * The guard also holds the watch on the measured state (drone/watch.h):
 * it installs it as the driver's drone.measured, lets a trip stop the
 * driver's call (the driver's abort callback asks the watch first), and
 * then holds and brings the drone back (drone/watch_return.h) before the
 * motion under way returns -1 with the trip's reason (constraints_monitor
 * then says so). Between calls, constraints_watch_tick does the same from
 * the mission's watch thread (mission/watch.h). One thread drives the
 * driver at a time: every call and every tick holds the guard's lock.
 */
#ifndef ALOFT_DRONE_CONSTRAINTS_H
#define ALOFT_DRONE_CONSTRAINTS_H

#include "drone/drone.h"
#include "drone/scene.h"

typedef struct constraint_stats {
    int checked; /* motions checked */
    int refused; /* of which refused */
    int clamped; /* vertical moves shortened by the altitude band */
    int passed;  /* motions handed to the driver */
} constraint_stats;

/* Wraps INNER (owned from now on: destroying the guard destroys it) with the
 * limits LIM and the geofence centred on HOME's x, y. Returns NULL with a
 * message if out of memory (INNER is then still the caller's). */
drone *constraints_wrap(drone *inner, const scene_limits *lim, const drone_pose *home, char *err,
                        size_t errlen);

/* True if D is a guard made by constraints_wrap. */
bool constraints_is(const drone *d);

/* True if the guard's last motion was refused by a constraint (rather than
 * failing in the driver). */
bool constraints_refused(const drone *guard);

/* Counters since the guard was made. */
constraint_stats constraints_get_stats(const drone *guard);

/* The driver behind the guard (for the simulator's camera; never for
 * motion). */
drone *constraints_inner(drone *guard);

/* The watch between calls (from another thread than the plan's): when no
 * call drives the drone, a simulator hovers for the real time since the
 * last call or tick times HOVER_SCALE (0: none), then a trip of the watch
 * is handled as within a call; its report waits for the next motion, which
 * is refused with it, or for constraints_take_pending. ABORT (may be NULL)
 * stops the hover and a return as a caller's abort does. Returns 1 when it
 * handled a trip, 0 otherwise (also when a call holds the drone). */
int constraints_watch_tick(drone *guard, double hover_scale, bool (*abort)(void *ud),
                           void *abort_ud);

/* True if the guard's last refused motion was refused by the watch (a
 * monitor violation), with the measured pose of the trip in *POSE (may be
 * NULL). */
bool constraints_monitor(const drone *guard, drone_pose *pose);

/* Takes a trip handled between calls and not yet reported: its reason and
 * measured pose. False when there is none. */
bool constraints_take_pending(drone *guard, char *reason, size_t len, drone_pose *pose);

/* True once the watch landed the drone because it could not bring it back
 * (or the battery reached the reserve): WHY says what happened. Every
 * motion is refused from then on; the mission must end. */
bool constraints_watch_ended(const drone *guard, char *why, size_t len);

/* The guard's watch (drone/watch.h), or NULL when D is no guard. */
struct watch *constraints_watch(drone *guard);

/* How far the measured pose went beyond the geofence or the altitude band
 * (SPEC §2 excursion_cm), cm. */
double constraints_excursion_cm(const drone *guard);

#endif
