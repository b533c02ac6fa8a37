/*
 * The drone driver interface (SPEC §9), shared by the simulator and the Tello.
 *
 * Every call blocks until the drone has done it (or failed) and returns 0, or
 * -1 with a reason in ERR. Long calls poll the abort callback (cancel, mission
 * deadline) and give up with "cancelled" when it says so, leaving the drone
 * hovering. Distances are centimetres, angles degrees; a positive turn is
 * clockwise. The driver does not decide constraints: host/drone/constraints.h
 * is the one check between skills and a driver, and a driver that sends a
 * motion in several steps submits each one to it (drone.check_step).
 *
 * A driver is used from one thread at a time, except drone_abort which any
 * thread may trigger through the abort callback.
 */
#ifndef ALOFT_DRONE_DRONE_H
#define ALOFT_DRONE_DRONE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum drone_dir {
    DRONE_FORWARD,
    DRONE_BACK,
    DRONE_LEFT,
    DRONE_RIGHT,
    DRONE_UP,
    DRONE_DOWN,
} drone_dir;

typedef struct drone_pose {
    double x, y, z; /* cm, world frame of SPEC §3 */
    double yaw;     /* compass degrees in [0, 360) */
} drone_pose;

/* Bits of drone_state.known. A driver clears a part's bit while the value
 * its drone last reported for it was not finite or outside its physical
 * range (SPEC §9): the number in that field is then the last good one, not
 * a measurement, and the constraint check refuses the motions that need it. */
enum {
    DRONE_KNOWN_POSITION = 1 << 0, /* pose.x, pose.y and pose.yaw */
    DRONE_KNOWN_HEIGHT = 1 << 1,   /* pose.z */
    DRONE_KNOWN_BATTERY = 1 << 2,  /* battery */
    DRONE_KNOWN_ALL = 7,
};

typedef struct drone_state {
    drone_pose pose;
    int battery;    /* percent */
    unsigned known; /* DRONE_KNOWN_* of the parts above that hold valid values */
    bool flying;
    double tof_cm, baro_cm;
    double pitch, roll;
    double vx, vy, vz;
    double flight_time_s;
} drone_state;

typedef struct drone drone;

/* Where a motion of CM in direction DIR ends, starting at FROM (yaw
 * unchanged): forward is along the compass heading (+y at yaw 0, +x at 90),
 * right is 90 degrees clockwise of it. */
static inline drone_pose drone_pose_after(const drone_pose *from, drone_dir dir, double cm)
{
    double r = from->yaw * M_PI / 180, fx = sin(r), fy = cos(r);
    drone_pose to = *from;
    switch (dir) {
    case DRONE_FORWARD: to.x += cm * fx, to.y += cm * fy; break;
    case DRONE_BACK: to.x -= cm * fx, to.y -= cm * fy; break;
    case DRONE_RIGHT: to.x += cm * fy, to.y -= cm * fx; break;
    case DRONE_LEFT: to.x -= cm * fy, to.y += cm * fx; break;
    case DRONE_UP: to.z += cm; break;
    case DRONE_DOWN: to.z -= cm; break;
    }
    return to;
}

/*
 * The constraint check of one physical step: a driver that sends a motion
 * as several steps (a move split into the SDK's ranges, a short move flown
 * as a pair, a stream of setpoints) asks it about each step, FROM the pose
 * where the step starts TO where it ends (world frame), before sending it.
 * WHAT names the step in the refusal ("forward 20"). Returns 0 if the step
 * may be sent, or -1 with the reason in ERR: the step must not be sent.
 */
typedef int (*drone_step_check)(void *ud, const drone_pose *from, const drone_pose *to,
                                const char *what, char *err, size_t errlen);

/*
 * The measured-state entry point of the watch (host/drone/watch.h, SPEC
 * §10): a driver calls drone_measured with what its drone reports whenever
 * that changes: the simulator at every tick of simulated time (at least 10
 * per simulated second), a Tello at every state datagram, a MAVLink vehicle
 * at every position, height or battery message. It may be called from any
 * thread (a telemetry thread included), also while a call of the driver
 * runs; it only judges and never calls the driver back. The watch says
 * whether the drone must stop now: a driver in a long call gives it up when
 * its abort callback says so, as it does for a cancel.
 */
typedef void (*drone_measured_fn)(void *ud, const drone_state *st);

typedef struct drone_ops {
    const char *name;
    int (*connect)(drone *d, char *err, size_t errlen);
    int (*takeoff)(drone *d, char *err, size_t errlen);
    int (*land)(drone *d, char *err, size_t errlen);
    int (*move)(drone *d, drone_dir dir, int cm, char *err, size_t errlen);
    int (*turn)(drone *d, int degrees, char *err, size_t errlen);
    int (*hover)(drone *d);     /* stop where it is */
    int (*emergency)(drone *d); /* motors off: only on explicit request */
    int (*get_state)(drone *d, drone_state *out);
    int (*wait)(drone *d, int ms, char *err, size_t errlen); /* hover for ms */
    /* Simulators only (NULL for a real drone): MS of simulated time pass at
     * once, hovering, whatever the time scale: the time that passed in the
     * real world while nothing drove the drone (the LLM thinking). */
    int (*pass_time)(drone *d, int ms, char *err, size_t errlen);
    void (*destroy)(drone *d);
} drone_ops;

struct drone {
    const drone_ops *ops;
    void *impl;
    /* Polled during long calls; returns true to stop now. */
    bool (*abort)(void *ud);
    void *abort_ud;
    /* Set by the constraint guard in front of this driver (NULL without
     * one): every step the driver sends goes through it first. */
    drone_step_check check_step;
    void *check_step_ud;
    /* Set by the watch behind the guard (NULL without one): every measured
     * state goes to it (drone_measured). */
    drone_measured_fn measured;
    void *measured_ud;
    /* Set when the mission was cancelled: a call that cannot be abandoned
     * (the landing) sends its command once and waits about half a second
     * for the answer instead of retrying at length, so that Ctrl-C ends the
     * process within 2 s also when the drone has gone silent. */
    bool hurry;
};

/* Hands the measured state ST to D's watch, if any (see drone_measured_fn). */
static inline void drone_measured(drone *d, const drone_state *st)
{
    if (d->measured) d->measured(d->measured_ud, st);
}

#endif
