/* Generated simulator missions per second per core (issue 15: at least
 * 2000): the safety campaign's plans and scripts (tests/campaign) flown at
 * time scale 0 with every invariant checked, counted per CPU second of this
 * one thread so that other work on the machine does not skew it. A plan
 * flies twice (whole and streamed): both count.
 *
 *   bench_campaign [OUT.json]
 */
#include "../campaign/flight.c"
#include "../campaign/gen.c"
#include "../campaign/repro.c"
#include "bench_out.h"
#include "clock.h"

#include <time.h>

#define TARGET 2000.0

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int bench_fly(camp_env *env, uint64_t seed)
{
    camp_rng r;
    camp_rng_seed(&r, seed);
    camp_case c = {0};
    camp_case_draw(&r, env, seed & 1, &c);
    c.time_scale = 0;
    char why[4096];
    int rc = camp_check(env, &c, why, sizeof why);
    if (rc == 1)
        fprintf(stderr, "bench_campaign: seed %llu broke: %s\n", (unsigned long long)seed, why);
    camp_case_free(&c);
    return rc == 1;
}

int main(int argc, char **argv)
{
    camp_env env;
    if (camp_env_open(&env)) return 1;
    int broken = 0;
    for (uint64_t s = 0; s < 200; s++) /* warm-up */
        broken += bench_fly(&env, s);
    long runs0 = env.runs;
    double t0 = cpu_s(), wall0 = clock_now_ms();
    uint64_t seed = 1000;
    while (cpu_s() - t0 < 2.0)
        broken += bench_fly(&env, seed++);
    double cpu = cpu_s() - t0, wall = (clock_now_ms() - wall0) / 1000;
    long missions = env.runs - runs0;
    double per_s = missions / cpu;
    printf("bench_campaign: %ld generated missions (%llu cases) in %.2f CPU s (%.2f s wall): "
           "%.0f missions/s per core (target >= %.0f: %s), %d broke an invariant\n",
           missions, (unsigned long long)(seed - 1000), cpu, wall, per_s, TARGET,
           per_s >= TARGET ? "met" : "missed", broken);
    FILE *f = bench_out(argc, argv);
    if (f) {
        fprintf(f,
                "{\"campaign_missions_per_s\": {\"value\": %.1f, \"unit\": \"missions/s\", "
                "\"target\": %.0f, \"met\": %s},\n"
                " \"campaign_broken\": {\"value\": %d, \"unit\": \"cases\"}}\n",
                per_s, TARGET, per_s >= TARGET ? "true" : "false", broken);
        fclose(f);
    }
    camp_env_close(&env);
    return broken != 0;
}
