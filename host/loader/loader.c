/*
 * The skill loader: fills a registry from the built-in skills and skill
 * directories, then compiles the skills defined in MiniSpec.
 *
 * It sits above both the registry (a leaf) and the MiniSpec compiler, which
 * reads the registry: compiling on load here keeps the layers pointing one way.
 *
 * High-level skill files are user code, so reading their metadata runs them
 * in a throwaway sandbox with small limits: a file that loops or allocates
 * without end is reported like any other broken file.
 */
#include "loader/loader.h"

#include "embedded.h"
#include "minispec/minispec.h"
#include "sandbox/sandbox.h"
#include "skills/builtin.h"

#include <dirent.h>
#include <errno.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKILL_FILE_MAX (1u << 20)

/* Copies the string field KEY of the table on top into OUT. */
static int get_string_field(lua_State *L, const char *key, bool required, char *out, size_t outlen,
                            char *err, size_t errlen)
{
    int t = lua_getfield(L, -1, key);
    int rc = 0;
    if (t == LUA_TSTRING) {
        size_t len;
        const char *v = lua_tolstring(L, -1, &len);
        if (len >= outlen) {
            snprintf(err, errlen, "field '%s' is longer than %zu characters", key, outlen - 1);
            rc = -1;
        } else {
            memcpy(out, v, len + 1);
        }
    } else if (t != LUA_TNIL || required) {
        snprintf(err, errlen, "field '%s' must be a string%s", key,
                 t == LUA_TNIL ? " (it is missing)" : "");
        rc = -1;
    }
    lua_pop(L, 1);
    return rc;
}

static int parse_type_field(lua_State *L, const char *what, skill_type *out, char *err,
                            size_t errlen)
{
    char tname[16] = "";
    if (get_string_field(L, "type", true, tname, sizeof tname, err, errlen)) {
        char inner[160];
        snprintf(inner, sizeof inner, "%s", err);
        snprintf(err, errlen, "%s: %s", what, inner);
        return -1;
    }
    int t = skill_type_parse(tname);
    if (t < 0 || t == SKILL_T_NONE) {
        snprintf(err, errlen, "%s: unknown type '%s' (int, float, str, bool or any)", what, tname);
        return -1;
    }
    *out = (skill_type)t;
    return 0;
}

