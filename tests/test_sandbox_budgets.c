/* The sandbox's budgets at their boundaries (SPEC §6): a script that spends
 * exactly its instruction or memory budget runs to its end, one unit less
 * stops it with the limit's own status and message. The wall-clock budget is
 * tested as far as a real clock allows (see test_time_budget).
 * labels: sandbox safety */
#include "sandbox/sandbox.h"

#include <lua.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"

/* Spends its instructions in the VM and its memory in one growing table,
 * the same way on every run (no clock, no randomness). */
static const char SCRIPT[] = "local t = {} for i = 1, 3000 do t[i] = i * 2 end "
                             "local n = 0 for i = 1, #t do n = n + t[i] end";

static sandbox_status run_with(sandbox_limits lim, sandbox_usage *u, char *err, size_t errlen)
{
    sandbox *sb = sandbox_new(&lim, err, errlen);
    if (!sb) return SANDBOX_ERROR;
    sandbox_status st = sandbox_run(sb, SCRIPT, strlen(SCRIPT), "=budget", err, errlen);
    if (u) *u = sandbox_get_usage(sb);
    sandbox_free(sb);
    return st;
}

static void test_instruction_budget(void)
{
    char err[256] = "";
    sandbox_usage u;
    sandbox_limits roomy = {.max_instructions = 1000000000ull};
    CHECK(run_with(roomy, &u, err, sizeof err) == SANDBOX_OK, "%s", err);
    uint64_t spent = u.instructions;
    CHECK(spent >= 10 * SANDBOX_HOOK_STEP && spent % SANDBOX_HOOK_STEP == 0,
          "the script was charged %llu instructions", (unsigned long long)spent);

    sandbox_limits at = {.max_instructions = spent};
    CHECK(run_with(at, &u, err, sizeof err) == SANDBOX_OK,
          "instruction budget: a script that spends exactly its budget (%llu) must end normally: "
          "%s",
          (unsigned long long)spent, err);
    CHECK(u.instructions == spent, "instruction budget: charged %llu, expected %llu",
          (unsigned long long)u.instructions, (unsigned long long)spent);

    sandbox_limits inside = {.max_instructions = spent + 1};
    CHECK(run_with(inside, NULL, err, sizeof err) == SANDBOX_OK,
          "instruction budget: one instruction to spare must not stop the script: %s", err);

    sandbox_limits outside = {.max_instructions = spent - 1};
    CHECK(run_with(outside, &u, err, sizeof err) == SANDBOX_INSTRUCTIONS,
          "instruction budget: a script that needs %llu instructions ran under a budget of %llu "
          "(%s)",
          (unsigned long long)spent, (unsigned long long)(spent - 1), err);
    char want[96];
    snprintf(want, sizeof want, "instruction limit reached (%llu instructions)",
             (unsigned long long)(spent - 1));
    CHECK(strcmp(err, want) == 0, "instruction budget: message '%s', expected '%s'", err, want);
    CHECK(u.instructions == spent, "instruction budget: stopped at the charge that crossed it");
}

/* One big string, made when the state holds no garbage (collected after
 * loading), so that the peak is the same on every run and a refusal at the
 * peak cannot be rescued by Lua's emergency collection. */
static sandbox_status big_string(size_t cap, sandbox_usage *u, char *err, size_t errlen)
{
    sandbox_limits lim = {.max_memory = cap};
    sandbox *sb = sandbox_new(&lim, err, errlen);
    if (!sb) return SANDBOX_ERROR;
    const char code[] = "local s = ('x'):rep(100000) return #s";
    sandbox_status st = sandbox_load(sb, code, strlen(code), "=memory", err, errlen);
    if (st == SANDBOX_OK) {
        lua_gc(sandbox_lua(sb), LUA_GCCOLLECT);
        st = sandbox_call(sb, 0, 0, err, errlen);
    }
    *u = sandbox_get_usage(sb);
    sandbox_free(sb);
    return st;
}

static void test_memory_budget(void)
{
    char err[256] = "";
    sandbox_usage u;
    CHECK(big_string(64u << 20, &u, err, sizeof err) == SANDBOX_OK, "%s", err);
    size_t peak = u.memory_peak;
    CHECK(peak > 200000, "the script's peak was %zu bytes", peak);

    CHECK(big_string(peak, &u, err, sizeof err) == SANDBOX_OK,
          "memory budget: a script whose peak is exactly the cap (%zu bytes) must end normally: "
          "%s",
          peak, err);
    CHECK(u.memory_peak == peak, "memory budget: peak %zu, expected %zu", u.memory_peak, peak);

    CHECK(big_string(peak + 1, &u, err, sizeof err) == SANDBOX_OK,
          "memory budget: one byte to spare must not stop the script: %s", err);

    CHECK(big_string(peak - 1, &u, err, sizeof err) == SANDBOX_MEMORY,
          "memory budget: a script that needs %zu bytes ran under a cap of %zu (%s)", peak,
          peak - 1, err);
    char want[96];
    snprintf(want, sizeof want, "memory limit reached (%zu bytes)", peak - 1);
    CHECK(strcmp(err, want) == 0, "memory budget: message '%s', expected '%s'", err, want);
    CHECK(u.memory_peak <= peak - 1, "memory budget: %zu bytes in use under a cap of %zu",
          u.memory_peak, peak - 1);
}

