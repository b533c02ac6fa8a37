/*
 * The mission recorder (mission/record.h) in process:
 * - a plan run with a recorder: every call with the run's own t_ms, depth,
 *   pose, simulated and wall time; the refusal with its call's args; the
 *   statements that ran, with their plan and position;
 * - a store that fails mid-mission stops the plan before the drone moves,
 *   and the run says why;
 * - the controller's observer records exchanges (messages, failure, time
 *   sent) and links each plan to the exchange it came from;
 * - the replay LLM source hands out recorded replies, streams them, fails
 *   again the way the recorded exchange failed, and stays diverged.
 */
#include "loader/loader.h"
#include "mission/record.h"
#include "mission/controller.h"
#include "mission/replay.h"
#include "test_store_check.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[256], scene_path[300], db_path[300];
static skill_registry *reg;

static void world_open(mission_world *w)
{
    char err[256];
    sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = NULL};
    if (mission_world_sim(w, scene_path, &so, err, sizeof err)) {
        fprintf(stderr, "world: %s\n", err);
        exit(1);
    }
}

static const cJSON *item(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = item(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = item(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static void test_plan(store *s)
{
    char err[512];
    store_mission *m = store_mission_begin(s, NULL, err, sizeof err);
    CHECK(m, "begin: %s", err);
    if (!m) return;
    mission_world w;
    world_open(&w);
    mission_record *rec = mission_record_new(m, &w);
    const char *plan = "tc(90);?iv('pear'){tc(5)};s('apple');mf(900);l('x')";
    runner_outcome out;
    runner_opts o = {.reg = reg,
                     .world = &w,
                     .plan = plan,
                     .plan_len = strlen(plan),
                     .outcome = &out,
                     .record = rec};
    cJSON *run = runner_run(&o);
    CHECK(out.status == RUNNER_OK, "run: %s", out.reason);
    CHECK(mission_record_error(rec) == NULL, "record error %s", mission_record_error(rec));
    mission_record_free(rec);
    mission_world_close(&w, true);
    int64_t id = store_mission_id(m);
    CHECK(store_mission_end(m, STORE_OK, NULL, NULL, err, sizeof err) == 0, "end: %s", err);

    cJSON *doc = store_mission_json(s, id, err, sizeof err);
    CHECK(doc, "mission json: %s", err);
    if (!doc) {
        cJSON_Delete(run);
        return;
    }
    const cJSON *calls = item(run, "calls"), *c = calls ? calls->child : NULL;
    int ncalls = 0, nviol = 0, depth1 = 0;
    char stmts[512] = "";
    for (const cJSON *e = item(doc, "events")->child; e; e = e->next) {
        const char *kind = str(e, "kind");
        if (strcmp(kind, "call") == 0) {
            ncalls++;
            CHECK(c, "more calls recorded than made");
            if (!c) break;
            CHECK(strcmp(str(e, "skill"), str(c, "skill")) == 0, "call %d: %s vs %s", ncalls,
                  str(e, "skill"), str(c, "skill"));
            CHECK(cJSON_Compare(item(e, "args"), item(c, "args"), true), "args of call %d", ncalls);
            CHECK(cJSON_Compare(item(e, "ret"), item(c, "ret"), true), "ret of call %d", ncalls);
            /* the recorder counts from the runner's start: the same number */
            CHECK(fabs(num(e, "t_ms") - num(c, "t_ms")) < 1e-6, "t_ms %f vs %f", num(e, "t_ms"),
                  num(c, "t_ms"));
            CHECK(cJSON_IsTrue(item(e, "done")) && item(e, "pose"), "call %d done with pose",
                  ncalls);
            CHECK(num(e, "wall_ms") >= 0 && num(e, "sim_ms") >= 0, "times of call %d", ncalls);
            if (strcmp(str(e, "skill"), "turn_cw") == 0 && num(e, "depth") == 0) {
                CHECK(fabs(num(e, "sim_ms") - 1000) < 50, "a 90 degree turn takes 1 s: %f",
                      num(e, "sim_ms"));
                CHECK(fabs(num(item(e, "pose"), "yaw") - 90) < 1, "yaw after it");
            }
            if (num(e, "depth") == 1) depth1++;
            c = c->next;
        } else if (strcmp(kind, "violation") == 0) {
            nviol++;
            CHECK(strcmp(str(e, "skill"), "move_forward") == 0 &&
                      cJSON_GetArraySize(item(e, "args")) == 1,
                  "violation %s", str(e, "skill"));
            const cJSON *a0 = cJSON_GetArrayItem(item(e, "args"), 0);
            CHECK(cJSON_IsNumber(a0) && a0->valuedouble == 900, "violation args");
            CHECK(strstr(str(e, "reason"), "900"), "reason %s", str(e, "reason"));
        } else if (strcmp(kind, "statement") == 0) {
            CHECK(num(e, "plan") == 1, "statements name plan 1");
            size_t n = strlen(stmts);
            snprintf(stmts + n, sizeof stmts - n, "%s@%g:%g|", str(e, "text"), num(e, "line"),
                     num(e, "col"));
        }
    }
    CHECK(!c && ncalls == cJSON_GetArraySize(calls), "%d calls recorded, %d made", ncalls,
          cJSON_GetArraySize(calls));
    CHECK(nviol == 1, "%d violations", nviol);
    CHECK(depth1 > 0, "scan's inner calls are recorded at depth 1");
    CHECK(strcmp(stmts, "tc(90)@1:1|?iv('pear'){@1:8|s('apple')@1:27|mf(900)@1:38|l('x')@1:46|") ==
              0,
          "statements: %s", stmts);
    cJSON_Delete(doc);
    cJSON_Delete(run);
}

/* A second connection drops a table the recorder writes: the next call
 * cannot be recorded, so it must not fly. */
static void test_store_failure(store *s)
{
    char err[512];
    store_mission *m = store_mission_begin(s, NULL, err, sizeof err);
    CHECK(m, "begin: %s", err);
    if (!m) return;
    sqlite3 *db;
    CHECK(sqlite3_open(db_path, &db) == SQLITE_OK, "open");
    CHECK(sqlite3_exec(db, "DROP TABLE skill_calls", NULL, NULL, NULL) == SQLITE_OK, "drop: %s",
          sqlite3_errmsg(db));
    sqlite3_close(db);

    mission_world w;
    world_open(&w);
    mission_record *rec = mission_record_new(m, &w);
    const char *plan = "tc(90);tc(90);l('never')";
    runner_outcome out;
    runner_opts o = {.reg = reg,
                     .world = &w,
                     .plan = plan,
                     .plan_len = strlen(plan),
                     .outcome = &out,
                     .record = rec};
    cJSON *run = runner_run(&o);
    CHECK(out.status == RUNNER_FAILED && strncmp(out.reason, "mission store: ", 15) == 0,
          "outcome %d: %s", (int)out.status, out.reason);
    CHECK(strstr(str(run, "error"), "mission store: ") == str(run, "error"), "error: %s",
          str(run, "error"));
    CHECK(fabs(mission_world_pose(&w).yaw) < 1e-6, "the drone did not turn: yaw %f",
          mission_world_pose(&w).yaw);
    CHECK(cJSON_GetArraySize(item(run, "logs")) == 0, "nothing ran after the failure");
    CHECK(runner_store_status(out.status) == STORE_FAILED, "failed");
    mission_record_free(rec);
    mission_world_close(&w, true);
    store_mission_end(m, STORE_FAILED, out.reason, NULL, err, sizeof err);
    cJSON_Delete(run);
}

static llm_result fake_result(const char *text, llm_status st, double latency)
{
    llm_result r;
    memset(&r, 0, sizeof r);
    r.status = st;
    r.text = (char *)text;
    r.len = strlen(text);
    r.latency_ms = latency;
    r.ttft_ms = -1;
    if (st != LLM_OK) snprintf(r.error, sizeof r.error, "no reply in 30 s");
    return r;
}

typedef struct deltas {
    char text[256];
    int n, stop_after;
} deltas;

static int on_delta(void *ud, const char *text, size_t len)
{
    deltas *d = ud;
    size_t used = strlen(d->text);
    snprintf(d->text + used, sizeof d->text - used, "%.*s", (int)len, text);
    return ++d->n >= d->stop_after && d->stop_after > 0;
}

static void test_controller(store *s)
{
    char err[512];
    store_mission_info info = {.task = "turn", .model = "m1"};
    store_mission *m = store_mission_begin(s, &info, err, sizeof err);
    CHECK(m, "begin: %s", err);
    if (!m) return;
    mission_record *rec = mission_record_new(m, NULL);
    mission_observer obs = mission_record_observer(rec, "m1");
    llm_message msgs[2] = {{"system", "be brief"}, {"user", "turn \"now\""}};
    usleep(20000);
    llm_result r = fake_result("tc(5)", LLM_OK, 10);
    obs.llm_exchange(obs.ud, MISSION_LLM_PLAN, msgs, 2, &r);
    obs.plan(obs.ud, 0, "tc(5)", 5, NULL);
    r = fake_result("", LLM_E_TIMEOUT, 1);
    obs.llm_exchange(obs.ud, MISSION_LLM_PROBE, msgs + 1, 1, &r);
    r = fake_result("tc(", LLM_OK, 1);
    obs.llm_exchange(obs.ud, MISSION_LLM_RETRY, msgs, 2, &r);
    obs.plan(obs.ud, 1, "tc(", 3, "1:4: expected a value");
    CHECK(!mission_record_error(rec), "record: %s", mission_record_error(rec));
    mission_record_free(rec);
    int64_t id = store_mission_id(m);
    store_mission_end(m, STORE_FAILED, "no plan", NULL, err, sizeof err);

    cJSON *doc = store_mission_json(s, id, err, sizeof err);
    const cJSON *llm = item(doc, "llm_calls");
    CHECK(cJSON_GetArraySize(llm) == 3, "3 exchanges");
    const cJSON *plan = cJSON_GetArrayItem(llm, 0), *probe = cJSON_GetArrayItem(llm, 1);
    CHECK(strcmp(str(plan, "model"), "m1") == 0 && strcmp(str(plan, "response"), "tc(5)") == 0,
          "plan exchange");
    cJSON *prompt = cJSON_Parse(str(plan, "prompt"));
    CHECK(cJSON_GetArraySize(prompt) == 2 &&
              strcmp(str(cJSON_GetArrayItem(prompt, 1), "content"), "turn \"now\"") == 0,
          "the messages as JSON: %s", str(plan, "prompt"));
    cJSON_Delete(prompt);
    /* stamped when the request was sent: the reply came LATENCY later */
    CHECK(num(plan, "t_ms") >= 10 && num(plan, "t_ms") < num(probe, "t_ms"), "t_ms %f",
          num(plan, "t_ms"));
    CHECK(strcmp(str(probe, "error"), "timeout: no reply in 30 s") == 0, "probe error: %s",
          str(probe, "error"));
    int oks[2] = {-1, -1}, n = 0;
    for (const cJSON *e = item(doc, "events")->child; e; e = e->next)
        if (strcmp(str(e, "kind"), "plan") == 0 && n < 2) oks[n++] = cJSON_IsTrue(item(e, "ok"));
    CHECK(n == 2 && oks[0] == 1 && oks[1] == 0, "plan verdicts %d %d", oks[0], oks[1]);
    cJSON_Delete(doc);

    /* Each plan names the exchange it came from (not the probe). */
    sqlite3 *db;
    sqlite3_open(db_path, &db);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db,
                       "SELECT l.kind FROM plans p JOIN llm_exchanges l ON l.id = p.llm_id"
                       " WHERE p.mission_id = ? ORDER BY p.plan_no",
                       -1, &st, NULL);
    sqlite3_bind_int64(st, 1, id);
    char kinds[64] = "";
    while (sqlite3_step(st) == SQLITE_ROW) {
        size_t used = strlen(kinds);
        snprintf(kinds + used, sizeof kinds - used, "%s ", sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    CHECK(strcmp(kinds, "plan retry ") == 0, "plans come from: %s", kinds);

    /* Replayed: the same replies, the same failure, then divergence. */
    store_replay *rp = store_replay_open(s, id, err, sizeof err);
    CHECK(rp, "replay: %s", err);
    if (!rp) return;
    mission_llm src = mission_replay_llm(rp);
    deltas d = {"", 0, 0};
    llm_request req = {msgs, 2, on_delta, &d, NULL, 0, 0};
    llm_result out;
    CHECK(src.complete(src.ud, MISSION_LLM_PLAN, true, &req, &out) == 0 &&
              strcmp(out.text, "tc(5)") == 0 && strcmp(d.text, "tc(5)") == 0,
          "plan reply streamed: %s", d.text);
    llm_result_free(&out);
    llm_request plain = {msgs, 1, NULL, NULL, NULL, 0, 0};
    CHECK(src.complete(src.ud, MISSION_LLM_PROBE, false, &plain, &out) == -1 &&
              out.status == LLM_E_TIMEOUT && strcmp(out.error, "no reply in 30 s") == 0,
          "the probe fails again: %d %s", (int)out.status, out.error);
    llm_result_free(&out);
    deltas stop = {"", 0, 1};
    req.ud = &stop;
    CHECK(src.complete(src.ud, MISSION_LLM_RETRY, true, &req, &out) == -1 &&
              out.status == LLM_E_ABORTED && strcmp(out.text, "tc(") == 0,
          "a reply the mission cuts short: %d", (int)out.status);
    llm_result_free(&out);
    CHECK(src.complete(src.ud, MISSION_LLM_REPLAN, false, &plain, &out) == -1 &&
              strstr(out.error, "replay diverged"),
          "nothing left: %s", out.error);
    llm_result_free(&out);
    CHECK(src.complete(src.ud, MISSION_LLM_PLAN, false, &plain, &out) == -1 &&
              strstr(out.error, "replay diverged"),
          "diverged for good: %s", out.error);
    llm_result_free(&out);
    store_replay_free(rp);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/aloft-test-record-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    snprintf(scene_path, sizeof scene_path, "%s/scene.json", tmpdir);
    snprintf(db_path, sizeof db_path, "%s/missions.db", tmpdir);
    FILE *f = fopen(scene_path, "w");
    fputs("{\"limits\":{\"geofence_radius\":300},\"objects\":[{\"class\":\"apple\",\"x\":0,"
          "\"y\":-150,\"z\":80,\"w\":8,\"d\":8,\"h\":9}]}",
          f);
    fclose(f);
    reg = loader_standard(NULL, 0, NULL, NULL);
    char err[512];
    store *s = store_open(db_path, 0, err, sizeof err);
    if (!reg || !s) {
        fprintf(stderr, "setup: %s\n", err);
        return 1;
    }
    test_plan(s);
    test_controller(s);
    test_store_failure(s); /* last: it breaks the database */
    store_close(s);
    registry_free(reg);
    return check_finish("test_record", tmpdir);
}
