/*
 * The mission store through its C API: path resolution, recording a mission
 * and reading it back as `aloft log --json` shows it, the object memory,
 * interrupted missions, refusing corrupt, foreign and newer databases, and
 * replaying a recorded mission's LLM replies.
 */
#include "store/store.h"
#include "test_store_check.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int i;
    char *p = buf[i++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static void run_sql(const char *path, const char *sql)
{
    sqlite3 *db;
    sqlite3_open(path, &db);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "setup SQL failed: %s\n", msg);
        failures++;
        sqlite3_free(msg);
    }
    sqlite3_close(db);
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

/* ---- path resolution ------------------------------------------------------ */

static void test_path_resolution(void)
{
    char out[512], err[256];
    setenv("ALOFT_DB", "/tmp/from-env.db", 1);
    setenv("XDG_DATA_HOME", "/xdg", 1);
    CHECK(store_resolve_path("given.db", out, sizeof out, err, sizeof err) == 0 &&
              strcmp(out, "given.db") == 0,
          "--db wins, got %s", out);
    CHECK(store_resolve_path(NULL, out, sizeof out, err, sizeof err) == 0 &&
              strcmp(out, "/tmp/from-env.db") == 0,
          "ALOFT_DB next, got %s", out);
    unsetenv("ALOFT_DB");
    CHECK(store_resolve_path(NULL, out, sizeof out, err, sizeof err) == 0 &&
              strcmp(out, "/xdg/aloft/aloft.db") == 0,
          "XDG_DATA_HOME next, got %s", out);
    setenv("XDG_DATA_HOME", "relative", 1);
    setenv("HOME", "/home/pilot", 1);
    CHECK(store_resolve_path(NULL, out, sizeof out, err, sizeof err) == 0 &&
              strcmp(out, "/home/pilot/.local/share/aloft/aloft.db") == 0,
          "a relative XDG_DATA_HOME is ignored, got %s", out);
    unsetenv("XDG_DATA_HOME");
    unsetenv("HOME");
    CHECK(store_resolve_path(NULL, out, sizeof out, err, sizeof err) == -1 && strstr(err, "--db"),
          "no path at all is an error that names --db, got %s", err);
    char small[8];
    CHECK(store_resolve_path("much-too-long.db", small, sizeof small, err, sizeof err) == -1,
          "a path that does not fit is refused");

    /* The default location is created, directories and all. */
    setenv("XDG_DATA_HOME", tmp_path("xdg/data"), 1);
    store *s = store_open(NULL, 0, err, sizeof err);
    CHECK(s != NULL, "open at the default path: %s", err);
    struct stat sb;
    CHECK(stat(tmp_path("xdg/data/aloft/aloft.db"), &sb) == 0, "default database created");
    store_close(s);
    unsetenv("XDG_DATA_HOME");

    s = store_open(tmp_path("missing.db"), STORE_OPEN_EXISTING, err, sizeof err);
    CHECK(s == NULL && strstr(err, "no mission database"), "EXISTING on a missing file: %s", err);
    CHECK(stat(tmp_path("missing.db"), &sb) != 0, "EXISTING creates nothing");
}

/* ---- a whole mission ------------------------------------------------------ */

/* What `aloft run --json` reported for a mission (SPEC §2), as the runner
 * would have recorded it event by event. */
static const char run_json[] =
    "{\"ok\":true,\"result\":true,\"error\":null,\"logs\":[],"
    "\"pose\":{\"x\":0,\"y\":150,\"z\":100,\"yaw\":90},"
    "\"calls\":["
    "{\"skill\":\"scan\",\"args\":[\"apple\"],\"ret\":true,\"t_ms\":41.5},"
    "{\"skill\":\"turn_cw\",\"args\":[45],\"ret\":true,\"t_ms\":41.7},"
    "{\"skill\":\"is_visible\",\"args\":[\"apple\"],\"ret\":true,\"t_ms\":42.25},"
    "{\"skill\":\"move_forward\",\"args\":[900],\"ret\":false,\"t_ms\":50},"
    "{\"skill\":\"object_x\",\"args\":[\"apple\"],\"ret\":0.52,\"t_ms\":61}],"
    "\"violations\":[{\"skill\":\"move_forward\",\"reason\":\"leaves the geofence\"}],"
    "\"plans\":[\"s('apple');mf(900)\",\"ox('apple')\"],"
    "\"tries\":1,\"replans\":1,\"llm_calls\":2}";

