/*
 * The skill registry: metadata of every skill, built once per process.
 *
 * High-level skill files are user code, so reading their metadata runs them
 * in a throwaway sandbox with small limits: a file that loops or allocates
 * without end is reported like any other broken file.
 */
#include "skills/registry.h"

#include "embedded.h"
#include "minispec/minispec.h"
#include "sandbox/sandbox.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKILL_FILE_MAX (1u << 20)

int builtin_register(skill_registry *reg, char *err, size_t errlen); /* builtin.c */

struct skill_registry {
    skill *skills;
    size_t n, cap;
    size_t first_user; /* skills before this index are built in */
};

skill_registry *registry_new(void)
{
    return calloc(1, sizeof(skill_registry));
}

static void skill_clear(skill *s)
{
    free(s->path);
    free(s->source);
    free(s->minispec);
    free(s->lua_code);
}

void registry_free(skill_registry *reg)
{
    if (!reg) return;
    for (size_t i = 0; i < reg->n; i++)
        skill_clear(&reg->skills[i]);
    free(reg->skills);
    free(reg);
}

size_t registry_count(const skill_registry *reg)
{
    return reg->n;
}

const skill *registry_at(const skill_registry *reg, size_t i)
{
    return i < reg->n ? &reg->skills[i] : NULL;
}

static bool name_is(const char *name, const char *s, size_t len)
{
    return name[0] && strncmp(name, s, len) == 0 && name[len] == '\0';
}

