/*
 * Shared by the MiniSpec tests, fuzzer and benchmark: a registry with the
 * built-in skills, the high-level skills of SPEC §5 (stand-ins written in
 * MiniSpec when the build has no skills/ files for them), and the example
 * skill files of examples/skills; plus reading the example plans.
 */
#ifndef ALOFT_TEST_MINISPEC_UTIL_H
#define ALOFT_TEST_MINISPEC_UTIL_H

#include "minispec/minispec.h"
#include "loader/loader.h"
#include "minispec/stream.h"
#include "skills/registry.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name, *src;
} test_ms_stand_ins[] = {
    {"scan", "return {name='scan', description='turn until the object is visible',"
             " args={{name='object_name', type='str'}}, returns='bool',"
             " minispec=\"8{?iv($1){->True}tc(45)}->False\"}"},
    {"scan_abstract", "return {name='scan_abstract', description='turn and probe each view',"
                      " args={{name='question', type='str'}}, returns='any',"
                      " minispec=\"8{_1=p($1);?_1!=False{->_1}tc(45)}->False\"}"},
    {"orienting", "return {name='orienting', description='turn until the object is centred',"
                  " args={{name='object_name', type='str'}}, returns='bool',"
                  " minispec=\"4{_1=ox($1);?_1==False{->False}?_1>0.6{tc(15)}?_1<0.4{tu(15)}"
                  "?_1>=0.4&_1<=0.6{->True}}->False\"}"},
    {"approach", "return {name='approach', description='fly towards the object',"
                 " args={{name='object_name', type='str', optional=true}}, returns='bool',"
                 " minispec=\"->mf(100)\"}"},
    {"goto", "return {name='goto', description='orient then approach',"
             " args={{name='object_name', type='str'}}, returns='bool',"
             " minispec=\"?o($1){->a($1)}->False\"}"},
};

static inline void test_ms_report(void *ud, const char *path, const char *message)
{
    (void)ud;
    fprintf(stderr, "skill load problem: %s: %s\n", path, message);
}

/* SRC_ROOT: the source tree (for examples/skills), or NULL. */
static inline skill_registry *test_ms_registry(const char *src_root)
{
    skill_registry *reg = registry_new();
    char err[512];
    if (!reg || loader_add_builtins(reg, err, sizeof err)) {
        fprintf(stderr, "built-in skills: %s\n", err);
        exit(1);
    }
    for (size_t i = 0; i < sizeof test_ms_stand_ins / sizeof test_ms_stand_ins[0]; i++) {
        const char *name = test_ms_stand_ins[i].name;
        if (registry_find(reg, name, strlen(name))) continue;
        const char *src = test_ms_stand_ins[i].src;
        if (loader_load_source(reg, name, src, strlen(src), true, err, sizeof err)) {
            fprintf(stderr, "stand-in %s: %s\n", name, err);
            exit(1);
        }
    }
    if (src_root) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/examples/skills", src_root);
        loader_load_dir(reg, dir, test_ms_report, NULL);
    }
    loader_finalize(reg, test_ms_report, NULL);
    return reg;
}

static inline char *test_ms_read_file(const char *path, size_t *len)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static inline int test_ms_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The example plans (every .ms file of examples/plans), sorted; returns the count. */
static inline int test_ms_plan_files(const char *src_root, char ***out)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/examples/plans", src_root);
    DIR *d = opendir(dir);
    int n = 0, cap = 64;
    char **names = malloc(sizeof *names * (size_t)cap);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".ms") != 0) continue;
        if (n == cap) names = realloc(names, sizeof *names * (size_t)(cap *= 2));
        names[n] = malloc(strlen(dir) + l + 2);
        sprintf(names[n], "%s/%s", dir, e->d_name);
        n++;
    }
    if (d) closedir(d);
    qsort(names, (size_t)n, sizeof *names, test_ms_cmp);
    *out = names;
    return n;
}

/* Compiles SRC whole and streams it (fed whole, then finished) and writes
 * what differs into WHY; true when they agree: the stream stops at an
 * error exactly when the whole plan is invalid, that error is the whole
 * plan's first diagnostic (the stream stops at the first; the whole-plan
 * compiler goes on and reports every one), and a valid plan has the same
 * dialect both ways. */
static inline bool test_ms_whole_and_stream_agree(const skill_registry *reg, const char *src,
                                                  size_t len, char *why, size_t whylen)
{
    ms_result r;
    minispec_compile(reg, src, len, NULL, &r);
    ms_stream *s = ms_stream_new(reg, NULL);
    ms_stream_feed(s, src, len);
    ms_stream_finish(s);
    ms_event ev;
    ms_event_kind k;
    ms_diag err = {0};
    bool failed = false;
    while ((k = ms_stream_next(s, &ev)) != MS_EV_DONE)
        if (k == MS_EV_ERROR) {
            err = *ev.diag;
            failed = true;
            break;
        }
    why[0] = '\0';
    if (failed == r.ok)
        snprintf(why, whylen, "whole plan ok=%d, stream %s", r.ok, failed ? "failed" : "ran");
    else if (failed && (r.ndiags < 1 || err.line != r.diags[0].line || err.col != r.diags[0].col ||
                        strcmp(err.message, r.diags[0].message)))
        snprintf(why, whylen, "stream error %d:%d: %s, whole plan's first %d:%d: %s", err.line,
                 err.col, err.message, r.ndiags ? r.diags[0].line : 0,
                 r.ndiags ? r.diags[0].col : 0, r.ndiags ? r.diags[0].message : "(none)");
    else if (r.ok && strcmp(r.dialect, ms_stream_dialect(s)) != 0)
        snprintf(why, whylen, "dialect %s whole, %s streamed", r.dialect, ms_stream_dialect(s));
    ms_stream_free(s);
    ms_result_free(&r);
    return why[0] == '\0';
}

#endif
