/*
 * Scores of `aloft eval` (SPEC §2 `eval --json`): one evalrun per flight,
 * judged by the task's check, and the per-task and overall summary.
 */
#ifndef ALOFT_EVAL_SCORE_H
#define ALOFT_EVAL_SCORE_H

#include "eval/suite.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum evalrun_state {
    EVALRUN_SCORED,    /* judged: success or failure */
    EVALRUN_NO_LLM,    /* the LLM could not be reached (or never answered) */
    EVALRUN_NO_REPORT, /* the flight printed no report */
    EVALRUN_NOT_FLOWN, /* skipped: eval stopped before its turn */
} evalrun_state;

typedef struct evalrun {
    int task, setup, repeat;
    evalrun_state state;
    bool success;
    double tries, replans, violations;
    double first_action_ms; /* NAN: no action */
    double total_ms;
    double prompt_tokens, completion_tokens, cached_tokens;
    char why[512]; /* the failed expectations, or why it was not scored */
} evalrun;

/* Fills R (task, setup, repeat already set) from the flight's stdout OUT and
 * exit status: parses the `run --json` report and judges it with SETUP's
 * check. */
void evalscore_flight(evalrun *r, const char *out, int status, const char *stderr_tail,
                      const evalsuite_setup *setup);

typedef struct evalscore_opts {
    const char *model, *llm_url;
    int repeat;
    double price_in, price_out; /* per million tokens; < 0: unknown, no cost */
} evalscore_opts;

/* The `eval --json` document of SPEC §2 for the N runs of SUITE (runs not
 * scored are left out). Beyond the SPEC's keys: "violations" per task and
 * overall; overall "cached_tokens", "tries_mean", "replans_mean" and
 * "total_ms_median"; "cost" when a price is given. NULL when out of memory. */
cJSON *evalscore_document(const evalsuite *suite, const evalrun *runs, int n,
                          const evalscore_opts *o);

#endif