/*
 * The deadline is CLOCK_MONOTONIC at sandbox_new plus timeout_ms, and it has
 * passed once the clock reaches it (>=). A real clock cannot be stopped on
 * the deadline's nanosecond, so: far inside (a minute left: no timing
 * assertion, the run takes milliseconds), and at or past it (nanosleep waits
 * at least the whole budget, so afterwards the clock is at or past the
 * deadline on any machine, however loaded).
 */
static void test_time_budget(void)
{
    char err[256] = "";
    sandbox_limits inside = {.timeout_ms = 60000};
    sandbox *sb = sandbox_new(&inside, err, sizeof err);
    CHECK(sandbox_run(sb, SCRIPT, strlen(SCRIPT), "=budget", err, sizeof err) == SANDBOX_OK,
          "time budget: a script with a minute to spare was stopped: %s", err);
    CHECK(sandbox_remaining_ms(sb) <= 60000 && sandbox_remaining_ms(sb) > 0,
          "time budget: %llu ms left of 60000", (unsigned long long)sandbox_remaining_ms(sb));
    CHECK(sandbox_alive(sb), "time budget: alive with time left");
    sandbox_free(sb);

    const uint64_t budgets[] = {1, 30};
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        sandbox_limits lim = {.timeout_ms = budgets[i]};
        sb = sandbox_new(&lim, err, sizeof err);
        struct timespec ts = {0, (long)budgets[i] * 1000000L};
        while (nanosleep(&ts, &ts) != 0) {
        }
        CHECK(sandbox_remaining_ms(sb) == 0, "time budget: %llu ms left after the whole budget",
              (unsigned long long)sandbox_remaining_ms(sb));
        CHECK(!sandbox_alive(sb), "time budget: still alive at its %llu ms deadline",
              (unsigned long long)budgets[i]);
        CHECK(sandbox_poison(sb) == SANDBOX_TIMEOUT, "time budget: poison %s",
              sandbox_status_name(sandbox_poison(sb)));
        CHECK(sandbox_run(sb, "return 1", 8, "=late", err, sizeof err) == SANDBOX_TIMEOUT,
              "time budget: a chunk ran after the deadline");
        char want[64];
        snprintf(want, sizeof want, "time limit reached (%llu ms)", (unsigned long long)budgets[i]);
        CHECK(strcmp(err, want) == 0, "time budget: message '%s', expected '%s'", err, want);
        sandbox_free(sb);
    }
}

/* Longer limits are cut to SANDBOX_MAX_TIMEOUT_MS; up to it they are kept.
 * The minute around it is far more than the test's own run time. */
static void test_time_budget_cut(void)
{
    char err[256];
    const uint64_t minute = 60000;
    struct {
        uint64_t asked, low, high;
    } cases[] = {
        {SANDBOX_MAX_TIMEOUT_MS - minute, SANDBOX_MAX_TIMEOUT_MS - 2 * minute,
         SANDBOX_MAX_TIMEOUT_MS - minute},
        {SANDBOX_MAX_TIMEOUT_MS, SANDBOX_MAX_TIMEOUT_MS - minute, SANDBOX_MAX_TIMEOUT_MS},
        {SANDBOX_MAX_TIMEOUT_MS + minute, SANDBOX_MAX_TIMEOUT_MS - minute, SANDBOX_MAX_TIMEOUT_MS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sandbox_limits lim = {.timeout_ms = cases[i].asked};
        sandbox *sb = sandbox_new(&lim, err, sizeof err);
        uint64_t left = sandbox_remaining_ms(sb);
        CHECK(left > cases[i].low && left <= cases[i].high,
              "time budget cut: asked %llu ms, %llu left (expected in (%llu, %llu])",
              (unsigned long long)cases[i].asked, (unsigned long long)left,
              (unsigned long long)cases[i].low, (unsigned long long)cases[i].high);
        sandbox_free(sb);
    }
}

int main(void)
{
    test_instruction_budget();
    test_memory_budget();
    test_time_budget();
    test_time_budget_cut();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_sandbox_budgets: all checks passed\n");
    return failures ? 1 : 0;
}
