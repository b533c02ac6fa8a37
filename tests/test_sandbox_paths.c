/* The sandbox's less travelled paths, each judged by what the API returns:
 * a state that cannot be built, chunks loaded or called on a poisoned state,
 * the compiled-chunk cache (empty text, errors, a full cache, a tight cap),
 * a skill that gives up without raising, a refusal the script caught, and
 * the environment's edges (print's buffer, rawset, read-only tables, xpcall
 * across a yield, string.rep's size check).
 * labels: sandbox safety */
#include "sandbox/sandbox.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* aloft defines no test globals; this program does (sandbox.c calls it for
 * every new state), so that the hook's call is seen working. */
void sandbox_test_globals(sandbox *sb);

static int forty_two(lua_State *L)
{
    lua_pushinteger(L, 42);
    return 1;
}

void sandbox_test_globals(sandbox *sb)
{
    sandbox_set_global(sb, "test_global", forty_two, NULL);
}

static sandbox_status run(sandbox *sb, const char *code, char *err, size_t errlen)
{
    return sandbox_run(sb, code, strlen(code), "=paths", err, errlen);
}

static void test_status_names(void)
{
    const char *want[] = {"ok", "error", "instructions", "memory", "timeout", "cancelled"};
    for (int i = 0; i <= SANDBOX_CANCELLED; i++)
        CHECK(strcmp(sandbox_status_name((sandbox_status)i), want[i]) == 0, "status %d: %s", i,
              sandbox_status_name((sandbox_status)i));
    CHECK(strcmp(sandbox_status_name((sandbox_status)99), "?") == 0);
}

static void test_new_and_free(void)
{
    char err[256] = "";
    sandbox_free(NULL); /* like free(NULL) */
    sandbox_limits tiny = {.max_memory = 64};
    CHECK(sandbox_new(&tiny, err, sizeof err) == NULL, "a Lua state fitted in 64 bytes");
    CHECK(strcmp(err, "cannot create a Lua state within 64 bytes") == 0, "%s", err);

    /* room for the state, not for the environment */
    sandbox_limits small = {.max_memory = 8192};
    CHECK(sandbox_new(&small, err, sizeof err) == NULL, "the environment fitted in 8 kB");
    CHECK(strcmp(err, "the environment does not fit in 8192 bytes") == 0, "%s", err);

    sandbox *sb = sandbox_new(NULL, err, sizeof err);
    CHECK(run(sb, "assert(test_global() == 42)", err, sizeof err) == SANDBOX_OK,
          "the test globals were not added: %s", err);
    size_t len = 7;
    CHECK(strcmp(sandbox_output(sb, NULL), "") == 0);
    sandbox_output(sb, &len);
    CHECK(len == 0);
    sandbox_free(sb);
}

/* Once poisoned, neither load (text or cached) nor call runs anything, and
 * call pops what it was given. */
static void test_poisoned_state_runs_nothing(void)
{
    char err[256] = "";
    sandbox *sb = sandbox_new(NULL, err, sizeof err);
    lua_State *L = sandbox_lua(sb);
    const char cached[] = "return 'cached'";
    CHECK(sandbox_load_cached(sb, cached, strlen(cached), "=c", err, sizeof err) == SANDBOX_OK);
    lua_pop(L, 1);
    CHECK(sandbox_load(sb, "return 1", 8, "=f", err, sizeof err) == SANDBOX_OK);
    lua_pushinteger(L, 5);
    int top = lua_gettop(L);
    sandbox_cancel(sb);
    CHECK(!sandbox_alive(sb));
    CHECK(sandbox_call(sb, 1, 1, err, sizeof err) == SANDBOX_CANCELLED);
    CHECK(strcmp(err, "cancelled") == 0, "%s", err);
    CHECK(lua_gettop(L) == top - 2, "call on a poisoned state left %d values", lua_gettop(L));
    strcpy(err, "");
    CHECK(sandbox_load(sb, "return 1", 8, "=f", err, sizeof err) == SANDBOX_CANCELLED);
    CHECK(strcmp(err, "cancelled") == 0, "%s", err);
    strcpy(err, "");
    CHECK(sandbox_load_cached(sb, cached, strlen(cached), "=c", err, sizeof err) ==
          SANDBOX_CANCELLED);
    CHECK(strcmp(err, "cancelled") == 0, "%s", err);
    CHECK(lua_gettop(L) == top - 2);
    sandbox_free(sb);
}

/* A chunk too big to compile under the cap is a memory limit, not a syntax
 * error. */
