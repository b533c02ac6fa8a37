/*
 * A freed sandbox is rewound to the state just built and handed out again
 * by the next sandbox_new (sandbox.c): whatever ran in it, the next script
 * must find a state exactly as fresh. World 1 binds a skill and a runtime
 * table, writes a global, draws random numbers, leaves a mark in the
 * registry (as a skill could), prints and runs into its memory cap; world 2,
 * in the same state, sees none of it and has its whole budget.
 * labels: sandbox safety verify
 */
#include "sandbox/sandbox.h"

#include <lauxlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static const char mark_key = 'M';

static sandbox_status run(sandbox *sb, const char *code, char *err, size_t errlen)
{
    return sandbox_run(sb, code, strlen(code), "=test", err, errlen);
}

/* Runs CODE, which returns one value; its text (or "<type>") into OUT. */
static sandbox_status eval(sandbox *sb, const char *code, char *out, size_t outlen)
{
    char err[256];
    sandbox_status st = sandbox_load(sb, code, strlen(code), "=eval", err, sizeof err);
    if (st == SANDBOX_OK) st = sandbox_call(sb, 0, 1, err, sizeof err);
    if (st != SANDBOX_OK) {
        snprintf(out, outlen, "error: %.100s", err);
        return st;
    }
    lua_State *L = sandbox_lua(sb);
    if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER)
        snprintf(out, outlen, "%s", lua_tostring(L, -1));
    else
        snprintf(out, outlen, "<%s>", luaL_typename(L, -1));
    lua_pop(L, 1);
    return st;
}

/* A skill that writes into the state's shared registry. */
static int mark(lua_State *L)
{
    lua_pushstring(L, "world 1 was here");
    lua_rawsetp(L, LUA_REGISTRYINDEX, &mark_key);
    return 0;
}

static bool has_mark(sandbox *sb)
{
    lua_State *L = sandbox_lua(sb);
    bool found = lua_rawgetp(L, LUA_REGISTRYINDEX, &mark_key) != LUA_TNIL;
    lua_pop(L, 1);
    return found;
}

static const char *const draw =
    "return string.format('%d %d %d', math.random(1, 1 << 40), math.random(1, 1 << 40), "
    "math.random(1, 1 << 40))";

static void test_next_world_is_fresh(void)
{
    char err[256], first_draw[128], again[128], v[128];
    sandbox_limits lim = {.max_memory = 2u << 20};
    sandbox *sb = sandbox_new(&lim, err, sizeof err);
    CHECK(sb != NULL, "%s", err);
    if (!sb) return;
    sandbox_usage fresh = sandbox_get_usage(sb);

    /* world 1 */
    sandbox_set_global(sb, "only_in_world_1", mark, NULL);
    lua_State *L = sandbox_lua(sb);
    lua_newtable(L);
    lua_pushinteger(L, 1);
    lua_setfield(L, -2, "v");
    sandbox_set_global_table(sb, "runtime_of_world_1");
    CHECK(eval(sb, draw, first_draw, sizeof first_draw) == SANDBOX_OK, "%s", first_draw);
    CHECK(run(sb, "seen = 1; only_in_world_1(); print('from world 1')", err, sizeof err) ==
              SANDBOX_OK,
          "%s", err);
    CHECK(has_mark(sb), "the skill wrote its mark");
    CHECK(eval(sb, "return type(only_in_world_1) .. runtime_of_world_1.v", v, sizeof v) ==
                  SANDBOX_OK &&
              strcmp(v, "function1") == 0,
          "world 1 sees what it bound: %s", v);
    CHECK(run(sb, "local t = {} while true do t[#t + 1] = {} end", err, sizeof err) ==
          SANDBOX_MEMORY);
    sandbox *was = sb;
    sandbox_free(sb);

    /* world 2: the same state (the rewind is what this test is about) */
    sb = sandbox_new(&lim, err, sizeof err);
    CHECK(sb == was, "the freed state is handed out again");
    if (!sb) return;
    sandbox_usage u = sandbox_get_usage(sb);
    CHECK(u.instructions == 0 && u.memory_now == fresh.memory_now &&
              u.memory_peak == fresh.memory_peak,
          "usage as fresh: %llu instructions, %zu (%zu) bytes now, %zu (%zu) peak",
          (unsigned long long)u.instructions, u.memory_now, fresh.memory_now, u.memory_peak,
          fresh.memory_peak);
    CHECK(sandbox_alive(sb) && sandbox_poison(sb) == SANDBOX_OK, "not poisoned");
    size_t outlen = 1;
    sandbox_output(sb, &outlen);
    CHECK(outlen == 0, "no output of world 1 (%zu bytes)", outlen);
    CHECK(!has_mark(sb), "the registry has no mark of world 1");
    CHECK(eval(sb, "return type(only_in_world_1) .. type(runtime_of_world_1) .. type(seen)", v,
               sizeof v) == SANDBOX_OK &&
              strcmp(v, "nilnilnil") == 0,
          "no skill, table or global of world 1: %s", v);
    CHECK(eval(sb, draw, again, sizeof again) == SANDBOX_OK, "%s", again);
    CHECK(strcmp(again, first_draw) == 0, "the random draws start over: %s, then %s", first_draw,
          again);
    /* the whole memory budget again: world 1 ended at its cap */
    CHECK(run(sb, "local t = {} for i = 1, 20000 do t[i] = {i} end", err, sizeof err) == SANDBOX_OK,
          "%s", err);
    sandbox_free(sb);
}