static int64_t record_run(store *s, const cJSON *run, const char *task)
{
    char err[256];
    store_mission_info info = {.task = task,
                               .drone = "sim",
                               .model = "test-model",
                               .scene_json = "{\"objects\":[]}",
                               .params_json = "{\"max_tries\":3}",
                               .seed = 42};
    store_mission *m = store_mission_begin(s, &info, err, sizeof err);
    CHECK(m != NULL, "begin: %s", err);
    if (!m) return -1;
    const cJSON *plans = cJSON_GetObjectItem(run, "plans");
    const cJSON *calls = cJSON_GetObjectItem(run, "calls");
    const cJSON *viol = cJSON_GetObjectItem(run, "violations");
    int p = 0;
    const cJSON *plan;
    cJSON_ArrayForEach(plan, plans)
    {
        store_llm x = {.kind = p == 0 ? STORE_LLM_PLAN : STORE_LLM_REPLAN,
                       .t_ms = p * 45.0,
                       .prompt = "the prompt",
                       .response = plan->valuestring,
                       .latency_ms = 40,
                       .ttft_ms = 9,
                       .prompt_tokens = 900 + p,
                       .completion_tokens = 12};
        int64_t llm = store_record_llm(m, &x, err, sizeof err);
        CHECK(llm > 0, "llm: %s", err);
        CHECK(store_mission_plans(m) == p, "%d plans so far", p);
        int no =
            store_record_plan(m, x.t_ms + 40, llm, plan->valuestring, true, NULL, err, sizeof err);
        CHECK(no == p + 1, "plan numbers count up, got %d: %s", no, err);
        CHECK(store_record_statement(m, x.t_ms + 41, no, 1, 1, plan->valuestring, err,
                                     sizeof err) == 0,
              "statement: %s", err);
        /* The calls of plan 1 are those before t=55, the rest belong to plan 2. */
        const cJSON *c;
        int depth = 0;
        cJSON_ArrayForEach(c, calls)
        {
            double t = cJSON_GetObjectItem(c, "t_ms")->valuedouble;
            if ((p == 0) != (t < 55)) continue;
            const char *skill = cJSON_GetObjectItem(c, "skill")->valuestring;
            char *args = cJSON_PrintUnformatted(cJSON_GetObjectItem(c, "args"));
            char *ret = cJSON_PrintUnformatted(cJSON_GetObjectItem(c, "ret"));
            int64_t id = store_call_begin(m, t, skill, args, depth, err, sizeof err);
            CHECK(id > 0, "call begin: %s", err);
            if (strcmp(skill, "move_forward") == 0) {
                const cJSON *v = cJSON_GetArrayItem(viol, 0);
                CHECK(store_record_violation(m, t, cJSON_GetObjectItem(v, "skill")->valuestring,
                                             args, cJSON_GetObjectItem(v, "reason")->valuestring,
                                             err, sizeof err) == 0,
                      "violation: %s", err);
            }
            store_call_result r = {.ret_json = ret,
                                   .has_pose = true,
                                   .y = 150,
                                   .z = 100,
                                   .yaw = 90,
                                   .sim_ms = 500,
                                   .wall_ms = 0.2};
            CHECK(store_call_end(m, id, &r, err, sizeof err) == 0, "call end: %s", err);
            free(args);
            free(ret);
            depth = strcmp(skill, "scan") == 0;
        }
        p++;
    }
    CHECK(store_record_scene(m, 70, "apple_1 x:0.52 y:0.40 width:0.05 height:0.06", true, 0, 150,
                             100, 90, err, sizeof err) == 0,
          "scene: %s", err);
    int64_t id = store_mission_id(m);
    CHECK(store_mission_end(m, STORE_OK, NULL, "true", err, sizeof err) == 0, "end: %s", err);
    return id;
}

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static void test_mission_rows_match_run_json(void)
{
    char err[256];
    store *s = store_open(tmp_path("run.db"), 0, err, sizeof err);
    CHECK(s != NULL, "open: %s", err);
    if (!s) return;
    cJSON *run = cJSON_Parse(run_json);
    int64_t id = record_run(s, run, "find the apple");

    cJSON *doc = store_mission_json(s, id, err, sizeof err);
    CHECK(doc != NULL, "mission json: %s", err);
    if (!doc) return;
    const cJSON *mission = get(doc, "mission");
    CHECK(get(mission, "id")->valuedouble == (double)id, "mission id");
    CHECK(strcmp(get(mission, "task")->valuestring, "find the apple") == 0, "task");
    CHECK(strcmp(get(mission, "status")->valuestring, "ok") == 0, "status");
    CHECK(cJSON_IsTrue(get(mission, "result")), "result kept as JSON");
    CHECK(get(get(mission, "params"), "max_tries")->valueint == 3, "params kept as JSON");
    const cJSON *started = get(mission, "started");
    CHECK(cJSON_IsString(started) && strlen(started->valuestring) == 24 &&
              started->valuestring[10] == 'T' && started->valuestring[23] == 'Z',
          "started is ISO-8601 UTC: %s", started->valuestring);
    CHECK(cJSON_Compare(get(doc, "plans"), get(run, "plans"), true), "plans match run --json");

    /* Every call of run --json, in order, with the same skill, args, ret, t_ms. */
    const cJSON *e, *calls = get(run, "calls");
    int i = 0, n_viol = 0, n_stmt = 0, n_scene = 0, n_plan = 0;
    cJSON_ArrayForEach(e, get(doc, "events"))
    {
        const char *kind = get(e, "kind")->valuestring;
        CHECK(get(e, "t_ms") && get(e, "skill") && get(e, "args") && get(e, "ret"),
              "every event has the keys of SPEC §2");
        if (strcmp(kind, "violation") == 0) {
            const cJSON *v = cJSON_GetArrayItem(get(run, "violations"), n_viol++);
            CHECK(strcmp(get(e, "skill")->valuestring, get(v, "skill")->valuestring) == 0 &&
                      strcmp(get(e, "reason")->valuestring, get(v, "reason")->valuestring) == 0,
                  "violation matches");
            continue;
        }
        n_stmt += strcmp(kind, "statement") == 0;
        n_scene += strcmp(kind, "scene") == 0;
        n_plan += strcmp(kind, "plan") == 0;
        if (strcmp(kind, "call") != 0) continue;
        const cJSON *c = cJSON_GetArrayItem(calls, i++);
        CHECK(c != NULL, "more calls stored than run --json has");
        if (!c) break;
        CHECK(strcmp(get(e, "skill")->valuestring, get(c, "skill")->valuestring) == 0,
              "call %d skill %s vs %s", i, get(e, "skill")->valuestring,
              get(c, "skill")->valuestring);
        CHECK(cJSON_Compare(get(e, "args"), get(c, "args"), true), "call %d args", i);
        CHECK(cJSON_Compare(get(e, "ret"), get(c, "ret"), true), "call %d ret", i);
        CHECK(get(e, "t_ms")->valuedouble == get(c, "t_ms")->valuedouble, "call %d t_ms", i);
        CHECK(cJSON_IsTrue(get(e, "done")), "call %d done", i);
        CHECK(get(get(e, "pose"), "yaw")->valuedouble == 90, "call %d pose after", i);
    }
    CHECK(i == cJSON_GetArraySize(calls), "all %d calls stored, saw %d", cJSON_GetArraySize(calls),
          i);
    CHECK(n_viol == 1 && n_stmt == 2 && n_scene == 1 && n_plan == 2,
          "timeline holds violations %d, statements %d, scenes %d, plans %d", n_viol, n_stmt,
          n_scene, n_plan);
    const cJSON *llm = get(doc, "llm_calls");
    CHECK(cJSON_GetArraySize(llm) == get(run, "llm_calls")->valueint, "llm_calls count");
    const cJSON *l1 = cJSON_GetArrayItem(llm, 1);
    CHECK(l1 && strcmp(get(l1, "kind")->valuestring, "replan") == 0 &&
              get(l1, "latency_ms")->valuedouble == 40 &&
              get(l1, "prompt_tokens")->valueint == 901 &&
              get(l1, "completion_tokens")->valueint == 12,
          "llm call fields");

    cJSON *list = store_list_json(s, err, sizeof err);
    CHECK(list && cJSON_GetArraySize(list) == 1, "list has the mission: %s", err);
    const cJSON *row = cJSON_GetArrayItem(list, 0);
    CHECK(row && get(row, "id") && get(row, "task") && get(row, "status") && get(row, "started") &&
              cJSON_IsNumber(get(row, "duration_ms")),
          "list row has the keys of SPEC §2");
    cJSON_Delete(list);
    cJSON_Delete(doc);

    CHECK(store_mission_json(s, id + 100, err, sizeof err) == NULL && strstr(err, "no mission"),
          "unknown id: %s", err);
    cJSON_Delete(run);
    store_close(s);
}

