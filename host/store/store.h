/*
 * The mission store (SPEC §12): every mission, LLM exchange, plan, executed
 * statement, skill call, constraint violation and scene snapshot, written to
 * SQLite as it happens, plus a memory of objects seen merged across missions.
 *
 * Durability: every store_record_* and store_call_* call returns only after
 * its record is committed, so whatever the drone did before a crash is on
 * disk before the next drone action. Two exceptions need no answer and are
 * handed over without waiting: store_record_scene and store_record_objects
 * (what the drone saw); they are committed with or before the mission's next
 * record, and a failure of theirs is that record's error. One writer thread
 * per store commits the records of all its missions, whatever is queued at
 * once in one transaction (group commit). A mission whose process died is
 * marked "interrupted" by the next store_open and keeps every event it
 * recorded.
 *
 * Errors: functions return 0 (or a valid id / handle) on success and -1 (or
 * NULL) on failure with a one-line message in ERR (which may be NULL).
 *
 * Threads: a store handle may be shared between threads (writes go through
 * its writer thread, reads take a mutex inside); several processes may write one database
 * at the same time (WAL mode, short transactions, a busy timeout).
 */
#ifndef ALOFT_STORE_STORE_H
#define ALOFT_STORE_STORE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The schema version this build writes; store_open migrates older ones and
 * refuses newer ones. */
#define STORE_SCHEMA_VERSION 6

typedef struct store store;
typedef struct store_mission store_mission;

typedef enum store_status {
    STORE_RUNNING,
    STORE_OK,
    STORE_FAILED,
    STORE_CANCELLED,
    STORE_INTERRUPTED,
    STORE_HUNG,    /* the VM did not end: the watchdog landed the drone (SPEC §6) */
    STORE_CRASHED, /* the worker process running the VM died (SPEC §6) */
} store_status;

/* "running", "ok", "failed", "cancelled", "interrupted", "hung". */
const char *store_status_name(store_status st);

/* ---- opening ---------------------------------------------------------- */

enum {
    /* Fail with "no mission database at PATH" instead of creating one. */
    STORE_OPEN_EXISTING = 1 << 0,
    /* fsync the log at every commit (synchronous=FULL): survives power loss,
     * at the price of a disk flush per event. The default (NORMAL) already
     * survives any kill of the process. */
    STORE_OPEN_SYNC_FULL = 1 << 1,
};

/* Resolves the database path: OVERRIDE (from --db) if not NULL, else
 * $ALOFT_DB, else $XDG_DATA_HOME/aloft/aloft.db, else
 * $HOME/.local/share/aloft/aloft.db. Writes it to OUT. Returns 0, or -1 if
 * no path can be formed or it does not fit. */
int store_resolve_path(const char *override, char *out, size_t outlen, char *err, size_t errlen);

/* Opens (creating the file and its directories unless STORE_OPEN_EXISTING)
 * the database at PATH, or at the resolved default when PATH is NULL.
 * Migrates an older schema, refuses a newer one or a file that is not an
 * aloft database with a clear message, and marks missions left "running" by
 * a dead process as "interrupted". Beside the database it keeps PATH-wal,
 * PATH-shm (SQLite's) and PATH-missions (locks of running missions).
 * Returns NULL on error. */
store *store_open(const char *path, int flags, char *err, size_t errlen);

/* Closes the database. Missions still open are left "running" and count
 * as interrupted from then on (the next store_open marks them so): end
 * them first. NULL is allowed. */
void store_close(store *s);

/* The path the store was opened at. */
const char *store_path(const store *s);

/* ---- recording a mission ------------------------------------------------ */

typedef struct store_mission_info {
    const char *task;        /* the task text, or NULL for a --plan mission */
    const char *drone;       /* "sim", "tello:HOST" */
    const char *model;       /* LLM model name, or NULL */
    const char *scene_json;  /* the scene file's text, for replay; or NULL */
    const char *params_json; /* run options as a JSON object text, or NULL */
    int64_t seed;
    int64_t replay_of; /* id of the mission this one replays, or 0 */
} store_mission_info;

/* Starts recording a mission: inserts it as "running" with the current time
 * as start (t_ms 0). The mission's world, in which its sightings are
 * remembered, is its scene ("scene:" and a hash of SCENE_JSON: one world per
 * scene file, whichever path it was read from), else its drone ("tello:HOST",
 * "sim"), else "default". Returns a handle owned by the caller (free it with
 * store_mission_end), or NULL. */
