/*
 * Sandbox costs (issue targets: start-up under 200 us, the instruction
 * budget's hook at most 10 % on a CPU-bound script).
 *
 *  - start-up: sandbox_new (state, allocator, allow-listed environment), then
 *    skills_bind (every skill as a global, the MiniSpec runtime, the built-in
 *    high-level skill files), then sandbox_free; the registry is built once
 *    per process, as a mission controller does.
 *  - hook overhead: the same CPU-bound Lua loop in a plain lua_State and in
 *    the sandbox (count hook armed), as a ratio; best of several runs each,
 *    interleaved, so that load on the machine hits both alike.
 *  - why: the loop again in a plain lua_State with a count hook that does
 *    nothing, once every 1,000 instructions (the sandbox's period) and once
 *    every 2^30 (it never fires here). Stock Lua 5.4 (lvm.c) traps every
 *    instruction into luaG_traceexec as soon as any count hook is set,
 *    whatever its period, to count down to the next call: that trap is the
 *    cost, not the sandbox's hook function (which runs once per 1,000
 *    instructions). So the floor for an exact instruction budget on
 *    Debian's liblua5.4 is the no-op hook's ratio; the sandbox's own share
 *    is what it costs above that. An exact count is what SPEC §6 asks
 *    (a budget that trips at the same instruction in every run keeps
 *    verification reproducible per seed), so a sampling timer instead of
 *    the count hook is no way out.
 * Writes JSON to argv[1] when given.
 */
#include "bench_out.h"
#include "sandbox/sandbox.h"
#include "loader/loader.h"
#include "skills/registry.h"
#include "skills/skills.h"

#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define TARGET_HOOK_RATIO 1.10

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static const char loop[] = "local s = 0\n"
                           "for i = 1, 20000000 do s = s + i % 7 end\n"
                           "local t = {}\n"
                           "for i = 1, 200000 do t[i] = tostring(i) end\n"
                           "return s\n";

static double time_plain(void)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    double t0 = now_us();
    if (luaL_loadstring(L, loop) || lua_pcall(L, 0, 1, 0))
        fprintf(stderr, "plain: %s\n", lua_tostring(L, -1));
    double t = now_us() - t0;
    lua_close(L);
    return t;
}

static void noop_hook(lua_State *L, lua_Debug *ar)
{
    (void)L, (void)ar;
}

/* The loop in a plain state with a hook that does nothing every PERIOD
 * instructions. */
static double time_noop_hook(int period)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    lua_sethook(L, noop_hook, LUA_MASKCOUNT, period);
    double t0 = now_us();
    if (luaL_loadstring(L, loop) || lua_pcall(L, 0, 1, 0))
        fprintf(stderr, "hooked: %s\n", lua_tostring(L, -1));
    double t = now_us() - t0;
    lua_close(L);
    return t;
}

static double time_sandboxed(void)
{
    char err[256];
    sandbox_limits lim = {.max_instructions = 1ull << 40, .max_memory = 256u << 20};
    sandbox *sb = sandbox_new(&lim, err, sizeof err);
    double t0 = now_us();
    if (sandbox_run(sb, loop, strlen(loop), "=bench", err, sizeof err) != SANDBOX_OK)
        fprintf(stderr, "sandbox: %s\n", err);
    double t = now_us() - t0;
    sandbox_free(sb);
    return t;
}

static double min_of(double a, double b)
{
    return a < b ? a : b;
}

int main(int argc, char **argv)
{
    skill_registry *reg = loader_standard(NULL, 0, NULL, NULL);
    char err[256];

    /* start-up */
    const int n = 2000;
    double best_state = 1e18, best_full = 1e18;
    for (int round = 0; round < 5; round++) {
        double t0 = now_us();
        for (int i = 0; i < n; i++)
            sandbox_free(sandbox_new(NULL, err, sizeof err));
        best_state = min_of(best_state, (now_us() - t0) / n);
        t0 = now_us();
        for (int i = 0; i < n; i++) {
            sandbox *sb = sandbox_new(NULL, err, sizeof err);
            skill_ctx ctx = {.reg = reg, .sb = sb};
            if (skills_bind(&ctx, err, sizeof err)) fprintf(stderr, "bind: %s\n", err);
            skills_release(&ctx);
            sandbox_free(sb);
        }
        best_full = min_of(best_full, (now_us() - t0) / n);
    }

    /* hook overhead */
    double plain = 1e18, boxed = 1e18, noop = 1e18, never = 1e18;
    for (int round = 0; round < 5; round++) {
        plain = min_of(plain, time_plain());
        boxed = min_of(boxed, time_sandboxed());
        noop = min_of(noop, time_noop_hook(1000));
        never = min_of(never, time_noop_hook(1 << 30));
    }
    double overhead = (boxed / plain - 1) * 100;
    bool met = boxed / plain <= TARGET_HOOK_RATIO;

    printf("sandbox start-up: state + environment %.1f us; with every skill bound %.1f us "
           "(target < 200 us)\n",
           best_state, best_full);
    printf("hook overhead on a CPU-bound loop: plain %.1f ms, sandboxed %.1f ms, ratio %.3f "
           "(%+.1f %%, target <= %+.0f %%: %s)\n",
           plain / 1e3, boxed / 1e3, boxed / plain, overhead, (TARGET_HOOK_RATIO - 1) * 100,
           met ? "met" : "missed");
    printf("  why: a count hook that does nothing costs ratio %.3f every 1,000 instructions "
           "and %.3f every 2^30 (never called): stock Lua traps every instruction once a count "
           "hook is set; the sandbox adds %.3f over that floor\n",
           noop / plain, never / plain, boxed / noop);
    FILE *f = bench_out(argc, argv);
    if (f) {
        fprintf(f,
                "{\"startup_state_us\":{\"value\":%.2f,\"unit\":\"us\"},"
                "\"startup_with_skills_us\":{\"value\":%.2f,\"unit\":\"us\"},"
                "\"loop_plain_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
                "\"loop_sandboxed_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
                "\"hook_ratio\":{\"value\":%.4f,\"unit\":\"x\"},"
                "\"hook_overhead_pct\":{\"value\":%.2f,\"unit\":\"%%\"},"
                "\"hook_target_ratio\":{\"value\":%.2f,\"unit\":\"x\"},"
                "\"hook_target_met\":%s,"
                "\"noop_hook_1000_ratio\":{\"value\":%.4f,\"unit\":\"x\"},"
                "\"noop_hook_never_ratio\":{\"value\":%.4f,\"unit\":\"x\"},"
                "\"sandbox_over_noop_hook_ratio\":{\"value\":%.4f,\"unit\":\"x\"}}\n",
                best_state, best_full, plain / 1e3, boxed / 1e3, boxed / plain, overhead,
                TARGET_HOOK_RATIO, met ? "true" : "false", noop / plain, never / plain,
                boxed / noop);
        fclose(f);
    }
    registry_free(reg);
    return 0;
}
