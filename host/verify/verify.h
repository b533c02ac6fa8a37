/*
 * Plan verification (SPEC §14): before a plan flies, fly it in N worlds
 * sampled from the scene, at instant simulated time, behind the same
 * constraint guard a real flight has, and report every world where it goes
 * wrong.
 *
 * World 0 is the scene exactly as written. World i > 0 is drawn from a
 * generator seeded with (seed, i) alone, so any world can be flown again on
 * its own: objects may be missing (each with probability 1/5) or moved (up
 * to 30 cm sideways), detections may be missed (a miss rate up to 0.3) and
 * noisy, and probe, which has no LLM here, answers with a random plausible
 * value: True/False for a yes/no question, a count for "how many", else the
 * name of an object of the world (or a number for a size or distance).
 * A failing world lists what changed: objects removed, moves of 20 cm or
 * more, and the miss rate when it was raised.
 *
 * A world fails when the plan
 *   - breaks a constraint: a motion the guard refused, or a vertical move
 *     the altitude band clamped (the drone would not fly what the plan says);
 *   - exhausts a budget: instructions, memory or the wall-clock limit;
 *   - errors: a Lua or skill error.
 * A world where the plan asks to replan (rp) passes: the mission would ask
 * for a new plan, nothing unsafe flew.
 *
 * Wind (a scene with "wind"): world i > 0 blows within 20 % of the scene's
 * speed and 20 degrees of its heading (a change, "wind 38 cm/s toward 95"),
 * and every world draws its own gusts from its simulator seed. A world in
 * which the watch on the measured state had to act (the wind carried the
 * drone out of the geofence; drone/watch.h) fails as "watch", its reason
 * the watch's (returned inside, or landed) and its "excursion_cm", with the
 * branch taken as for any failing world.
 *
 * For each failing world the report has the branch taken: every statement
 * that ran, in order, as "LINE:COL text", a condition followed by
 * "-> True" or "-> False"; a loop's iterations after the first run as one
 * chunk and show as "LINE:COL } iterations 2..N" (so a condition inside a
 * loop shows its first iteration's outcome only). What stopped the plan
 * ends in "-> error", "-> instructions", "-> memory" or "-> timeout". The
 * skill calls made by the plan itself (not those inside high-level skills)
 * come with it, as "name(args) -> result".
 */
#ifndef ALOFT_VERIFY_VERIFY_H
#define ALOFT_VERIFY_VERIFY_H

#include "drone/scene.h"
#include "sandbox/sandbox.h"
#include "skills/registry.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The most worlds one verification flies. */
#define VERIFY_MAX_WORLDS 10000

typedef enum verify_kind {
    VERIFY_OK = 0,
    VERIFY_VIOLATION, /* a refused or clamped motion */
    VERIFY_BUDGET,    /* instructions, memory or time ran out */
    VERIFY_ERROR,     /* a Lua or skill error */
    VERIFY_CANCELLED, /* sandbox_cancel: verification stopped */
    VERIFY_WATCH,     /* the watch on the measured state acted (wind) */
} verify_kind;

/* "ok", "violation", "budget", "error", "cancelled" or "watch". */
const char *verify_kind_name(verify_kind k);

typedef struct verify_opts {
    const skill_registry *reg;
    const scene *scene;
    /* Where each world's drone starts, flying, or NULL for the scene's
     * start; home (the geofence's centre) is the scene's start either way. */
    const drone_pose *from;
    const char *plan; /* MiniSpec text, already checked (else every world errors) */
    size_t plan_len;
    int worlds; /* 1..VERIFY_MAX_WORLDS */
    uint64_t seed;
    sandbox_limits limits; /* per world */
    int max_loop;          /* 0 = MiniSpec default */
    /* Called with each world's sandbox before its plan runs and with NULL
     * after (Ctrl-C: cli_cancel_sandbox); may be NULL. */
    void (*on_sandbox)(void *ud, sandbox *sb);
    void *on_sandbox_ud;
} verify_opts;

/* The most bytes of a world's reason (a longer one is cut). */
#define VERIFY_REASON_MAX 1200

/* One world's verdict as typed data: its kind and, unless it passed, why. */
typedef struct verify_verdict {
    verify_kind kind;
    char reason[VERIFY_REASON_MAX + 1];
} verify_verdict;

/* Flies world I of O (0 <= I < O->worlds is not required: any I works) and
 * returns its entry: {"world":I,"kind":..,"reason":..,"changes":[..],
 * "branch":[..],"calls":[..]}; NULL only if out of memory or the world could
 * not be built (then ERR says why). *V (may be NULL) gets the verdict. */
cJSON *verify_world(const verify_opts *o, int i, verify_verdict *v, char *err, size_t errlen);

/* What a verification found, as typed data for the code that acts on it
 * (the flight's gate, the exit status of `check --verify`); the report
 * document is for the edges that print it. */
typedef struct verify_summary {
    int worlds, passed, failed; /* flown (up to a cancelled one), passing, failing */
    bool cancelled;
    int first_world; /* the first failing world, or -1 */
    verify_kind first_kind;
    char first_reason[VERIFY_REASON_MAX + 1];
} verify_summary;

/* Flies every world and returns the report
 * {"worlds":N,"seed":K,"passed":X,"failed":[entries of failing worlds]},
 * or NULL with a message. Stops early when a world is cancelled (then
 * "cancelled":true and "worlds" counts the worlds flown). *SUM (may be
 * NULL) gets the same as typed data. */
cJSON *verify_plan(const verify_opts *o, verify_summary *sum, char *err, size_t errlen);

/* SUM with nothing flown (first_world -1). */
void verify_summary_init(verify_summary *sum);

/* Prints one line per failing world and the summary line of REPORT to F. */
void verify_print(FILE *f, const cJSON *report);

#endif
