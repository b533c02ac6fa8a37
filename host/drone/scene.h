/*
 * Scene files (SPEC §3): the simulated world a mission flies in.
 *
 * A scene is JSON in centimetres and degrees, world frame x east, y north,
 * z up. Every key but "objects" is optional. Unknown keys and wrong types are
 * rejected with a message naming the key ("objects[2].w: expected a number"),
 * because a typo in a scene silently changing the world would make every test
 * built on it meaningless.
 *
 * Keys beyond the SPEC example (all optional, compatible extensions):
 *   drone.speed (cm/s, 100), drone.yaw_rate (deg/s, 90), drone.battery (%, 100),
 *   camera.occlusion (bool, false: nearer boxes hide what is behind them),
 *   limits.max_move (cm, 500), limits.battery_reserve (%, 10),
 *   objects[].id (instance id; default CLASS_N, numbered per class).
 */
#ifndef ALOFT_DRONE_SCENE_H
#define ALOFT_DRONE_SCENE_H

#include "drone/drone.h"

#include <stdbool.h>
#include <stddef.h>

#define SCENE_MAX_OBJECTS 256
#define SCENE_NAME_MAX 48

typedef struct scene_object {
    char id[SCENE_NAME_MAX];  /* instance id, "apple_2" */
    char cls[SCENE_NAME_MAX]; /* class, "apple" */
    char color[16];           /* "" when not given */
    double x, y, z;           /* centre of the footprint; z = bottom */
    double w, d, h;           /* size along x, y, z */
} scene_object;

typedef struct scene_camera {
    double hfov, vfov; /* degrees */
    int width, height; /* pixels, for pictures */
    double range;      /* cm: farther objects are unseen */
    bool occlusion;
} scene_camera;

typedef struct scene_limits {
    double geofence_radius; /* cm around the start position */
    double min_z, max_z;
    double max_move;     /* longest single move, cm */
    int battery_reserve; /* percent: no motion at or below it */
} scene_limits;

/* Wind (SPEC §3): blows toward the compass HEADING at SPEED cm/s, plus a
 * gust of standard deviation GUST cm/s drawn anew every simulated second. */
typedef struct scene_wind {
    double speed, heading, gust;
} scene_wind;

typedef struct scene {
    drone_pose start;
    double speed, yaw_rate; /* cm/s, deg/s */
    int battery;            /* percent at start */
    scene_camera camera;
    scene_limits limits;
    double noise_position_cm;
    double noise_miss_rate;
    scene_wind wind;
    int nobjects;
    scene_object objects[SCENE_MAX_OBJECTS];
} scene;

/* Fills S with the defaults of SPEC §3 and no objects. */
void scene_defaults(scene *s);

/* Parses and validates scene JSON. Returns 0, or -1 with a message naming
 * the offending key in ERR. */
int scene_parse(scene *s, const char *json, size_t len, char *err, size_t errlen);

/* Reads and parses a scene file; messages start with PATH. */
int scene_load(scene *s, const char *path, char *err, size_t errlen);

/* The object with instance id ID, or NULL. */
const scene_object *scene_find(const scene *s, const char *id);

#endif
