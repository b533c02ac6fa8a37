/*
 * The stream executor: the controller side of stream.h. Every chunk gets the
 * plan's variable table as its one argument; a chunk that returns a value
 * ends the plan with it.
 */
#include "minispec/stream_exec.h"

#include <ctype.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct exec_frame {
    bool active;
} exec_frame;

struct ms_exec {
    sandbox *sb;
    int vars_ref, result_ref;
    bool finished;
    bool cached; /* ms_exec_cache_statements */
    exec_frame *frames;
    int nframes, cap_frames;
    int statements;
    bool cond_taken; /* the last condition block closed was active */
};

void ms_exec_cache_statements(ms_exec *x)
{
    x->cached = true;
}

ms_exec *ms_exec_new(sandbox *sb)
{
    ms_exec *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    lua_State *L = sandbox_lua(sb);
    x->sb = sb;
    lua_newtable(L);
    x->vars_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    x->result_ref = LUA_REFNIL;
    return x;
}

void ms_exec_free(ms_exec *x)
{
    if (!x) return;
    lua_State *L = sandbox_lua(x->sb);
    luaL_unref(L, LUA_REGISTRYINDEX, x->vars_ref);
    luaL_unref(L, LUA_REGISTRYINDEX, x->result_ref);
    free(x->frames);
    free(x);
}

static bool active(const ms_exec *x)
{
    return !x->finished && (x->nframes == 0 || x->frames[x->nframes - 1].active);
}

static void push_frame(ms_exec *x, bool on)
{
    if (x->nframes == x->cap_frames) {
        x->cap_frames = x->cap_frames ? x->cap_frames * 2 : 8;
        x->frames = realloc(x->frames, (size_t)x->cap_frames * sizeof *x->frames);
        if (!x->frames) abort();
    }
    x->frames[x->nframes++].active = on;
}

/* Runs CODE with the variable table; leaves its results counted in *NRES. */
static sandbox_status run_chunk(ms_exec *x, const ms_event *ev, int *nres, char *err, size_t errlen)
{
    lua_State *L = sandbox_lua(x->sb);
    int base = lua_gettop(L);
    char name[48];
    snprintf(name, sizeof name, "=plan %d:%d", ev->line, ev->col);
    sandbox_status st = x->cached
                            ? sandbox_load_cached(x->sb, ev->lua, ev->lua_len, name, err, errlen)
                            : sandbox_load(x->sb, ev->lua, ev->lua_len, name, err, errlen);
    if (st != SANDBOX_OK) return st;
    lua_rawgeti(L, LUA_REGISTRYINDEX, x->vars_ref);
    st = sandbox_call(x->sb, 1, LUA_MULTRET, err, errlen);
    *nres = st == SANDBOX_OK ? lua_gettop(L) - base : 0;
    return st;
}

/* The length of a leading "SRC:LINE: " in MSG when SRC is a chunk of the
 * project's own Lua (lua/minispec.lua, skills/scan.lua) or the Lua a
 * statement compiled to ("plan 3:1"); else 0. A user's skill file keeps its
 * position: that line is theirs. */
static size_t project_position(const char *msg)
{
    bool ours = strncmp(msg, "lua/", 4) == 0 || strncmp(msg, "skills/", 7) == 0 ||
                strncmp(msg, "plan ", 5) == 0;
    if (!ours) return 0;
    const char *colon = strchr(msg, ':');
    /* "plan 3:1:7: ": the chunk's own name holds a colon */
    if (colon && msg[0] == 'p') colon = strchr(colon + 1, ':');
    if (!colon || !isdigit((unsigned char)colon[1])) return 0;
    const char *p = colon + 1;
    while (isdigit((unsigned char)*p))
        p++;
    if (p[0] != ':' || p[1] != ' ') return 0;
    return (size_t)(p + 2 - msg);
}

/* A runtime error in the plan's own terms: "LINE:COL: message" at the
 * statement that failed, as the checker's diagnostics read, without the
 * positions of Lua the plan's author never wrote. */
static void in_plan_terms(const ms_event *ev, char *err, size_t errlen)
{
    char msg[1024];
    const char *m = err;
    for (size_t n; (n = project_position(m)) > 0;)
        m += n;
    snprintf(msg, sizeof msg, "%s", m);
    snprintf(err, errlen, "%d:%d: %s", ev->line, ev->col, msg);
}

/* A chunk that returned values ended the plan: keep the first as result. */
static void finish_with(ms_exec *x, int nres)
{
    lua_State *L = sandbox_lua(x->sb);
    lua_pop(L, nres - 1);
    x->result_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    x->finished = true;
}

sandbox_status ms_exec_event(ms_exec *x, const ms_event *ev, char *err, size_t errlen)
{
    lua_State *L = sandbox_lua(x->sb);
    int nres = 0;
    sandbox_status st = SANDBOX_OK;
    switch (ev->kind) {
    case MS_EV_STATEMENT:
        if (!active(x)) break;
        x->statements++;
        st = run_chunk(x, ev, &nres, err, errlen);
        if (st == SANDBOX_OK && nres > 0) finish_with(x, nres);
        break;
    case MS_EV_BLOCK_BEGIN:
        if (ev->block == MS_BLOCK_ELSE) { /* runs when its condition's block did not */
            push_frame(x, active(x) && !x->cond_taken);
            break;
        }
        if (ev->block == MS_BLOCK_LOOP || !active(x)) {
            push_frame(x, active(x));
            break;
        }
        st = run_chunk(x, ev, &nres, err, errlen);
        if (st != SANDBOX_OK) break;
        push_frame(x, nres > 0 && lua_toboolean(L, -nres));
        lua_pop(L, nres);
        break;
    case MS_EV_BLOCK_END: {
        bool was_active = x->nframes > 0 && x->frames[x->nframes - 1].active;
        if (x->nframes > 0) x->nframes--;
        if (ev->block == MS_BLOCK_COND) x->cond_taken = was_active;
        if (ev->block != MS_BLOCK_LOOP || !was_active || x->finished || ev->count < 2) break;
        st = run_chunk(x, ev, &nres, err, errlen);
        if (st == SANDBOX_OK && nres > 0) finish_with(x, nres);
        break;
    }
    case MS_EV_ERROR:
        snprintf(err, errlen, "%d:%d: %s", ev->diag ? ev->diag->line : 0,
                 ev->diag ? ev->diag->col : 0, ev->diag ? ev->diag->message : "invalid plan");
        st = SANDBOX_ERROR;
        break;
    default: break;
    }
    /* A limit's message is the sandbox's own; any other error of a chunk
     * is told at its statement. */
    if (st == SANDBOX_ERROR && ev->kind != MS_EV_ERROR) in_plan_terms(ev, err, errlen);
    if (st != SANDBOX_OK) x->finished = true;
    return st;
}

bool ms_exec_finished(const ms_exec *x)
{
    return x->finished;
}

void ms_exec_push_result(ms_exec *x)
{
    lua_rawgeti(sandbox_lua(x->sb), LUA_REGISTRYINDEX, x->result_ref);
}

int ms_exec_statements_run(const ms_exec *x)
{
    return x->statements;
}