static void test_statuses_and_bad_input(void)
{
    char err[256];
    store *s = store_open(tmp_path("status.db"), 0, err, sizeof err);
    CHECK(s != NULL, "open: %s", err);
    if (!s) return;
    store_status ends[] = {STORE_OK, STORE_FAILED, STORE_CANCELLED};
    for (int i = 0; i < 3; i++) {
        store_mission *m = store_mission_begin(s, NULL, err, sizeof err);
        CHECK(m != NULL, "begin without info: %s", err);
        if (!m) return;
        if (i == 0) {
            CHECK(store_call_begin(m, -1, "turn_cw", "[45", 0, err, sizeof err) == -1 &&
                      strstr(err, "JSON"),
                  "malformed args refused: %s", err);
            CHECK(store_call_begin(m, -1, "", "[]", 0, err, sizeof err) == -1,
                  "a call needs a skill");
            CHECK(store_call_end(m, 99999, &(store_call_result){.ret_json = "true"}, err,
                                 sizeof err) == -1,
                  "ending an unknown call is refused");
            store_llm x = {.kind = (store_llm_kind)9};
            CHECK(store_record_llm(m, &x, err, sizeof err) == -1, "unknown LLM kind refused");
        }
        CHECK(store_mission_end(m, ends[i], i ? "boom" : NULL, NULL, err, sizeof err) == 0,
              "end: %s", err);
    }
    store_mission *m = store_mission_begin(s, NULL, err, sizeof err);
    CHECK(store_mission_end(m, STORE_RUNNING, NULL, NULL, err, sizeof err) == -1,
          "ending as running is refused");
    cJSON *list = store_list_json(s, err, sizeof err);
    const char *want[] = {"ok", "failed", "cancelled", "running"};
    for (int i = 0; i < 4; i++) {
        const cJSON *row = cJSON_GetArrayItem(list, i);
        CHECK(row && strcmp(get(row, "status")->valuestring, want[i]) == 0, "status %d is %s", i,
              want[i]);
    }
    cJSON_Delete(list);
    store_close(s);
}

