/*
 * The mission's watch thread (SPEC §10): the watch on the measured state
 * (drone/watch.h) also between the plan's calls, between plans and while
 * the LLM is thinking.
 *
 * Within a call the driver hands the watch every measured state and the
 * guard acts on a trip at once. Between calls nothing drives the drone, so
 * this thread, outside the VM's, ticks the guard every MISSION_WATCH_MS of
 * real time (constraints_watch_tick): a simulator in a windy scene hovers
 * through the real time that passed times the time scale (the wind carries
 * it while the LLM thinks; at time scale 0 no simulated time passes between
 * calls), and a trip seen by a driver's telemetry thread (a Tello, a
 * MAVLink vehicle) is handled: hold, return, and the report waits for the
 * plan's next motion or its end.
 */
#ifndef ALOFT_MISSION_WATCH_THREAD_H
#define ALOFT_MISSION_WATCH_THREAD_H

#include "mission/world.h"

#include <stddef.h>

#define MISSION_WATCH_MS 20

typedef struct mission_watch mission_watch;

/* Starts ticking W's guard; HOVER_SCALE is simulated ms hovered per real
 * ms between calls (0: none). NULL with a message when the thread cannot
 * start. */
mission_watch *mission_watch_start(mission_world *w, double hover_scale, char *err, size_t errlen);

/* Ends the thread (after a tick under way) and frees MW; NULL is fine. */
void mission_watch_stop(mission_watch *mw);

/* The hover scale of a flight: the time scale in a windy simulated scene,
 * 0 otherwise (no wind: nothing would move the drone between calls). */
double mission_watch_hover_scale(const mission_world *w, double time_scale);

#endif