const skill *registry_find(const skill_registry *reg, const char *name, size_t len)
{
    for (size_t i = 0; i < reg->n; i++) {
        const skill *s = &reg->skills[i];
        if (name_is(s->name, name, len) || name_is(s->abbr, name, len) ||
            name_is(s->alias, name, len) || name_is(s->alias_abbr, name, len))
            return s;
    }
    return NULL;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static bool valid_name(const char *s)
{
    if (!(islower((unsigned char)s[0]) || s[0] == '_')) return false;
    for (const char *p = s; *p; p++)
        if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_')) return false;
    return strlen(s) < SKILL_NAME_MAX;
}

int registry_add(skill_registry *reg, const skill *s, char *err, size_t errlen)
{
    if (!valid_name(s->name)) {
        snprintf(err, errlen, "skill name '%s' must be lower-case letters, digits and '_'",
                 s->name);
        return -1;
    }
    const char *names[] = {s->name, s->alias};
    for (int k = 0; k < 2; k++) {
        if (!names[k][0]) continue;
        if (registry_find(reg, names[k], strlen(names[k]))) {
            snprintf(err, errlen, "a skill named '%s' already exists", names[k]);
            return -1;
        }
    }
    if (reg->n == reg->cap) {
        size_t cap = reg->cap ? reg->cap * 2 : 32;
        skill *grown = realloc(reg->skills, cap * sizeof *grown);
        if (!grown) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        reg->skills = grown;
        reg->cap = cap;
    }
    skill *d = &reg->skills[reg->n++];
    *d = *s;
    d->path = dup_or_null(s->path);
    d->source = dup_or_null(s->source);
    d->minispec = dup_or_null(s->minispec);
    d->lua_code = dup_or_null(s->lua_code);
    return 0;
}

const char *skill_type_name(skill_type t)
{
    switch (t) {
    case SKILL_T_NONE: return "none";
    case SKILL_T_INT: return "int";
    case SKILL_T_FLOAT: return "float";
    case SKILL_T_STR: return "str";
    case SKILL_T_BOOL: return "bool";
    case SKILL_T_ANY: return "any";
    }
    return "?";
}

int skill_type_parse(const char *s)
{
    static const struct {
        const char *name;
        skill_type t;
    } names[] = {{"int", SKILL_T_INT},    {"float", SKILL_T_FLOAT}, {"str", SKILL_T_STR},
                 {"string", SKILL_T_STR}, {"bool", SKILL_T_BOOL},   {"any", SKILL_T_ANY},
                 {"none", SKILL_T_NONE}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) return (int)names[i].t;
    return -1;
}

/* ---- high-level skill files ------------------------------------------------- */

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
    if (!valid_name(s->name)) {
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

int registry_load_source(skill_registry *reg, const char *path, const char *src, size_t len,
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

int registry_load_dir(skill_registry *reg, const char *dir, registry_report_fn report, void *ud)
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
        if (!err[0]) registry_load_source(reg, path, buf, len, false, err, sizeof err);
        free(buf);
        if (err[0]) {
            failures++;
            if (report) report(ud, path, err);
        }
    }
    free(names);
    return failures;
}

int registry_add_builtins(skill_registry *reg, char *err, size_t errlen)
{
    if (builtin_register(reg, err, errlen)) return -1;
    for (const embedded_file *f = embedded_files; f->path; f++) {
        if (strncmp(f->path, "skills/", 7) != 0) continue;
        char inner[400];
        if (registry_load_source(reg, f->path, f->data, f->len, true, inner, sizeof inner)) {
            snprintf(err, errlen, "%s: %s", f->path, inner);
            return -1;
        }
    }
    reg->first_user = reg->n;
    return 0;
}

/* ---- abbreviations ---------------------------------------------------------- */

static bool abbr_taken(const skill_registry *reg, const char *a)
{
    for (size_t i = 0; i < reg->n; i++) {
        const skill *s = &reg->skills[i];
        if (!strcmp(s->abbr, a) || !strcmp(s->alias_abbr, a) || !strcmp(s->name, a) ||
            !strcmp(s->alias, a))
            return true;
    }
    return false;
}

/*
 * The first free candidate, in this order:
 *   1. the initial ("d" for delay), or the initials of the first two words
 *      ("mf" for move_forward);
 *   2. the initial followed by each later letter of the name, in order
 *      ("tu" for turn_ccw once "tc" is taken by turn_cw);
 *   3. the initial followed by any letter, then any two letters.
 * Applied in registration order (built-ins first, in SPEC §5 order), this
 * gives exactly TypeFly's abbreviations for the built-ins.
 */
static int pick_abbr(const skill_registry *reg, const char *name, char out[3])
{
    char c[3] = {name[0] == '_' ? name[1] : name[0], 0, 0};
    const char *us = strchr(name + 1, '_');
    if (us && us[1] && isalpha((unsigned char)us[1])) c[1] = us[1];
    if (!abbr_taken(reg, c)) goto found;
    for (const char *p = name + 1; *p; p++) {
        if (!isalnum((unsigned char)*p)) continue;
        c[1] = *p;
        if (!abbr_taken(reg, c)) goto found;
    }
    for (char x = 'a'; x <= 'z'; x++) {
        c[1] = x;
        if (!abbr_taken(reg, c)) goto found;
    }
    for (char x = 'a'; x <= 'z'; x++) {
        for (char y = 'a'; y <= 'z'; y++) {
            c[0] = x;
            c[1] = y;
            if (!abbr_taken(reg, c)) goto found;
        }
    }
    return -1;
found:
    memcpy(out, c, 3);
    return 0;
}

static void remove_skill(skill_registry *reg, size_t i)
{
    skill_clear(&reg->skills[i]);
    memmove(&reg->skills[i], &reg->skills[i + 1], (reg->n - i - 1) * sizeof(skill));
    reg->n--;
}

int registry_finalize(skill_registry *reg, registry_report_fn report, void *ud)
{
    int removed = 0;
    /* replan is a MiniSpec keyword with a fixed short form. */
    skill *rp = (skill *)registry_find(reg, "replan", 6);
    if (rp) memcpy(rp->abbr, "rp", 3);

    /* Requested abbreviations (abbr= in a skill file) first, if free. */
    for (size_t i = 0; i < reg->n; i++) {
        skill *s = &reg->skills[i];
        if (!s->abbr[0] || s == rp) continue;
        char want[3];
        memcpy(want, s->abbr, 3);
        s->abbr[0] = '\0';
        if (abbr_taken(reg, want) || !valid_name(want)) {
            if (report) {
                char msg[200];
                snprintf(msg, sizeof msg,
                         "abbreviation '%s' is taken or invalid; assigning "
                         "another",
                         want);
                report(ud, s->path ? s->path : s->name, msg);
            }
        } else {
            memcpy(s->abbr, want, 3);
        }
    }
    for (size_t i = 0; i < reg->n; i++) {
        skill *s = &reg->skills[i];
        if (!s->abbr[0] && pick_abbr(reg, s->name, s->abbr)) {
            if (report) report(ud, s->path ? s->path : s->name, "no free abbreviation");
        }
        if (s->alias[0] && !s->alias_abbr[0]) pick_abbr(reg, s->alias, s->alias_abbr);
    }

    /* MiniSpec definitions can call any skill, so they compile last. */
    for (size_t i = 0; i < reg->n;) {
        skill *s = &reg->skills[i];
        char err[512];
        if (s->minispec && !s->lua_code && minispec_compile_skill(reg, s, err, sizeof err)) {
            if (report) report(ud, s->path ? s->path : s->name, err);
            remove_skill(reg, i);
            removed++;
            continue;
        }
        i++;
    }
    return removed;
}

skill_registry *registry_standard(const char *const *dirs, int ndirs, registry_report_fn report,
                                  void *ud)
{
    skill_registry *reg = registry_new();
    char err[512];
    if (!reg) return NULL;
    if (registry_add_builtins(reg, err, sizeof err)) {
        if (report) report(ud, "built-in skills", err);
        registry_free(reg);
        return NULL;
    }
    for (int i = 0; i < ndirs; i++)
        registry_load_dir(reg, dirs[i], report, ud);
    registry_finalize(reg, report, ud);
    return reg;
}
