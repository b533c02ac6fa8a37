/*
 * The coroutine library as scripts see it: Lua's own, except for the two
 * functions that close a dead coroutine, which could otherwise run Lua code
 * with no hook after a limit (SPEC §6).
 *
 * Why. Lua calls the count hook with the thread's hooks switched off and
 * switches them back on when the hook returns. The limit error is raised from
 * inside the hook, so it never returns: luaD_pcall restores the flag when it
 * catches the error, but lua_resume does not, and a coroutine that dies of
 * the limit error keeps its hooks off for good. Closing it (coroutine.close,
 * or the error path of a coroutine.wrap function, both through
 * lua_resetthread) would then run its pending __close handlers with no hook
 * at all: a loop there would ignore every budget, the deadline and cancel.
 *
 * Policy. Once the sandbox is poisoned (the only state in which a thread can
 * have died inside the hook), coroutine.close, coroutine.resume and a
 * coroutine.wrap function raise the limit error again instead of acting:
 * a dead coroutine's to-be-closed variables are never run, a suspended one is
 * never resumed. Before any limit, they behave as Lua's own (the hooks of
 * every thread are on, so whatever they run is counted). This rests on the
 * poison being for good: a sandbox is never reset (budgets are per mission,
 * and every plan of a mission runs in the same state), so a thread that died
 * in the hook can never meet a state that lets it be closed.
 *
 * Two bugs of Lua 5.4.4 are fenced here too (docs/lua-bugs.md): closing a
 * coroutine restarts its count of nested C calls, so these functions measure
 * the C stack themselves (sandbox_check_cstack); and a coroutine suspended
 * inside xpcall is closed with a stale message handler, so coroutine.close
 * refuses one (checked_close).
 *
 * The other ways to a thread's __close handlers run nothing: resuming a dead
 * coroutine is refused by lua_resume, collecting a thread closes only its
 * upvalues, and lua_close closes only the main thread's (on which sandbox_call
 * has restored the hooks).
 */
#include "sandbox/sandbox_internal.h"

#include <lauxlib.h>

/* coroutine.close and coroutine.resume (upvalue 1: Lua's own), refused
 * once a limit has tripped. A limit that trips inside the coroutine comes
 * back as resume's "false, error": checked again on return, so that the
 * resuming thread gets the limit error (and its hook re-armed at count 1)
 * at once, instead of running on until its own next count hook. */
static int checked_call(lua_State *L)
{
    sandbox_check(L);
    sandbox_check_cstack(L);
    /* here, so that a bad argument names the function ('coroutine.close') */
    luaL_checktype(L, 1, LUA_TTHREAD);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    sandbox_check(L);
    return lua_gettop(L);
}

/* coroutine.close: checked_call, refusing a coroutine suspended inside
 * xpcall, which Lua 5.4.4 would close with a message handler taken from a
 * stack slot its __close handlers overwrite (env.c, count_xpcall). */
static int checked_close(lua_State *L)
{
    lua_State *co = lua_tothread(L, 1);
    if (co && co != L && lua_status(co) == LUA_YIELD && sandbox_env_in_xpcall(L, co))
        return luaL_error(L, "cannot close a coroutine suspended inside xpcall; "
                             "resume it until the xpcall returns");
    return checked_call(L);
}

/* Resumes CO with the NARG values on top of L; moves its results (returning
 * their count) or its error (returning -1) to L. As lcorolib's auxresume. */
static int resume_co(lua_State *L, lua_State *co, int narg)
{
    if (!lua_checkstack(co, narg)) {
        lua_pushliteral(L, "too many arguments to resume");
        return -1;
    }
    lua_xmove(L, co, narg);
    int nres = 0;
    int status = lua_resume(co, L, narg, &nres);
    if (status == LUA_OK || status == LUA_YIELD) {
        if (!lua_checkstack(L, nres + 1)) {
            lua_pop(co, nres);
            lua_pushliteral(L, "too many results to resume");
            return -1;
        }
        lua_xmove(co, L, nres);
        return nres;
    }
    lua_xmove(co, L, 1);
    return -1;
}

/* The function coroutine.wrap returns; upvalue 1: the coroutine. */
static int wrapped(lua_State *L)
{
    lua_State *co = lua_tothread(L, lua_upvalueindex(1));
    sandbox_check(L);
    sandbox_check_cstack(L);
    int r = resume_co(L, co, lua_gettop(L));
    sandbox_check(L); /* a limit inside: raised here too (see checked_call) */
    if (r >= 0) return r;
    int stat = lua_status(co);
    if (stat != LUA_OK && stat != LUA_YIELD) {
        /* Died, no limit having tripped (checked above): close its
         * to-be-closed variables, then check again. */
        lua_pop(L, 1);
        stat = lua_resetthread(co);
        lua_xmove(co, L, 1);
        sandbox_check(L);
    }
    if (stat != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_error(L);
}

static int sandbox_wrap(lua_State *L)
{
    sandbox_check(L);
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_State *co = lua_newthread(L);
    lua_pushvalue(L, 1);
    lua_xmove(L, co, 1);
    lua_pushcclosure(L, wrapped, 1);
    return 1;
}

void sandbox_env_coroutine(lua_State *L, int co)
{
    co = lua_absindex(L, co);
    lua_getfield(L, co, "close");
    lua_pushcclosure(L, checked_close, 1);
    lua_setfield(L, co, "close");
    lua_getfield(L, co, "resume");
    lua_pushcclosure(L, checked_call, 1);
    lua_setfield(L, co, "resume");
    lua_pushcfunction(L, sandbox_wrap);
    lua_setfield(L, co, "wrap");
}
