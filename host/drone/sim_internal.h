/* Shared between the simulator's files (sim.c, sim_camera.c); not an API. */
#ifndef ALOFT_DRONE_SIM_INTERNAL_H
#define ALOFT_DRONE_SIM_INTERNAL_H

#include "drone/pictures.h"
#include "drone/sim.h"

typedef struct sim {
    drone drone; /* first: the driver handed out */
    scene scene;
    sim_options opts;
    drone_state state;
    double battery;          /* exact, state.battery is its ceiling */
    double clock_ms;         /* simulated time */
    drone_pose from, to;     /* the motion in progress */
    double drift_x, drift_y; /* where the wind has carried it since the motion began */
    uint64_t rng;            /* xorshift64* state */
    pictures pictures;       /* where take_picture writes, and its caps */
} sim;

/* Where along A->B (0..1) the segment first enters box O grown by R, or -1. */
double sim_segment_box(const double a[3], const double b[3], const scene_object *o, double r);

/* Distance from point P to the nearest point of box O (0 inside it). */
double sim_box_distance(const double p[3], const scene_object *o);

#endif
