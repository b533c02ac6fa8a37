/*
 * The benchmark suite's success checks (examples/benchmark, SPEC §15): a
 * task setup's check.json says what must hold after the flight, judged on the
 * flight's `run --json` report and the setup's scene. The semantics are those
 * of examples/benchmark/run_suite.py (keys ok, result, answer, near, closer,
 * facing, logs_contain, called, max_calls, violations), so that `aloft eval`
 * scores LLM flights exactly as the suite judges its reference plans.
 */
#ifndef ALOFT_EVAL_CHECK_H
#define ALOFT_EVAL_CHECK_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Judges REPORT (a `run --json` document) against WANT (a check.json) in
 * SCENE (the scene file's document; object ids as the simulator assigns
 * them: explicit ids, then CLASS_N). Returns the number of failed
 * expectations (0: the setup passes) and writes them, joined by "; ", into
 * WHY (cut to WHYLEN). A check naming an unknown object, a malformed key or a
 * report lacking what a key needs counts as a failure, never as a pass. */
int evalcheck_judge(const cJSON *report, const cJSON *scene, const cJSON *want, char *why,
                    size_t whylen);

#endif