static void test_object_memory_merges_across_missions(void)
{
    char err[256];
    store *s = store_open(tmp_path("objects.db"), 0, err, sizeof err);
    CHECK(s != NULL, "open: %s", err);
    if (!s) return;
    store_mission *m1 = store_mission_begin(s, NULL, err, sizeof err);
    int64_t a = store_record_object(m1, "apple", 0, 250, 80, 0.6, err, sizeof err);
    int64_t b = store_record_object(m1, "apple", 20, 250, 80, 0.9, err, sizeof err);
    int64_t far = store_record_object(m1, "apple", 300, 250, 80, 0.5, err, sizeof err);
    int64_t person = store_record_object(m1, "person", 0, 250, 80, 0.8, err, sizeof err);
    CHECK(a > 0 && a == b, "a nearby sighting is the same apple (%lld, %lld)", (long long)a,
          (long long)b);
    CHECK(far > 0 && far != a, "a distant apple is another object");
    CHECK(person > 0 && person != a, "another class is another object");
    store_mission_end(m1, STORE_OK, NULL, NULL, err, sizeof err);

    store_mission *m2 = store_mission_begin(s, NULL, err, sizeof err);
    int64_t c = store_record_object(m2, "apple", 10, 280, 80, 0.7, err, sizeof err);
    CHECK(c == a, "the next mission's sighting merges into the remembered apple");
    int64_t m2id = store_mission_id(m2);
    store_mission_end(m2, STORE_OK, NULL, NULL, err, sizeof err);

    store_object objs[8];
    int n = store_objects(s, "apple", objs, 8, err, sizeof err);
    CHECK(n == 2, "two apples remembered, got %d", n);
    const store_object *o = NULL;
    for (int i = 0; i < n; i++)
        if (objs[i].id == a) o = &objs[i];
    CHECK(o && o->sightings == 3, "three sightings");
    CHECK(o && o->x == 10 && o->y > 259.9 && o->y < 260.1, "mean position, got (%g, %g)",
          o ? o->x : -1, o ? o->y : -1);
    CHECK(o && o->conf == 0.9, "highest confidence kept");
    CHECK(o && o->last_mission == m2id, "last mission recorded");
    CHECK(store_objects(s, NULL, objs, 8, err, sizeof err) == 3, "three objects in all");
    CHECK(store_objects(s, "kite", objs, 8, err, sizeof err) == 0, "no kites");
    store_close(s);
}

