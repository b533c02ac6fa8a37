/*
 * The sandbox environment: the one place that decides what a script can see.
 *
 * Policy. A script (a plan, a skill file, an `aloft lua` script) sees exactly
 * these globals, and nothing else:
 *
 *   assert error ipairs next pairs pcall xpcall print select type tonumber
 *   tostring rawequal rawget rawlen rawset getmetatable setmetatable _VERSION
 *   _G  string table math utf8 coroutine  os.clock os.time
 *   + every skill, bound by host/skills/skills.c
 *
 * Left out on purpose: load, loadstring, dofile, loadfile, require, package,
 * io, the rest of os, debug, collectgarbage, warn, string.dump. They reach
 * the file system, the process, or the VM's internals.
 *
 * Pattern matching (string.match/gmatch/gsub, pattern find) runs inside one C
 * call that the instruction hook cannot interrupt, and a crafted pattern can
 * take exponential time: only plain search is offered. Other library
 * functions that loop in C over a caller-chosen range are bounded: string.rep
 * (allocates, so the memory cap bounds it; the empty-string case is answered
 * at once) and table.move (charged to the instruction budget per element).
 *
 * Nothing shared can be changed: library tables are read-only proxies, the
 * string metatable is hidden (getmetatable("") is false), each chunk gets its
 * own global table whose reads fall back to the base environment and whose
 * writes may add globals but never replace a built-in or a skill, and
 * rawset/setmetatable refuse to get around that. setmetatable refuses
 * metatables with __gc: a finalizer would run at collection time, outside any
 * script's control (and at lua_close, after the limits have been reported).
 *
 * After a limit, no script code runs without the hook: xpcall's message
 * handler is skipped for the limit error (below), and a coroutine that died
 * of a limit is never closed, so its __close handlers never run
 * (env_coroutine.c says why and how).
 */
#include "sandbox/sandbox_internal.h"

#include <lauxlib.h>
#include <lualib.h>
#include <string.h>

/* Registry keys (addresses) of the weak sets of protected tables. */
static const char readonly_key = 'R';
static const char envs_key = 'E';

static const char *const base_globals[] = {
    "assert",   "error",    "ipairs",   "next",   "pairs",  "pcall",        "select",   "type",
    "tonumber", "tostring", "rawequal", "rawget", "rawlen", "getmetatable", "_VERSION", NULL,
};

static const char *const string_removed[] = {"dump", "match", "gmatch", "gsub", NULL};

/* ---- weak sets -------------------------------------------------------------- */

static void push_weak_set(lua_State *L, const void *key)
{
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, key) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_newtable(L);
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, key);
    }
}

static bool in_weak_set(lua_State *L, const void *key, int idx)
{
    idx = lua_absindex(L, idx);
    push_weak_set(L, key);
    lua_pushvalue(L, idx);
    bool found = lua_rawget(L, -2) != LUA_TNIL;
    lua_pop(L, 2);
    return found;
}

static void add_to_weak_set(lua_State *L, const void *key, int idx)
{
    idx = lua_absindex(L, idx);
    push_weak_set(L, key);
    lua_pushvalue(L, idx);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* ---- read-only proxies ---------------------------------------------------- */

static int readonly_newindex(lua_State *L)
{
    return luaL_error(L, "attempt to modify a read-only table (field '%s')",
                      lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "?");
}

/* The iterator pairs returns for a proxy; upvalue 1: the real table. It
 * ignores its first argument (the proxy), so the real table is never handed
 * to the script: pairs' usual triple (next, t, nil) would give it away. */
static int readonly_next(lua_State *L)
{
    lua_settop(L, 2);
    if (lua_next(L, lua_upvalueindex(1))) return 2;
    lua_pushnil(L);
    return 1;
}

/* __pairs of a proxy; upvalue 1: the iterator above. Returns (iterator,
 * proxy, nil): every value the script gets back is the proxy's own. */
static int readonly_pairs(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

static int readonly_len(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)lua_rawlen(L, lua_upvalueindex(1)));
    return 1;
}

