/*
 * A skill file's fields as plain data (skill_meta.h): read from the table
 * the file returned, and carried in a frame between a worker and the host.
 */
#include "worker/skill_meta.h"
#include "worker/skill_read.h"

#include "errmsg.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void skill_meta_free(skill_meta *m)
{
    skill_meta_text *texts[] = {&m->name, &m->description, &m->abbr, &m->returns, &m->minispec};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        free(texts[i]->text);
    for (int i = 0; i < SKILL_MAX_ARGS; i++) {
        free(m->args[i].name.text);
        free(m->args[i].tname.text);
    }
    memset(m, 0, sizeof *m);
}

/* Keeps at most SIZE bytes of S in T. 0, or -1 when out of memory. */
static int keep_text(skill_meta_text *t, int type, const char *s, size_t len, size_t size)
{
    if (len > size) len = size;
    free(t->text);
    t->text = malloc(len + 1);
    t->type = type;
    t->len = 0;
    if (!t->text) return -1;
    memcpy(t->text, s, len);
    t->text[len] = '\0';
    t->len = len;
    return 0;
}

/* ---- from the Lua table (where the chunk ran) ----------------------------- */

/* Field KEY of the table at IDX into T. A number counts as a string only
 * where Lua's own lua_isstring made it one (returns=). */
static void read_field(lua_State *L, int idx, const char *key, skill_meta_text *t, size_t size,
                       bool numbers_too)
{
    int type = lua_getfield(L, idx, key);
    t->type = type;
    if (type == LUA_TSTRING || (numbers_too && type == LUA_TNUMBER)) {
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        if (keep_text(t, LUA_TSTRING, s, len, size)) luaL_error(L, "out of memory");
    }
    lua_pop(L, 1);
}

/* Called protected, as the chunk's own code would be: a metamethod of the
 * table (__index) runs under the sandbox's budgets, and its error is the
 * file's error. 1: the skill_meta; 2: the table. */
static int read_fields(lua_State *L)
{
    skill_meta *m = lua_touserdata(L, 1);
    m->type = lua_type(L, 2);
    if (m->type != LUA_TTABLE) return 0;
    lua_settop(L, 2);
    read_field(L, 2, "name", &m->name, SKILL_META_NAME_SIZE, false);
    read_field(L, 2, "description", &m->description, SKILL_META_DESC_SIZE, false);
    read_field(L, 2, "abbr", &m->abbr, SKILL_META_ABBR_SIZE, false);
    m->args_type = lua_getfield(L, 2, "args");
    if (m->args_type == LUA_TTABLE) {
        m->nargs = (int64_t)(lua_Integer)lua_rawlen(L, 3);
        /* more than allowed: the host refuses the count, reading none */
        int n = m->nargs > 0 && m->nargs <= SKILL_MAX_ARGS ? (int)m->nargs : 0;
        for (int i = 1; i <= n; i++) {
            skill_meta_arg *a = &m->args[i - 1];
            a->type = lua_rawgeti(L, 3, i);
            if (a->type == LUA_TTABLE) {
                read_field(L, 4, "name", &a->name, SKILL_META_NAME_SIZE, false);
                read_field(L, 4, "type", &a->tname, SKILL_META_TYPE_MAX, false);
                lua_getfield(L, 4, "optional");
                a->optional = lua_toboolean(L, -1);
                lua_pop(L, 1);
            }
            lua_pop(L, 1);
            m->nread = i;
        }
    }
    lua_pop(L, 1);
    read_field(L, 2, "returns", &m->returns, SKILL_META_TYPE_MAX, true);
    m->run_type = lua_getfield(L, 2, "run");
    lua_pop(L, 1);
    read_field(L, 2, "minispec", &m->minispec, SKILL_META_MINISPEC_MAX, false);
    return 0;
}

sandbox_status skill_meta_from_lua(sandbox *sb, skill_meta *m, char *err, size_t errlen)
{
    lua_State *L = sandbox_lua(sb);
    memset(m, 0, sizeof *m);
    if (!lua_checkstack(L, 8)) return errmsg_set(err, errlen, "out of memory"), SANDBOX_ERROR;
    lua_pushcfunction(L, read_fields);
    lua_pushlightuserdata(L, m);
    lua_pushvalue(L, -3);
    return sandbox_call(sb, 2, 0, err, errlen);
}