static void test_load_past_the_memory_cap(void)
{
    char err[256] = "";
    size_t n = 200000;
    char *code = malloc(n + 32);
    strcpy(code, "return '");
    memset(code + 8, 'a', n);
    strcpy(code + 8 + n, "'");
    sandbox_limits lim = {.max_memory = 96 * 1024};
    sandbox *sb = sandbox_new(&lim, err, sizeof err);
    CHECK(sb != NULL, "%s", err);
    CHECK(sandbox_load(sb, code, strlen(code), "=big", err, sizeof err) == SANDBOX_MEMORY,
          "memory budget: compiling a 200 kB literal under a 96 kB cap: %s", err);
    CHECK(strcmp(err, "memory limit reached (98304 bytes)") == 0, "%s", err);
    sandbox_free(sb);

    /* the same text compiled (and cached) with room, then loaded from the
     * cache under the tight cap: still refused */
    sb = sandbox_new(NULL, err, sizeof err);
    CHECK(sandbox_load_cached(sb, code, strlen(code), "=big", err, sizeof err) == SANDBOX_OK);
    sandbox_free(sb);
    sb = sandbox_new(&lim, err, sizeof err);
    sandbox_status st = sandbox_load_cached(sb, code, strlen(code), "=big", err, sizeof err);
    CHECK(st == SANDBOX_MEMORY, "memory budget: a cached 200 kB chunk loaded under 96 kB: %s (%s)",
          sandbox_status_name(st), err);
    CHECK(strcmp(err, "memory limit reached (98304 bytes)") == 0, "%s", err);
    sandbox_free(sb);
    free(code);
}

static void test_cache(void)
{
    char err[256] = "";
    sandbox *sb = sandbox_new(NULL, err, sizeof err);
    lua_State *L = sandbox_lua(sb);
    /* empty text, twice (the second from the cache) */
    for (int i = 0; i < 2; i++) {
        CHECK(sandbox_load_cached(sb, "", 0, "=empty", err, sizeof err) == SANDBOX_OK, "%s", err);
        CHECK(sandbox_call(sb, 0, 0, err, sizeof err) == SANDBOX_OK, "%s", err);
    }
    /* a syntax error is reported, and not cached */
    for (int i = 0; i < 2; i++) {
        CHECK(sandbox_load_cached(sb, "return +", 8, "=bad", err, sizeof err) == SANDBOX_ERROR);
        CHECK(strstr(err, "unexpected symbol") != NULL, "%s", err);
    }
    /* more texts than the cache holds: every one still loads and runs,
     * the first ones from the cache on the second round */
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 300; i++) {
            char code[64];
            snprintf(code, sizeof code, "return %d", i);
            CHECK(sandbox_load_cached(sb, code, strlen(code), "=many", err, sizeof err) ==
                      SANDBOX_OK,
                  "%s", err);
            CHECK(sandbox_call(sb, 0, 1, err, sizeof err) == SANDBOX_OK, "%s", err);
            CHECK(lua_tointeger(L, -1) == i, "chunk %d returned %lld", i,
                  (long long)lua_tointeger(L, -1));
            lua_pop(L, 1);
        }
    }
    sandbox_free(sb);
}

/* A skill that polls sandbox_alive, sees the cancel and returns (instead of
 * raising): the script's results do not count, the status is the limit's. */
static int gives_up(lua_State *L)
{
    lua_pushboolean(L, sandbox_alive(sandbox_from_lua(L)));
    return 1;
}

static void test_skill_that_gives_up(void)
{
    char err[256] = "";
    sandbox *sb = sandbox_new(NULL, err, sizeof err);
    lua_State *L = sandbox_lua(sb);
    sandbox_set_global(sb, "gives_up", gives_up, NULL);
    const char code[] = "return gives_up(), 'done'";
    CHECK(sandbox_load(sb, code, strlen(code), "=s", err, sizeof err) == SANDBOX_OK);
    int base = lua_gettop(L) - 1;
    sandbox_cancel(sb);
    CHECK(sandbox_call(sb, 0, LUA_MULTRET, err, sizeof err) == SANDBOX_CANCELLED,
          "cancel: a script whose skill saw the cancel ended as if nothing happened");
    CHECK(strcmp(err, "cancelled") == 0, "%s", err);
    CHECK(lua_gettop(L) == base, "the results of a cancelled call were kept (%d values)",
          lua_gettop(L) - base);
    sandbox_free(sb);
}

static void test_memory_error_text(void)
{
    /* the words alone are a plain error: only a real refusal is the limit */
    char err[256] = "";
    sandbox *sb = sandbox_new(NULL, err, sizeof err);
    CHECK(run(sb, "error('not enough memory', 0)", err, sizeof err) == SANDBOX_ERROR);
    CHECK(strcmp(err, "not enough memory") == 0, "%s", err);
    CHECK(sandbox_poison(sb) == SANDBOX_OK);
    CHECK(run(sb, "error({})", err, sizeof err) == SANDBOX_ERROR);
    CHECK(strcmp(err, "(error object is a table value)") == 0, "%s", err);
    sandbox_free(sb);
}

/*
 * A refusal that Lua does not retry (a lauxlib buffer) and that the script
 * catches is judged at the next hook: after a collection it fits (garbage
 * made room: table.concat's buffer, refused while the collector was
 * stopped) and the script runs on, or it still does not (string.rep's
 * result is bigger than all there is left) and the state is poisoned.
 */
