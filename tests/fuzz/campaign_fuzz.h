/*
 * The body both libFuzzer harnesses of the safety campaign share
 * (fuzz_plan_flight.c, fuzz_lua_flight.c): the fuzzer's bytes are the
 * generator's choices (camp_rng_bytes), one byte a decision, so a mutation
 * changes one part of the scene, budgets or program and coverage guides the
 * generator. A broken invariant is shrunk, written as a campaign reproducer
 * to $ALOFT_CAMPAIGN_OUT (default: the current directory) and aborts; replay
 * it with: build/test_campaign --replay FILE.
 */
#ifndef ALOFT_TESTS_CAMPAIGN_FUZZ_H
#define ALOFT_TESTS_CAMPAIGN_FUZZ_H

#include "../campaign/flight.c"
#include "../campaign/gen.c"
#include "../campaign/repro.c"

static camp_env env;

/* libFuzzer ends the process with exit(): remove the scratch directory. */
static void close_env(void)
{
    camp_env_close(&env);
}

/* One case drawn from DATA: a plan (LUA false) or a skill script; a broken
 * invariant is shrunk, written as campaign-KIND-SEED.txt and aborts. */
static int campaign_fuzz_one(const uint8_t *data, size_t size, bool lua, const char *kind)
{
    if (!env.reg) {
        if (camp_env_open(&env)) abort();
        atexit(close_env);
    }
    if (size > 4096) return 0;
    camp_rng r;
    camp_rng_bytes(&r, data, size);
    camp_case c = {0};
    camp_case_draw(&r, &env, lua, &c);
    char why[4096];
    if (camp_check(&env, &c, why, sizeof why) == 1) {
        fprintf(stderr, "campaign: broken invariant:\n%s\n", why);
        camp_minimise(&env, &c, why);
        const char *dir = getenv("ALOFT_CAMPAIGN_OUT") ? getenv("ALOFT_CAMPAIGN_OUT") : ".";
        char path[512];
        snprintf(path, sizeof path, "%s/campaign-%s-%llu.txt", dir, kind,
                 (unsigned long long)c.seed);
        if (camp_case_write(&c, why, path) == 0)
            fprintf(stderr, "campaign: reproducer %s; replay: test_campaign --replay %s\n", path,
                    path);
        abort();
    }
    camp_case_free(&c);
    return 0;
}

#endif
