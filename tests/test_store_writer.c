/*
 * The store's writer (host/store/store_writer.c): one thread per store
 * commits the records of every mission in groups.
 * - many missions recording at once from their own threads: each mission
 *   holds exactly its own records, complete and in order, and the views
 *   handed over without waiting are all remembered;
 * - closing the store while records are still queued commits them first;
 * - reading a store (as `aloft log` does) never waits for another
 *   process's write transaction;
 * - a write that cannot be committed (the file-size limit stands in for a
 *   full disk) fails every record of its group with the database's
 *   message, a failed scene is reported by the mission's next record, and
 *   the store takes records again once there is room.
 *
 * labels: store
 */
#include "store/store.h"
#include "test_store_check.h"

#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#define MISSIONS 48
#define CALLS 12

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int i;
    char *p = buf[i++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* ---- many missions at once ---------------------------------------------- */

typedef struct flyer {
    store *s;
    pthread_barrier_t *start;
    int k;
    int64_t id;
    int errors;
    char err[512];
} flyer;

static void note(flyer *f, int rc, const char *err)
{
    if (rc >= 0) return;
    if (!f->errors++) snprintf(f->err, sizeof f->err, "%s", err);
}

/* Mission K: CALLS rounds of a statement, a skill call and its end, a
 * scene and a sighting of its own class, then the end. */
static void *fly(void *arg)
{
    flyer *f = arg;
    char err[512], task[32], text[64], args[32], ret[16], cls[16];
    snprintf(task, sizeof task, "mission %d", f->k);
    snprintf(ret, sizeof ret, "%d", f->k);
    snprintf(cls, sizeof cls, "c%d", f->k);
    pthread_barrier_wait(f->start);
    store_mission *m = store_mission_begin(
        f->s, &(store_mission_info){.task = task, .drone = "sim"}, err, sizeof err);
    if (!m) return note(f, -1, err), NULL;
    f->id = store_mission_id(m);
    for (int i = 0; i < CALLS; i++) {
        snprintf(text, sizeof text, "turn_cw(%d)", i);
        note(f, store_record_statement(m, -1, 0, i + 1, 1, text, err, sizeof err), err);
        snprintf(args, sizeof args, "[%d,%d]", f->k, i);
        int64_t call = store_call_begin(m, -1, "turn_cw", args, 0, err, sizeof err);
        note(f, call > 0 ? 0 : -1, err);
        store_call_result r = {.ret_json = ret, .sim_ms = -1, .wall_ms = -1};
        note(f, store_call_end(m, call, &r, err, sizeof err), err);
        snprintf(text, sizeof text, "view %d %d", f->k, i);
        note(f, store_record_scene(m, -1, text, false, 0, 0, 0, 0, err, sizeof err), err);
        store_sighting v = {.cls = cls, .x = f->k * 1000.0, .y = i, .z = 0, .conf = 0.5};
        note(f, store_record_objects(m, &v, 1, err, sizeof err), err);
    }
    note(f, store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err), err);
    return NULL;
}

/* Mission K (id ID) holds its CALLS rounds and nothing else, in order. */
static void check_mission(store *s, int k, int64_t id)
{
    char err[256], want[64];
    cJSON *doc = store_mission_json(s, id, err, sizeof err);
    CHECK(doc, "mission %d: %s", k, err);
    if (!doc) return;
    const cJSON *m = get(doc, "mission"), *events = get(doc, "events");
    snprintf(want, sizeof want, "mission %d", k);
    CHECK(strcmp(get(m, "task")->valuestring, want) == 0 &&
              strcmp(get(m, "status")->valuestring, "ok") == 0,
          "mission %d: its task, ended ok", k);
    CHECK(cJSON_GetArraySize(events) == 3 * CALLS, "mission %d: %d events, want %d", k,
          cJSON_GetArraySize(events), 3 * CALLS);
    int i = 0;
    double t = -1;
    const cJSON *e;
    cJSON_ArrayForEach(e, events)
    {
        int round = i / 3, part = i % 3;
        const char *kind = get(e, "kind")->valuestring;
        CHECK(get(e, "t_ms")->valuedouble >= t, "mission %d event %d: in time order", k, i);
        t = get(e, "t_ms")->valuedouble;
        if (part == 0) {
            CHECK(strcmp(kind, "statement") == 0, "mission %d event %d: %s", k, i, kind);
        } else if (part == 1) {
            char *args = cJSON_PrintUnformatted(get(e, "args"));
            snprintf(want, sizeof want, "[%d,%d]", k, round);
            CHECK(strcmp(kind, "call") == 0 && args && strcmp(args, want) == 0 &&
                      get(e, "ret")->valuedouble == k,
                  "mission %d event %d: call %s, want %s returning %d", k, i, args, want, k);
            free(args);
        } else {
            CHECK(strcmp(kind, "scene") == 0, "mission %d event %d: %s", k, i, kind);
        }
        i++;
    }
    cJSON_Delete(doc);
    store_object o[2];
    char cls[16];
    snprintf(cls, sizeof cls, "c%d", k);
    int n = store_objects(s, cls, o, 2, err, sizeof err);
    CHECK(n == 1 && o[0].sightings == CALLS && o[0].last_mission == id,
          "mission %d: one object of its class seen %d times (%d objects, %lld sightings)", k,
          CALLS, n, n > 0 ? (long long)o[0].sightings : 0LL);
}

