/*
 * bench_record: what recording costs a real mission. Every setup of the
 * benchmark suite (examples/benchmark) is flown with its reference plan in
 * process at time scale 0 (so host time is all there is), alternately
 * without the store and recorded as `aloft run` records it (mission begin,
 * plan, statements, every call begun and ended, violations, mission end),
 * into a database in the current directory (a real file system; `make
 * bench` runs in build/).
 *
 *   bench_record [OUT.json]      (SRC=source root, default ".")
 *
 * Reports the host time of a mission both ways, the recorder's share of the
 * recorded mission's host time, the writes per mission and the cost per
 * write, with synchronous=NORMAL (the default) and FULL; what opening the
 * store costs each `aloft run` on top; and the recorder's share of a flight
 * at time scale 1, where the mission lasts its simulated time.
 */
#include "bench_out.h"
#include "clock.h"
#include "cmd/cli.h"
#include "loader/loader.h"
#include "mission/record.h"
#include "mission/runner.h"
#include "suite.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SETUPS 64

static char pictures[] = "/tmp/aloft-bench-record-XXXXXX";
static const skill_registry *reg;

static void die(const char *what, const char *err)
{
    fprintf(stderr, "bench_record: %s: %s\n", what, err);
    exit(1);
}

static double sim_ms; /* simulated time of the last flight */

/* Flies setup SU, recorded in S when S is not NULL; returns the host time
 * in ms, from the world's start to the mission's end, and the mission id. */
static double fly(const setup *su, store *s, int64_t *id)
{
    char err[512];
    double t0 = clock_now_ms();
    store_mission *m = NULL;
    mission_record *rec = NULL;
    mission_world w;
    if (s) {
        store_mission_info info = {.drone = "sim", .seed = 1};
        if (!(m = store_mission_begin(s, &info, err, sizeof err))) die("begin", err);
        rec = mission_record_new(m, &w);
        *id = store_mission_id(m);
    }
    sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = pictures};
    if (mission_world_sim(&w, su->scene, &so, err, sizeof err)) die(su->scene, err);
    runner_outcome out;
    runner_opts o = {.reg = reg,
                     .world = &w,
                     .plan = su->plan,
                     .plan_len = su->plan_len,
                     .outcome = &out,
                     .record = rec};
    cJSON *doc = runner_run(&o);
    if (rec) {
        if (mission_record_error(rec)) die("record", mission_record_error(rec));
        mission_record_free(rec);
        char *res = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(doc, "result"));
        if (store_mission_end(m, runner_store_status(out.status), NULL, res, err, sizeof err))
            die("end", err);
        free(res);
    }
    cJSON_Delete(doc);
    sim_ms = mission_world_sim_s(&w) * 1000;
    mission_world_close(&w, true);
    return clock_now_ms() - t0;
}

/* Store writes of mission ID: begin and end, each event, calls twice. */
static int count_writes(store *s, int64_t id)
{
    char err[512];
    cJSON *doc = store_mission_json(s, id, err, sizeof err);
    if (!doc) die("read back", err);
    int n = 2;
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(doc, "events");
    for (const cJSON *e = ev ? ev->child : NULL; e; e = e->next) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "kind");
        n += cJSON_IsString(k) && strcmp(k->valuestring, "call") == 0 ? 2 : 1;
    }
    cJSON_Delete(doc);
    return n;
}

typedef struct result {
    double plain_ms, recorded_ms; /* mean host time per mission */
    double writes;                /* mean store writes per mission */
    double sim_ms;                /* mean simulated time per mission */
} result;

static void remove_db(const char *path)
{
    static const char *const tails[] = {"", "-wal", "-shm", "-missions"};
    for (int i = 0; i < 4; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s%s", path, tails[i]);
        remove(p);
    }
}

/* Flies the suite both ways, alternating, for at least MIN_MS and ROUNDS
 * rounds. */
static result measure(setup *setups, int n, const char *db, int flags, double min_ms, int rounds)
{
    char err[512];
    remove_db(db);
    store *s = store_open(db, flags, err, sizeof err);
    if (!s) die(db, err);
    int64_t id = 0;
    long writes = 0;
    for (int i = 0; i < n; i++) { /* warm up; count the writes */
        fly(&setups[i], NULL, &id);
        fly(&setups[i], s, &id);
        setups[i].writes = count_writes(s, id);
    }
    double plain = 0, recorded = 0, sim = 0, start = clock_now_ms();
    long missions = 0;
    while (clock_now_ms() - start < min_ms || missions < (long)rounds * n) {
        for (int i = 0; i < n; i++) {
            plain += fly(&setups[i], NULL, &id);
            recorded += fly(&setups[i], s, &id);
            sim += sim_ms;
            writes += setups[i].writes;
        }
        missions += n;
        suite_clean_dir(pictures);
    }
    store_close(s);
    remove_db(db);
    return (result){plain / missions, recorded / missions, (double)writes / missions,
                    sim / missions};
}

