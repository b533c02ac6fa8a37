/*
 * The mission controller (SPEC §7): a task in plain English to a flown
 * mission. Task → scene snapshot → planning prompt → LLM reply streamed
 * through the plan cleaner (llm/plan_text.h) into the incremental MiniSpec
 * parser → each statement run as soon as it is complete, while the rest of
 * the reply is still arriving → done, or a bounded retry / replan.
 *
 *   - A plan that fails the checker (whole, or mid-stream after part of it
 *     ran) or holds no plan at all is a failed try: the retry prompt carries
 *     the plan, the diagnostics and the statements already run. At most
 *     max_tries plans are asked for by planning and retry requests together.
 *   - So is a reply the server cut short (LLM_E_TRUNCATED: finish_reason
 *     "length" or "content_filter", or a stream without a finish): the
 *     statements its text proved complete ran as they streamed, the pending
 *     last one never runs (in batch mode none of it runs), and the retry
 *     prompt says why.
 *   - rp, a failed skill (a Lua error raised inside one, e.g. a probe that
 *     failed) or a constraint refusal stops the plan and asks for a new one
 *     with the previous plan, what ran and why: at most max_replans times.
 *   - Limits (instructions, memory, wall clock) end the mission: budgets are
 *     per mission, so every plan of a mission runs in one sandbox (a runner
 *     session) on one world; the drone's pose carries over. The wall clock
 *     (limits.timeout_ms) bounds the LLM too: each request gets only the
 *     mission's remaining time (llm_request.budget_ms), retries and backoff
 *     included, and none is sent once it is spent.
 *   - Batch mode (stream = false) asks for the whole reply, cleans and checks
 *     it whole, then feeds it through exactly the same executor: for the same
 *     replies, a valid plan makes the same skill calls either way.
 *
 * The LLM is pluggable (mission_llm): the default calls llm_call; a replay of
 * recorded replies can stand in. An observer sees every exchange, plan and
 * statement, for the store.
 */
#ifndef ALOFT_MISSION_CONTROLLER_H
#define ALOFT_MISSION_CONTROLLER_H

#include "llm/llm.h"
#include "llm/prompt.h"
#include "mission/events.h"
#include "mission/memory.h"
#include "mission/runner.h"

#include <stdatomic.h>
#include <stdbool.h>

/* Where replies come from. COMPLETE answers REQ (messages, delta callback,
 * cancel flag) like llm_call: streaming when STREAM, else one delta with the
 * whole text; fills OUT (released by the caller with llm_result_free) and
 * returns 0, or -1 with OUT->status and OUT->error saying why. It is called
 * on the controller's thread, also from inside another call's delta callback
 * (a probe during a streamed plan). */
typedef struct mission_llm {
    int (*complete)(void *ud, mission_llm_kind kind, bool stream, const llm_request *req,
                    llm_result *out);
    void *ud;
} mission_llm;

/* The default source: llm_call with CFG (its stream field is overridden per
 * request). CFG must outlive the missions that use it. */
mission_llm mission_llm_default(const llm_config *cfg);

/* Host overhead of stream interpreting: for each reply delta that completed
 * a statement which then called a skill, the time from the delta's arrival
 * in the controller to that skill call. */
typedef struct mission_stats {
    int overhead_n;
    double overhead_first_us; /* the mission's first such statement; -1 if none */
    double overhead_sum_us;
    double overhead_max_us;
} mission_stats;

typedef struct mission_opts {
    /* reg, world, limits, max_loop, progress, on_sandbox, on_skill_event as
     * for runner_run; plan, probe and outcome are the controller's own. */
    runner_opts run;
    const char *task;
    const prompt_set *prompts;
    mission_llm llm;
    bool stream;     /* stream interpreting (default true) */
    int max_tries;   /* plans asked for by plan + retry requests (default 3, >= 1) */
    int max_replans; /* default 3, >= 0 */
    /* Set from any thread or a signal handler to cancel the mission: the
     * in-flight LLM request ends and the sandbox stops. The caller should
     * also sandbox_cancel the sandbox (on_sandbox hands it over) so that a
     * running skill stops at once. May be NULL. */
    const atomic_bool *cancel;
    mission_observer obs;
    mission_stats *stats; /* filled when not NULL */
    /* Batch mode only (stream = false): called with each plan that passed
     * the checker, before it runs; returning non-zero refuses it with the
     * message in WHY, and the plan counts as a failed try (plan
     * verification, `run --verify`); a positive value is the number of
     * sampled worlds the plan failed, by which candidate plans rank.
     * NULL = every valid plan runs. */
    int (*vet)(void *ud, const char *plan, size_t len, char *why, size_t whylen);
    void *vet_ud;
    runner_outcome *outcome; /* how the last plan ended, when not NULL */
    /* > 0: ask for this many candidate plans per request round and fly the
     * best (mission/candidates.h; 1..MISSION_CANDIDATES_MAX, clamped);
     * turns stream interpreting off. 0: one plan per request. */
    int candidates;
    /* The store's memory of this world's objects: those out of view go
     * into planning prompts (mission/memory.h). recall NULL: none. */
    mission_memory memory;
} mission_opts;

/* Fills O with the defaults (stream on, 3 tries, 3 replans). */
void mission_opts_defaults(mission_opts *o);

/* Flies the task. Always returns the SPEC §2 `run --json` document (never
 * NULL unless memory ran out); "ok" says whether a plan ran to its end
 * without error, cancel or pending replan. */
cJSON *mission_run(const mission_opts *o);

/* mission_run with the report as typed data into REP (which needs
 * mission_report_free): what the flight uses. */
void mission_run_report(const mission_opts *o, mission_report *rep);

#endif