/* A mission whose writer is gone is marked interrupted at the next open and
 * keeps its events; a mission still being written is not. Here the writer
 * "dies" by closing its store without ending the mission (its lock goes
 * away, as with a killed process), and a mission whose owner is a process
 * of another boot, without a lock, is dead too. */
static void test_dead_owner_marked_interrupted(void)
{
    char err[256];
    const char *path = tmp_path("owners.db");
    store *s = store_open(path, 0, err, sizeof err);
    store *gone = store_open(path, 0, err, sizeof err);
    CHECK(s != NULL && gone != NULL, "open: %s", err);
    if (!s || !gone) return;
    store_mission *live = store_mission_begin(s, NULL, err, sizeof err);
    store_mission *dead = store_mission_begin(gone, NULL, err, sizeof err);
    store_mission *old = store_mission_begin(s, NULL, err, sizeof err);
    int64_t call = store_call_begin(dead, 120, "move_up", "[20]", 0, err, sizeof err);
    store_call_end(dead, call, &(store_call_result){.ret_json = "true", .wall_ms = 30}, err,
                   sizeof err);
    int64_t dead_id = store_mission_id(dead), old_id = store_mission_id(old);
    free(dead); /* its writer "dies": nothing more is written */
    store_close(gone);
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE missions SET owner = 'pid no-such-boot 1 1' WHERE id = %lld",
             (long long)old_id);
    run_sql(path, sql);

    store *s2 = store_open(path, 0, err, sizeof err);
    CHECK(s2 != NULL, "reopen: %s", err);
    if (!s2) return;
    cJSON *doc = store_mission_json(s2, dead_id, err, sizeof err);
    const cJSON *m = get(doc, "mission");
    CHECK(m && strcmp(get(m, "status")->valuestring, "interrupted") == 0, "dead -> interrupted");
    CHECK(m && get(m, "duration_ms")->valuedouble == 150, "duration up to the last event");
    CHECK(cJSON_GetArraySize(get(doc, "events")) == 1, "its call is kept");
    cJSON_Delete(doc);
    doc = store_mission_json(s2, old_id, err, sizeof err);
    CHECK(strcmp(get(get(doc, "mission"), "status")->valuestring, "interrupted") == 0,
          "an owner from another boot is dead");
    cJSON_Delete(doc);
    doc = store_mission_json(s2, store_mission_id(live), err, sizeof err);
    CHECK(strcmp(get(get(doc, "mission"), "status")->valuestring, "running") == 0,
          "a live mission stays running");
    cJSON_Delete(doc);
    CHECK(store_mission_end(live, STORE_OK, NULL, NULL, err, sizeof err) == 0, "end: %s", err);
    free(old);
    store_close(s2);
    store_close(s);
}

