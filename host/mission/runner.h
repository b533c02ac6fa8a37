/*
 * Running one plan: the mission world (a drone behind the constraint check,
 * and its camera) and the plan runner that compiles MiniSpec, binds the
 * skills, runs the plan in the sandbox and collects the SPEC §2 JSON.
 *
 * The mission controller (LLM planning, replans) builds on these; `aloft run
 * --plan` and `aloft lua --scene` use them directly.
 */
#ifndef ALOFT_MISSION_RUNNER_H
#define ALOFT_MISSION_RUNNER_H

#include "drone/drone.h"
#include "drone/scene.h"
#include "drone/sim.h"
#include "sandbox/sandbox.h"
#include "skills/skills.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* What a mission flies. Skills only ever see DRONE, the constraint guard:
 * there is no other way from a plan to the driver. */
typedef struct mission_world {
    drone *drone;  /* the guard; owns the driver behind it */
    drone *sim;    /* the simulator behind the guard, or NULL for a real drone */
    scene *scene;  /* the scene (limits for a real drone), malloc'd */
    bool launched; /* took off through mission_world_launch */
} mission_world;

/* Loads SCENE_PATH and opens the simulator in it behind the guard, flying at
 * the scene's start pose. Returns 0, or -1 with a message. */
int mission_world_sim(mission_world *w, const char *scene_path, const sim_options *opts, char *err,
                      size_t errlen);

/* Puts a real driver (already opened) behind the guard with the limits of
 * SCENE_PATH, or the default limits when it is NULL; takes DRIVER either way.
 * The caller connects and launches (mission_world_launch). */
int mission_world_wrap(mission_world *w, drone *driver, const char *scene_path, char *err,
                       size_t errlen);

/* Connects and takes off. */
int mission_world_launch(mission_world *w, char *err, size_t errlen);

/* Gives CTX the world's drone and camera. */
void mission_world_attach(mission_world *w, skill_ctx *ctx);

/* The current pose, yaw in [0, 360). */
drone_pose mission_world_pose(mission_world *w);

/* Simulated seconds so far (0 for a real drone). */
double mission_world_sim_s(mission_world *w);

/* Hovers, then closes the drone and frees everything (LAND: land first). */
void mission_world_close(mission_world *w, bool land);

/* How a run ended, for callers that act on it (the mission controller
 * replans on REPLAN and FAILED, retries on REJECTED). */
typedef enum runner_status {
    RUNNER_OK = 0,
    RUNNER_REJECTED,  /* the plan did not pass the checker */
    RUNNER_FAILED,    /* a Lua or skill error, or a limit (see .sandbox) */
    RUNNER_REPLAN,    /* the plan called replan */
    RUNNER_CANCELLED, /* sandbox_cancel (Ctrl-C, stop button) */
} runner_status;

typedef struct runner_outcome {
    runner_status status;
    sandbox_status sandbox; /* how the sandbox run ended */
    char reason[1024];      /* the report's "error", or "" */
    int violations;         /* constraint refusals recorded */
} runner_outcome;

typedef struct runner_opts {
    const skill_registry *reg;
    mission_world *world;
    const char *plan; /* MiniSpec text */
    size_t plan_len;
    sandbox_limits limits;
    int max_loop;   /* 0 = MiniSpec default */
    FILE *progress; /* each skill call with simulated time; NULL = quiet */
    /* probe: the LLM; NULL makes probe fail with a clear error. */
    int (*probe)(void *ud, const char *question, char *out, size_t outlen, char *err,
                 size_t errlen);
    void *probe_ud;
    /* Called with the sandbox before the plan runs, and with NULL after
     * (for Ctrl-C: cli_cancel_on_signal). */
    void (*on_sandbox)(void *ud, sandbox *sb);
    void *on_sandbox_ud;
    runner_outcome *outcome; /* filled when not NULL */
} runner_opts;

/* Compiles and runs the plan. Always returns the SPEC §2 `run --json`
 * document (never NULL unless out of memory): "ok" says whether the plan
 * compiled and ran to its end without error, cancel or replan request. */
cJSON *runner_run(const runner_opts *o);

/* The lines of the sandbox output as a JSON array (for "logs"). */
cJSON *runner_output_lines(const sandbox *sb);

#endif
