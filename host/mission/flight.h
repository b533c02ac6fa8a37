/*
 * One flight's lifecycle (SPEC §7 "Front ends"): every front end (`aloft
 * run`, `aloft serve`, the ones planned next) starts a flight here and
 * nowhere else, so that missions are recorded, watched, landed and given
 * their status the same way whoever asked for them.
 *
 *   flight_fly(cfg, &out):
 *     record  open the mission in the store (every flight is recorded)
 *     watch   start the watchdog (SPEC §6) on the mission's cancel flag
 *     world   open the simulator in the scene, or the Tello behind its
 *             limits (connect, battery check, takeoff), then the eyes
 *     fly     the given plan (runner) or the task (mission controller)
 *     land    before the outcome is recorded: a landing that fails or is
 *             never acknowledged makes the mission fail (SPEC §7)
 *     status  one mapping from how the plan ended to the stored status
 *     close   the record, then the world
 *
 * Events go to every sink of the configuration (flight_sink), each with
 * typed callbacks, after the store's recorder saw them. The lines a user
 * reads on a terminal are one such sink (flight_progress.h), added by the
 * front ends that want them. A front end encodes
 * the typed outcome (flight_outcome) in its own format at its edge.
 *
 * Threads: flight_fly runs on the caller's thread. Any other thread, or a
 * signal handler, stops the flight with flight_stop on the configuration's
 * stop handle (flight_stop.h). When the watchdog ends a hung flight,
 * on_hang runs on the watchdog's thread (see watchdog.h).
 */
#ifndef ALOFT_MISSION_FLIGHT_H
#define ALOFT_MISSION_FLIGHT_H

#include "drone/scene.h"
#include "drone/sim.h"
#include "drone/mavlink.h"
#include "drone/tello.h"
#include "llm/llm.h"
#include "mission/controller.h"
#include "mission/flight_stop.h"
#include "mission/report.h"
#include "mission/runner.h"
#include "sandbox/sandbox.h"
#include "skills/registry.h"
#include "store/store.h"
#include "vision/options.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* One receiver of a flight's events; every callback may be NULL. They run
 * on the flight's thread, in the order the events happen. */
typedef struct flight_sink {
    /* The mission was recorded as ID in the store at STORE_PATH (the first
     * event). */
    void (*begin)(void *ud, int64_t mission_id, const char *store_path);
    /* A line for a user (no newline) from the flight's parts: connecting,
     * the eyes, the driver's steps, the mission controller's steps (asking
     * the LLM, a plan rejected, replanning, done). */
    void (*note)(void *ud, const char *line);
    /* The world is open (the drone is up): its pose now. */
    void (*world)(void *ud, struct mission_world *w);
    /* An LLM exchange ended (also when it failed or was aborted). */
    void (*llm)(void *ud, mission_llm_kind kind, const llm_message *msgs, int nmsgs,
                const llm_result *res);
    /* LEN more bytes of plan INDEX's cleaned text arrived. */
    void (*plan_text)(void *ud, int index, const char *text, size_t len);
    /* A candidate plan was judged (candidates > 0). */
    void (*candidate)(void *ud, const mission_candidate *c);
    /* Plan INDEX arrived whole or cut short; DIAGNOSTICS NULL when valid. */
    void (*plan)(void *ud, int index, const char *text, size_t len, const char *diagnostics);
    /* A statement of plan INDEX starts running. */
    void (*statement)(void *ud, int index, const char *text, size_t len, int depth);
    /* The scene description the LLM was sent. */
    void (*scene)(void *ud, const char *description);
    /* A skill was called, returned or refused (constraint violation). */
    void (*skill)(void *ud, struct mission_world *w, const skill_event *ev);
    /* A statement ran (runner.h): its first skill call came, or it ended. */
    void (*ran)(void *ud, const runner_statement *st);
    void *ud;
} flight_sink;

#define FLIGHT_MAX_SINKS 4

struct flight_outcome;