/* A store shared by a process's missions stays open while one of them is
 * abandoned (its recorder lost it): the next open, here or in another
 * process, marks that one interrupted and leaves the others running. */
static void test_abandoned_in_shared_store(void)
{
    char err[256];
    const char *path = tmp_path("shared.db");
    store *s = store_open(path, 0, err, sizeof err);
    CHECK(s != NULL, "open: %s", err);
    if (!s) return;
    store_mission *kept = store_mission_begin(s, NULL, err, sizeof err);
    store_mission *lost = store_mission_begin(s, NULL, err, sizeof err);
    int64_t lost_id = store_mission_id(lost);
    store_mission_abandon(lost);
    store *other = store_open(path, 0, err, sizeof err);
    CHECK(other != NULL, "second open: %s", err);
    if (other) {
        cJSON *doc = store_mission_json(other, lost_id, err, sizeof err);
        CHECK(strcmp(get(get(doc, "mission"), "status")->valuestring, "interrupted") == 0,
              "the abandoned mission is interrupted while its store stays open");
        cJSON_Delete(doc);
        doc = store_mission_json(other, store_mission_id(kept), err, sizeof err);
        CHECK(strcmp(get(get(doc, "mission"), "status")->valuestring, "running") == 0,
              "the other mission of that store keeps running");
        cJSON_Delete(doc);
        store_close(other);
    }
    CHECK(store_mission_end(kept, STORE_OK, NULL, NULL, err, sizeof err) == 0, "end: %s", err);
    store_close(s);
}

/* ---- databases that are not ours -------------------------------------------- */

static void test_bad_databases_refused(void)
{
    char err[256];
    const char *garbage = tmp_path("garbage.db");
    char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 7 + 3);
    write_file(garbage, junk, sizeof junk);
    store *s = store_open(garbage, 0, err, sizeof err);
    CHECK(s == NULL && strstr(err, "not an aloft database") && strstr(err, garbage),
          "garbage file: %s", err);

    const char *foreign = tmp_path("foreign.db");
    run_sql(foreign, "CREATE TABLE recipes(name TEXT)");
    s = store_open(foreign, 0, err, sizeof err);
    CHECK(s == NULL && strstr(err, "not an aloft database"), "other SQLite file: %s", err);
    sqlite3 *raw;
    sqlite3_open(foreign, &raw);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &st, NULL);
    sqlite3_step(st);
    CHECK(strcmp((const char *)sqlite3_column_text(st, 0), "delete") == 0,
          "the other file is left as it was (journal mode %s)", sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(raw);

    const char *newer = tmp_path("newer.db");
    s = store_open(newer, 0, err, sizeof err);
    store_close(s);
    run_sql(newer, "PRAGMA user_version = 99");
    s = store_open(newer, 0, err, sizeof err);
    CHECK(s == NULL && strstr(err, "newer aloft") && strstr(err, "99"), "newer schema: %s", err);

    /* Damage the pages that hold the rows: reading them must say corrupt. */
    const char *broken = tmp_path("broken.db");
    s = store_open(broken, 0, err, sizeof err);
    store_mission *m = store_mission_begin(s, NULL, err, sizeof err);
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    for (int i = 0; i < 200; i++)
        store_record_statement(m, -1, 0, 1, 1, big, err, sizeof err);
    store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
    store_close(s);
    run_sql(broken, "PRAGMA wal_checkpoint(TRUNCATE)");
    struct stat sb;
    stat(broken, &sb);
    FILE *f = fopen(broken, "r+b");
    for (long off = 4096 * 12; off < sb.st_size - 8192; off += 4096 * 3) {
        fseek(f, off, SEEK_SET);
        fwrite(junk, 1, 4096, f);
    }
    fclose(f);
    s = store_open(broken, 0, err, sizeof err);
    cJSON *doc = s ? store_mission_json(s, 1, err, sizeof err) : NULL;
    CHECK(doc == NULL && (strstr(err, "corrupt") || strstr(err, "not an aloft database")),
          "damaged pages: %s", err);
    cJSON_Delete(doc);
    store_close(s);
}

