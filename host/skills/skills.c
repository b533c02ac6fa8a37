/*
 * The single path from Lua to a skill (see skills.h): every skill global is a
 * closure around skills_dispatch with its binding as upvalue.
 */
#include "skills/skills.h"
#include "skills/builtin.h"

#include "clock.h"
#include "drone/heading.h"
#include "embedded.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct skill_binding {
    skill_ctx *ctx;
    const skill *skill;
    int run_ref; /* high-level: registry reference of the run function */
} skill_binding;

/* skill_ctx keeps its bindings here; allocated by skills_bind. */
typedef struct binding_table {
    skill_binding *items;
    size_t n;
} binding_table;

static const char ctx_key = 'C';

skill_ctx *skills_ctx(lua_State *L)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &ctx_key);
    skill_ctx *ctx = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return ctx;
}

/* ---- values ------------------------------------------------------------------ */

/* The value at IDX of L as a skill_value (see skill_journal.h). 0, or -1 when
 * out of memory (V is then NIL). */
static int value_at(lua_State *L, int idx, skill_value *v)
{
    memset(v, 0, sizeof *v);
    switch (lua_type(L, idx)) {
    case LUA_TNIL:
    case LUA_TNONE: return 0;
    case LUA_TBOOLEAN:
        v->kind = SKILL_VALUE_BOOL;
        v->b = lua_toboolean(L, idx);
        return 0;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) {
            v->kind = SKILL_VALUE_INT;
            v->i = (long long)lua_tointeger(L, idx);
        } else {
            v->kind = SKILL_VALUE_NUM;
            v->n = lua_tonumber(L, idx);
        }
        return 0;
    case LUA_TSTRING: return skill_value_set_str(v, SKILL_VALUE_STR, lua_tostring(L, idx));
    default: return skill_value_set_str(v, SKILL_VALUE_OTHER, luaL_typename(L, idx));
    }
}

/* The arguments 1..N of L as a malloc'd array (NULL when N is 0). -1 when
 * out of memory. */
static int values_at(lua_State *L, int n, skill_value **out)
{
    *out = NULL;
    if (n <= 0) return 0;
    skill_value *v = calloc((size_t)n, sizeof *v);
    if (!v) return -1;
    for (int i = 0; i < n; i++)
        if (value_at(L, i + 1, &v[i])) {
            for (int j = 0; j < i; j++)
                skill_value_free(&v[j]);
            free(v);
            return -1;
        }
    *out = v;
    return 0;
}

/* ---- argument checking ----------------------------------------------------------- */

static const char *plural(int n)
{
    return n == 1 ? "" : "s";
}

/* Checks and converts argument I (1-based) to the declared type, in place. */
static void check_arg(lua_State *L, const skill *s, int i)
{
    const skill_arg *a = &s->args[i - 1];
    int t = lua_type(L, i);
    if (t == LUA_TNIL && a->optional) return;
    switch (a->type) {
    case SKILL_T_INT:
        if (t == LUA_TNUMBER) {
            if (!lua_isinteger(L, i)) {
                double v = lua_tonumber(L, i);
                if (!isfinite(v) || fabs(v) > 1e9)
                    luaL_error(L, "%s: %s must be a finite number", s->name, a->name);
                lua_pushinteger(L, (lua_Integer)llround(v));
                lua_replace(L, i);
            }
            return;
        }
        break;
    case SKILL_T_FLOAT:
        if (t == LUA_TNUMBER) return;
        break;
    case SKILL_T_STR:
        if (t == LUA_TSTRING) return;
        if (t == LUA_TNUMBER || t == LUA_TBOOLEAN) {
            /* MiniSpec prints booleans as True/False */
            if (t == LUA_TBOOLEAN)
                lua_pushstring(L, lua_toboolean(L, i) ? "True" : "False");
            else
                luaL_tolstring(L, i, NULL);
            lua_replace(L, i);
            return;
        }
        break;
    case SKILL_T_BOOL:
        if (t == LUA_TBOOLEAN) return;
        break;
    default: return;
    }
    luaL_error(L, "%s: argument %d (%s) must be %s, got %s", s->name, i, a->name,
               skill_type_name(a->type), luaL_typename(L, i));
}

static void check_args(lua_State *L, const skill *s)
{
    int n = lua_gettop(L);
    if (n < s->min_args || n > s->nargs) {
        if (s->min_args == s->nargs)
            luaL_error(L, "%s takes %d argument%s, got %d", s->name, s->nargs, plural(s->nargs), n);
        else
            luaL_error(L, "%s takes %d to %d arguments, got %d", s->name, s->min_args, s->nargs, n);
    }
    for (int i = 1; i <= n; i++)
        check_arg(L, s, i);
}

