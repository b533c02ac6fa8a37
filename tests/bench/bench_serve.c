/*
 * bench_serve: hundreds of drones in one `aloft serve` (SPEC §13), against
 * a chat-completions server that answers every request at once
 * (quick_llm.h: the Python fake LLM of the tests would queue a hundred
 * requests for tens of milliseconds), real HTTP on loopback, a real store.
 * Issue targets:
 *
 *  - memory: per idle drone (RSS of a server with N drones minus one with
 *    1, over N - 1) and per flying mission (RSS with every drone flying
 *    minus idle, over N); reported, no target.
 *  - the drone list (GET /api/drones) at N drones: p50 and p99 of 200
 *    requests, idle and while N missions fly; reported (target: p99 within
 *    the page's 2 s poll, here at most 100 ms).
 *  - first action: 100 missions started together (POSTed back to back),
 *    mission start to the first drone-moving skill call (from the store),
 *    p99 at most 50 ms; also its parts: aloft before the LLM request, the
 *    fake LLM's first token, and aloft after it (what aloft itself adds is
 *    the first and the last).
 *  - real time: N = 500 missions at once (time scale 1, a 5 s delay each):
 *    each delay's wall time over its simulated time, p99 at most 1.1 (the
 *    server keeps real time), and missions completed per second.
 *
 *   bench_serve [OUT.json]      (SRC=source root; the aloft binary beside)
 */
#include "bench_out.h"
#include "quick_llm.h"
#include "clock.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define MANY 500
#define TOGETHER 100
#define LIST_REQUESTS 200
#define TARGET_FIRST_ACTION_MS 50.0
#define TARGET_REALTIME 1.1
#define TARGET_LIST_P99_MS 100.0

typedef struct server {
    pid_t pid;
    int port;
} server;

static char aloft[PATH_MAX], scene[PATH_MAX], db[PATH_MAX + 32];
static char tmpdir[] = "/tmp/aloft-bench-serve-XXXXXX";

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The Q-quantile of V[0..N) (sorts V). */
static double quantile(double *v, int n, double q)
{
    if (n <= 0) return -1;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int i = (int)(q * n);
    return v[i < n ? i : n - 1];
}

/* aloft serve with N simulated drones in the scene, on any free port. */
static int serve_start(server *s, int n, const char *llm_url)
{
    int argc = 0, cap = 2 * n + 32;
    char **argv = calloc((size_t)cap, sizeof *argv);
    char maxd[32];
    snprintf(maxd, sizeof maxd, "%d", n);
    const char *fixed[] = {aloft,          "serve", "--port",    "0",     "--max-drones", maxd,
                           "--db",         db,      "--llm-url", llm_url, "--model",      "fake",
                           "--time-scale", "1",     "--scene",   scene};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        argv[argc++] = (char *)fixed[i];
    for (int i = 0; i < n; i++) {
        argv[argc++] = "--drone";
        argv[argc++] = "sim";
    }
    int out[2];
    if (pipe(out)) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    int rc = posix_spawn(&s->pid, aloft, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    close(out[1]);
    FILE *f = fdopen(out[0], "r");
    char line[256] = "";
    if (rc || !f || !fgets(line, sizeof line, f) || !strrchr(line, ':')) {
        fprintf(stderr, "bench_serve: aloft serve did not start: %s\n", line);
        if (f) fclose(f);
        return -1;
    }
    fclose(f);
    s->port = atoi(strrchr(line, ':') + 1);
    return 0;
}

static void serve_stop(server *s)
{
    kill(s->pid, SIGINT);
    waitpid(s->pid, NULL, 0);
}

static long rss_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = atol(line + 6);
    if (f) fclose(f);
    return kib;
}

typedef struct body {
    char *text;
    size_t len;
} body;

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
    body *b = ud;
    char *grown = realloc(b->text, b->len + size * n + 1);
    if (!grown) return 0;
    memcpy(grown + b->len, p, size * n);
    b->len += size * n;
    grown[b->len] = '\0';
    b->text = grown;
    return size * n;
}

/* A request to the server (POST with JSON BODY_JSON when given); returns
 * the HTTP status and the body (caller frees) in *OUT if OUT. */
static long request(CURL *c, const server *s, const char *path, const char *body_json, char **out)
{
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", s->port, path);
    body b = {0};
    struct curl_slist *h = NULL;
    curl_easy_reset(c);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    if (body_json) {
        h = curl_slist_append(h, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body_json);
    }
    long status = 0;
    if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(h);
    if (out)
        *out = b.text;
    else
        free(b.text);
    return status;
}

