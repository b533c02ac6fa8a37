/*
 * Plan verification in front of a flight (`run --verify`): a plan flies for
 * real only after it passed every sampled world (verify.h).
 *
 * A gate is handed to the mission controller as its vet hook (each plan an
 * LLM returns is verified before it runs) or called once for a given plan.
 * Its reports pile up in .reports, one per plan verified, for the mission's
 * JSON report ("verify").
 */
#ifndef ALOFT_VERIFY_GATE_H
#define ALOFT_VERIFY_GATE_H

#include "verify/verify.h"

#include <cjson/cJSON.h>
#include <stdio.h>

typedef struct verify_gate {
    /* reg, scene, worlds, seed, limits: filled by the caller; the plan and
     * the sandbox hook are the gate's. */
    verify_opts opts;
    FILE *progress; /* failing worlds and the summary; NULL = quiet */
    /* Where Ctrl-C goes (cli_cancel_sandbox): each world's sandbox while it
     * flies, the mission's sandbox (verify_gate_mission_sandbox) between. */
    void (*cancel_to)(sandbox *sb);
    sandbox *mission_sb;
    cJSON *reports; /* array, created on the first report; the caller frees it */
    /* When set, each verification starts from this world's pose at that
     * moment (a retry or a replan goes on from where the drone is); home,
     * the centre of the geofence, stays the scene's start. */
    struct mission_world *from;
} verify_gate;

/* Verifies PLAN (UD is the gate). Returns 0 when every world passed, else
 * the number of worlds that failed (> 0) or -1 when verification was
 * cancelled or could not run, with WHY saying how many worlds failed and
 * how the first one did (or why it did not run). Same signature and
 * contract as mission_opts.vet. */
int verify_gate_check(void *ud, const char *plan, size_t len, char *why, size_t whylen);

/* The mission's sandbox hook (runner_opts.on_sandbox, UD is the gate): keeps
 * the sandbox so that Ctrl-C goes back to it after a verification. */
void verify_gate_mission_sandbox(void *ud, sandbox *sb);

/* The SPEC §2 run report of a plan that did not fly: "ok" false, ERROR, the
 * pose at the scene's start and the gate's reports as "verify" (taken). */
cJSON *verify_gate_refusal(verify_gate *g, const char *plan, size_t len, const char *error);

#endif
