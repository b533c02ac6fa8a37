/* The cost of the process boundary (SPEC §6, host/worker/): the round trip
 * of a skill call through a worker process (p50/p99, beside the same calls
 * in process), the first action after a streamed statement (worker vs
 * in process), the memory a mission takes in a worker, and a worker's
 * start-up.
 *
 *   bench_worker [OUT.json]      (SRC=source root, default "."; the aloft
 *                                 program beside this one is the worker)
 */
#include "bench_out.h"
#include "clock.h"
#include "loader/loader.h"
#include "minispec/stream.h"
#include "mission/runner.h"
#include "worker/vm.h"

#include <dirent.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CALLS 20000
#define STATEMENTS 300
#define MISSIONS 40
#define STARTS 8
/* Issue targets: a skill call's round trip p99 <= 20 us; the first action
 * after a streamed statement within 1 ms of the in-process figure. */
#define TARGET_P99_US 20.0
#define TARGET_FIRST_EXTRA_MS 1.0

typedef struct timing {
    double *t;
    int n, cap;
} timing;

static void on_call(void *ud, const skill_event *ev)
{
    timing *tm = ud;
    if (ev->kind == SKILL_EVENT_CALL && tm->n < tm->cap) tm->t[tm->n++] = clock_now_ms();
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    int i = (int)(p * (n - 1) + 0.5);
    return v[i];
}

static runner_session *open_session(const skill_registry *reg, mission_world *w, timing *tm,
                                    bool in_process, runner_opts *o)
{
    memset(o, 0, sizeof *o);
    o->reg = reg;
    o->world = w;
    o->limits.max_instructions = 1000000000ull;
    o->in_process = in_process;
    o->on_skill_event = on_call;
    o->on_skill_event_ud = tm;
    char err[512];
    runner_session *s = runner_session_open(o, err, sizeof err);
    if (!s) fprintf(stderr, "bench_worker: %s\n", err);
    return s;
}

/* Ends S; its report is not needed. */
static void close_session(runner_session *s)
{
    mission_report rep;
    mission_report_init(&rep, NULL, 0);
    runner_session_report(s, &rep, true);
    mission_report_free(&rep);
}

/* The gaps between consecutive calls of a loop that only calls a skill:
 * each is one whole round trip (the stub, the frames, the dispatch). */
static int round_trips(const skill_registry *reg, mission_world *w, bool in_process, double *p50,
                       double *p99)
{
    timing tm = {calloc(CALLS, sizeof(double)), 0, CALLS};
    runner_opts o;
    runner_session *s = open_session(reg, w, &tm, in_process, &o);
    if (!s) return -1;
    char code[128], err[512];
    snprintf(code, sizeof code, "for i = 1, %d do turn_cw(0) end", CALLS);
    sandbox_status st =
        vm_run_script(runner_session_vm(s), code, strlen(code), "=bench", err, sizeof err);
    close_session(s);
    if (st != SANDBOX_OK || tm.n < 100) {
        fprintf(stderr, "bench_worker: calls: %s\n", err);
        free(tm.t);
        return -1;
    }
    int n = tm.n - 1;
    for (int i = 0; i < n; i++)
        tm.t[i] = (tm.t[i + 1] - tm.t[i]) * 1000; /* us */
    /* the first tenth warms the caches up */
    *p50 = pct(tm.t + n / 10, n - n / 10, 0.5);
    *p99 = pct(tm.t + n / 10, n - n / 10, 0.99);
    free(tm.t);
    return 0;
}

/* From a streamed statement's event to its skill's call on the host. */
static int first_action(const skill_registry *reg, mission_world *w, bool in_process, double *p50)
{
    double *d = calloc(STATEMENTS, sizeof(double));
    timing tm = {calloc(2, sizeof(double)), 0, 1};
    runner_opts o;
    runner_session *s = open_session(reg, w, &tm, in_process, &o);
    if (!s) return -1;
    const char *plan = "tc(1)";
    int n = 0;
    for (int i = 0; i < STATEMENTS; i++) {
        ms_stream *ps = ms_stream_new(reg, NULL);
        ms_stream_feed(ps, plan, strlen(plan));
        ms_stream_finish(ps);
        ms_event ev;
        runner_session_begin(s);
        while (ms_stream_next(ps, &ev) == MS_EV_STATEMENT) {
            char err[256];
            tm.n = 0;
            double t0 = clock_now_ms();
            runner_session_event(s, &ev, plan, NULL, err, sizeof err);
            if (tm.n) d[n++] = tm.t[0] - t0;
        }
        ms_stream_free(ps);
    }
    close_session(s);
    free(tm.t);
    if (n < 10) {
        free(d);
        return -1;
    }
    *p50 = pct(d, n, 0.5);
    free(d);
    return 0;
}

/* The resident memory of this process's workers, in KiB. */
static long workers_rss_kib(int *count)
{
    long total = 0;
    *count = 0;
    DIR *dir = opendir("/proc");
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
        char path[300], buf[4096];
        snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        long ppid = -1, rss = 0;
        bool worker = false;
        while (fgets(buf, sizeof buf, f)) {
            if (strncmp(buf, "PPid:", 5) == 0) ppid = atol(buf + 5);
            if (strncmp(buf, "VmRSS:", 6) == 0) rss = atol(buf + 6);
            if (strncmp(buf, "Name:", 5) == 0) worker = strstr(buf, "aloft") != NULL;
        }
        fclose(f);
        if (ppid == getpid() && worker) total += rss, (*count)++;
    }
    if (dir) closedir(dir);
    return total;
}