/* Opening and closing an existing store, as each `aloft run` does. */
static double open_ms(const char *db)
{
    char err[512];
    remove_db(db);
    store *s = store_open(db, 0, err, sizeof err);
    if (!s) die(db, err);
    store_close(s);
    int rounds = 200;
    double t0 = clock_now_ms();
    for (int i = 0; i < rounds; i++) {
        if (!(s = store_open(db, 0, err, sizeof err))) die(db, err);
        store_close(s);
    }
    double ms = (clock_now_ms() - t0) / rounds;
    remove_db(db);
    return ms;
}

int main(int argc, char **argv)
{
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    char root[600], db[600];
    snprintf(root, sizeof root, "%s/examples/benchmark", src);
    snprintf(db, sizeof db, "bench-record-%d.db", (int)getpid());
    static setup setups[MAX_SETUPS];
    int n = find_setups(root, setups, MAX_SETUPS);
    if (n == 0) {
        fprintf(stderr, "bench_record: no benchmark setups under %s (set SRC)\n", root);
        return 1;
    }
    skill_registry *r = loader_standard(NULL, 0, NULL, NULL);
    if (!r || !mkdtemp(pictures)) return 1;
    reg = r;

    result normal = measure(setups, n, db, 0, 2000, 5);
    result full = measure(setups, n, db, STORE_OPEN_SYNC_FULL, 0, 2);
    double open = open_ms(db);
    const result *res[2] = {&normal, &full};
    const char *names[2] = {"normal", "full"};
    double share[2], per_write_us[2];
    for (int i = 0; i < 2; i++) {
        double extra = res[i]->recorded_ms - res[i]->plain_ms;
        share[i] = extra / res[i]->recorded_ms;
        per_write_us[i] = extra * 1000 / res[i]->writes;
        printf("bench_record: synchronous=%s: %d setups, %.1f writes per mission; host time "
               "%.3f ms without the store, %.3f ms recorded: the recorder takes %.1f%% "
               "(%.1f us per write)\n",
               names[i], n, res[i]->writes, res[i]->plain_ms, res[i]->recorded_ms, 100 * share[i],
               per_write_us[i]);
    }
    double with_open = (normal.recorded_ms + open - normal.plain_ms) / (normal.recorded_ms + open);
    printf("bench_record: opening the store: %.3f ms per run; with it the store takes %.1f%% of "
           "a run's mission host time\n",
           open, 100 * with_open);
    /* At time scale 1 a mission lasts its simulated time; the store's work
     * is the same. */
    double extra = normal.recorded_ms + open - normal.plain_ms;
    double flight = extra / (normal.sim_ms + normal.recorded_ms + open);
    printf("bench_record: a mission flies %.1f s (simulated): at time scale 1 the store takes "
           "%.4f%% of it\n",
           normal.sim_ms / 1000, 100 * flight);
    FILE *f = bench_out(argc, argv);
    if (f) {
        fprintf(f,
                "{\"record_mission_plain_ms\": {\"value\": %.4f, \"unit\": \"ms\"},\n"
                " \"record_mission_recorded_ms\": {\"value\": %.4f, \"unit\": \"ms\"},\n"
                " \"record_writes_per_mission\": {\"value\": %.1f, \"unit\": \"writes\"},\n"
                " \"record_share\": {\"value\": %.4f, \"unit\": \"ratio\"},\n"
                " \"record_write_us\": {\"value\": %.2f, \"unit\": \"us\"},\n"
                " \"record_share_sync_full\": {\"value\": %.4f, \"unit\": \"ratio\"},\n"
                " \"record_write_us_sync_full\": {\"value\": %.2f, \"unit\": \"us\"},\n"
                " \"record_store_open_ms\": {\"value\": %.4f, \"unit\": \"ms\"},\n"
                " \"record_share_with_open\": {\"value\": %.4f, \"unit\": \"ratio\"},\n"
                " \"record_mission_sim_s\": {\"value\": %.2f, \"unit\": \"s\"},\n"
                " \"record_share_of_flight\": {\"value\": %.6f, \"unit\": \"ratio\"}}\n",
                normal.plain_ms, normal.recorded_ms, normal.writes, share[0], per_write_us[0],
                share[1], per_write_us[1], open, with_open, normal.sim_ms / 1000, flight);
        fclose(f);
    }
    for (int i = 0; i < n; i++)
        free(setups[i].plan);
    registry_free(r);
    suite_clean_dir(pictures);
    remove(pictures);
    return 0;
}
