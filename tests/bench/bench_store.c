/*
 * bench_store: what recording a mission costs.
 *
 *   bench_store [--dir DIR] [--json] [OUT.json]
 *
 * 1. Per-event write cost (mean, p50, p99 in microseconds) of each record
 *    kind, with synchronous=NORMAL (the default) and FULL (an fsync per
 *    event), on a database in DIR (default: the current directory, so the
 *    numbers are for a real file system, not tmpfs).
 * 2. Its share of a mission's host time: a mission of a typical TypeFly
 *    size (one plan and one replan, 15 statements, 25 skill calls, 8 scene
 *    snapshots and object sightings) is run in the sandbox with every event
 *    recorded as the mission runner records it, and again without the store.
 *    The skills do no real work (no simulator, no vision), so this host time
 *    is a lower bound and the share an upper bound.
 */
#include "sandbox/sandbox.h"
#include "store/store.h"

#include <getopt.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct stats {
    double mean, p50, p99;
} stats;

static stats summarise(double *v, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return (stats){sum / n, v[n / 2], v[(int)(n * 0.99)]};
}

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_store: %s: %s\n", what, err);
    exit(1);
}

/* Deletes a database with its WAL and shared-memory files and the lock
 * file of its running missions. */
static void remove_db(const char *path)
{
    const char *suffix[] = {"", "-wal", "-shm", "-missions"};
    for (int i = 0; i < 4; i++) {
        char p[1100];
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

/* ---- per-event cost ----------------------------------------------------- */

enum { K_STATEMENT, K_CALL, K_LLM, K_SCENE, K_OBJECT, K_COUNT };
static const char *const kind_names[K_COUNT] = {"statement", "skill call (begin+end)",
                                                "llm exchange (4 KiB prompt)", "scene snapshot",
                                                "object sighting"};

static char prompt[4096];

static int64_t record_llm(store_mission *m, store_llm_kind kind, const char *reply)
{
    char err[256];
    store_llm x = {.kind = kind,
                   .t_ms = -1,
                   .prompt = prompt,
                   .response = reply,
                   .latency_ms = 800,
                   .ttft_ms = 200,
                   .prompt_tokens = 1100,
                   .completion_tokens = 14};
    int64_t id = store_record_llm(m, &x, err, sizeof err);
    if (id < 0) die("llm exchange", err);
    return id;
}

static void record_one(store_mission *m, int kind, int i)
{
    char err[256], args[32];
    int rc = 0;
    switch (kind) {
    case K_STATEMENT: rc = store_record_statement(m, -1, 1, 1, 1, "tc(45)", err, sizeof err); break;
    case K_CALL: {
        snprintf(args, sizeof args, "[%d]", i);
        int64_t id = store_call_begin(m, -1, "turn_cw", args, 0, err, sizeof err);
        store_call_result r = {
            .ret_json = "true", .has_pose = true, .yaw = 45, .sim_ms = 500, .wall_ms = 0};
        rc = id < 0 ? -1 : store_call_end(m, id, &r, err, sizeof err);
        break;
    }
    case K_LLM: record_llm(m, STORE_LLM_PLAN, "s('apple');g('apple');->True"); break;
    case K_SCENE:
        rc = store_record_scene(m, -1,
                                "apple_1 x:0.52 y:0.40 width:0.05 height:0.06 color:red\n"
                                "person_2 x:0.10 y:0.50 width:0.20 height:0.70 color:blue",
                                true, 0, 0, 100, 45, err, sizeof err);
        break;
    case K_OBJECT:
        rc = store_record_object(m, "apple", (double)(i % 7), 250, 80, 0.9, err, sizeof err) < 0
                 ? -1
                 : 0;
        break;
    }
    if (rc) die(kind_names[kind], err);
}

static void bench_events(const char *dir, int flags, int n, stats out[K_COUNT])
{
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/bench_store_%d.db", dir, (int)getpid());
    store *s = store_open(path, flags, err, sizeof err);
    if (!s) die("open", err);
    store_mission *m = store_mission_begin(s, NULL, err, sizeof err);
    if (!m) die("begin", err);
    double *t = malloc((size_t)n * sizeof *t);
    for (int k = 0; k < K_COUNT; k++) {
        for (int i = 0; i < 20; i++)
            record_one(m, k, i); /* warm the caches */
        for (int i = 0; i < n; i++) {
            double t0 = now_us();
            record_one(m, k, i);
            t[i] = now_us() - t0;
        }
        out[k] = summarise(t, n);
    }
    free(t);
    store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
    store_close(s);
    remove_db(path);
}

/* ---- share of a mission's host time --------------------------------------- */

static store_mission *current; /* NULL: run without the store */

/* The stand-in skill: records the call around a trivial action. */
static int bench_skill(lua_State *L)
{
    const char *name = luaL_checkstring(L, 1);
    lua_Integer arg = luaL_checkinteger(L, 2);
    char args[32], err[256];
    int64_t id = 0;
    if (current) {
        snprintf(args, sizeof args, "[%lld]", (long long)arg);
        id = store_call_begin(current, -1, name, args, 0, err, sizeof err);
    }
    double yaw = (double)(arg % 360);
    if (current) {
        store_call_result r = {.ret_json = "true", .has_pose = true, .yaw = yaw};
        store_call_end(current, id, &r, err, sizeof err);
        if (arg % 3 == 0) {
            store_record_scene(current, -1, "apple_1 x:0.52 y:0.40 width:0.05 height:0.06", true, 0,
                               0, 100, yaw, err, sizeof err);
            store_record_object(current, "apple", 0, 250, 80, 0.9, err, sizeof err);
        }
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int bench_statement(lua_State *L)
{
    char err[256];
    if (current)
        store_record_statement(current, -1, 1, 1, (int)luaL_checkinteger(L, 1), "tc(45)", err,
                               sizeof err);
    return 0;
}

/* 15 statements, 25 skill calls (every third with a scene and a sighting). */
static const char mission_lua[] = "local k = 0\n"
                                  "for i = 1, 15 do\n"
                                  "  statement(i)\n"
                                  "  skill('turn_cw', k); k = k + 1\n"
                                  "  if i <= 10 then skill('is_visible', k); k = k + 1 end\n"
                                  "end\n";

/* Runs one mission; returns its host time up to the end of its flight and
 * stores the time store_mission_end took (with its checkpoint) in END_US. */
static double mission_us(store *s, double *end_us)
{
    char err[256];
    double t0 = now_us();
    if (s) {
        current = store_mission_begin(s, NULL, err, sizeof err);
        for (int i = 0; i < 2; i++) {
            int64_t llm = record_llm(current, i ? STORE_LLM_REPLAN : STORE_LLM_PLAN, "8{tc(45)}");
            store_record_plan(current, -1, llm, "8{tc(45)}", true, NULL, err, sizeof err);
        }
    }
    sandbox *sb = sandbox_new(&(sandbox_limits){0}, err, sizeof err);
    if (!sb) die("sandbox", err);
    sandbox_set_global(sb, "skill", bench_skill, NULL);
    sandbox_set_global(sb, "statement", bench_statement, NULL);
    if (sandbox_run(sb, mission_lua, sizeof mission_lua - 1, "=mission", err, sizeof err))
        die("mission", err);
    sandbox_free(sb);
    double t1 = now_us();
    if (s) store_mission_end(current, STORE_OK, NULL, "true", err, sizeof err);
    current = NULL;
    *end_us = now_us() - t1;
    return t1 - t0;
}

int main(int argc, char **argv)
{
    const char *dir = ".";
    bool json = false;
    static const struct option opts[] = {
        {"dir", required_argument, 0, 'd'}, {"json", no_argument, 0, 'j'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'd')
            dir = optarg;
        else if (c == 'j')
            json = true;
        else
            return 2;
    }
    /* aloft bench passes the file the JSON goes to. */
    if (optind < argc) {
        json = true;
        if (!freopen(argv[optind], "w", stdout)) {
            perror(argv[optind]);
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof prompt - 1; i++)
        prompt[i] = (char)('a' + i % 26);

    stats normal[K_COUNT], full[K_COUNT];
    bench_events(dir, 0, 2000, normal);
    bench_events(dir, STORE_OPEN_SYNC_FULL, 200, full);

    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/bench_store_mission_%d.db", dir, (int)getpid());
    store *s = store_open(path, 0, err, sizeof err);
    if (!s) die("open", err);
    enum { RUNS = 200 };
    double with[RUNS], without[RUNS], ends[RUNS], unused;
    for (int i = 0; i < RUNS; i++) {
        with[i] = mission_us(s, &ends[i]);
        without[i] = mission_us(NULL, &unused);
    }
    store_close(s);
    remove_db(path);
    stats w = summarise(with, RUNS), wo = summarise(without, RUNS), end = summarise(ends, RUNS);
    double store_us = w.p50 - wo.p50;
    int events = 1 + 2 * 2 + 15 + 25 * 2 + 9 * 2; /* begin, llm+plan, stmts, calls, scene+obj */

    if (json) {
        cJSON *doc = cJSON_CreateObject(), *ev = cJSON_AddArrayToObject(doc, "events");
        for (int k = 0; k < K_COUNT; k++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "kind", kind_names[k]);
            cJSON_AddNumberToObject(e, "normal_mean_us", normal[k].mean);
            cJSON_AddNumberToObject(e, "normal_p99_us", normal[k].p99);
            cJSON_AddNumberToObject(e, "full_mean_us", full[k].mean);
            cJSON_AddNumberToObject(e, "full_p99_us", full[k].p99);
            cJSON_AddItemToArray(ev, e);
        }
        cJSON *m = cJSON_AddObjectToObject(doc, "mission");
        cJSON_AddNumberToObject(m, "writes", events);
        cJSON_AddNumberToObject(m, "host_us_with_store", w.p50);
        cJSON_AddNumberToObject(m, "host_us_without_store", wo.p50);
        cJSON_AddNumberToObject(m, "store_share", store_us / w.p50);
        cJSON_AddNumberToObject(m, "end_us", end.p50);
        char *text = cJSON_PrintUnformatted(doc);
        puts(text);
        free(text);
        cJSON_Delete(doc);
        return 0;
    }
    printf("per-event write cost (us), database in %s\n", dir);
    printf("  %-30s %9s %9s %9s   %9s %9s\n", "", "NORMAL", "p50", "p99", "FULL", "p99");
    for (int k = 0; k < K_COUNT; k++)
        printf("  %-30s %9.1f %9.1f %9.1f   %9.1f %9.1f\n", kind_names[k], normal[k].mean,
               normal[k].p50, normal[k].p99, full[k].mean, full[k].p99);
    printf("typical mission (%d writes in flight), median of %d runs, VM-only host time:\n", events,
           RUNS);
    printf("  with the store     %9.1f us\n  without the store  %9.1f us\n", w.p50, wo.p50);
    printf("  store share        %9.1f %% (%.1f us per write)\n", 100 * store_us / w.p50,
           store_us / events);
    printf("  mission end        %9.1f us (status and WAL checkpoint, after the flight)\n",
           end.p50);
    return 0;
}