/* How many drones are busy (-1 on error). */
static int busy_count(CURL *c, const server *s)
{
    char *text = NULL;
    if (request(c, s, "/api/drones", NULL, &text) != 200) return free(text), -1;
    cJSON *doc = cJSON_Parse(text);
    free(text);
    int n = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, doc) n += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "busy"));
    cJSON_Delete(doc);
    return doc ? n : -1;
}

static void wait_idle(CURL *c, const server *s)
{
    for (int i = 0; i < 6000 && busy_count(c, s) != 0; i++)
        usleep(100 * 1000);
}

/* The p50 and p99 (ms) of LIST_REQUESTS drone lists. */
static void list_latency(CURL *c, const server *s, double *p50, double *p99)
{
    static double t[LIST_REQUESTS];
    for (int i = 0; i < LIST_REQUESTS; i++) {
        double t0 = clock_now_ms();
        request(c, s, "/api/drones", NULL, NULL);
        t[i] = clock_now_ms() - t0;
    }
    *p50 = quantile(t, LIST_REQUESTS, 0.5);
    *p99 = quantile(t, LIST_REQUESTS, 0.99);
}

/* Starts TASK on drones [0, N); returns how many were accepted. */
static int start_missions(CURL *c, const server *s, int n, const char *task)
{
    char body_json[128], path[64];
    snprintf(body_json, sizeof body_json, "{\"task\":\"%s\"}", task);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "/api/drones/%d/missions", i);
        ok += request(c, s, path, body_json, NULL) == 202;
    }
    return ok;
}

/* Column 0 of SQL's rows (one bound text TASK) into V; returns the count. */
static int query(const char *sql, const char *task, double *v, int max)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    int n = 0;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, task, -1, SQLITE_STATIC);
        while (n < max && sqlite3_step(st) == SQLITE_ROW)
            if (sqlite3_column_type(st, 0) != SQLITE_NULL) v[n++] = sqlite3_column_double(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return n;
}

static int count_ok(const char *task)
{
    double v[1];
    return query("SELECT count(*) FROM missions WHERE task = ?1 AND status = 'ok'", task, v, 1)
               ? (int)v[0]
               : 0;
}

typedef struct results {
    long rss_1, rss_idle, rss_flying; /* KiB */
    double idle_per_drone_kib, per_mission_kib;
    double list_p50, list_p99, list_busy_p50, list_busy_p99;
    double first_p50, first_p99, own_p50, own_p99, asked_p50, asked_p99, ttft_p50, ttft_p99;
    double realtime_p50, realtime_p99, missions_per_s;
    int together_ok, many_ok;
} results;

/* First action after mission start, and after the LLM's first token. */
static const char first_sql[] =
    "SELECT (SELECT min(c.t_ms) FROM skill_calls c WHERE c.mission_id = m.id"
    " AND c.skill NOT IN ('log', 'print')) FROM missions m WHERE m.task = ?1";
static const char own_sql[] =
    "SELECT (SELECT min(c.t_ms) FROM skill_calls c WHERE c.mission_id = m.id"
    " AND c.skill NOT IN ('log', 'print')) - (SELECT l.t_ms + coalesce(l.ttft_ms, l.latency_ms)"
    " FROM llm_exchanges l WHERE l.mission_id = m.id ORDER BY l.seq LIMIT 1)"
    " FROM missions m WHERE m.task = ?1";
/* Mission start to the LLM request (aloft's part before the LLM). */
static const char asked_sql[] =
    "SELECT (SELECT l.t_ms FROM llm_exchanges l WHERE l.mission_id = m.id ORDER BY l.seq"
    " LIMIT 1) FROM missions m WHERE m.task = ?1";
/* The LLM request to its first token (the fake LLM's part, HTTP included). */
static const char ttft_sql[] =
    "SELECT (SELECT coalesce(l.ttft_ms, l.latency_ms) FROM llm_exchanges l"
    " WHERE l.mission_id = m.id ORDER BY l.seq LIMIT 1) FROM missions m WHERE m.task = ?1";
/* From the plan's first call to the end of its last, wall time over the
 * simulated time its calls took: 1 when the host adds nothing between and
 * within the drone's actions. */
