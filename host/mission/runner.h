/*
 * Running one plan: the plan runner compiles MiniSpec, binds the skills,
 * runs the plan in the sandbox on a mission world (world.h) and collects
 * the SPEC §2 JSON.
 *
 * The mission controller (LLM planning, replans) builds on these; `aloft run
 * --plan` and `aloft lua --scene` use them directly.
 */
#ifndef ALOFT_MISSION_RUNNER_H
#define ALOFT_MISSION_RUNNER_H

#include "minispec/stream.h"
#include "mission/report.h"
#include "mission/world.h"
#include "sandbox/sandbox.h"
#include "skills/skills.h"
#include "store/store.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdio.h>

/* How a run ended, for callers that act on it (the mission controller
 * replans on REPLAN and FAILED, retries on REJECTED). */
typedef enum runner_status {
    RUNNER_OK = 0,
    RUNNER_REJECTED,  /* the plan did not pass the checker */
    RUNNER_FAILED,    /* a Lua or skill error, or a limit (see .sandbox) */
    RUNNER_REPLAN,    /* the plan called replan */
    RUNNER_CANCELLED, /* sandbox_cancel (Ctrl-C, stop button) */
    RUNNER_CRASHED,   /* the worker process running the VM died or was cut off */
    RUNNER_HUNG,      /* the worker did not end by its deadline or cancel: killed */
} runner_status;

/* The status a mission whose last plan ended with ST is recorded with (a
 * flight's other facts, the landing and the cancel flag, in flight.c). */
store_status runner_store_status(runner_status st);

typedef struct runner_outcome {
    runner_status status;
    sandbox_status sandbox; /* how the sandbox run ended */
    char reason[1024];      /* the report's "error", or "" */
    int violations;         /* constraint refusals recorded */
} runner_outcome;

/* A statement (or block header) of a plan that ran: it made its first skill
 * call, or ended without one. Shown and recorded only then, so that a
 * statement the plan never reached (a streamed plan's unfinished last one)
 * is never shown as run. */
typedef struct runner_statement {
    int plan;             /* the plan's number in the mission, from 1 */
    int line, col, depth; /* where it is in the plan, and its block depth */
    const char *text;     /* LEN bytes of the plan's text */
    size_t len;
    double sim_s; /* when it started: simulated seconds (real ones on a real drone) */
    double t_ms;  /* when it started, since the mission began */
} runner_statement;

typedef struct runner_opts {
    const skill_registry *reg;
    mission_world *world;
    const char *plan; /* MiniSpec text */
    size_t plan_len;
    sandbox_limits limits;
    int max_loop; /* 0 = MiniSpec default */
    /* Lines for a user (a plan refused, failed, done); NULL = quiet. The
     * skill calls and statements reach a user through on_skill_event and
     * on_statement (mission/flight_progress.h prints them). */
    FILE *progress;
    /* probe: the LLM; NULL makes probe fail with a clear error. */
    int (*probe)(void *ud, const char *question, char *out, size_t outlen, char *err,
                 size_t errlen);
    void *probe_ud;
    /* Called with the sandbox before the plan runs, and with NULL after
     * (for Ctrl-C: cli_cancel_on_signal). */
    void (*on_sandbox)(void *ud, sandbox *sb);
    void *on_sandbox_ud;
    runner_outcome *outcome; /* filled when not NULL */
    /* Run the VM in this process even when workers are enabled (worker/vm.h):
     * verification, whose worlds are simulated. */
    bool in_process;
    /* Every skill event, after it was recorded; may be NULL (the mission
     * controller hooks in here). */
    void (*on_skill_event)(void *ud, const skill_event *ev);
    void *on_skill_event_ud;
    /* Every statement that ran, after it was recorded; may be NULL. */
    void (*on_statement)(void *ud, const runner_statement *st);
    void *on_statement_ud;
    /* Mission start (clock_now_ms), which call times and first_action_ms
     * count from; 0 = the recorder's start, or when the run starts. */
    double t0_ms;
    /* The store's recorder (mission/record.h): the plan (runner_run), the
     * statements that ran and every skill call and violation are recorded
     * as they happen, each before progress shows it; NULL = not recorded.
     * Passed on through the mission controller's sessions. */
    struct mission_record *record;
} runner_opts;

/* Compiles and runs the plan. Always returns the SPEC §2 `run --json`
 * document (never NULL unless out of memory): "ok" says whether the plan
 * compiled and ran to its end without error, cancel or replan request. */
cJSON *runner_run(const runner_opts *o);

/* runner_run with the report as typed data into REP (which needs
 * mission_report_free): what the flight uses. */
void runner_run_report(const runner_opts *o, mission_report *rep);

/* ---- sessions: the pieces runner_run is made of --------------------------
 *
 * A session is one mission's sandbox with the skills bound, on O's world:
 * budgets (instructions, memory, wall clock, output) are per mission, so the
 * mission controller runs every plan of a mission (tries, replans) in one
 * session, feeding each plan's stream events as they arrive.
 *
 *   s = runner_session_open(o, err, n)
 *   for each plan:  runner_session_begin(s)
 *                   runner_session_event(s, &ev, plan_text, ...)  per event
 *                   runner_session_end(s, st, err, &outcome)
 *   runner_session_report(s, &report, ok)
 */
typedef struct runner_session runner_session;

/* Creates the sandbox, binds the skills (with O's probe and hooks) and calls
 * O->on_sandbox with it. O must outlive the session. NULL with a message. */
runner_session *runner_session_open(const runner_opts *o, char *err, size_t errlen);

struct vm;
/* The session's VM (worker/vm.h: a worker process, or in process). */
struct vm *runner_session_vm(runner_session *s);

/* The session's sandbox and skill context (for cancel and counters). With a
 * worker process the sandbox is the host's side of the VM: cancelling it
 * cancels the VM; running code in it runs in this process. */
sandbox *runner_session_sandbox(runner_session *s);
skill_ctx *runner_session_ctx(runner_session *s);

/* Starts a new plan: a fresh variable table, the replan flag cleared.
 * Returns 0, or -1 when memory ran out. */
int runner_session_begin(runner_session *s);

/* Runs one stream event of the current plan (see minispec/stream_exec.h);
 * SRC is the plan text the event's offsets point into (for progress).
 * *RAN (may be NULL) tells whether the event ran a statement or condition. */
sandbox_status runner_session_event(runner_session *s, const ms_event *ev, const char *src,
                                    bool *ran, char *err, size_t errlen);

/* True once the current plan ended (`->`, rp or a failure). */
bool runner_session_finished(const runner_session *s);

/* Ends the current plan that ran with status ST (ERR its message): hovers,
 * fills OUT (the replan flag turns OK into RUNNER_REPLAN) and keeps the
 * plan's result for the report. */
void runner_session_end(runner_session *s, sandbox_status st, const char *err, runner_outcome *out);

/* Fills REP with what the session did: ok/result of the last plan when OK,
 * logs, pose, excursion, calls, violations, first_action_ms, exec_ms and
 * total_ms; calls O->on_sandbox with NULL and frees the session. */
void runner_session_report(runner_session *s, mission_report *rep, bool ok);

/* Prints V as MiniSpec shows a value: None, True/False, %.4g, 'text' (a
 * table: its type name, 'table'). For progress lines. */
void runner_print_value(FILE *f, const skill_value *v);

#endif
