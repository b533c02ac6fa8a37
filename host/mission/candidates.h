/*
 * Candidate plans (`run --candidates K`, SPEC §7): a round asks the LLM for
 * K plans at once, judges each (the checker, then the verification when
 * the mission has one) and picks the one to fly: accepted, passing every
 * sampled world, then the fewest tokens (then the first). None flyable:
 * the round is a failed try, and the retry prompt carries the closest one
 * (accepted with the fewest failing worlds, else the first reply).
 *
 * K at once: one request with OpenAI's `n` = K. A server that answers it
 * with one reply does not know `n` (Ollama, llama.cpp's server): the round
 * asks K - 1 more times, one request each, and so do all later rounds; a
 * server that refuses `n` (HTTP 400 or 422) is asked K times. A server
 * that returns fewer than K (but more than one) is taken at its word. The
 * mode, the requests and what they cost are in the report
 * ("candidates_cost"); every candidate is in "candidates" and goes to the
 * observer (and so to the store).
 *
 * Streaming is off: a plan is judged whole before it may fly.
 */
#ifndef ALOFT_MISSION_CANDIDATES_H
#define ALOFT_MISSION_CANDIDATES_H

#include "llm/llm.h"
#include "mission/events.h"
#include "mission/report.h"
#include "textbuf.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#define MISSION_CANDIDATES_MAX 8

/* What a round needs from the mission controller. */
typedef struct candidates_ops {
    /* One request for N replies (N <= 1: `n` not sent); as llm_call. */
    int (*ask)(void *ud, mission_llm_kind kind, int n, llm_result *res);
    /* The checker's verdict on a cleaned plan; diagnostics into DIAG. */
    bool (*check)(void *ud, const char *plan, size_t len, textbuf *diag);
    /* mission_opts.vet: 0 passes, > 0 worlds failed, < 0 could not run. */
    int (*vet)(void *ud, const char *plan, size_t len, char *why, size_t whylen);
    void *vet_ud;
    bool (*cancelled)(void *ud);
    mission_observer obs;
    FILE *progress;
    void *ud;
} candidates_ops;

typedef enum candidates_mode {
    CANDIDATES_UNKNOWN = 0, /* not asked yet */
    CANDIDATES_N,           /* the server honours `n` */
    CANDIDATES_SEPARATE,    /* one request per candidate */
} candidates_mode;

/* The mission's candidate rounds: their mode, cost and report entries. */
typedef struct candidates {
    int k;
    candidates_mode mode;
    int rounds, requests, received;
    long prompt_tokens, completion_tokens, unflown_tokens;
    bool tokens_estimated;
    double llm_ms, judge_ms;
    report_candidates list; /* every candidate judged, for "candidates" */
} candidates;

/* Starts the state of a mission asking K (1..MISSION_CANDIDATES_MAX). */
void candidates_init(candidates *cs, int k);
void candidates_free(candidates *cs);

/* One round for a request of KIND. Returns 1 with the plan to fly in
 * *CHOSEN (malloc'd, LEN bytes); 0 when none may fly, with the closest
 * plan in PLAN and why in DIAG (a failed try); -1 when no reply came at
 * all, with the failed request's result in *FAIL (to free). */
int candidates_round(candidates *cs, const candidates_ops *ops, mission_llm_kind kind,
                     char **chosen, size_t *len, textbuf *plan, textbuf *diag, llm_result *fail);

/* Gives the run report REP "candidates" (the array) and "candidates_cost"
 * (mode, requests, tokens, time). */
void candidates_report(candidates *cs, mission_report *rep);

/* "n", "separate" or "unknown". */
const char *candidates_mode_name(candidates_mode m);

#endif