static const char realtime_sql[] =
    "SELECT (max(c.t_ms + c.wall_ms) - min(c.t_ms)) / sum(c.sim_ms) FROM skill_calls c"
    " JOIN missions m ON m.id = c.mission_id WHERE m.task = ?1 AND c.depth = 0"
    " AND c.done GROUP BY m.id";

static int measure(const char *llm_url, results *r)
{
    CURL *c = curl_easy_init();
    server s;
    if (serve_start(&s, 1, llm_url)) return -1;
    busy_count(c, &s);
    r->rss_1 = rss_kib(s.pid);
    serve_stop(&s);

    if (serve_start(&s, MANY, llm_url)) return -1;
    busy_count(c, &s);
    r->rss_idle = rss_kib(s.pid);
    r->idle_per_drone_kib = (double)(r->rss_idle - r->rss_1) / (MANY - 1);
    list_latency(c, &s, &r->list_p50, &r->list_p99);

    start_missions(c, &s, TOGETHER, "first action");
    wait_idle(c, &s);
    r->together_ok = count_ok("first action");
    static double v[MANY];
    int n = query(first_sql, "first action", v, MANY);
    r->first_p50 = quantile(v, n, 0.5), r->first_p99 = quantile(v, n, 0.99);
    n = query(own_sql, "first action", v, MANY);
    /* + 0.0: a first call within the clock's resolution of the token is
     * 0, not -0. */
    r->own_p50 = quantile(v, n, 0.5) + 0.0, r->own_p99 = quantile(v, n, 0.99) + 0.0;
    n = query(asked_sql, "first action", v, MANY);
    r->asked_p50 = quantile(v, n, 0.5), r->asked_p99 = quantile(v, n, 0.99);
    n = query(ttft_sql, "first action", v, MANY);
    r->ttft_p50 = quantile(v, n, 0.5), r->ttft_p99 = quantile(v, n, 0.99);

    double t0 = clock_now_ms();
    start_missions(c, &s, MANY, "real time");
    sleep(2); /* all are in their 5 s delay */
    r->rss_flying = rss_kib(s.pid);
    list_latency(c, &s, &r->list_busy_p50, &r->list_busy_p99);
    wait_idle(c, &s);
    r->missions_per_s = MANY / ((clock_now_ms() - t0) / 1000);
    r->per_mission_kib = (double)(r->rss_flying - r->rss_idle) / MANY;
    r->many_ok = count_ok("real time");
    n = query(realtime_sql, "real time", v, MANY);
    r->realtime_p50 = quantile(v, n, 0.5), r->realtime_p99 = quantile(v, n, 0.99);
    serve_stop(&s);
    curl_easy_cleanup(c);
    return 0;
}

static const char *verdict(bool met)
{
    return met ? "met" : "missed";
}

