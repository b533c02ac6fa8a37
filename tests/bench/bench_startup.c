/*
 * Process start-up: the wall time of whole `aloft` processes, each started
 * with posix_spawn and waited for, median of ROUNDS. `aloft check` of a
 * one-statement plan is the target (at most 10 ms a process: OpenCV is not
 * loaded unless vision is used); a simulated `aloft run --plan` and an
 * `aloft detect` (which does load the OpenCV module) are shown beside it,
 * and /bin/true as the floor of this machine.
 */
#include "bench_out.h"

#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 30
#define TARGET_CHECK_MS 10.0

/* environ, from <unistd.h> under _GNU_SOURCE */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median wall time of ARGV run ROUNDS times with stdin from IN (or
 * /dev/null) and output discarded; -1 if a run fails. */
static double median_ms(char *const argv[], const char *in, int rounds)
{
    double t[ROUNDS];
    for (int r = 0; r < rounds; r++) {
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, in ? in : "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        double t0 = now_ms();
        pid_t pid;
        int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        int status = 0;
        if (rc != 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            return -1;
        t[r] = now_ms() - t0;
    }
    qsort(t, (size_t)rounds, sizeof *t, by_value);
    return t[rounds / 2];
}

int main(int argc, char **argv)
{
    FILE *out = bench_out(argc, argv);
    char exe[PATH_MAX], aloft[PATH_MAX + 8], src[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return 1;
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    snprintf(aloft, sizeof aloft, "%s/aloft", exe);
    snprintf(src, sizeof src, "%s", __FILE__);
    *strstr(src, "/tests/bench/") = '\0';

    char dir[] = "/tmp/aloft-bench-startup-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char plan[PATH_MAX + 64], db[PATH_MAX + 64], scene[PATH_MAX + 128],
        photo[] = "/usr/share/darknet/data/person.jpg";
    snprintf(plan, sizeof plan, "%s/plan.ms", dir);
    snprintf(db, sizeof db, "%s/m.db", dir);
    snprintf(scene, sizeof scene, "%s/examples/scenes/office.json", src);
    FILE *p = fopen(plan, "w");
    if (!p) return 1;
    fputs("tc(90)\n", p);
    fclose(p);

    char *truth[] = {"/bin/true", NULL};
    char *check[] = {aloft, "check", plan, NULL};
    char *run[] = {aloft, "run", "--scene", scene, "--plan", plan, "--json", "--db", db, NULL};
    char *detect[] = {aloft, "detect", "--detector", "hog", photo, NULL};
    double t_true = median_ms(truth, NULL, ROUNDS);
    double t_check = median_ms(check, NULL, ROUNDS);
    double t_run = median_ms(run, NULL, ROUNDS / 3);
    double t_detect = access(photo, R_OK) == 0 ? median_ms(detect, NULL, 5) : -1;

    printf("process start-up (median wall time of whole processes, ms)\n");
    printf("  %-44s %8.2f\n", "/bin/true (this machine's floor)", t_true);
    printf("  %-44s %8.2f  (target <= %.0f: %s)\n", "aloft check (one statement)", t_check,
           TARGET_CHECK_MS, t_check >= 0 && t_check <= TARGET_CHECK_MS ? "met" : "missed");
    printf("  %-44s %8.2f\n", "aloft run --plan (simulator, recorded)", t_run);
    printf("  %-44s %8.2f\n", "aloft detect --detector hog (loads OpenCV)", t_detect);
    if (out) {
        fprintf(out,
                "{\"true_ms\":%.3f,\"check_ms\":%.3f,\"check_target_ms\":%.1f,\"check_met\":%s,"
                "\"run_plan_ms\":%.3f,\"detect_hog_ms\":%.3f}\n",
                t_true, t_check, TARGET_CHECK_MS,
                t_check >= 0 && t_check <= TARGET_CHECK_MS ? "true" : "false", t_run, t_detect);
        fclose(out);
    }
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 && t_check >= 0 ? 0 : 1;
}
