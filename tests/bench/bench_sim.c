/* Simulated missions per second: every setup of the benchmark suite
 * (examples/benchmark) flown with its reference plan at time scale 0, in
 * process: scene load, world, compile, bind, run, report.
 *
 *   bench_sim [OUT.json]      (SRC=source root, default ".")
 */
#include "bench_out.h"
#include "clock.h"
#include "cmd/cli.h"
#include "loader/loader.h"
#include "mission/runner.h"
#include "suite.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SETUPS 64

/* Flies one setup; returns true if the plan ran to its end. */
static char pictures[] = "/tmp/aloft-bench-sim-XXXXXX";

static bool fly(const skill_registry *reg, const setup *s)
{
    mission_world w;
    char err[512];
    sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = pictures};
    if (mission_world_sim(&w, s->scene, &so, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", s->scene, err);
        return false;
    }
    sandbox_limits lim = {0, 0, 0, 0};
    runner_opts o = {
        .reg = reg, .world = &w, .plan = s->plan, .plan_len = s->plan_len, .limits = lim};
    cJSON *doc = runner_run(&o);
    bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "ok"));
    cJSON_Delete(doc);
    mission_world_close(&w, true);
    return ok;
}

int main(int argc, char **argv)
{
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    char root[600];
    snprintf(root, sizeof root, "%s/examples/benchmark", src);
    static setup setups[MAX_SETUPS];
    int n = find_setups(root, setups, MAX_SETUPS);
    if (n == 0) {
        fprintf(stderr, "bench_sim: no benchmark setups under %s (set SRC)\n", root);
        return 1;
    }
    skill_registry *reg = loader_standard(NULL, 0, NULL, NULL);
    if (!reg || !mkdtemp(pictures)) return 1;
    /* Warm up, then fly the whole suite until at least a second has passed. */
    int failed = 0;
    for (int i = 0; i < n; i++)
        failed += !fly(reg, &setups[i]);
    double t0 = clock_now_ms(), elapsed = 0;
    long missions = 0;
    while (elapsed < 1000 || missions < 5L * n) {
        for (int i = 0; i < n; i++)
            fly(reg, &setups[i]);
        missions += n;
        elapsed = clock_now_ms() - t0;
        suite_clean_dir(pictures);
    }
    double per_s = missions / (elapsed / 1000);
    printf("bench_sim: %d setups, %ld missions in %.0f ms: %.0f missions/s (%.3f ms each), "
           "%d failed\n",
           n, missions, elapsed, per_s, elapsed / (double)missions, failed);
    FILE *f = bench_out(argc, argv);
    if (f) {
        fprintf(f,
                "{\"sim_missions_per_s\": {\"value\": %.1f, \"unit\": \"missions/s\"},\n"
                " \"sim_mission_ms\": {\"value\": %.4f, \"unit\": \"ms\"},\n"
                " \"sim_suite_setups\": {\"value\": %d, \"unit\": \"setups\"},\n"
                " \"sim_suite_failed\": {\"value\": %d, \"unit\": \"setups\"}}\n",
                per_s, elapsed / (double)missions, n, failed);
        fclose(f);
    }
    for (int i = 0; i < n; i++)
        free(setups[i].plan);
    registry_free(reg);
    suite_clean_dir(pictures);
    remove(pictures);
    return failed != 0;
}
