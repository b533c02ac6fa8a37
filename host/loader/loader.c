/*
 * The skill loader: fills a registry from the built-in skills and skill
 * directories, then compiles the skills defined in MiniSpec.
 *
 * It sits above both the registry (a leaf) and the MiniSpec compiler, which
 * reads the registry: compiling on load here keeps the layers pointing one way.
 *
 * High-level skill files are user code, so reading their metadata runs them
 * in a throwaway sandbox with small limits, in a worker process
 * (worker/skill_meta.h): a file that loops, allocates without end or
 * crashes the VM is reported like any other broken file, and what comes
 * back is judged here as untrusted input.
 */
#include "loader/loader.h"

#include "embedded.h"
#include "minispec/minispec.h"
#include "sandbox/sandbox.h"
#include "skills/builtin.h"
#include "worker/skill_meta.h"
#include "worker/vm.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKILL_FILE_MAX (1u << 20)

/* Copies the string field T (named KEY) into OUT. */
static int get_string_field(const skill_meta_text *t, const char *key, bool required, char *out,
                            size_t outlen, char *err, size_t errlen)
{
    if (t->type == LUA_TSTRING) {
        if (t->len >= outlen) {
            snprintf(err, errlen, "field '%s' is longer than %zu characters", key, outlen - 1);
            return -1;
        }
        memcpy(out, t->text, t->len + 1);
    } else if (t->type != LUA_TNIL || required) {
        snprintf(err, errlen, "field '%s' must be a string%s", key,
                 t->type == LUA_TNIL ? " (it is missing)" : "");
        return -1;
    }
    return 0;
}