/* ---- replay ------------------------------------------------------------------- */

/*
 * A stand-in for the mission runner: asks its LLM for a plan (lines of
 * "skill arg"), runs it against a toy drone that can only turn, probes when
 * the plan says "probe", and asks for a replan when a step fails. The LLM is
 * either a scripted function (recording) or the replay (re-flying).
 */
typedef struct toy_llm {
    store_replay *replay; /* NULL: answer from the script */
    int asked;
    char err[256];
} toy_llm;

static const char *toy_ask(toy_llm *l, store_llm_kind kind)
{
    static const char *const script[] = {"turn_cw 90\nprobe 0\nturn_cw 400\n", "yes",
                                         "turn_ccw 45\nturn_cw 10\n"};
    if (l->replay) return store_replay_next(l->replay, kind, l->err, sizeof l->err);
    return l->asked < 3 ? script[l->asked++] : NULL;
}

static int toy_fly(store *s, toy_llm *llm, int64_t replay_of, int64_t *id)
{
    char err[256];
    store_mission_info info = {.task = "turn around", .replay_of = replay_of};
    store_mission *m = store_mission_begin(s, &info, err, sizeof err);
    if (!m) return -1;
    *id = store_mission_id(m);
    store_llm_kind kind = STORE_LLM_PLAN;
    int yaw = 0;
    bool again = true;
    for (int round = 0; round < 2 && again; round++) {
        const char *plan = toy_ask(llm, kind);
        if (!plan) {
            store_mission_end(m, STORE_FAILED, llm->err, NULL, err, sizeof err);
            return -1;
        }
        store_llm x = {.kind = kind,
                       .t_ms = -1,
                       .prompt = "p",
                       .response = plan,
                       .latency_ms = 1,
                       .ttft_ms = -1,
                       .prompt_tokens = -1,
                       .completion_tokens = -1};
        store_record_llm(m, &x, err, sizeof err); /* a replay records its own mission too */
        kind = STORE_LLM_REPLAN;
        char skill[32];
        int arg, used;
        bool failed = false;
        for (const char *p = plan; sscanf(p, "%31s %d%n", skill, &arg, &used) == 2; p += used) {
            char args[32], ret[64];
            snprintf(args, sizeof args, "[%d]", arg);
            int64_t call = store_call_begin(m, -1, skill, args, 0, err, sizeof err);
            bool r = arg <= 360;
            if (strcmp(skill, "probe") == 0) {
                const char *answer = toy_ask(llm, STORE_LLM_PROBE);
                if (!answer) return -1;
                store_llm q = {.kind = STORE_LLM_PROBE,
                               .t_ms = -1,
                               .prompt = "q",
                               .response = answer,
                               .latency_ms = 1,
                               .ttft_ms = -1,
                               .prompt_tokens = -1,
                               .completion_tokens = -1};
                store_record_llm(m, &q, err, sizeof err);
                snprintf(ret, sizeof ret, "\"%s\"", answer);
            } else {
                if (r) yaw = (yaw + (strcmp(skill, "turn_cw") == 0 ? arg : 360 - arg)) % 360;
                snprintf(ret, sizeof ret, "%s", r ? "true" : "false");
            }
            store_call_end(m, call,
                           &(store_call_result){.ret_json = ret, .has_pose = true, .yaw = yaw}, err,
                           sizeof err);
            if (!r) {
                failed = true;
                break;
            }
        }
        again = failed; /* a failed step asks for a replan */
    }
    return store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
}

