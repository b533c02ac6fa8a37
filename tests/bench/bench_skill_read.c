/* The cost of reading a user skill file in a worker process (SPEC §6,
 * host/worker/skill_meta.h) beside reading it in process: the first file
 * (which starts the worker), then p50/p99 of one more file through the
 * same worker, which is what `aloft run --skills DIR` adds when its
 * mission then takes that worker.
 *
 *   bench_skill_read [OUT.json]   (the aloft program beside this one is
 *                                  the worker)
 */
#include "bench_out.h"
#include "clock.h"
#include "worker/skill_meta.h"
#include "worker/vm.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READS 2000

static const char src[] =
    "return {name = 'circle', description = 'look around in four quarter turns',\n"
    "  args = {{name = 'object_name', type = 'str'}}, returns = 'bool',\n"
    "  run = function(object_name)\n"
    "    for _ = 1, 4 do if is_visible(object_name) then return true end turn_cw(90) end\n"
    "    return false\n"
    "  end}\n";

static const sandbox_limits lim = {
    .max_instructions = 1000000, .max_memory = 4u << 20, .timeout_ms = 2000};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* p50 and p99 of READS reads, in microseconds; -1 on a failed read. */
static int reads(skill_reader *r, bool worker, double *p50, double *p99)
{
    static double t[READS];
    char err[512];
    for (int i = 0; i < READS; i++) {
        skill_meta m;
        double t0 = clock_now_ms();
        int rc =
            worker ? skill_meta_read_in_worker(r, "circle.lua", src, strlen(src), &lim, &m, err,
                                               sizeof err)
                   : skill_meta_run_here("circle.lua", src, strlen(src), &lim, &m, err, sizeof err);
        t[i] = (clock_now_ms() - t0) * 1000.0;
        skill_meta_free(&m);
        if (rc) {
            fprintf(stderr, "bench_skill_read: %s\n", err);
            return -1;
        }
    }
    qsort(t, READS, sizeof t[0], cmp);
    *p50 = t[READS / 2];
    *p99 = t[(int)(0.99 * (READS - 1) + 0.5)];
    return 0;
}

int main(int argc, char **argv)
{
    static char exe[4096], prog[4200];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return 1;
    exe[len] = '\0';
    snprintf(prog, sizeof prog, "%s/aloft", dirname(exe));
    if (access(prog, X_OK) != 0) {
        fprintf(stderr, "bench_skill_read: no aloft program at %s\n", prog);
        return 1;
    }
    vm_set_worker_program(prog);
    vm_set_pool_size(1);
    skill_reader *r = skill_reader_new();
    skill_meta m;
    char err[512];
    double t0 = clock_now_ms();
    if (skill_meta_read_in_worker(r, "circle.lua", src, strlen(src), &lim, &m, err, sizeof err)) {
        fprintf(stderr, "bench_skill_read: %s\n", err);
        return 1;
    }
    double first = clock_now_ms() - t0;
    skill_meta_free(&m);
    double w50, w99, i50, i99;
    if (reads(r, true, &w50, &w99) || reads(NULL, false, &i50, &i99)) return 1;
    skill_reader_free(r);
    printf("bench_skill_read: a skill file read in a worker p50 %.1f us, p99 %.1f us; in process "
           "p50 %.1f us, p99 %.1f us; the first file (starting the worker) %.2f ms\n",
           w50, w99, i50, i99, first);
    FILE *f = bench_out(argc, argv);
    if (f) {
        fprintf(f,
                "{\"skill_read_worker_p50_us\": {\"value\": %.1f, \"unit\": \"us\"},\n"
                " \"skill_read_worker_p99_us\": {\"value\": %.1f, \"unit\": \"us\"},\n"
                " \"skill_read_inprocess_p50_us\": {\"value\": %.1f, \"unit\": \"us\"},\n"
                " \"skill_read_inprocess_p99_us\": {\"value\": %.1f, \"unit\": \"us\"},\n"
                " \"skill_read_first_ms\": {\"value\": %.2f, \"unit\": \"ms\"}}\n",
                w50, w99, i50, i99, first);
        fclose(f);
    }
    return 0;
}
