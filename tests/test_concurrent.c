/*
 * Missions in parallel threads of one process (what `aloft serve` does with
 * several drones): every setup of the benchmark suite flown by four threads
 * at once must make exactly the skill calls, with the same results, and end
 * at exactly the pose it does alone; each recorded into one shared mission
 * database through its own recorder; and LLM-planned missions running at
 * the same time against one fake server must all succeed.
 */
#include "../tests/fake_llm.h"
#include "bench/suite.h"
#include "loader/loader.h"
#include "mission/controller.h"
#include "mission/record.h"

#include <pthread.h>

#include "check.h"

#define MAX_SETUPS 64
#define THREADS 4

static skill_registry *reg;
static prompt_set *prompts;
static setup setups[MAX_SETUPS];
static int nsetups;
static char *baseline[MAX_SETUPS];
static char db_path[128];
static char pictures[] = "/tmp/aloft-test-concurrent-XXXXXX";

/* What a mission did, as text: ok, each call (skill, args, result) and the
 * final pose. Times are left out: they differ from run to run. */
static char *signature(const cJSON *doc)
{
    cJSON *sig = cJSON_CreateObject();
    cJSON_AddItemToObject(sig, "ok", cJSON_Duplicate(cJSON_GetObjectItem(doc, "ok"), 1));
    cJSON_AddItemToObject(sig, "error", cJSON_Duplicate(cJSON_GetObjectItem(doc, "error"), 1));
    cJSON *calls = cJSON_AddArrayToObject(sig, "calls");
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(doc, "calls"))
    {
        cJSON *k = cJSON_CreateObject();
        cJSON_AddItemToObject(k, "skill", cJSON_Duplicate(cJSON_GetObjectItem(c, "skill"), 1));
        cJSON_AddItemToObject(k, "args", cJSON_Duplicate(cJSON_GetObjectItem(c, "args"), 1));
        const cJSON *ret = cJSON_GetObjectItem(c, "ret");
        /* A picture's file name is unique per process: compare only that
         * it was written where pictures go. */
        if (strcmp(cJSON_GetObjectItem(c, "skill")->valuestring, "take_picture") == 0 &&
            cJSON_IsString(ret) && strncmp(ret->valuestring, pictures, strlen(pictures)) == 0)
            cJSON_AddStringToObject(k, "ret", "a picture");
        else
            cJSON_AddItemToObject(k, "ret", cJSON_Duplicate(ret, 1));
        cJSON_AddItemToArray(calls, k);
    }
    cJSON_AddItemToObject(sig, "pose", cJSON_Duplicate(cJSON_GetObjectItem(doc, "pose"), 1));
    char *text = cJSON_PrintUnformatted(sig);
    cJSON_Delete(sig);
    return text;
}

/* Flies setup I with its reference plan, recorded into the shared
 * database when RECORD; returns its signature (NULL on a setup error). */
static char *fly(int i, bool record, char *err, size_t errlen)
{
    const setup *su = &setups[i];
    mission_world w;
    sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = pictures};
    if (mission_world_sim(&w, su->scene, &so, err, errlen)) return NULL;
    mission_record *rec = NULL;
    if (record) {
        store_mission_info info = {.drone = "sim", .seed = 1};
        rec = mission_record_open(db_path, &info, &w, err, errlen);
        if (!rec) {
            mission_world_close(&w, true);
            return NULL;
        }
    }
    runner_outcome out;
    runner_opts o = {.reg = reg,
                     .world = &w,
                     .plan = su->plan,
                     .plan_len = su->plan_len,
                     .outcome = &out,
                     .record = rec};
    if (rec) o.t0_ms = mission_record_t0_ms(rec);
    cJSON *doc = runner_run(&o);
    char *sig = signature(doc);
    mission_world_close(&w, true);
    if (rec) {
        if (mission_record_error(rec)) snprintf(err, errlen, "%s", mission_record_error(rec));
        bool failed = mission_record_error(rec) != NULL;
        if (mission_record_close(rec, runner_store_status(out.status), NULL,
                                 cJSON_GetObjectItem(doc, "result"), err, errlen) ||
            failed) {
            free(sig);
            sig = NULL;
        }
    }
    cJSON_Delete(doc);
    return sig;
}

typedef struct worker {
    int id;
    int mismatches, errors, flown;
    char first_problem[4096];
} worker;

static void *fly_suite(void *arg)
{
    worker *wk = arg;
    /* Each thread starts at another setup, so different scenes and plans
     * run at the same moment. */
    for (int k = 0; k < nsetups; k++) {
        int i = (k + wk->id * nsetups / THREADS) % nsetups;
        char err[512] = "";
        char *sig = fly(i, true, err, sizeof err);
        wk->flown++;
        if (!sig) {
            if (!wk->errors++)
                snprintf(wk->first_problem, sizeof wk->first_problem, "%.300s: %.500s",
                         setups[i].scene, err);
            continue;
        }
        if (strcmp(sig, baseline[i]) != 0 && !wk->mismatches++)
            snprintf(wk->first_problem, sizeof wk->first_problem,
                     "%.300s:\n  alone %.1500s\n  now   %.1500s", setups[i].scene, baseline[i],
                     sig);
        free(sig);
    }
    return NULL;
}

