/*
 * The mission world: what a mission flies. A drone behind the constraint
 * check (drone/constraints.h), the simulator behind it if any, the scene
 * (or a real drone's limits) and the camera the skills see through.
 */
#ifndef ALOFT_MISSION_WORLD_H
#define ALOFT_MISSION_WORLD_H

#include "drone/drone.h"
#include "drone/scene.h"
#include "drone/sim.h"
#include "drone/tello.h"
#include "mission/report.h"
#include "skills/skills.h"
#include "vision/options.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What a mission flies. Skills only ever see DRONE, the constraint guard:
 * there is no other way from a plan to the driver. */
typedef struct mission_world {
    drone *drone;  /* the guard; owns the driver behind it */
    drone *sim;    /* the simulator behind the guard, or NULL for a real drone */
    scene *scene;  /* the scene (limits for a real drone), malloc'd */
    bool launched; /* took off through mission_world_launch */
    /* The vision pipeline (vision/pipeline.h) the skills see through, or
     * NULL for the simulator's camera (or none on a real drone). It may be
     * a camera without a detector (mission_world_camera): pictures only. */
    struct vision_pipeline *eyes;
    /* Where pictures of the eyes go (the simulator keeps its own); set up
     * by mission_world_pictures or on the first picture. */
    struct pictures *pics;
    /* The pictures taken, for the run report. */
    report_pictures pictures_log;
    /* Why there is no camera, for take_picture's error ("" = none
     * connected), e.g. a Tello flying with --no-video. */
    char no_camera[320];
    /* The mission's cancel flag (Ctrl-C, the web UI's Stop), or NULL: once
     * it is set, mission_world_land hurries (drone.hurry). */
    atomic_bool *cancel;
} mission_world;

/* Loads SCENE_PATH and opens the simulator in it behind the guard, flying at
 * the scene's start pose. Returns 0, or -1 with a message. */
int mission_world_sim(mission_world *w, const char *scene_path, const sim_options *opts, char *err,
                      size_t errlen);

/* The same with a scene already parsed (copied), e.g. a recorded one. */
int mission_world_sim_scene(mission_world *w, const scene *sc, const sim_options *opts, char *err,
                            size_t errlen);

/* Puts a real driver (already opened) behind the guard with the limits of
 * SCENE_PATH, or the default limits when it is NULL; takes DRIVER either way.
 * The caller connects and launches (mission_world_launch). */
int mission_world_wrap(mission_world *w, drone *driver, const char *scene_path, char *err,
                       size_t errlen);

/* Connects and takes off. */
int mission_world_launch(mission_world *w, char *err, size_t errlen);

/* Opens the vision pipeline VO describes as the world's eyes (after launch:
 * a Tello streams only after connect's `streamon`); the simulator, if any,
 * is what --detector sim sees. Returns 0, or -1 with a message. */
int mission_world_eyes(mission_world *w, const vision_options *vo, char *err, size_t errlen);

/* Opens the eyes a flight asks for (host/mission/world_eyes.c): VISION's
 * detector on its --source, or on the Tello's stream (TELLO, with its
 * video on); a Tello without a detector gets its camera alone, for
 * pictures and the web UI (a camera that does not open then only makes
 * take_picture fail). On a Tello, call it before connecting: the stream's
 * port is bound before `streamon`. Progress lines go to PROGRESS (may be
 * NULL). Returns 0, or -1 with a message. */
int mission_world_open_eyes(mission_world *w, const vision_options *vision,
                            const tello_config *tello, FILE *progress, char *err, size_t errlen);

/* After a real drone connected: the eyes' first frame is timed from the
 * moment it switched its camera on (a Tello's `streamon`). */
void mission_world_camera_on(mission_world *w);

/* The camera's counts for the run report's "frames" (SPEC §2, docs/cli.md)
 * into OUT when the world has a camera with pixels: true, else false. */
bool mission_world_frames(mission_world *w, vision_stats *out);

/* Moves the pictures taken so far (see pictures_log) into OUT. */
void mission_world_take_pictures_log(mission_world *w, report_pictures *out);

/* Opens a camera without a detector as the world's eyes (SOURCE as for
 * --source; the Tello's stream is "tello:PORT"): take_picture and the web
 * UI see through it; vision skills still need a detector. Returns 0, or -1
 * with a message. */
int mission_world_camera(mission_world *w, const char *source, int frame_timeout_ms, char *err,
                         size_t errlen);

/* Where pictures of the eyes go: PARENT and the caps as for sim_options
 * (drone/pictures.h). Call before the first picture. */
void mission_world_pictures(mission_world *w, const char *parent, int max_count,
                            uint64_t max_bytes);

/* take_picture (skill_ctx.picture; UD is the world): the frame of the eyes
 * when they have pixels, else the simulator's drawing. Returns 0 with the
 * file's path, 1 at a cap (nothing written), -1 with a message (no camera,
 * no frame yet, a write that failed). */
int mission_world_take_picture(void *ud, char *path, size_t pathlen, char *err, size_t errlen);

/* Gives CTX the world's drone and camera: the eyes when open (vision skills
 * when they detect), else the simulator's camera, else none (vision skills
 * then fail with "no camera"); and take_picture's source. */
void mission_world_attach(mission_world *w, skill_ctx *ctx);

/* The current pose, yaw in [0, 360). */
drone_pose mission_world_pose(mission_world *w);

/* Simulated seconds so far (0 for a real drone). */
double mission_world_sim_s(mission_world *w);

/* Hovers, then lands the drone if the world launched it (SPEC §7: a landing
 * that fails or is never acknowledged is a failure, never a success).
 * Returns 0 when it landed or had nothing to land, or -1 with a message
 * saying that the drone may still be flying. Not tried again by
 * mission_world_close. The watchdog (mission/watchdog.h) calls it from its
 * own thread while the flying thread is stuck in the VM. */
int mission_world_land(mission_world *w, char *err, size_t errlen);

/* Closes the eyes, hovers, then closes the drone and frees everything
 * (LAND: land first, unless mission_world_land did; callers that report
 * the mission's outcome land with mission_world_land first, as a failed
 * landing must be reported). */
void mission_world_close(mission_world *w, bool land);

#endif