store_mission *store_mission_begin(store *s, const store_mission_info *info, char *err,
                                   size_t errlen);

/* The mission's id (the ID of `aloft log ID`). */
int64_t store_mission_id(const store_mission *m);

/* Milliseconds since the mission began (monotonic clock). */
double store_mission_elapsed_ms(const store_mission *m);

/* Ends the mission with STATUS (not STORE_RUNNING), an error text (or NULL)
 * and the plan's result as JSON text (or NULL), and frees the handle even on
 * failure. Returns 0 or -1. */
int store_mission_end(store_mission *m, store_status status, const char *error,
                      const char *result_json, char *err, size_t errlen);

/* Writes the mission's end (STATUS, ERROR) but keeps the handle open: for
 * the watchdog (SPEC §6), which ends a hung mission as STORE_HUNG while the
 * mission's own thread may still hold M. Thread-safe with that thread's
 * records. A later store_mission_end writes over it. Returns 0 or -1. */
int store_mission_mark(store_mission *m, store_status status, const char *error, char *err,
                       size_t errlen);

/* Frees the handle without ending the mission, as if the process had died:
 * it stays "running" and is marked interrupted by the next store_open (even
 * while this store stays open for other missions). For callers that lose
 * their store mid-mission. */
void store_mission_abandon(store_mission *m);

/* In every record below, T_MS is the event's time in milliseconds since the
 * mission began; pass a negative value to use store_mission_elapsed_ms(). The
 * record is committed before the call returns. */

typedef enum store_llm_kind {
    STORE_LLM_PLAN,
    STORE_LLM_RETRY,
    STORE_LLM_REPLAN,
    STORE_LLM_PROBE,
} store_llm_kind;

/* "plan", "retry", "replan", "probe"; and back (-1 if unknown). */
const char *store_llm_kind_name(store_llm_kind k);
int store_llm_kind_parse(const char *name);

typedef struct store_llm {
    store_llm_kind kind;
    double t_ms;       /* when the request was sent */
    const char *model; /* or NULL */
    const char *prompt;
    const char *response;                     /* the whole reply text ("" if none) */
    double latency_ms;                        /* request sent to last byte */
    double ttft_ms;                           /* request sent to first token; < 0 if unknown */
    int64_t prompt_tokens, completion_tokens; /* < 0 if unknown */
    const char *error;                        /* transport/API error, or NULL */
} store_llm;

/* Records one LLM exchange. Returns its id (> 0), or -1. */
int64_t store_record_llm(store_mission *m, const store_llm *x, char *err, size_t errlen);

/* Records a plan as received (from the LLM exchange LLM_ID, or 0 for a
 * user's --plan) with the checker's verdict and its diagnostics (or NULL).
 * Returns the plan's number within the mission (1, 2, ...), or -1. */
int store_record_plan(store_mission *m, double t_ms, int64_t llm_id, const char *text, bool ok,
                      const char *diagnostics, char *err, size_t errlen);

/* How many plans the mission has recorded. Plans are numbered in recording
 * order, so a plan still streaming in (recorded once complete) will be
 * number store_mission_plans(m) + 1: its statements can name it already. */
int store_mission_plans(const store_mission *m);

/* Records that a statement of plan PLAN_NO (as returned by store_record_plan)
 * started executing: its position and source text. */
int store_record_statement(store_mission *m, double t_ms, int plan_no, int line, int col,
                           const char *text, char *err, size_t errlen);

/* Records that a skill call starts, before the skill acts: the skill's full
 * name, its arguments as JSON array text (e.g. "[45]"; NULL = "[]") and its
 * DEPTH (0 = called by the plan, 1+ = inside a high-level skill). Calls are
 * numbered in the order they start, like `run --json`'s "calls". Returns the
 * call's id for store_call_end, or -1. Malformed JSON is refused. */
int64_t store_call_begin(store_mission *m, double t_ms, const char *skill, const char *args_json,
                         int depth, char *err, size_t errlen);