static int parse_args(lua_State *L, skill *s, char *err, size_t errlen)
{
    int t = lua_getfield(L, -1, "args");
    if (t == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    if (t != LUA_TTABLE) {
        snprintf(err, errlen, "field 'args' must be a list of {name=, type=}");
        lua_pop(L, 1);
        return -1;
    }
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    if (n > SKILL_MAX_ARGS) {
        snprintf(err, errlen, "at most %d arguments are allowed, got %lld", SKILL_MAX_ARGS,
                 (long long)n);
        lua_pop(L, 1);
        return -1;
    }
    for (lua_Integer i = 1; i <= n; i++) {
        char what[32];
        snprintf(what, sizeof what, "args[%lld]", (long long)i);
        if (lua_rawgeti(L, -1, i) != LUA_TTABLE) {
            snprintf(err, errlen, "%s must be a table {name=, type=}", what);
            lua_pop(L, 2);
            return -1;
        }
        skill_arg *a = &s->args[i - 1];
        char inner[200];
        if (get_string_field(L, "name", true, a->name, sizeof a->name, inner, sizeof inner)) {
            snprintf(err, errlen, "%s: %s", what, inner);
            lua_pop(L, 2);
            return -1;
        }
        if (parse_type_field(L, what, &a->type, err, errlen)) {
            lua_pop(L, 2);
            return -1;
        }
        lua_getfield(L, -1, "optional");
        a->optional = lua_toboolean(L, -1);
        lua_pop(L, 2);
        if (!a->optional && i - 1 > s->min_args) {
            snprintf(err, errlen, "%s: a required argument cannot follow an optional one", what);
            lua_pop(L, 1);
            return -1;
        }
        if (!a->optional) s->min_args = (int)i;
        s->nargs = (int)i;
    }
    lua_pop(L, 1);
    return 0;
}

/* Reads the skill table returned by a skill file (on top of the stack). */
static int parse_skill_table(lua_State *L, skill *s, char *err, size_t errlen)
{
    if (!lua_istable(L, -1)) {
        snprintf(err, errlen,
                 "the file must return a table {name=, description=, args=, "
                 "returns=, run=function(...) end}");
        return -1;
    }
    if (get_string_field(L, "name", true, s->name, sizeof s->name, err, errlen)) return -1;
    if (!registry_valid_name(s->name)) {
        snprintf(err, errlen, "name '%s' must be lower-case letters, digits and '_'", s->name);
        return -1;
    }
    if (get_string_field(L, "description", true, s->description, sizeof s->description, err,
                         errlen))
        return -1;
    if (get_string_field(L, "abbr", false, s->abbr, sizeof s->abbr, err, errlen)) return -1;
    if (parse_args(L, s, err, errlen)) return -1;
    s->returns = SKILL_T_ANY;
    lua_getfield(L, -1, "returns");
    if (!lua_isnil(L, -1)) {
        int t = lua_isstring(L, -1) ? skill_type_parse(lua_tostring(L, -1)) : -1;
        if (t < 0) {
            snprintf(err, errlen,
                     "field 'returns' must be a type name (int, float, str, bool, "
                     "any or none)");
            lua_pop(L, 1);
            return -1;
        }
        s->returns = (skill_type)t;
    }
    lua_pop(L, 1);

    int run = lua_getfield(L, -1, "run");
    int ms = lua_getfield(L, -2, "minispec");
    int rc = 0;
    if ((run == LUA_TFUNCTION) == (ms == LUA_TSTRING)) {
        snprintf(err, errlen,
                 "a skill needs exactly one of 'run' (a function) or 'minispec' "
                 "(a string)");
        rc = -1;
    } else if (ms == LUA_TSTRING) {
        s->minispec = strdup(lua_tostring(L, -1));
    }
    lua_pop(L, 2);
    return rc;
}

int loader_load_source(skill_registry *reg, const char *path, const char *src, size_t len,
                       bool builtin, char *err, size_t errlen)
{
    sandbox_limits lim = {.max_instructions = 1000000, .max_memory = 4u << 20, .timeout_ms = 2000};
    sandbox *sb = sandbox_new(&lim, err, errlen);
    if (!sb) return -1;
    char chunk[300];
    snprintf(chunk, sizeof chunk, "@%s", path);
    skill s;
    memset(&s, 0, sizeof s);
    int rc = -1;
    char msg[400];
    if (sandbox_load(sb, src, len, chunk, msg, sizeof msg) != SANDBOX_OK ||
        sandbox_call(sb, 0, 1, msg, sizeof msg) != SANDBOX_OK) {
        snprintf(err, errlen, "%s", msg);
    } else if (parse_skill_table(sandbox_lua(sb), &s, err, errlen) == 0) {
        s.level = SKILL_HIGH;
        s.builtin = builtin;
        char *text = strndup(src, len);
        char *ms = s.minispec;
        s.path = (char *)path;
        s.source = text;
        rc = registry_add(reg, &s, err, errlen);
        free(ms);
        free(text);
        memset(&s, 0, sizeof s);
    }
    free(s.minispec);
    sandbox_free(sb);
    return rc;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int loader_load_dir(skill_registry *reg, const char *dir, registry_report_fn report, void *ud)
{
    DIR *d = opendir(dir);
    if (!d) {
        char msg[300];
        snprintf(msg, sizeof msg, "cannot read skill directory: %s", strerror(errno));
        if (report) report(ud, dir, msg);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".lua") != 0 || e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            names = realloc(names, cap * sizeof *names);
        }
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, compare_names);

    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        free(names[i]);
        char err[512] = "";
        FILE *f = fopen(path, "rb");
        char *buf = NULL;
        size_t len = 0;
        if (!f) {
            snprintf(err, sizeof err, "cannot open: %s", strerror(errno));
        } else {
            buf = malloc(SKILL_FILE_MAX + 1);
            len = fread(buf, 1, SKILL_FILE_MAX + 1, f);
            fclose(f);
            if (len > SKILL_FILE_MAX)
                snprintf(err, sizeof err, "larger than 1 MiB");
            else
                buf[len] = '\0';
        }
        if (!err[0]) loader_load_source(reg, path, buf, len, false, err, sizeof err);
        free(buf);
        if (err[0]) {
            failures++;
            if (report) report(ud, path, err);
        }
    }
    free(names);
    return failures;
}

int loader_add_builtins(skill_registry *reg, char *err, size_t errlen)
{
    if (builtin_register(reg, err, errlen)) return -1;
    for (const embedded_file *f = embedded_files; f->path; f++) {
        if (strncmp(f->path, "skills/", 7) != 0) continue;
        char inner[400];
        if (loader_load_source(reg, f->path, f->data, f->len, true, inner, sizeof inner)) {
            snprintf(err, errlen, "%s: %s", f->path, inner);
            return -1;
        }
    }
    return 0;
}

int loader_finalize(skill_registry *reg, registry_report_fn report, void *ud)
{
    registry_assign_abbrs(reg, report, ud);
    /* MiniSpec definitions can call any skill, so they compile last. */
    int removed = 0;
    for (size_t i = 0; i < registry_count(reg);) {
        skill *s = registry_at_mut(reg, i);
        char err[512];
        if (s->minispec && !s->lua_code && minispec_compile_skill(reg, s, err, sizeof err)) {
            if (report) report(ud, s->path ? s->path : s->name, err);
            registry_remove(reg, i);
            removed++;
            continue;
        }
        i++;
    }
    return removed;
}

skill_registry *loader_standard(const char *const *dirs, int ndirs, registry_report_fn report,
                                void *ud)
{
    skill_registry *reg = registry_new();
    char err[512];
    if (!reg) return NULL;
    if (loader_add_builtins(reg, err, sizeof err)) {
        if (report) report(ud, "built-in skills", err);
        registry_free(reg);
        return NULL;
    }
    for (int i = 0; i < ndirs; i++)
        loader_load_dir(reg, dirs[i], report, ud);
    loader_finalize(reg, report, ud);
    return reg;
}