void sandbox_env_make_readonly(lua_State *L)
{
    int real = lua_gettop(L);
    lua_newtable(L); /* proxy */
    lua_newtable(L); /* its metatable */
    lua_pushvalue(L, real);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushvalue(L, real);
    lua_pushcclosure(L, readonly_next, 1);
    lua_pushcclosure(L, readonly_pairs, 1);
    lua_setfield(L, -2, "__pairs");
    lua_pushvalue(L, real);
    lua_pushcclosure(L, readonly_len, 1);
    lua_setfield(L, -2, "__len");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    add_to_weak_set(L, &readonly_key, -1);
    lua_replace(L, real);
}

/* ---- replacements for unsafe functions ------------------------------------ */

static int sandbox_print(lua_State *L)
{
    sandbox *sb = sandbox_from_lua(L);
    int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        if (i > 1) luaL_addchar(&b, '\t');
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b);
    }
    luaL_addchar(&b, '\n');
    luaL_pushresult(&b);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    sandbox_write(sb, s, len);
    return 0;
}

static int sandbox_rawset(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    if (in_weak_set(L, &readonly_key, 1)) return readonly_newindex(L);
    if (in_weak_set(L, &envs_key, 1)) {
        /* the base environment is the metatable's __index, hidden from Lua */
        lua_getmetatable(L, 1);
        lua_getfield(L, -1, "__index");
        lua_pushvalue(L, 2);
        bool builtin = lua_rawget(L, -2) != LUA_TNIL;
        lua_pop(L, 3);
        if (builtin)
            return luaL_error(L, "cannot replace the built-in '%s'",
                              lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "?");
    }
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

static int sandbox_setmetatable(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)
            return luaL_error(L, "__gc metamethods are not allowed in the sandbox");
        lua_pop(L, 1);
    }
    lua_pushvalue(L, lua_upvalueindex(1)); /* the original setmetatable */
    lua_insert(L, 1);
    lua_settop(L, 3);
    lua_call(L, 2, 1);
    return 1;
}

static bool has_pattern_chars(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (strchr("^$*+?.([%-", p[i])) return true;
    return false;
}

/* string.find with plain search only (memmem is linear in the input). */
static int sandbox_find(lua_State *L)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    lua_Integer init = luaL_optinteger(L, 3, 1);
    if (!lua_toboolean(L, 4) && has_pattern_chars(p, lp))
        return luaL_error(L, "patterns are not available in the sandbox; "
                             "use string.find(s, text, init, true) for a plain search");
    if (init < 0) init = init < -(lua_Integer)ls ? 1 : (lua_Integer)ls + init + 1;
    if (init == 0) init = 1;
    if ((size_t)init > ls + 1) {
        luaL_pushfail(L);
        return 1;
    }
    size_t from = (size_t)init - 1;
    const char *hit = lp == 0 ? s + from : memmem(s + from, ls - from, p, lp);
    if (!hit) {
        luaL_pushfail(L);
        return 1;
    }
    lua_pushinteger(L, (lua_Integer)(hit - s) + 1);
    lua_pushinteger(L, (lua_Integer)(hit - s) + (lua_Integer)lp);
    return 2;
}