static void test_many_missions_at_once(void)
{
    char err[256];
    const char *path = tmp_path("many.db");
    store *s = store_open(path, 0, err, sizeof err);
    CHECK(s, "open: %s", err);
    if (!s) return;
    static flyer f[MISSIONS];
    pthread_t t[MISSIONS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, MISSIONS);
    for (int k = 0; k < MISSIONS; k++) {
        f[k] = (flyer){.s = s, .start = &start, .k = k};
        pthread_create(&t[k], NULL, fly, &f[k]);
    }
    for (int k = 0; k < MISSIONS; k++)
        pthread_join(t[k], NULL);
    pthread_barrier_destroy(&start);
    for (int k = 0; k < MISSIONS; k++)
        CHECK(f[k].errors == 0 && f[k].id > 0, "mission %d: %d errors: %s", k, f[k].errors,
              f[k].err);
    for (int k = 0; k < MISSIONS; k++)
        if (f[k].id > 0) check_mission(s, k, f[k].id);
    cJSON *list = store_list_json(s, err, sizeof err);
    CHECK(cJSON_GetArraySize(list) == MISSIONS, "%d missions listed", cJSON_GetArraySize(list));
    cJSON_Delete(list);
    store_close(s);
}

/* ---- closing with records queued ---------------------------------------- */

static void test_close_commits_queued_records(void)
{
    char err[256];
    const char *path = tmp_path("close.db");
    store *s = store_open(path, 0, err, sizeof err);
    CHECK(s, "open: %s", err);
    if (!s) return;
    store_mission *m = store_mission_begin(s, NULL, err, sizeof err);
    CHECK(m, "begin: %s", err);
    if (!m) return;
    int64_t id = store_mission_id(m);
    enum { SCENES = 500 };
    char text[32];
    for (int i = 0; i < SCENES; i++) {
        snprintf(text, sizeof text, "scene %d", i);
        store_record_scene(m, -1, text, false, 0, 0, 0, 0, err, sizeof err);
    }
    /* The process stops here: no end, the store closes (as serve does on
     * SIGTERM for a mission it could not end). */
    store_close(s);
    free(m);
    s = store_open(path, 0, err, sizeof err);
    CHECK(s, "reopen: %s", err);
    if (!s) return;
    cJSON *doc = store_mission_json(s, id, err, sizeof err);
    const cJSON *events = get(doc, "events");
    CHECK(cJSON_GetArraySize(events) == SCENES, "every scene handed over is kept: %d of %d",
          cJSON_GetArraySize(events), SCENES);
    const cJSON *last = cJSON_GetArrayItem(events, SCENES - 1);
    CHECK(last && strcmp(get(last, "kind")->valuestring, "scene") == 0, "the last is a scene");
    CHECK(strcmp(get(get(doc, "mission"), "status")->valuestring, "interrupted") == 0,
          "the mission is interrupted");
    cJSON_Delete(doc);
    store_close(s);
}

/* ---- reading while another process writes ------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_reading_never_waits_for_a_writer(void)
{
    char err[256];
    const char *path = tmp_path("many.db"); /* the first test's missions */
    sqlite3 *other;
    CHECK(sqlite3_open(path, &other) == SQLITE_OK &&
              sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK,
          "another connection holds the write lock");
    double t0 = now_s();
    store *s = store_open(path, STORE_OPEN_EXISTING, err, sizeof err);
    CHECK(s, "open: %s", err);
    cJSON *list = s ? store_list_json(s, err, sizeof err) : NULL;
    cJSON *doc = s ? store_mission_json(s, 1, err, sizeof err) : NULL;
    store_object o[1];
    int n = s ? store_objects(s, NULL, o, 1, err, sizeof err) : -1;
    store_close(s);
    /* A reader that took the write lock would wait for the busy timeout
     * (10 s) here; 5 s leaves room for a slow machine and still tells. */
    double took = now_s() - t0;
    CHECK(list && doc && n == 1 && took < 5.0, "read while another writes: %.1f s: %s", took, err);
    cJSON_Delete(list);
    cJSON_Delete(doc);
    sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(other);
}

/* ---- a write that cannot be committed ----------------------------------- */

