/*
 * The campaign's flight harness (issue 15): one generated plan or Lua
 * script flown in a fresh sandbox against the simulator, behind the
 * constraint guard, with a random scene, probe answers, budgets and (for
 * plans) stream chunking, and the safety invariants checked as it flies:
 *
 *   fence    the simulator's TRUE pose (not what skills report) stays inside
 *            the geofence and the altitude band: after every skill call, at
 *            every state the simulator measures (every 50 simulated ms), and
 *            along the straight line between two such samples; in a windy
 *            world (wind below half the drone's speed) never more than
 *            CAMP_WIND_SLACK_CM beyond them (SPEC §10: the wind carries the
 *            drone out, the watch on the measured state brings it back); a
 *            drone the watch landed (battery below the reserve, a return it
 *            could not make) is not judged while it lands and once down;
 *   budget   the run ends within its instruction budget (charged in steps of
 *            SANDBOX_HOOK_STEP) and its wall-clock limit + 1 s;
 *   tripped  once a limit tripped (the sandbox is poisoned), no skill is
 *            called and no motion reaches the simulator;
 *   stream   a plan streamed in random chunks makes the same skill calls with
 *            the same results, and ends the same way, as run whole (compared
 *            when neither run hit a budget: budgets trip at different
 *            instructions in the two forms);
 *   verify   `check --verify`'s world for the case's seed gives the same
 *            verdict and report twice (plans only);
 *   accept   the checker accepts every generated plan.
 * Crashes, leaks and undefined behaviour are the sanitizers' part (the ASan
 * build of the test, and the libFuzzer harnesses).
 *
 * The harness uses nothing of the mission layer (host/mission): it builds
 * its world from the simulator, the guard, the sandbox, the skills and the
 * MiniSpec compiler and stream executor, so the flight lifecycle can change
 * under it.
 */
#ifndef ALOFT_CAMPAIGN_FLIGHT_H
#define ALOFT_CAMPAIGN_FLIGHT_H

#include "gen.h"
#include "sandbox/sandbox.h"

#include <stdbool.h>
#include <stdint.h>

/* How far beyond the fence or the band a windy world may carry the drone
 * (SPEC §10). */
#define CAMP_WIND_SLACK_CM 50.0

/* One case: everything a run depends on, so that it replays exactly. */
typedef struct camp_case {
    uint64_t seed;     /* simulator noise, probe answers, chunk sizes */
    bool lua;          /* PROGRAM is a Lua script, else a MiniSpec plan */
    camp_text scene;   /* SPEC §3 JSON */
    camp_text program; /* the plan or script */
    sandbox_limits limits;
    double time_scale; /* 0 = instant; > 0 samples the pose while moving */
    int max_loop;      /* MiniSpec loop cap */
    bool check_verify; /* also run the verify invariant */
} camp_case;

typedef struct camp_env {
    skill_registry *reg;
    char pictures[64]; /* scratch parent of take_picture's directories */
    long runs;         /* flights so far (a run of a plan is two: whole, streamed) */
    long rejected;     /* generated plans the checker refused (bugs: see accept) */
    long tripped;      /* runs that ended on a budget */
    long windy;        /* runs in a windy world */
    long carried;      /* of which the wind carried the drone out (the watch acted) */
} camp_env;

/* Sets up ENV (registry, scratch directory). 0, or -1 with a message. */
int camp_env_open(camp_env *env);
void camp_env_close(camp_env *env);

/* Draws a whole case from R (plan when LUA is false). */
void camp_case_draw(camp_rng *r, const camp_env *env, bool lua, camp_case *c);
void camp_case_free(camp_case *c);

/* Flies C and checks every invariant. Returns 0 when all held, 1 when one
 * broke (WHY starts with the invariant's name: "fence: ..."), -1 when the
 * case could not be set up (WHY says why; not a finding). */
int camp_check(camp_env *env, const camp_case *c, char *why, size_t whylen);

/* Shrinks C's program while camp_check still breaks the same invariant.
 * Returns how many shrinking attempts it made. */
int camp_minimise(camp_env *env, camp_case *c, const char *why);

/* The reproducer file: seed, kind, limits, time scale, scene, program. */
int camp_case_write(const camp_case *c, const char *why, const char *path);
int camp_case_read(camp_case *c, const char *path, char *err, size_t errlen);

#endif
