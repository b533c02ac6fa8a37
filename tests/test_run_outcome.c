/* runner_run's outcome and report for each way a plan can end.
 * labels: mission safety */
#include "loader/loader.h"
#include "mission/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static skill_registry *reg;
static char scene_path[64];

static void cancel_at_start(void *ud, sandbox *sb)
{
    (void)ud;
    if (sb) sandbox_cancel(sb);
}

/* Runs PLAN; returns the outcome, the report in *DOC (caller frees). */
static runner_outcome run(const char *plan, bool cancel, cJSON **doc)
{
    mission_world w;
    char err[256];
    sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = NULL};
    if (mission_world_sim(&w, scene_path, &so, err, sizeof err)) {
        fprintf(stderr, "world: %s\n", err);
        exit(1);
    }
    runner_outcome out;
    runner_opts o = {
        .reg = reg, .world = &w, .plan = plan, .plan_len = strlen(plan), .outcome = &out};
    if (cancel) o.on_sandbox = cancel_at_start;
    *doc = runner_run(&o);
    mission_world_close(&w, true);
    return out;
}

static const char *error_of(cJSON *doc)
{
    cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "error");
    return cJSON_IsString(e) ? e->valuestring : "";
}

int main(void)
{
    reg = loader_standard(NULL, 0, NULL, NULL);
    snprintf(scene_path, sizeof scene_path, "/tmp/aloft-test-outcome-%d.json", (int)getpid());
    FILE *f = fopen(scene_path, "w");
    fputs("{\"limits\":{\"geofence_radius\":200},\"objects\":[{\"class\":\"apple\",\"x\":0,"
          "\"y\":150,\"z\":80,\"w\":8,\"d\":8,\"h\":9}]}",
          f);
    fclose(f);
    cJSON *doc;

    runner_outcome o = run("?iv('apple'){->ox('apple')};->False", false, &doc);
    CHECK(o.status == RUNNER_OK && o.reason[0] == '\0');
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(doc, "ok")));
    CHECK(cJSON_IsNumber(cJSON_GetObjectItem(doc, "result")));
    CHECK(cJSON_IsNumber(cJSON_GetObjectItem(doc, "first_action_ms")));
    cJSON_Delete(doc);

    o = run("tc(45);frobnicate(2)", false, &doc);
    CHECK(o.status == RUNNER_REJECTED && strstr(o.reason, "1:8:"));
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "calls")) == 0);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(doc, "first_action_ms")));
    cJSON_Delete(doc);

    o = run("tc(90);rp;tc(90)", false, &doc);
    CHECK(o.status == RUNNER_REPLAN && strstr(error_of(doc), "replan"));
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "calls")) == 2); /* tc, rp */
    cJSON_Delete(doc);

    o = run("_1=ox('apple');?_1<'x'{l('?')}", false, &doc);
    CHECK(o.status == RUNNER_FAILED && o.sandbox == SANDBOX_ERROR);
    CHECK(strstr(o.reason, "compare") != NULL);
    cJSON_Delete(doc);

    o = run("mf(300);->True", false, &doc);
    CHECK(o.status == RUNNER_OK && o.violations == 1);
    cJSON_Delete(doc);

    o = run("tc(90);tc(90)", true, &doc);
    CHECK(o.status == RUNNER_CANCELLED && o.sandbox == SANDBOX_CANCELLED);
    CHECK(!cJSON_IsTrue(cJSON_GetObjectItem(doc, "ok")));
    cJSON_Delete(doc);

    remove(scene_path);
    registry_free(reg);
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_run_outcome: ok\n");
    return failures != 0;
}