static void report(const results *r, FILE *f)
{
    bool first_met = r->first_p99 <= TARGET_FIRST_ACTION_MS;
    bool rt_met = r->realtime_p99 <= TARGET_REALTIME && r->many_ok == MANY;
    bool list_met = r->list_busy_p99 <= TARGET_LIST_P99_MS;
    printf("bench_serve: %d drones in one server\n", MANY);
    printf("  memory: 1 drone %ld KiB, %d idle %ld KiB (%.1f KiB a drone), %d flying %ld KiB "
           "(%.1f KiB a mission)\n",
           r->rss_1, MANY, r->rss_idle, r->idle_per_drone_kib, MANY, r->rss_flying,
           r->per_mission_kib);
    printf("  drone list: idle p50 %.2f p99 %.2f ms; while %d fly p50 %.2f p99 %.2f ms "
           "(target p99 <= %.0f: %s)\n",
           r->list_p50, r->list_p99, MANY, r->list_busy_p50, r->list_busy_p99, TARGET_LIST_P99_MS,
           verdict(list_met));
    printf("  first action, %d started together (%d ok): p50 %.1f p99 %.1f ms (target p99 <= "
           "%.0f: %s)\n    of which aloft before the LLM request p50 %.1f p99 %.1f ms, after "
           "the LLM's first token p50 %.1f p99 %.1f ms; the fake LLM's first token (answering "
           "%d at once) p50 %.1f p99 %.1f ms\n",
           TOGETHER, r->together_ok, r->first_p50, r->first_p99, TARGET_FIRST_ACTION_MS,
           verdict(first_met), r->asked_p50, r->asked_p99, r->own_p50, r->own_p99, TOGETHER,
           r->ttft_p50, r->ttft_p99);
    printf("  %d at once (%d ok): wall over simulated time from each plan's first call to the "
           "end of its last p50 %.3f p99 %.3f (target p99 <= %.1f: %s); %.1f missions/s\n",
           MANY, r->many_ok, r->realtime_p50, r->realtime_p99, TARGET_REALTIME, verdict(rt_met),
           r->missions_per_s);
    if (!f) return;
    fprintf(f,
            "{\"drones\":{\"value\":%d,\"unit\":\"drones\"},"
            "\"rss_1_drone_kib\":{\"value\":%ld,\"unit\":\"KiB\"},"
            "\"rss_idle_kib\":{\"value\":%ld,\"unit\":\"KiB\"},"
            "\"rss_flying_kib\":{\"value\":%ld,\"unit\":\"KiB\"},"
            "\"memory_per_idle_drone_kib\":{\"value\":%.1f,\"unit\":\"KiB\"},"
            "\"memory_per_mission_kib\":{\"value\":%.1f,\"unit\":\"KiB\"},"
            "\"list_idle_p50_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
            "\"list_idle_p99_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
            "\"list_flying_p50_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
            "\"list_flying_p99_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
            "\"list_target_p99_ms\":{\"value\":%.0f,\"unit\":\"ms\"},\"list_target_met\":%s,"
            "\"first_action_p50_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
            "\"first_action_p99_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
            "\"first_action_after_token_p50_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
            "\"first_action_after_token_p99_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
            "\"llm_request_p99_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
            "\"llm_request_p50_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
            "\"fake_llm_first_token_p50_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
            "\"fake_llm_first_token_p99_ms\":{\"value\":%.2f,\"unit\":\"ms\"},"
            "\"first_action_target_ms\":{\"value\":%.0f,\"unit\":\"ms\"},"
            "\"first_action_target_met\":%s,"
            "\"realtime_ratio_p50\":{\"value\":%.4f,\"unit\":\"x\"},"
            "\"realtime_ratio_p99\":{\"value\":%.4f,\"unit\":\"x\"},"
            "\"realtime_target\":{\"value\":%.1f,\"unit\":\"x\"},\"realtime_target_met\":%s,"
            "\"missions_per_s\":{\"value\":%.2f,\"unit\":\"missions/s\"},"
            "\"missions_ok\":{\"value\":%d,\"unit\":\"missions\"}}\n",
            MANY, r->rss_1, r->rss_idle, r->rss_flying, r->idle_per_drone_kib, r->per_mission_kib,
            r->list_p50, r->list_p99, r->list_busy_p50, r->list_busy_p99, TARGET_LIST_P99_MS,
            list_met ? "true" : "false", r->first_p50, r->first_p99, r->own_p50, r->own_p99,
            r->asked_p99, r->asked_p50, r->ttft_p50, r->ttft_p99, TARGET_FIRST_ACTION_MS,
            first_met ? "true" : "false", r->realtime_p50, r->realtime_p99, TARGET_REALTIME,
            rt_met ? "true" : "false", r->missions_per_s, r->together_ok + r->many_ok);
    fclose(f);
}

static void remove_store(void)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-missions"};
    for (int i = 0; i < 4; i++) {
        char f[PATH_MAX + 64];
        snprintf(f, sizeof f, "%s%s", db, suffix[i]);
        unlink(f);
    }
    rmdir(tmpdir);
}

int main(int argc, char **argv)
{
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    ssize_t n = readlink("/proc/self/exe", aloft, sizeof aloft - 16);
    if (n <= 0) return 1;
    aloft[n] = '\0';
    snprintf(strrchr(aloft, '/'), 16, "/aloft");
    snprintf(scene, sizeof scene, "%s/examples/scenes/office.json", src);
    if (!mkdtemp(tmpdir)) return perror("mkdtemp"), 1;
    snprintf(db, sizeof db, "%s/missions.db", tmpdir);
    /* Sockets: 500 missions' LLM connections and the bench's own. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    quick_llm llm;
    if (quick_llm_start(&llm, "tc(90);d(5000);->True")) {
        remove_store();
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    results r = {0};
    int rc = measure(llm.base_url, &r);
    quick_llm_stop(&llm);
    curl_global_cleanup();
    if (rc == 0) report(&r, bench_out(argc, argv));
    remove_store();
    return rc ? 1 : 0;
}