/* string.rep that allocates its result first, so the memory cap bounds it. */
static int sandbox_rep(lua_State *L)
{
    size_t ls, lsep = 0;
    const char *s = luaL_checklstring(L, 1, &ls);
    lua_Integer n = luaL_checkinteger(L, 2);
    const char *sep = luaL_optlstring(L, 3, "", &lsep);
    if (n <= 0 || ls + lsep == 0) {
        lua_pushliteral(L, "");
        return 1;
    }
    if (ls + lsep < ls || ls + lsep > (size_t)0x7fffffff / (size_t)n)
        return luaL_error(L, "resulting string too large");
    size_t total = (size_t)n * ls + (size_t)(n - 1) * lsep;
    sandbox_make_room(L, total);
    luaL_Buffer b;
    char *p = luaL_buffinitsize(L, &b, total);
    /* The copy is work the hook never sees: charge it once the memory is
     * there (one instruction per 256 bytes), or a loop of big reps burns
     * CPU for minutes on a few thousand instructions. */
    sandbox_charge(L, total / 256);
    for (lua_Integer i = 0; i < n; i++) {
        memcpy(p, s, ls);
        p += ls;
        if (i + 1 < n && lsep) {
            memcpy(p, sep, lsep);
            p += lsep;
        }
    }
    luaL_pushresultsize(&b, total);
    return 1;
}

/* table.move, charged one instruction per element moved. */
static int sandbox_move(lua_State *L)
{
    lua_Integer f = luaL_checkinteger(L, 2);
    lua_Integer e = luaL_checkinteger(L, 3);
    if (e >= f) {
        lua_Unsigned count = (lua_Unsigned)e - (lua_Unsigned)f + 1u;
        sandbox_charge(L, count > (1ull << 62) ? (1ull << 62) : (uint64_t)count);
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

/*
 * xpcall with a guarded message handler. Lua calls the handler at the point
 * of the error, before unwinding; for the limit error that point is inside
 * the count hook, where hooks are off, so a handler that loops would never
 * be stopped. The guard passes limit errors through without running the
 * script's handler.
 */
static int guarded_handler(lua_State *L)
{
    sandbox *sb = sandbox_from_lua(L);
    if (sandbox_poison(sb) != SANDBOX_OK || sandbox_is_limit_error(L, 1)) return 1;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

/*
 * A coroutine that yields inside xpcall keeps xpcall's message handler as
 * its error function. Lua 5.4.4 closes such a coroutine with that setting
 * still in place (fixed upstream in 3fe7be95), while its __close handlers
 * reuse the stack slot the handler was in: a handler that stores a looping
 * function there and raises an error has it run as the message handler,
 * inside the error machinery, with no hook, past every budget and signal.
 * So xpcall counts, per thread, the calls it has in progress, and
 * coroutine.close refuses a coroutine suspended inside one
 * (env_coroutine.c).
 */
static const char xpcalls_key = 'X'; /* weak table: thread -> xpcalls in progress */

static void count_xpcall(lua_State *L, int delta)
{
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &xpcalls_key) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_newtable(L);
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &xpcalls_key);
    }
    lua_pushthread(L);
    lua_Integer n = (lua_rawget(L, -2) == LUA_TNUMBER ? lua_tointeger(L, -1) : 0) + delta;
    lua_pop(L, 1);
    lua_pushthread(L);
    if (n > 0)
        lua_pushinteger(L, n);
    else
        lua_pushnil(L);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

bool sandbox_env_in_xpcall(lua_State *L, lua_State *co)
{
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &xpcalls_key) != LUA_TTABLE) {
        lua_pop(L, 1);
        return false;
    }
    lua_pushthread(co);
    lua_xmove(co, L, 1);
    bool in = lua_rawget(L, -2) != LUA_TNIL;
    lua_pop(L, 2);
    return in;
}

static int xpcall_finish(lua_State *L, int status, lua_KContext extra)
{
    count_xpcall(L, -1);
    if (status != LUA_OK && status != LUA_YIELD) {
        lua_pushboolean(L, 0);
        lua_pushvalue(L, -2);
        return 2;
    }
    return lua_gettop(L) - (int)extra;
}

static int sandbox_xpcall(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, guarded_handler, 1);
    lua_replace(L, 2);
    /* stack: f, handler, args...  ->  f, handler, true, f, args... */
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2);
    count_xpcall(L, 1);
    int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, xpcall_finish);
    return xpcall_finish(L, status, 2);
}

/* ---- building ------------------------------------------------------------- */