static int parse_type_field(const skill_meta_arg *m, const char *what, skill_type *out, char *err,
                            size_t errlen)
{
    char tname[SKILL_META_TYPE_MAX] = "";
    if (get_string_field(&m->tname, "type", true, tname, sizeof tname, err, errlen)) {
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

static int parse_args(const skill_meta *m, skill *s, char *err, size_t errlen)
{
    if (m->args_type == LUA_TNIL) return 0;
    if (m->args_type != LUA_TTABLE) {
        snprintf(err, errlen, "field 'args' must be a list of {name=, type=}");
        return -1;
    }
    if (m->nargs > SKILL_MAX_ARGS) {
        snprintf(err, errlen, "at most %d arguments are allowed, got %lld", SKILL_MAX_ARGS,
                 (long long)m->nargs);
        return -1;
    }
    /* skill_meta holds args[1..#args] (none for a count of 0 or less) */
    for (int i = 1; i <= m->nread; i++) {
        const skill_meta_arg *ma = &m->args[i - 1];
        char what[32];
        snprintf(what, sizeof what, "args[%d]", i);
        if (ma->type != LUA_TTABLE) {
            snprintf(err, errlen, "%s must be a table {name=, type=}", what);
            return -1;
        }
        skill_arg *a = &s->args[i - 1];
        char inner[200];
        if (get_string_field(&ma->name, "name", true, a->name, sizeof a->name, inner,
                             sizeof inner)) {
            snprintf(err, errlen, "%s: %s", what, inner);
            return -1;
        }
        if (parse_type_field(ma, what, &a->type, err, errlen)) return -1;
        a->optional = ma->optional;
        if (!a->optional && i - 1 > s->min_args) {
            snprintf(err, errlen, "%s: a required argument cannot follow an optional one", what);
            return -1;
        }
        if (!a->optional) s->min_args = i;
        s->nargs = i;
    }
    return 0;
}

/* Judges the fields a skill file's table gave (untrusted: they may come
 * from a worker process) and fills S. */
static int parse_skill_table(const skill_meta *m, skill *s, char *err, size_t errlen)
{
    if (m->type != LUA_TTABLE) {
        snprintf(err, errlen,
                 "the file must return a table {name=, description=, args=, "
                 "returns=, run=function(...) end}");
        return -1;
    }
    if (get_string_field(&m->name, "name", true, s->name, sizeof s->name, err, errlen)) return -1;
    if (!registry_valid_name(s->name)) {
        snprintf(err, errlen, "name '%s' must be lower-case letters, digits and '_'", s->name);
        return -1;
    }
    if (get_string_field(&m->description, "description", true, s->description,
                         sizeof s->description, err, errlen))
        return -1;
    if (get_string_field(&m->abbr, "abbr", false, s->abbr, sizeof s->abbr, err, errlen)) return -1;
    if (parse_args(m, s, err, errlen)) return -1;
    s->returns = SKILL_T_ANY;
    if (m->returns.type != LUA_TNIL) {
        /* a number counts, as Lua's lua_isstring has it ("1" is no type) */
        int t = m->returns.type == LUA_TSTRING ? skill_type_parse(m->returns.text) : -1;
        if (t < 0) {
            snprintf(err, errlen,
                     "field 'returns' must be a type name (int, float, str, bool, "
                     "any or none)");
            return -1;
        }
        s->returns = (skill_type)t;
    }
    if ((m->run_type == LUA_TFUNCTION) == (m->minispec.type == LUA_TSTRING)) {
        snprintf(err, errlen,
                 "a skill needs exactly one of 'run' (a function) or 'minispec' "
                 "(a string)");
        return -1;
    }
    if (m->minispec.type == LUA_TSTRING) {
        if (m->minispec.len >= SKILL_META_MINISPEC_MAX) {
            snprintf(err, errlen, "field 'minispec' is longer than %u characters",
                     SKILL_META_MINISPEC_MAX - 1);
            return -1;
        }
        s->minispec = strdup(m->minispec.text);
    }
    return 0;
}

/* loader_load_source, reading a user's file through READER (NULL: a
 * worker place for this file only). */
static int load_source(skill_registry *reg, const char *path, const char *src, size_t len,
                       bool builtin, skill_reader *reader, char *err, size_t errlen)
{
    sandbox_limits lim = {.max_instructions = 1000000, .max_memory = 4u << 20, .timeout_ms = 2000};
    skill_meta m;
    char msg[400];
    /* A user's file is user code: its top-level chunk runs in a worker
     * process, unless every VM runs in this one (--in-process, or a
     * program that set no worker). The built-ins are the binary's own. */
    int rc = !builtin && vm_workers_enabled()
                 ? skill_meta_read_in_worker(reader, path, src, len, &lim, &m, msg, sizeof msg)
                 : skill_meta_run_here(path, src, len, &lim, &m, msg, sizeof msg);
    if (rc) {
        snprintf(err, errlen, "%s", msg);
        skill_meta_free(&m);
        return -1;
    }
    skill s;
    memset(&s, 0, sizeof s);
    rc = parse_skill_table(&m, &s, err, errlen);
    skill_meta_free(&m);
    if (rc == 0) {
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
    return rc;
}

int loader_load_source(skill_registry *reg, const char *path, const char *src, size_t len,
                       bool builtin, char *err, size_t errlen)
{
    return load_source(reg, path, src, len, builtin, NULL, err, errlen);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* loader_load_dir through READER. */
static int load_dir(skill_registry *reg, const char *dir, registry_report_fn report, void *ud,
                    skill_reader *reader)
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
        if (!err[0]) load_source(reg, path, buf, len, false, reader, err, sizeof err);
        free(buf);
        if (err[0]) {
            failures++;
            if (report) report(ud, path, err);
        }
    }
    free(names);
    return failures;
}

int loader_load_dir(skill_registry *reg, const char *dir, registry_report_fn report, void *ud)
{
    skill_reader *reader = skill_reader_new();
    int rc = load_dir(reg, dir, report, ud, reader);
    skill_reader_free(reader);
    return rc;
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
    /* one worker reads the files of every directory */
    skill_reader *reader = skill_reader_new();
    for (int i = 0; i < ndirs; i++)
        load_dir(reg, dirs[i], report, ud, reader);
    skill_reader_free(reader);
    loader_finalize(reg, report, ud);
    return reg;
}
