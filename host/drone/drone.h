/*
 * The drone driver interface (SPEC §9), shared by the simulator and the Tello.
 *
 * Every call blocks until the drone has done it (or failed) and returns 0, or
 * -1 with a reason in ERR. Long calls poll the abort callback (cancel, mission
 * deadline) and give up with "cancelled" when it says so, leaving the drone
 * hovering. Distances are centimetres, angles degrees; a positive turn is
 * clockwise. The driver does not check constraints: host/drone/constraints.h
 * is the one check between skills and a driver.
 *
 * A driver is used from one thread at a time, except drone_abort which any
 * thread may trigger through the abort callback.
 */
#ifndef ALOFT_DRONE_DRONE_H
#define ALOFT_DRONE_DRONE_H

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

typedef struct drone_state {
    drone_pose pose;
    int battery; /* percent */
    bool flying;
    double tof_cm, baro_cm;
    double pitch, roll;
    double vx, vy, vz;
    double flight_time_s;
} drone_state;

typedef struct drone drone;

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
    void (*destroy)(drone *d);
} drone_ops;

struct drone {
    const drone_ops *ops;
    void *impl;
    /* Polled during long calls; returns true to stop now. */
    bool (*abort)(void *ud);
    void *abort_ud;
};

#endif