/* Pushes a new table with the fields NAMES of the table at IDX. */
static void copy_fields(lua_State *L, int idx, const char *const *names)
{
    idx = lua_absindex(L, idx);
    lua_newtable(L);
    for (const char *const *n = names; *n; n++) {
        lua_getfield(L, idx, *n);
        lua_setfield(L, -2, *n);
    }
}

static void wrap_field(lua_State *L, int tbl, const char *name, lua_CFunction fn)
{
    lua_getfield(L, tbl, name);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, tbl, name);
}

void sandbox_env_build(lua_State *L)
{
    /* Open the libraries we keep; their tables are reachable only from here. */
    luaL_requiref(L, "_G", luaopen_base, 0);
    luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 0);
    luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 0);
    luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 0);
    luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 0);
    luaL_requiref(L, LUA_COLIBNAME, luaopen_coroutine, 0);
    luaL_requiref(L, LUA_OSLIBNAME, luaopen_os, 0);
    int g = lua_gettop(L) - 6, str = g + 1, tab = g + 2, math = g + 3, utf8 = g + 4, co = g + 5,
        os = g + 6;

    /* string: the same table is the string metatable's __index, so methods
     * ("x"):find(...) get the same restrictions. */
    for (const char *const *n = string_removed; *n; n++) {
        lua_pushnil(L);
        lua_setfield(L, str, *n);
    }
    lua_pushcfunction(L, sandbox_find);
    lua_setfield(L, str, "find");
    lua_pushcfunction(L, sandbox_rep);
    lua_setfield(L, str, "rep");
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        lua_pushboolean(L, 0);
        lua_setfield(L, -2, "__metatable");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);

    wrap_field(L, tab, "move", sandbox_move);
    sandbox_env_coroutine(L, co);

    /* The base environment. */
    copy_fields(L, g, base_globals);
    int base = lua_gettop(L);
    lua_pushcfunction(L, sandbox_print);
    lua_setfield(L, base, "print");
    lua_pushcfunction(L, sandbox_xpcall);
    lua_setfield(L, base, "xpcall");
    lua_pushcfunction(L, sandbox_rawset);
    lua_setfield(L, base, "rawset");
    lua_getfield(L, g, "setmetatable");
    lua_pushcclosure(L, sandbox_setmetatable, 1);
    lua_setfield(L, base, "setmetatable");

    const char *const os_kept[] = {"clock", "time", NULL};
    copy_fields(L, os, os_kept);
    sandbox_env_make_readonly(L);
    lua_setfield(L, base, "os");

    struct {
        const char *name;
        int idx;
    } libs[] = {{"string", str}, {"table", tab}, {"math", math}, {"utf8", utf8}, {"coroutine", co}};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
        lua_pushvalue(L, libs[i].idx);
        sandbox_env_make_readonly(L);
        lua_setfield(L, base, libs[i].name);
    }

    /* Leave only the base table. */
    lua_replace(L, g);
    lua_settop(L, g);
}

static int env_newindex(lua_State *L)
{
    /* upvalue 1: the base environment */
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL)
        return luaL_error(L, "cannot replace the built-in '%s'",
                          lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "?");
    lua_pop(L, 1);
    lua_rawset(L, 1);
    return 0;
}

void sandbox_env_new_chunk_env(lua_State *L, int base_idx)
{
    base_idx = lua_absindex(L, base_idx);
    lua_newtable(L);
    lua_newtable(L);
    lua_pushvalue(L, base_idx);
    lua_setfield(L, -2, "__index");
    lua_pushvalue(L, base_idx);
    lua_pushcclosure(L, env_newindex, 1);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "_G");
    add_to_weak_set(L, &envs_key, -1);
}

void sandbox_env_set_base(lua_State *L, int base_idx, const char *name)
{
    base_idx = lua_absindex(L, base_idx);
    lua_setfield(L, base_idx, name);
}