/* ---- events ------------------------------------------------------------------ */

static void emit(skill_ctx *ctx, skill_event_kind kind, const skill *s, const skill_call *c,
                 double t)
{
    if (!ctx->on_event) return;
    skill_event ev = {.kind = kind,
                      .skill = s,
                      .depth = ctx->depth,
                      .args = c->args,
                      .nargs = c->nargs,
                      .ret = kind == SKILL_EVENT_RETURN ? &c->ret : NULL,
                      .t_ms = t};
    ctx->on_event(ctx->event_ud, &ev);
}

/* A violation the log has no room for is still refused and still sent as
 * an event: the motion never happens either way. */
void skills_violation(skill_ctx *ctx, const char *skill_name, const char *reason)
{
    skill_journal_add_violation(&ctx->journal, skill_name, reason, NULL);
    const skill *s = ctx->reg ? registry_find(ctx->reg, skill_name, strlen(skill_name)) : NULL;
    if (s && ctx->on_event) {
        skill_event ev = {.kind = SKILL_EVENT_VIOLATION,
                          .skill = s,
                          .depth = ctx->depth,
                          .t_ms = clock_now_ms() - ctx->t0_ms,
                          .reason = reason};
        ctx->on_event(ctx->event_ud, &ev);
    }
}

/* The watch's violations are nobody's skill: events name this one. */
static const skill monitor_skill = {.name = "monitor", .description = "the measured-state watch"};

void skills_monitor_violation(skill_ctx *ctx, const char *reason, const drone_pose *pose)
{
    drone_pose p = {.x = round(pose->x),
                    .y = round(pose->y),
                    .z = round(pose->z),
                    .yaw = round(heading_wrap(pose->yaw))};
    skill_journal_add_violation(&ctx->journal, "monitor", reason, &p);
    if (ctx->on_event) {
        skill_event ev = {.kind = SKILL_EVENT_VIOLATION,
                          .skill = &monitor_skill,
                          .depth = ctx->depth,
                          .t_ms = clock_now_ms() - ctx->t0_ms,
                          .reason = reason};
        ctx->on_event(ctx->event_ud, &ev);
    }
}

/* ---- dispatch --------------------------------------------------------------- */

static int load_run_function(skill_ctx *ctx, skill_binding *b, char *err, size_t errlen);

/* High-level skills are compiled on first use: most missions call few. */
static int call_high_level(lua_State *L, skill_binding *b, int nargs)
{
    if (b->ctx->run_high) {
        /* the skill's Lua runs where the VM is (a worker process) */
        char err[1024];
        b->ctx->depth++;
        int rc = b->ctx->run_high(b->ctx->run_high_ud, L, b->skill, nargs, err, sizeof err);
        b->ctx->depth--;
        if (rc == 0) return 1;
        sandbox_check(L);
        return luaL_error(L, "%s", err);
    }
    if (b->run_ref == LUA_NOREF) {
        char err[512];
        if (load_run_function(b->ctx, b, err, sizeof err)) {
            sandbox_check(L);
            return luaL_error(L, "%s", err);
        }
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, b->run_ref);
    lua_insert(L, 1);
    b->ctx->depth++;
    int rc = lua_pcall(L, nargs, 1, 0);
    b->ctx->depth--;
    if (rc != LUA_OK) return lua_error(L); /* same error object: limits keep identity */
    return 1;
}

static int skills_dispatch(lua_State *L)
{
    skill_binding *b = lua_touserdata(L, lua_upvalueindex(1));
    skill_ctx *ctx = b->ctx;
    const skill *s = b->skill;
    sandbox_check(L);
    check_args(L, s);
    int nargs = lua_gettop(L);

    double t = clock_now_ms() - ctx->t0_ms;
    /* A call that cannot be recorded does not run: nothing acts unrecorded. */
    skill_value *args;
    int idx = values_at(L, nargs, &args)
                  ? -1
                  : skill_journal_add_call(&ctx->journal, s->name, args, nargs, t);
    if (idx < 0) return luaL_error(L, "%s: out of memory recording the call", s->name);
    if ((s->flags & (SKILL_MOVES | SKILL_SEES)) && ctx->first_action_ms < 0)
        ctx->first_action_ms = t;
    emit(ctx, SKILL_EVENT_CALL, s, &ctx->journal.calls[idx], t);

    int nres;
    if (s->level == SKILL_HIGH) {
        nres = call_high_level(L, b, nargs);
    } else {
        nres = s->fn(ctx, L);
        sandbox_check(L); /* a skill interrupted by a limit must not report success */
    }
    if (nres < 1) {
        lua_pushnil(L);
        nres = 1;
    }
    /* Nested calls may have moved the journal's array: the call is found again
     * by its index. */
    skill_value ret;
    if (value_at(L, -1, &ret))
        return luaL_error(L, "%s: out of memory recording its value", s->name);
    skill_journal_set_ret(&ctx->journal, idx, &ret);
    emit(ctx, SKILL_EVENT_RETURN, s, &ctx->journal.calls[idx], clock_now_ms() - ctx->t0_ms);
    return 1;
}