/* A state built under another memory cap is not reused for this one: the
 * cap is this sandbox's own. */
static void test_other_cap(void)
{
    char err[256];
    sandbox_limits big = {.max_memory = 4u << 20}, small = {.max_memory = 1u << 20};
    sandbox *sb = sandbox_new(&big, err, sizeof err);
    CHECK(sb != NULL, "%s", err);
    sandbox_free(sb);
    sb = sandbox_new(&small, err, sizeof err);
    CHECK(sb != NULL, "%s", err);
    if (!sb) return;
    CHECK(run(sb, "local t = {} while true do t[#t + 1] = {} end", err, sizeof err) ==
          SANDBOX_MEMORY);
    CHECK(strstr(err, "(1048576 bytes)") != NULL, "%s", err);
    CHECK(sandbox_get_usage(sb).memory_peak <= small.max_memory, "peak %zu",
          sandbox_get_usage(sb).memory_peak);
    sandbox_free(sb);
}

/* Many worlds, each poisoned a different way or not at all: each next one
 * runs the same script to the same result. */
static void test_many_worlds(void)
{
    static const char *const endings[] = {
        "", "while true do end", "local t = {} while true do t[#t + 1] = {} end", "error('plain')",
        "local co = coroutine.wrap(function() coroutine.yield(1) end) co()"};
    char err[256], v[128], expect[128] = "";
    sandbox_limits lim = {.max_memory = 1u << 20, .max_instructions = 200000};
    for (int i = 0; i < 50; i++) {
        sandbox *sb = sandbox_new(&lim, err, sizeof err);
        CHECK(sb != NULL, "%s", err);
        if (!sb) return;
        CHECK(eval(sb, "local s = 0 for i = 1, 1000 do s = s + i end return s .. tostring(x)", v,
                   sizeof v) == SANDBOX_OK,
              "%s", v);
        if (i == 0) snprintf(expect, sizeof expect, "%s", v);
        CHECK(strcmp(v, expect) == 0, "world %d: %s", i, v);
        const char *end = endings[i % (sizeof endings / sizeof *endings)];
        run(sb, end, err, sizeof err);
        sandbox_free(sb);
    }
}

int main(void)
{
    test_next_world_is_fresh();
    test_other_cap();
    test_many_worlds();
    return failures ? 1 : 0;
}