typedef struct flight_config {
    /* The drone: a Tello (TELLO, connected and launched by the flight) or
     * the simulator (TELLO NULL, flying SIM's options in SCENE). */
    const tello_config *tello;
    const mavlink_config *mavlink; /* or a MAVLink vehicle (SPEC §9) */
    const char *drone_name;        /* recorded: "sim", "tello:HOST", "mavlink:URL" */
    sim_options sim;               /* time scale, seed, pictures, pose hook */
    bool land;                     /* land at the end (false: a Tello stays up) */
    const vision_options *vision;  /* the eyes, or NULL: the simulator's camera */
    /* The world: the scene the simulator flies, or a Tello's limits (the
     * file SCENE_PATH; NULL: the default limits). SCENE_JSON is recorded
     * (the scene file's text, for replay), or NULL. */
    const scene *scene;
    const char *scene_path;
    const char *scene_json;
    /* What to fly: TASK (the mission controller) or PLAN (LEN bytes). */
    const char *task;
    const char *plan;
    size_t plan_len;
    const char *plan_file; /* recorded: where PLAN came from ("stdin"), or NULL */
    const skill_registry *reg;
    sandbox_limits limits;
    /* The LLM: for the task, and for a plan's probes. */
    const llm_config *llm;
    const char *model;   /* recorded model name, or NULL */
    const char *prompts; /* template directory, or NULL: the built-in ones */
    bool stream;         /* stream interpreting */
    int max_tries;       /* 0: the controller's default */
    int max_replans;     /* -1: the controller's default */
    int candidates;      /* > 0: candidate plans per round (mission_opts) */
    bool no_memory;      /* planning prompts list no remembered objects */
    /* Replay: the recorded LLM replies answer instead of the LLM. */
    store_replay *replies;
    int64_t replay_of;
    /* Recorded with the mission (the parameters a replay flies again). */
    const char *const *skill_dirs;
    int n_skill_dirs;
    const char *db; /* the store (NULL: $ALOFT_DB or the default) */
    /* A store shared by the process's flights (mission_record_begin), used
     * instead of opening DB for this flight; NULL: open DB. */
    store *store;
    /* The flight's stop handle (Ctrl-C, Stop), initialised by the front
     * end (flight_handle_init); NULL: nobody stops it. */
    flight_handle *stop;
    /* The sandbox a plan runs in, and NULL after (verification's gate
     * keeps it); the stop handle has it already. */
    void (*on_sandbox)(void *ud, sandbox *sb);
    void *on_sandbox_ud;
    /* The watchdog ended the hung flight (on its thread): OUT says how.
     * The flight's own thread may never come back. */
    void (*on_hang)(void *ud, const struct flight_outcome *out);
    void *on_hang_ud;
    /* Batch mode: a gate every plan passes before it runs (mission_opts). */
    int (*vet)(void *ud, const char *plan, size_t len, char *why, size_t whylen);
    void *vet_ud;
    flight_sink sinks[FLIGHT_MAX_SINKS];
    int n_sinks;
} flight_config;

/* Fills C with the defaults: the simulator, landing at the end, streaming,
 * the controller's tries and replans. */
void flight_config_defaults(flight_config *c);

/* Adds S to C's sinks; -1 when C has FLIGHT_MAX_SINKS already. */
int flight_add_sink(flight_config *c, const flight_sink *s);

typedef struct flight_outcome {
    /* The mission as recorded (STORE_RUNNING: never recorded, id 0). */
    int64_t mission_id;
    store_status status;
    bool ok;                /* the plan ran to its end and the drone landed */
    bool flown;             /* a plan or task ran: REPORT holds what it did */
    bool landed;            /* false: the landing failed (the drone may be up) */
    bool recorded;          /* false: the store lost the mission's end */
    char error[2048];       /* why not ok, or "" */
    char record_error[700]; /* why not recorded, or "" */
    drone_pose pose;        /* where the drone was at the end */
    runner_outcome run;     /* how the last plan ended */
    int plans, tries, replans, llm_calls;
    double total_ms; /* the whole flight, wall clock */
    /* What flew (calls, logs, result, timings, ...), its mission id, "ok"
     * and "error" included, when FLOWN; a front end encodes it
     * (mission_report_json: the SPEC §2 `run --json` document). Owned:
     * flight_outcome_free. */
    mission_report report;
} flight_outcome;

/* Flies C's plan or task (see the top). Returns 0 when a plan or task
 * flew (OUT->report says what it did, OUT->status how it was recorded),
 * or -1 when the flight ended before (no record, no drone, takeoff
 * failed, ...) with OUT->error. Either way OUT needs flight_outcome_free. */
int flight_fly(const flight_config *c, flight_outcome *out);

void flight_outcome_free(flight_outcome *out);

/* Records C's plan as a mission refused before it took off (plan
 * verification failed): the plan, then the end as failed with WHY. Returns
 * 0 with the mission's id in *ID, or -1 with a message. */
int flight_refuse(const flight_config *c, const char *why, int64_t *id, char *err, size_t errlen);

/* The run parameters recorded with a mission (a JSON object's text,
 * malloc'd, or NULL): what a replay flies again. */
char *flight_params_json(const flight_config *c);

#endif
