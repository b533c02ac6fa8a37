/*
 * The simulated drone (SPEC §9): a kinematic driver behind the drone
 * interface, flying in a scene (host/drone/scene.h), with a pinhole camera
 * that turns the scene's boxes into normalised detections.
 *
 * Time: moves run at scene speed (default 100 cm/s, 90 deg/s) on a simulated
 * clock. TIME_SCALE is simulated seconds per real second: 1 = real time,
 * 10 = ten times faster, 0 = instant. Blocking calls poll the abort callback
 * about every 10 ms of real time; a cancelled move stops where it got to.
 *
 * Determinism: everything random (detection noise, misses) comes from one
 * generator seeded with SEED, so a scene, a seed and a sequence of calls give
 * the same results on every run.
 */
#ifndef ALOFT_DRONE_SIM_H
#define ALOFT_DRONE_SIM_H

#include "drone/drone.h"
#include "drone/scene.h"
#include "vision/objects.h"

#include <stdint.h>

typedef struct sim_options {
    double time_scale; /* simulated s per real s; 0 = instant */
    uint64_t seed;     /* noise and misses */
    /* take_picture: the parent of the mission's pictures directory (NULL =
     * $TMPDIR or /tmp) and its caps (0 = the defaults), drone/pictures.h */
    const char *picture_dir;
    int max_pictures;
    uint64_t max_picture_bytes;
    /* Verification's worlds: take_picture counts the picture against the
     * cap and returns a path, but draws and writes nothing (pictures_skip). */
    bool discard_pictures;
    /* Called on the flying thread while a motion runs in real time (about
     * every 10 ms) and when it ends, with the pose so far: for live views.
     * NULL = none. */
    void (*on_pose)(void *ud, const drone_pose *pose);
    void *on_pose_ud;
} sim_options;

/* Opens a simulated drone in a copy of SCENE, landed at the start pose
 * (takeoff puts it at the scene's start height at once). Free with
 * d->ops->destroy(d). Returns NULL with a message only if out of memory. */
drone *sim_open(const scene *s, const sim_options *opts, char *err, size_t errlen);

/* True if D is a simulated drone. The functions below require one. */
bool sim_is(const drone *d);

/* What the camera sees now: up to MAX detections, sorted by instance id
 * order of the scene. Returns how many. Draws from the noise generator. */
int sim_observe(drone *d, vision_object *out, int max);

/* Writes a PNG of the current view (the detections as labelled boxes) into
 * the mission's pictures directory and puts its path into PATH. Returns 0;
 * 1 when the mission's picture caps are reached (nothing written, ERR says
 * which); -1 with a message when it could not be written. */
int sim_take_picture(drone *d, char *path, size_t pathlen, char *err, size_t errlen);

/* Puts the drone at POSE at once, flying (no motion, no collision check):
 * for a second simulator that shows what another one's camera sees. */
void sim_place(drone *d, const drone_pose *pose);

/* Simulated milliseconds since sim_open. */
double sim_time_ms(const drone *d);

/* The scene the drone flies in. */
const scene *sim_scene(const drone *d);

/* Distance in cm from the drone to the nearest point of object ID's box, or
 * -1 if there is no such object. */
double sim_distance_to(const drone *d, const char *id);

/* Draws a picture of detections as PNG bytes (host/drone/sim_picture.c,
 * libpng) into *DATA (malloc'd, *LEN bytes). Returns 0, or -1 with a
 * message. */
int sim_picture_encode(int width, int height, const vision_object *objs, int n,
                       unsigned char **data, size_t *len, char *err, size_t errlen);

#endif