static void test_plans_in_parallel_match_plans_alone(void)
{
    for (int i = 0; i < nsetups; i++) {
        char err[512];
        baseline[i] = fly(i, false, err, sizeof err);
        CHECK(baseline[i], "%.300s: %.500s", setups[i].scene, err);
        if (!baseline[i]) return;
    }
    pthread_t th[THREADS];
    worker wk[THREADS];
    for (int t = 0; t < THREADS; t++) {
        memset(&wk[t], 0, sizeof wk[t]);
        wk[t].id = t;
        CHECK(pthread_create(&th[t], NULL, fly_suite, &wk[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) {
        pthread_join(th[t], NULL);
        CHECK(wk[t].flown == nsetups && wk[t].mismatches == 0 && wk[t].errors == 0,
              "thread %d: %d flown, %d differ, %d failed; first: %s", t, wk[t].flown,
              wk[t].mismatches, wk[t].errors, wk[t].first_problem);
    }
    /* Every mission is in the database, ended. */
    char err[512];
    store *s = store_open(db_path, STORE_OPEN_EXISTING, err, sizeof err);
    CHECK(s, "%s", err);
    if (!s) return;
    cJSON *list = store_list_json(s, err, sizeof err);
    CHECK(list && cJSON_GetArraySize(list) == THREADS * nsetups, "%d missions recorded, want %d",
          list ? cJSON_GetArraySize(list) : -1, THREADS * nsetups);
    const cJSON *m;
    int running = 0;
    cJSON_ArrayForEach(m, list)
    {
        const cJSON *st = cJSON_GetObjectItem(m, "status");
        running += !cJSON_IsString(st) || strcmp(st->valuestring, "running") == 0;
    }
    CHECK(running == 0, "%d missions left running", running);
    cJSON_Delete(list);
    store_close(s);
}

/* ---- LLM-planned missions at the same time ---- */

typedef struct task_worker {
    const char *base_url;
    const char *scene;
    cJSON *doc;
} task_worker;

static void *fly_task(void *arg)
{
    task_worker *tw = arg;
    llm_config cfg;
    llm_config_defaults(&cfg);
    snprintf(cfg.base_url, sizeof cfg.base_url, "%s", tw->base_url);
    snprintf(cfg.model, sizeof cfg.model, "fake");
    cfg.api_key[0] = '\0';
    cfg.backoff_ms = 10;
    cfg.backoff_max_ms = 40;
    mission_world w;
    char err[256];
    sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = pictures};
    if (mission_world_sim(&w, tw->scene, &so, err, sizeof err)) {
        fprintf(stderr, "world: %s\n", err);
        return NULL;
    }
    mission_opts mo;
    mission_opts_defaults(&mo);
    mo.run.reg = reg;
    mo.run.world = &w;
    mo.run.limits = (sandbox_limits){0};
    mo.run.limits.max_instructions = 10000000;
    mo.run.limits.max_memory = 16 << 20;
    mo.run.limits.timeout_ms = 120000;
    mo.run.limits.max_output = 65536;
    mo.task = "Turn around, then look for a person.";
    mo.prompts = prompts;
    mo.llm = mission_llm_default(&cfg);
    tw->doc = mission_run(&mo);
    mission_world_close(&w, true);
    return NULL;
}

static void test_llm_missions_in_parallel(void)
{
    enum { N = 3 };
    fake_llm f;
    /* Every request gets the same plan, streamed at a modest rate so that
     * the missions overlap. */
    const char *script =
        "{\"responses\":[{\"content\":\"tc(90);tc(90);_1=iv('person');l(_1);->_1\","
        "\"token_rate\":400,\"times\":10}]}";
    if (fake_llm_start(&f, script, 0)) {
        CHECK(false, "the fake LLM did not start");
        return;
    }
    pthread_t th[N];
    task_worker tw[N];
    for (int t = 0; t < N; t++) {
        tw[t] = (task_worker){f.base_url, setups[t % nsetups].scene, NULL};
        CHECK(pthread_create(&th[t], NULL, fly_task, &tw[t]) == 0);
    }
    for (int t = 0; t < N; t++) {
        pthread_join(th[t], NULL);
        CHECK(tw[t].doc, "mission %d: no report", t);
        if (!tw[t].doc) continue;
        const cJSON *calls = cJSON_GetObjectItem(tw[t].doc, "calls");
        const cJSON *first = cJSON_GetArrayItem(calls, 0);
        const cJSON *err = cJSON_GetObjectItem(tw[t].doc, "error");
        CHECK(cJSON_IsTrue(cJSON_GetObjectItem(tw[t].doc, "ok")) &&
                  cJSON_GetObjectItem(tw[t].doc, "llm_calls")->valueint == 1 &&
                  cJSON_GetArraySize(calls) >= 4 &&
                  strcmp(cJSON_GetObjectItem(first, "skill")->valuestring, "turn_cw") == 0,
              "mission %d: error %s", t, cJSON_IsString(err) ? err->valuestring : "none");
        cJSON_Delete(tw[t].doc);
    }
    cJSON *reqs = fake_llm_requests(&f);
    CHECK(cJSON_GetArraySize(reqs) == N, "%d LLM requests, want %d", cJSON_GetArraySize(reqs), N);
    cJSON_Delete(reqs);
    fake_llm_stop(&f);
}

int main(void)
{
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    char root[600];
    snprintf(root, sizeof root, "%s/examples/benchmark", src);
    nsetups = find_setups(root, setups, MAX_SETUPS);
    if (nsetups == 0) {
        fprintf(stderr, "no benchmark setups under %s (set SRC)\n", root);
        return 1;
    }
    reg = loader_standard(NULL, 0, NULL, NULL);
    char err[512];
    prompts = prompt_load(NULL, err, sizeof err);
    if (!reg || !prompts || !mkdtemp(pictures)) {
        fprintf(stderr, "setup: %s\n", err);
        return 1;
    }
    snprintf(db_path, sizeof db_path, "%s/missions.db", pictures);
    test_plans_in_parallel_match_plans_alone();
    test_llm_missions_in_parallel();
    for (int i = 0; i < nsetups; i++) {
        free(baseline[i]);
        free(setups[i].plan);
    }
    prompt_free(prompts);
    registry_free(reg);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", pictures);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", pictures);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