static void test_caught_refusal(void)
{
    const char *fmt = "local parts = {} for i = 1, 1500 do parts[i] = ('x'):rep(103) end "
                      "local function junk() local j = {} for i = 1, %d do j[i] = ('z'):rep(99) "
                      ".. i end end junk() "
                      "local ok, e = pcall(%s) assert(not ok, 'it fitted') "
                      "caught = e for i = 1, 5000 do end return caught";
    struct {
        int junk;
        const char *call;
        size_t cap;
        sandbox_status want;
    } cases[] = {
        {3000, "table.concat, parts", 800 * 1024, SANDBOX_OK},
        {0, "string.rep, 'y', 200000", 300 * 1024, SANDBOX_MEMORY},
    };
    /* the same refusal not caught: judged when it reaches the host */
    char err[256] = "";
    sandbox_limits lim = {.max_memory = 300 * 1024};
    sandbox *sb = sandbox_new(&lim, err, sizeof err);
    CHECK(run(sb, "local keep = ('x'):rep(200000) local s = ('y'):rep(200000)", err, sizeof err) ==
              SANDBOX_MEMORY,
          "memory budget: an uncaught refusal of string.rep: %s", err);
    CHECK(strcmp(err, "memory limit reached (307200 bytes)") == 0, "%s", err);
    sandbox_free(sb);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char code[600], err[256] = "";
        snprintf(code, sizeof code, fmt, cases[i].junk, cases[i].call);
        sandbox_limits lim = {.max_memory = cases[i].cap};
        sandbox *sb = sandbox_new(&lim, err, sizeof err);
        lua_gc(sandbox_lua(sb), LUA_GCSTOP);
        sandbox_status st = run(sb, code, err, sizeof err);
        CHECK(st == cases[i].want, "memory budget: a caught refusal of %s: %s (%s)", cases[i].call,
              sandbox_status_name(st), err);
        sandbox_free(sb);
    }
}

static void test_environment_edges(void)
{
    char err[256] = "";
    sandbox *sb = sandbox_new(NULL, err, sizeof err);
    const char *ok[] = {
        /* rawset on a plain table, and a new global through rawset */
        "local t = {} assert(rawset(t, 'a', 1) == t and t.a == 1)",
        "rawset(_G, 'fresh', 5) assert(fresh == 5)",
        /* xpcall whose function yields and is resumed */
        "local co = coroutine.wrap(function() return xpcall(function() "
        "coroutine.yield(1) return 2 end, tostring) end) "
        "assert(co() == 1) local ok, v = co() assert(ok == true and v == 2)",
        /* xpcall that succeeds: true and the results */
        "local ok, a, b = xpcall(function(x) return x, 2 end, tostring, 1) "
        "assert(ok == true and a == 1 and b == 2)",
        /* a wrapped coroutine raising the memory error's text: passed on as
         * it is (no position added), and the script runs on */
        "local f = coroutine.wrap(function() error('not enough memory', 0) end) "
        "local ok, e = pcall(f) assert(not ok and e == 'not enough memory', e)",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        CHECK(run(sb, ok[i], err, sizeof err) == SANDBOX_OK, "%s: %s", ok[i], err);

    struct {
        const char *code, *msg;
    } bad[] = {
        {"string[1] = 2", "attempt to modify a read-only table (field '?')"},
        {"local s = ('x'):rep(2^31)", "resulting string too large"},
        {"local s = ('xy'):rep(2^30, ',')", "resulting string too large"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(run(sb, bad[i].code, err, sizeof err) == SANDBOX_ERROR, "%s", bad[i].code);
        CHECK(strstr(err, bad[i].msg) != NULL, "%s: '%s'", bad[i].code, err);
    }
    sandbox_free(sb);

    /* print's buffer: a first value that fills it exactly, then a tab and a
     * newline that must grow it */
    sb = sandbox_new(NULL, err, sizeof err);
    CHECK(run(sb, "print(('x'):rep(1024)) print(('y'):rep(1024), 'z')", err, sizeof err) ==
          SANDBOX_OK);
    size_t len;
    const char *out = sandbox_output(sb, &len);
    CHECK(len == 1025 + 1027, "print wrote %zu bytes", len);
    CHECK(len == 1025 + 1027 && out[1023] == 'x' && out[1024] == '\n' && out[1025] == 'y' &&
              out[2049] == '\t' && out[2050] == 'z' && out[2051] == '\n',
          "print's output is not the values, tab-separated, newline-ended");
    sandbox_free(sb);
}

int main(void)
{
    test_status_names();
    test_new_and_free();
    test_poisoned_state_runs_nothing();
    test_load_past_the_memory_cap();
    test_cache();
    test_skill_that_gives_up();
    test_memory_error_text();
    test_caught_refusal();
    test_environment_edges();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_sandbox_paths: all checks passed\n");
    return failures ? 1 : 0;
}