typedef struct big_caller {
    store_mission *m;
    pthread_barrier_t *start;
    const char *args;
    int64_t call;
    char err[512];
} big_caller;

static void *call_big(void *arg)
{
    big_caller *c = arg;
    pthread_barrier_wait(c->start);
    c->call = store_call_begin(c->m, -1, "print", c->args, 0, c->err, sizeof c->err);
    return NULL;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* Lowers the soft file-size limit to what the database and its log hold
 * now plus a little (OLD gets the limit to restore). */
static int limit_files(const char *path, struct rlimit *old)
{
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", path);
    long now = file_size(path) > file_size(wal) ? file_size(path) : file_size(wal);
    struct rlimit lim;
    if (getrlimit(RLIMIT_FSIZE, old)) return -1;
    lim = *old;
    lim.rlim_cur = (rlim_t)(now + 8192);
    return setrlimit(RLIMIT_FSIZE, &lim);
}

static void test_full_disk_fails_the_group(void)
{
    enum { N = 6, BIG = 256 * 1024 };
    char err[512];
    const char *path = tmp_path("full.db");
    store *s = store_open(path, 0, err, sizeof err);
    CHECK(s, "open: %s", err);
    if (!s) return;
    store_mission *m[N];
    for (int i = 0; i < N; i++)
        m[i] = store_mission_begin(s, NULL, err, sizeof err);
    /* Warm the log so that its size is what it will stay below. */
    int64_t first = store_call_begin(m[0], -1, "print", "[1]", 0, err, sizeof err);
    CHECK(first > 0, "a call before the limit: %s", err);
    char *args = malloc(BIG + 8);
    args[0] = '[';
    args[1] = '"';
    memset(args + 2, 'x', BIG);
    strcpy(args + 2 + BIG, "\"]");

    signal(SIGXFSZ, SIG_IGN); /* a write beyond the limit fails with EFBIG */
    struct rlimit old;
    CHECK(limit_files(path, &old) == 0, "setrlimit");
    big_caller c[N];
    pthread_t t[N];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, N);
    for (int i = 0; i < N; i++) {
        c[i] = (big_caller){.m = m[i], .start = &start, .args = args};
        pthread_create(&t[i], NULL, call_big, &c[i]);
    }
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < N; i++)
        CHECK(c[i].call == -1 && strstr(c[i].err, path) && strstr(c[i].err, "full"),
              "mission %d: the call that cannot be written fails, naming the database and the "
              "full disk: %lld: %s",
              i, (long long)c[i].call, c[i].err);
    /* A scene handed over without waiting fails later (store_objects waits
     * for it), and the mission's next record says so, although it is
     * written itself (there is room again). */
    CHECK(store_record_scene(m[1], -1, args, false, 0, 0, 0, 0, err, sizeof err) == 0,
          "the scene is handed over");
    store_object o[1];
    store_objects(s, NULL, o, 1, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    err[0] = '\0';
    CHECK(store_call_begin(m[1], -1, "print", "[2]", 0, err, sizeof err) == -1 &&
              strstr(err, path) && strstr(err, "cannot record the scene"),
          "the next record reports the lost scene: %s", err);
    for (int i = 0; i < N; i++) {
        int64_t call = store_call_begin(m[i], -1, "print", "[3]", 0, err, sizeof err);
        CHECK(call > 0, "mission %d: a call once there is room: %s", i, err);
        CHECK(store_mission_end(m[i], STORE_OK, NULL, NULL, err, sizeof err) == 0,
              "mission %d: ends: %s", i, err);
    }
    store_close(s);
    free(args);

    s = store_open(path, 0, err, sizeof err);
    CHECK(s, "reopen: %s", err);
    if (!s) return;
    for (int i = 0; i < N; i++) {
        cJSON *doc = store_mission_json(s, i + 1, err, sizeof err);
        const cJSON *events = get(doc, "events"), *e;
        int calls = 0, big = 0;
        cJSON_ArrayForEach(e, events)
        {
            calls++;
            const cJSON *a = cJSON_GetArrayItem(get(e, "args"), 0);
            big += cJSON_IsString(a);
        }
        /* Mission 0: its call before the limit and after; mission 1: the
         * call that reported the lost scene and the one after; the others:
         * the one after. */
        int want = i < 2 ? 2 : 1;
        CHECK(big == 0 && calls == want,
              "mission %d: the failed records are not there, the others are (%d events, want "
              "%d)",
              i, calls, want);
        CHECK(strcmp(get(get(doc, "mission"), "status")->valuestring, "ok") == 0, "mission %d: ok",
              i);
        cJSON_Delete(doc);
    }
    store_close(s);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/aloft-test-store-writer-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_many_missions_at_once();
    test_close_commits_queued_records();
    test_reading_never_waits_for_a_writer();
    test_full_disk_fails_the_group();
    return check_finish("test_store_writer", tmpdir);
}