typedef struct store_call_result {
    const char *ret_json; /* JSON value text, e.g. "true"; NULL = "null" */
    bool has_pose;
    double x, y, z, yaw; /* pose after the call (cm, degrees) */
    double sim_ms;       /* simulated time the call took; < 0 if unknown */
    double wall_ms;      /* wall-clock time the call took; < 0 if unknown */
} store_call_result;

/* Records how call CALL_ID (from store_call_begin) ended. A call that never
 * ends (the process died) stays in the log as not done. */
int store_call_end(store_mission *m, int64_t call_id, const store_call_result *r, char *err,
                   size_t errlen);

/* Records a refused motion (SPEC §10): the skill, its args (JSON array text
 * or NULL) and the reason. */
int store_record_violation(store_mission *m, double t_ms, const char *skill, const char *args_json,
                           const char *reason, char *err, size_t errlen);

/* Records what the drone saw: the scene description of SPEC §11 and the pose
 * it was seen from (HAS_POSE false if unknown). Returns without waiting for
 * the commit (see the top): -1 only when out of memory. */
int store_record_scene(store_mission *m, double t_ms, const char *description, bool has_pose,
                       double x, double y, double z, double yaw, char *err, size_t errlen);

/* One candidate plan of a round of `run --candidates K`. */
typedef struct store_candidate {
    int64_t llm_id;          /* the exchange it came from, or 0 */
    int round;               /* 1, 2, ...: the request round of the mission */
    int index;               /* 0-based within the round */
    const char *text;        /* the plan as cleaned from the reply ("" if none) */
    bool accepted;           /* the checker accepted it */
    const char *diagnostics; /* why not, or NULL */
    int verify_failed;       /* sampled worlds it failed; < 0: not verified */
    int64_t tokens;          /* its completion tokens; < 0 if unknown */
    bool chosen;             /* the one flown */
} store_candidate;

/* Records one candidate plan. Returns 0 or -1. */
int store_record_candidate(store_mission *m, double t_ms, const store_candidate *c, char *err,
                           size_t errlen);

/* ---- memory of objects -------------------------------------------------- */

/* Sightings of the same class closer than this (cm) are one object. */
#define STORE_OBJECT_MERGE_CM 50.0
/* Positions farther than this from the origin (10,000 km) are refused. */
#define STORE_OBJECT_MAX_CM 1e9

typedef struct store_object {
    int64_t id;
    char cls[48];
    double x, y, z; /* running mean of the sighting positions (cm) */
    double conf;    /* highest confidence seen */
    int64_t sightings;
    char first_seen[32], last_seen[32]; /* ISO-8601 UTC */
    int64_t last_mission;
    char world[48]; /* see store_mission_begin; "" if recorded before worlds were kept */
} store_object;

/* Records a sighting of an object of class CLS at world position (x, y, z)
 * with confidence CONF: merged into the nearest remembered object of that
 * class within STORE_OBJECT_MERGE_CM in the mission's world (from any
 * mission in that world), or remembered as a new one. A position that is
 * not a number or beyond STORE_OBJECT_MAX_CM is refused. Returns the
 * object's id, or -1. */
int64_t store_record_object(store_mission *m, const char *cls, double x, double y, double z,
                            double conf, char *err, size_t errlen);

/* One sighting of a view (store_record_objects). */
typedef struct store_sighting {
    const char *cls;
    double x, y, z, conf;
} store_sighting;

/* Records the N sightings of one view as store_record_object does, in one
 * transaction: many missions sharing a store wait for its lock once per
 * view, not once per object. On a refused sighting nothing of the view is
 * recorded. Returns 0, or -1 with a message; a valid view is handed over
 * without waiting for the commit (see the top). */
int store_record_objects(store_mission *m, const store_sighting *v, int n, char *err,
                         size_t errlen);

/* The remembered objects (of class CLS, or all when CLS is NULL), most
 * recently seen first, at most MAX. Returns how many were written to OUT,
 * or -1. */
int store_objects(store *s, const char *cls, store_object *out, int max, char *err, size_t errlen);

/* The remembered objects of mission M's world (see store_mission_begin),
 * most recently seen first, at most MAX, into OUT, with how many seconds
 * ago each was last seen into AGE_S (>= 0). Returns how many, or -1. It
 * does not wait for the views the mission just handed over (the objects in
 * view, which the prompt describes as seen anyway); store_objects does. */
int store_world_objects(store_mission *m, store_object *out, double *age_s, int max, char *err,
                        size_t errlen);

