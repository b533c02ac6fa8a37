/*
 * Concurrent missions: the benchmark suite's setups flown with their
 * reference plans at time scale 0 by 1, 2 and 4 threads of one process at
 * once (as `aloft serve` runs several drones). Reports missions per second
 * for each thread count and the speed-up over one thread; on a machine
 * with C cores the speed-up cannot pass C.
 *
 *   bench_concurrent [OUT.json]      (SRC=source root, default ".")
 */
#include "bench_out.h"
#include "clock.h"
#include "loader/loader.h"
#include "mission/runner.h"
#include "suite.h"

#include <pthread.h>
#include <unistd.h>

#define MAX_SETUPS 64

static setup setups[MAX_SETUPS];
static int nsetups;
static skill_registry *reg;
static char pictures[] = "/tmp/aloft-bench-concurrent-XXXXXX";

static bool fly(const setup *s)
{
    mission_world w;
    char err[512];
    sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = pictures};
    if (mission_world_sim(&w, s->scene, &so, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", s->scene, err);
        return false;
    }
    runner_opts o = {.reg = reg, .world = &w, .plan = s->plan, .plan_len = s->plan_len};
    cJSON *doc = runner_run(&o);
    bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "ok"));
    cJSON_Delete(doc);
    mission_world_close(&w, true);
    return ok;
}

typedef struct worker {
    int id, rounds;
    long flown, failed;
} worker;

static void *work(void *arg)
{
    worker *wk = arg;
    for (int r = 0; r < wk->rounds; r++)
        for (int k = 0; k < nsetups; k++) {
            wk->failed += !fly(&setups[(k + wk->id) % nsetups]);
            wk->flown++;
        }
    return NULL;
}

/* Missions per second with THREADS threads, each flying the suite ROUNDS
 * times; *FAILED gets the missions that did not end ok. */
static double run(int threads, int rounds, long *failed)
{
    pthread_t th[8];
    worker wk[8];
    double t0 = clock_now_ms();
    for (int t = 0; t < threads; t++) {
        wk[t] = (worker){t, rounds, 0, 0};
        if (pthread_create(&th[t], NULL, work, &wk[t])) return 0;
    }
    long flown = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(th[t], NULL);
        flown += wk[t].flown;
        *failed += wk[t].failed;
    }
    return flown / ((clock_now_ms() - t0) / 1000);
}

int main(int argc, char **argv)
{
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    char root[600];
    snprintf(root, sizeof root, "%s/examples/benchmark", src);
    nsetups = find_setups(root, setups, MAX_SETUPS);
    if (nsetups == 0) {
        fprintf(stderr, "bench_concurrent: no benchmark setups under %s (set SRC)\n", root);
        return 1;
    }
    reg = loader_standard(NULL, 0, NULL, NULL);
    if (!reg || !mkdtemp(pictures)) return 1;
    long failed = 0;
    run(1, 2, &failed); /* warm up */
    const int counts[] = {1, 2, 4};
    double per_s[3];
    for (int i = 0; i < 3; i++) {
        /* the same work per thread: each flies the suite 20 times */
        per_s[i] = run(counts[i], 20, &failed);
        suite_clean_dir(pictures);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("bench_concurrent: %d setups on %ld cores: 1 thread %.0f missions/s, 2 threads %.0f "
           "(%.2fx), 4 threads %.0f (%.2fx); %ld failed\n",
           nsetups, cores, per_s[0], per_s[1], per_s[1] / per_s[0], per_s[2], per_s[2] / per_s[0],
           failed);
    FILE *f = bench_out(argc, argv);
    if (f) {
        fprintf(f,
                "{\"concurrent_1_thread\": {\"value\": %.1f, \"unit\": \"missions/s\"},\n"
                " \"concurrent_2_threads\": {\"value\": %.1f, \"unit\": \"missions/s\"},\n"
                " \"concurrent_4_threads\": {\"value\": %.1f, \"unit\": \"missions/s\"},\n"
                " \"concurrent_speedup_2\": {\"value\": %.2f, \"unit\": \"x\"},\n"
                " \"concurrent_speedup_4\": {\"value\": %.2f, \"unit\": \"x\"},\n"
                " \"concurrent_cores\": {\"value\": %ld, \"unit\": \"cores\"},\n"
                " \"concurrent_failed\": {\"value\": %ld, \"unit\": \"missions\"}}\n",
                per_s[0], per_s[1], per_s[2], per_s[1] / per_s[0], per_s[2] / per_s[0], cores,
                failed);
        fclose(f);
    }
    for (int i = 0; i < nsetups; i++)
        free(setups[i].plan);
    registry_free(reg);
    suite_clean_dir(pictures);
    remove(pictures);
    return failed != 0;
}