static void test_replay_reproduces_skill_calls(void)
{
    char err[256];
    store *s = store_open(tmp_path("replay.db"), 0, err, sizeof err);
    CHECK(s != NULL, "open: %s", err);
    if (!s) return;
    toy_llm live = {0};
    int64_t original = 0, again = 0;
    CHECK(toy_fly(s, &live, 0, &original) == 0, "recorded flight");

    store_replay *r = store_replay_open(s, original, err, sizeof err);
    CHECK(r != NULL, "replay open: %s", err);
    if (!r) return;
    CHECK(store_replay_count(r) == 3, "plan, probe and replan recorded, got %d",
          store_replay_count(r));
    CHECK(strcmp(store_replay_task(r), "turn around") == 0, "task kept for the replay");
    toy_llm replay = {.replay = r};
    CHECK(toy_fly(s, &replay, original, &again) == 0, "replayed flight: %s", replay.err);
    char why[256] = "";
    CHECK(store_calls_match(s, original, again, why, sizeof why) == 1,
          "the replay makes the same skill calls: %s", why);
    CHECK(store_replay_next(r, STORE_LLM_REPLAN, err, sizeof err) == NULL &&
              strstr(err, "diverged"),
          "asking past the end diverges: %s", err);
    store_replay_free(r);

    /* A request of another kind than recorded is a divergence. */
    r = store_replay_open(s, original, err, sizeof err);
    CHECK(store_replay_next(r, STORE_LLM_PLAN, err, sizeof err) != NULL, "first is the plan");
    CHECK(store_replay_next(r, STORE_LLM_REPLAN, err, sizeof err) == NULL && strstr(err, "probe"),
          "a replan where a probe was recorded: %s", err);
    store_replay_free(r);

    /* Missions with different calls do not match, and the reason says where. */
    cJSON *run = cJSON_Parse(run_json);
    int64_t other = record_run(s, run, "other");
    cJSON_Delete(run);
    CHECK(store_calls_match(s, original, other, why, sizeof why) == 0 && strstr(why, "call 1"),
          "different missions differ at call 1: %s", why);
    CHECK(store_replay_open(s, 12345, err, sizeof err) == NULL && strstr(err, "no mission"),
          "replaying an unknown mission: %s", err);
    store_close(s);
}

/* Records one mission making the calls "skill args -> ret" of CALLS. */
static int64_t record_calls(store *s, const char *const *calls)
{
    char err[256];
    store_mission *m = store_mission_begin(s, NULL, err, sizeof err);
    if (!m) return -1;
    int64_t id = store_mission_id(m);
    for (; *calls; calls += 3) {
        int64_t c = store_call_begin(m, -1, calls[0], calls[1], 0, err, sizeof err);
        store_call_end(m, c, &(store_call_result){.ret_json = calls[2]}, err, sizeof err);
    }
    store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err);
    return id;
}

static void test_calls_match_except(void)
{
    char err[256], why[256] = "";
    store *s = store_open(tmp_path("except.db"), 0, err, sizeof err);
    CHECK(s != NULL, "open: %s", err);
    if (!s) return;
    static const char *const a[] = {
        "turn_cw", "[90]", "true", "take_picture", "[]", "\"/tmp/aloft-11-1.png\"", NULL};
    static const char *const b[] = {
        "turn_cw", "[90]", "true", "take_picture", "[]", "\"/tmp/aloft-22-1.png\"", NULL};
    static const char *const c[] = {"turn_cw", "[90]", "true", "take_picture", "[]", "false", NULL};
    int64_t ia = record_calls(s, a), ib = record_calls(s, b), ic = record_calls(s, c);
    static const char *const pictures[] = {"take_picture", NULL};
    CHECK(store_calls_match(s, ia, ib, why, sizeof why) == 0 && strstr(why, "call 2"),
          "paths differ: %s", why);
    CHECK(store_calls_match_except(s, ia, ib, pictures, why, sizeof why) == 1,
          "any path will do for take_picture: %s", why);
    CHECK(store_calls_match_except(s, ia, ic, pictures, why, sizeof why) == 0 &&
              strstr(why, "call 2"),
          "but not another type: %s", why);
    store_close(s);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/aloft-test-store-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_path_resolution();
    test_mission_rows_match_run_json();
    test_statuses_and_bad_input();
    test_object_memory_merges_across_missions();
    test_dead_owner_marked_interrupted();
    test_abandoned_in_shared_store();
    test_bad_databases_refused();
    test_replay_reproduces_skill_calls();
    test_calls_match_except();
    return check_finish("test_store", tmpdir);
}
