/*
 * The scene files of a web server's drones, each loaded once however many
 * drones fly in it (SPEC §13: hundreds of drones per process). A scene keeps
 * what every mission in it needs (the parsed scene, its path, its text,
 * recorded with each mission) and one camera: a simulator that is placed at
 * a drone's pose to see what that drone sees, so that views never touch a
 * flying simulator (nor its noise generator). An idle drone then costs its
 * own few hundred bytes, not a scene and a simulator of its own.
 *
 * Every function may be called from any thread.
 */
#ifndef ALOFT_WEB_SCENES_H
#define ALOFT_WEB_SCENES_H

#include "drone/drone.h"
#include "drone/scene.h"
#include "vision/objects.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct web_scene {
    scene sc;
    char *path; /* the file, as given */
    char *json; /* its text (NULL if it could not be read again) */
} web_scene;

typedef struct web_scenes web_scenes;

/* An empty set; SEED seeds the cameras' noise. NULL when out of memory. */
web_scenes *web_scenes_new(uint64_t seed);

/* Frees every scene and camera. */
void web_scenes_free(web_scenes *s);

/* The scene of file PATH, loaded now or the one loaded before from the same
 * PATH; with CAMERA, it also gets a camera (a simulator that has taken
 * off) if it has none yet. NULL with a message. */
const web_scene *web_scenes_get(web_scenes *s, const char *path, bool camera, char *err,
                                size_t errlen);

/* How many scene files are loaded. */
int web_scenes_count(const web_scenes *s);

/* What the camera of SC sees from POSE: up to MAX objects into OUT, or -1
 * when SC has no camera. */
int web_scenes_view(web_scenes *s, const web_scene *sc, const drone_pose *pose, vision_object *out,
                    int max);

/* The pose a drone in SC starts at (its camera's, once taken off). */
drone_pose web_scenes_start(web_scenes *s, const web_scene *sc);

#endif