/* The remembered objects as JSON, most recently seen first:
 * [{"id","class","x","y","z","conf","sightings","first_seen","last_seen",
 *   "last_mission","world"}] ("world" null if unknown). NULL on error. */
cJSON *store_objects_json(store *s, char *err, size_t errlen);

/* ---- queries ------------------------------------------------------------ */

/* The mission list of `aloft log --json`, oldest first:
 * [{"id","task","status","started","duration_ms"}]. NULL on error. */
cJSON *store_list_json(store *s, char *err, size_t errlen);

/* What a --plan mission (task NULL) flew, for the readable log: the plan
 * file as given to `run --plan` (params "plan_file"), then ": " and the
 * first statement of its first plan (cut at 60 bytes with "..."), e.g.
 * "square.ms: 4{mf(50);tc(90)}"; the statement alone for missions recorded
 * without the file's name.
 * Returns 0, or -1 with "no mission ID" if there is none. */
int store_plan_label(store *s, int64_t id, char *out, size_t outlen, char *err, size_t errlen);

/* One mission as `aloft log --json ID` prints it:
 * {"mission":{..},"plans":[..],"events":[{"t_ms","kind","skill","args","ret"}],
 *  "llm_calls":[{"kind","latency_ms","prompt_tokens","completion_tokens"}],
 *  "candidates":[{"round","index","text","accepted","diagnostics",
 *                 "verify_failed","tokens","chosen"}]} (candidates: [] unless
 * the mission was flown with --candidates).
 * Events hold statements, skill calls, violations and scene snapshots in
 * the order they happened. NULL with "no mission ID" if there is none. */
cJSON *store_mission_json(store *s, int64_t id, char *err, size_t errlen);

/* ---- replay ------------------------------------------------------------- */

/* The recorded LLM replies of a mission, in the order their requests were
 * sent (a probe asked while a streamed plan was arriving comes after that
 * plan's request, though its exchange ended first), to answer a re-flown
 * mission's LLM requests without calling an LLM. */
typedef struct store_replay store_replay;

/* Loads the replies of mission ID. Returns NULL with a message if the
 * mission does not exist. */
store_replay *store_replay_open(store *s, int64_t id, char *err, size_t errlen);

/* How many replies were recorded. */
int store_replay_count(const store_replay *r);

/* The recorded task text and scene JSON of the mission (NULL if none);
 * owned by R. */
const char *store_replay_task(const store_replay *r);
const char *store_replay_scene(const store_replay *r);
int64_t store_replay_seed(const store_replay *r);

/* The mission replayed (its id). */
int64_t store_replay_mission(const store_replay *r);

/* The recorded run options (JSON object text) and LLM model, or NULL; owned
 * by R. */
const char *store_replay_params(const store_replay *r);
const char *store_replay_model(const store_replay *r);

/* The plans the mission received, in order: how many, and plan I (0-based;
 * NULL when out of range), owned by R. A --plan mission has one. */
int store_replay_plans(const store_replay *r);
const char *store_replay_plan(const store_replay *r, int i);

/* The next recorded reply, for a request of kind KIND. Returns the reply
 * text (owned by R, valid until store_replay_free), or NULL with a message
 * when the replay has diverged: no reply is left, or the recorded one
 * answered a different kind of request. Once diverged, every later call
 * fails with the same message: replies after the divergence answer other
 * questions than the ones being asked. */
const char *store_replay_next(store_replay *r, store_llm_kind kind, char *err, size_t errlen);

/* How the exchange of the reply last returned by store_replay_next failed
 * (its recorded error), or NULL if it did not. Owned by R. */
const char *store_replay_error(const store_replay *r);

void store_replay_free(store_replay *r);

/* Compares the skill calls (skill, args, ret, in order) of missions A and B.
 * Returns 1 if they match, 0 if not (the first difference in WHY), -1 on
 * error. */
int store_calls_match(store *s, int64_t a, int64_t b, char *why, size_t whylen);

/* The same, except that the results of the skills named in ANY_RESULT (a
 * NULL-terminated list, or NULL) only need to be of the same JSON type: for
 * results that name where this run put something, like a picture's path,
 * which differs from run to run. */
int store_calls_match_except(store *s, int64_t a, int64_t b, const char *const *any_result,
                             char *why, size_t whylen);

#endif