static double memory_per_mission(const skill_registry *reg, mission_world *w)
{
    static runner_session *s[MISSIONS];
    static runner_opts o[MISSIONS];
    static timing tm[MISSIONS];
    int before_n, after_n;
    /* one mission first, so the worker exists before the count */
    s[0] = open_session(reg, w, &tm[0], false, &o[0]);
    long before = workers_rss_kib(&before_n);
    for (int i = 1; i < MISSIONS; i++)
        s[i] = open_session(reg, w, &tm[i], false, &o[i]);
    long after = workers_rss_kib(&after_n);
    for (int i = 0; i < MISSIONS; i++) {
        if (!s[i]) continue;
        close_session(s[i]);
    }
    return before_n == after_n ? (double)(after - before) / (MISSIONS - 1) : -1;
}

static double startup_ms(const skill_registry *reg, mission_world *w)
{
    static runner_session *s[STARTS];
    static runner_opts o[STARTS];
    static timing tm[STARTS];
    double d[STARTS];
    int n = 0;
    vm_set_pool_size(64); /* every open below starts a worker */
    for (int i = 0; i < STARTS; i++) {
        double t0 = clock_now_ms();
        s[i] = open_session(reg, w, &tm[i], false, &o[i]);
        if (s[i]) d[n++] = clock_now_ms() - t0;
    }
    for (int i = 0; i < STARTS; i++) {
        if (!s[i]) continue;
        close_session(s[i]);
    }
    return n ? pct(d, n, 0.5) : -1;
}

int main(int argc, char **argv)
{
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    static char exe[4096], prog[4200], scene_path[700];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return 1;
    exe[len] = '\0';
    snprintf(prog, sizeof prog, "%s/aloft", dirname(exe));
    if (access(prog, X_OK) != 0) {
        fprintf(stderr, "bench_worker: no aloft program at %s\n", prog);
        return 1;
    }
    vm_set_worker_program(prog);
    vm_set_pool_size(1);
    snprintf(scene_path, sizeof scene_path, "%s/examples/scenes/office.json", src);
    skill_registry *reg = loader_standard(NULL, 0, NULL, NULL);
    mission_world w = {0};
    char err[512];
    sim_options so = {.time_scale = 0, .seed = 1};
    if (!reg || mission_world_sim(&w, scene_path, &so, err, sizeof err)) {
        fprintf(stderr, "bench_worker: %s\n", reg ? err : "no registry");
        return 1;
    }
    double w50, w99, i50, i99, fw, fi;
    if (round_trips(reg, &w, false, &w50, &w99) || round_trips(reg, &w, true, &i50, &i99) ||
        first_action(reg, &w, false, &fw) || first_action(reg, &w, true, &fi))
        return 1;
    double mem = memory_per_mission(reg, &w);
    double start = startup_ms(reg, &w);
    bool rt_met = w99 <= TARGET_P99_US, first_met = fw - fi <= TARGET_FIRST_EXTRA_MS;
    printf("bench_worker: skill call round trip through a worker p50 %.1f us, p99 %.1f us "
           "(target p99 <= %.0f us: %s); in process p50 %.1f us, p99 %.1f us\n",
           w50, w99, TARGET_P99_US, rt_met ? "met" : "missed", i50, i99);
    printf("bench_worker: first action after a streamed statement %.3f ms in a worker, %.3f ms "
           "in process (target within %.0f ms: %s)\n",
           fw, fi, TARGET_FIRST_EXTRA_MS, first_met ? "met" : "missed");
    printf("bench_worker: memory per mission in a worker %.0f KiB; worker start-up %.1f ms\n", mem,
           start);
    FILE *f = bench_out(argc, argv);
    if (f) {
        fprintf(f,
                "{\"worker_call_p50_us\": {\"value\": %.2f, \"unit\": \"us\"},\n"
                " \"worker_call_p99_us\": {\"value\": %.2f, \"unit\": \"us\"},\n"
                " \"inprocess_call_p50_us\": {\"value\": %.2f, \"unit\": \"us\"},\n"
                " \"inprocess_call_p99_us\": {\"value\": %.2f, \"unit\": \"us\"},\n"
                " \"worker_call_target_p99_us\": {\"value\": %.0f, \"unit\": \"us\"},\n"
                " \"worker_call_target_met\": %s,\n"
                " \"worker_first_action_ms\": {\"value\": %.4f, \"unit\": \"ms\"},\n"
                " \"inprocess_first_action_ms\": {\"value\": %.4f, \"unit\": \"ms\"},\n"
                " \"worker_first_action_target_met\": %s,\n"
                " \"worker_memory_per_mission_kib\": {\"value\": %.0f, \"unit\": \"KiB\"},\n"
                " \"worker_startup_ms\": {\"value\": %.2f, \"unit\": \"ms\"}}\n",
                w50, w99, i50, i99, TARGET_P99_US, rt_met ? "true" : "false", fw, fi,
                first_met ? "true" : "false", mem, start);
        fclose(f);
    }
    mission_world_close(&w, false);
    registry_free(reg);
    return 0;
}
