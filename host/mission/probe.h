/*
 * probe for a flight of a given plan (`aloft run --plan`): a plan written
 * by hand (or by TypeFly) may still ask the LLM about the view (`q`, `p`, `sa`), so the configured
 * LLM
 * (--llm-url/--model/environment, as for --task) answers it with the same
 * probe prompt the mission controller sends: the question and the scene
 * the drone sees now.
 */
#ifndef ALOFT_MISSION_PROBE_H
#define ALOFT_MISSION_PROBE_H

#include "llm/llm.h"
#include "mission/controller.h"
#include "mission/runner.h"

typedef struct run_probe {
    llm_config cfg;
    const char *prompts_dir; /* --prompts DIR, or NULL: the built-in templates */
    mission_world *world;
    const atomic_bool *cancel;
    mission_observer obs; /* records each exchange and scene (any hook may be NULL) */
    int calls;            /* LLM requests made */
} run_probe;

/* Answers QUESTION into OUT (runner_opts.probe; UD is a run_probe). The
 * prompts are loaded at each call: most plans never probe. */
int run_probe_ask(void *ud, const char *question, char *out, size_t outlen, char *err,
                  size_t errlen);

/* The end of a probe's LLM call that returned RC (llm_call's 0 or -1): the
 * answer trimmed into OUT, or "the LLM did not answer: ..." into ERR.
 * Frees RES; returns 0 or -1. The mission controller's probe ends the
 * same way. */
int probe_reply(int rc, llm_result *res, char *out, size_t outlen, char *err, size_t errlen);

#endif
