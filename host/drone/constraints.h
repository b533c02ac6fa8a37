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

#endif