/* ---- binding ----------------------------------------------------------------- */

/* Runs a chunk that must return a value of type WANT, left on the stack. */
static int load_value(sandbox *sb, const char *code, size_t len, const char *chunk, int want,
                      char *err, size_t errlen)
{
    char msg[400];
    if (sandbox_load_cached(sb, code, len, chunk, msg, sizeof msg) != SANDBOX_OK ||
        sandbox_call(sb, 0, 1, msg, sizeof msg) != SANDBOX_OK) {
        snprintf(err, errlen, "%s: %s", chunk + 1, msg);
        return -1;
    }
    lua_State *L = sandbox_lua(sb);
    if (lua_type(L, -1) != want) {
        snprintf(err, errlen, "%s: must return a %s", chunk + 1, lua_typename(L, want));
        lua_pop(L, 1);
        return -1;
    }
    return 0;
}

int skills_load_run(sandbox *sb, const skill *s, char *err, size_t errlen)
{
    lua_State *L = sandbox_lua(sb);
    char chunk[300];
    snprintf(chunk, sizeof chunk, "@%s", s->path ? s->path : s->name);
    if (s->lua_code) {
        if (load_value(sb, s->lua_code, strlen(s->lua_code), chunk, LUA_TFUNCTION, err, errlen))
            return -1;
    } else {
        if (load_value(sb, s->source ? s->source : "", s->source ? strlen(s->source) : 0, chunk,
                       LUA_TTABLE, err, errlen))
            return -1;
        if (lua_getfield(L, -1, "run") != LUA_TFUNCTION) {
            snprintf(err, errlen, "%s: 'run' must be a function", chunk + 1);
            lua_pop(L, 2);
            return -1;
        }
        lua_remove(L, -2);
    }
    return 0;
}

static int load_run_function(skill_ctx *ctx, skill_binding *b, char *err, size_t errlen)
{
    if (skills_load_run(ctx->sb, b->skill, err, errlen)) return -1;
    b->run_ref = luaL_ref(sandbox_lua(ctx->sb), LUA_REGISTRYINDEX);
    return 0;
}

int skills_load_runtime(sandbox *sb, char *err, size_t errlen)
{
    for (const embedded_file *f = embedded_files; f->path; f++) {
        if (strncmp(f->path, "lua/", 4) != 0) continue;
        char chunk[200], name[64];
        snprintf(chunk, sizeof chunk, "@%s", f->path);
        snprintf(name, sizeof name, "%s", f->path + 4);
        char *dot = strrchr(name, '.');
        if (dot) *dot = '\0';
        if (load_value(sb, f->data, f->len, chunk, LUA_TTABLE, err, errlen)) return -1;
        sandbox_set_global_table(sb, name);
    }
    return 0;
}

int skills_bind(skill_ctx *ctx, char *err, size_t errlen)
{
    lua_State *L = sandbox_lua(ctx->sb);
    size_t n = registry_count(ctx->reg);
    binding_table *bt = calloc(1, sizeof *bt);
    bt->items = calloc(n ? n : 1, sizeof *bt->items);
    bt->n = n;
    ctx->bindings = bt;
    if (ctx->t0_ms == 0) ctx->t0_ms = clock_now_ms();
    ctx->first_action_ms = -1;

    lua_pushlightuserdata(L, ctx);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &ctx_key);

    for (size_t i = 0; i < n; i++) {
        skill_binding *b = &bt->items[i];
        b->ctx = ctx;
        b->skill = registry_at(ctx->reg, i);
        b->run_ref = LUA_NOREF;
        sandbox_set_global(ctx->sb, b->skill->name, skills_dispatch, b);
        if (b->skill->alias[0]) sandbox_set_global(ctx->sb, b->skill->alias, skills_dispatch, b);
    }
    return skills_load_runtime(ctx->sb, err, errlen);
}

void skills_release(skill_ctx *ctx)
{
    binding_table *bt = ctx->bindings;
    skills_drone_release(ctx);
    if (bt) {
        free(bt->items);
        free(bt);
    }
    ctx->bindings = NULL;
    skill_journal_free(&ctx->journal);
}