int skill_meta_run_here(const char *path, const char *src, size_t len, const sandbox_limits *lim,
                        skill_meta *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    sandbox *sb = sandbox_new(lim, err, errlen);
    if (!sb) return -1;
    char chunk[300];
    snprintf(chunk, sizeof chunk, "@%s", path);
    int rc = -1;
    if (sandbox_load(sb, src, len, chunk, err, errlen) == SANDBOX_OK &&
        sandbox_call(sb, 0, 1, err, errlen) == SANDBOX_OK &&
        skill_meta_from_lua(sb, m, err, errlen) == SANDBOX_OK)
        rc = 0;
    sandbox_free(sb);
    return rc;
}

/* ---- in a frame ------------------------------------------------------------- */

static void put_text(frame *f, const skill_meta_text *t)
{
    frame_put_u8(f, (uint8_t)t->type);
    frame_put_text(f, t->text ? t->text : "", t->text ? t->len : 0);
}

void skill_meta_put(frame *f, const skill_meta *m)
{
    frame_put_u8(f, (uint8_t)m->type);
    put_text(f, &m->name);
    put_text(f, &m->description);
    put_text(f, &m->abbr);
    frame_put_u8(f, (uint8_t)m->args_type);
    frame_put_u64(f, (uint64_t)m->nargs);
    frame_put_u8(f, (uint8_t)m->nread);
    for (int i = 0; i < m->nread; i++) {
        const skill_meta_arg *a = &m->args[i];
        frame_put_u8(f, (uint8_t)a->type);
        put_text(f, &a->name);
        put_text(f, &a->tname);
        frame_put_u8(f, a->optional);
    }
    put_text(f, &m->returns);
    frame_put_u8(f, (uint8_t)m->run_type);
    put_text(f, &m->minispec);
}

/* A Lua type as a worker may send it: nil to thread (LUA_TNONE never
 * travels: a missing field is nil). */
static bool get_type(frame *f, int *type)
{
    uint8_t t = frame_get_u8(f);
    *type = t;
    return !f->bad && t < LUA_NUMTYPES;
}

/* A text field: a string's bytes, at most SIZE, and none for other types. */
static bool get_text(frame *f, skill_meta_text *t, size_t size)
{
    size_t len;
    if (!get_type(f, &t->type)) return false;
    const char *s = frame_get_text(f, &len);
    if (f->bad || len > size || (t->type != LUA_TSTRING && len)) return false;
    if (t->type != LUA_TSTRING) return true;
    return keep_text(t, LUA_TSTRING, s, len, size) == 0;
}

bool skill_meta_get(frame *f, skill_meta *m)
{
    memset(m, 0, sizeof *m);
    bool ok = get_type(f, &m->type) && get_text(f, &m->name, SKILL_META_NAME_SIZE) &&
              get_text(f, &m->description, SKILL_META_DESC_SIZE) &&
              get_text(f, &m->abbr, SKILL_META_ABBR_SIZE) && get_type(f, &m->args_type);
    if (!ok) return false;
    m->nargs = (int64_t)frame_get_u64(f);
    m->nread = frame_get_u8(f);
    /* exactly the elements the host reads: none past the count it refuses */
    int want = m->args_type == LUA_TTABLE && m->nargs > 0 && m->nargs <= SKILL_MAX_ARGS
                   ? (int)m->nargs
                   : 0;
    if (f->bad || m->nread != want) return false;
    for (int i = 0; i < m->nread; i++) {
        skill_meta_arg *a = &m->args[i];
        if (!get_type(f, &a->type) || !get_text(f, &a->name, SKILL_META_NAME_SIZE) ||
            !get_text(f, &a->tname, SKILL_META_TYPE_MAX))
            return false;
        uint8_t opt = frame_get_u8(f);
        if (opt > 1) return false;
        a->optional = opt;
    }
    return get_text(f, &m->returns, SKILL_META_TYPE_MAX) && get_type(f, &m->run_type) &&
           get_text(f, &m->minispec, SKILL_META_MINISPEC_MAX) && frame_done(f);
}
