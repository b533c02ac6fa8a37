/* Plan verification throughput: worlds flown per second when each setup of
 * the benchmark suite (examples/benchmark) is verified with its reference
 * plan (host/verify: sampled scene, fresh simulator, session and plan per
 * world), as aloft does it (the worlds flown in worker processes, SPEC §6)
 * and in this process (--in-process), in the same run.
 *
 *   bench_verify [OUT.json]      (SRC=source root, default ".")
 */
#include "bench_out.h"
#include "clock.h"
#include "cmd/cli.h"
#include "loader/loader.h"
#include "skills/skills.h"
#include "suite.h"
#include "verify/verify.h"
#include "worker/vm.h"

#include <libgen.h>
#include <time.h>
#include <unistd.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SETUPS 64
#define WORLDS 50 /* per setup and round */
/* Issue target: verification at 10,000 worlds a second over the suite. */
#define TARGET_WORLDS_PER_S 10000

/* Verifies one setup in WORLDS worlds; returns the failing ones, or -1. */
static int verify_setup(const skill_registry *reg, const setup *s, const scene *sc)
{
    verify_opts o = {.reg = reg,
                     .scene = sc,
                     .plan = s->plan,
                     .plan_len = s->plan_len,
                     .worlds = WORLDS,
                     .seed = 1};
    char err[512];
    verify_summary sum;
    cJSON *rep = verify_plan(&o, &sum, err, sizeof err);
    if (!rep) {
        fprintf(stderr, "%s: %s\n", s->scene, err);
        return -1;
    }
    cJSON_Delete(rep);
    return sum.failed;
}

/* This process's CPU time (ms): in process, the worlds' own cost whatever
 * else the machine runs. */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Verifies every setup once (counting failing worlds and errors), then
 * again until a second has passed; returns the worlds a second (and the
 * worlds a second of this process's CPU time in *PER_CPU_S). */
static double measure(const skill_registry *reg, const setup *setups, const scene *scenes, int n,
                      int *failed, int *errors, double *per_cpu_s)
{
    for (int i = 0; i < n; i++) {
        int f = verify_setup(reg, &setups[i], &scenes[i]);
        if (f < 0)
            (*errors)++;
        else
            *failed += f;
    }
    double t0 = clock_now_ms(), elapsed = 0, c0 = cpu_ms();
    long worlds = 0;
    while (elapsed < 1000 || worlds < 2L * n * WORLDS) {
        for (int i = 0; i < n; i++)
            verify_setup(reg, &setups[i], &scenes[i]);
        worlds += (long)n * WORLDS;
        elapsed = clock_now_ms() - t0;
    }
    *per_cpu_s = worlds / ((cpu_ms() - c0) / 1000);
    return worlds / (elapsed / 1000);
}

/* The aloft program beside this one, as the worker program (after the
 * in-process round: vm_set_worker_program turns workers on). NULL when
 * there is none. */
static const char *worker_program(void)
{
    static char exe[4096], prog[4200];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return NULL;
    exe[len] = '\0';
    snprintf(prog, sizeof prog, "%s/aloft", dirname(exe));
    if (access(prog, X_OK) != 0) {
        fprintf(stderr, "bench_verify: no aloft program at %s: in process only\n", prog);
        return NULL;
    }
    vm_set_worker_program(prog);
    return prog;
}

int main(int argc, char **argv)
{
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    char root[600];
    snprintf(root, sizeof root, "%s/examples/benchmark", src);
    static setup setups[MAX_SETUPS];
    static scene scenes[MAX_SETUPS];
    int n = find_setups(root, setups, MAX_SETUPS);
    if (n == 0) {
        fprintf(stderr, "bench_verify: no benchmark setups under %s (set SRC)\n", root);
        return 1;
    }
    skill_registry *reg = loader_standard(NULL, 0, NULL, NULL);
    if (!reg) return 1;
    for (int i = 0; i < n; i++) {
        char err[512];
        if (scene_load(&scenes[i], setups[i].scene, err, sizeof err)) {
            fprintf(stderr, "bench_verify: %s\n", err);
            return 1;
        }
    }
    /* One round to warm up (and to count the worlds the reference plans
     * fail in: a measure of how brittle they are), then rounds until at
     * least a second has passed. */
    int failed = 0, errors = 0;
    double cpu_in_process = 0, cpu_host = 0;
    double in_process = measure(reg, setups, scenes, n, &failed, &errors, &cpu_in_process);
    double per_s = in_process;
    if (worker_program()) {
        int f2 = 0;
        per_s = measure(reg, setups, scenes, n, &f2, &errors, &cpu_host);
        if (f2 != failed) {
            fprintf(stderr, "bench_verify: %d worlds failed in workers, %d in process\n", f2,
                    failed);
            errors++;
        }
    }
    bool met = per_s >= TARGET_WORLDS_PER_S;
    printf("bench_verify: %d setups x %d worlds: %.0f worlds/s in worker processes, %.0f in "
           "process (%.0f a CPU second), %ld cores (%.3f ms a world; target >= %d: %s); %d of %d "
           "worlds failed in the warm-up round\n",
           n, WORLDS, per_s, in_process, cpu_in_process, sysconf(_SC_NPROCESSORS_ONLN),
           1000 / per_s, TARGET_WORLDS_PER_S, met ? "met" : "missed", failed, n * WORLDS);
    FILE *f = bench_out(argc, argv);
    if (f) {
        fprintf(f,
                "{\"verify_worlds_per_s\": {\"value\": %.1f, \"unit\": \"worlds/s\"},\n"
                " \"verify_in_process_worlds_per_s\": {\"value\": %.1f, \"unit\": \"worlds/s\"},\n"
                " \"verify_in_process_worlds_per_cpu_s\": {\"value\": %.1f, \"unit\": "
                "\"worlds/s\"},\n"
                " \"verify_world_ms\": {\"value\": %.4f, \"unit\": \"ms\"},\n"
                " \"verify_suite_worlds\": {\"value\": %d, \"unit\": \"worlds\"},\n"
                " \"verify_suite_failed_worlds\": {\"value\": %d, \"unit\": \"worlds\"},\n"
                " \"verify_target_worlds_per_s\": {\"value\": %d, \"unit\": \"worlds/s\"},\n"
                " \"verify_target_met\": %s}\n",
                per_s, in_process, cpu_in_process, 1000 / per_s, n * WORLDS, failed,
                TARGET_WORLDS_PER_S, met ? "true" : "false");
        fclose(f);
    }
    for (int i = 0; i < n; i++)
        free(setups[i].plan);
    registry_free(reg);
    return errors != 0;
}
