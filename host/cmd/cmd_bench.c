/* aloft bench: runs the benchmark programs built beside the binary
 * (tests/bench/bench_*.c, built by `make bench`), each with the path of a JSON
 * file to write, then prints every number they reported as one table and
 * writes them all to one JSON document (SPEC §15).
 *
 * A benchmark must leave nothing behind. Each runs with TMPDIR set to a
 * directory of its own, and with the directory it runs in (the build
 * directory) listed before and after: whatever it left in either is counted
 * in its "left_behind" row (and its "leaves_nothing_met" verdict), named on
 * stderr, and removed from its TMPDIR. */
#include "cmd/cli.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char usage[] =
    "Usage: aloft bench [--json] [--out FILE] [NAME...]\n"
    "\n"
    "Run the benchmarks (the bench_* programs built beside this binary by\n"
    "`make bench`): sandbox start-up and hook overhead, MiniSpec compile speed,\n"
    "simulated missions per second, stream vs batch response time, store write\n"
    "cost, vision pipeline overhead. Give NAMEs (e.g. sandbox) to run only those.\n"
    "\n"
    "  --out FILE   write all results as one JSON document (default: bench.json\n"
    "               beside the binary)\n"
    "  --json       print that document on stdout instead of the table\n"
    "\n"
    "Each number is measured in one run on this machine; compare ratios, not\n"
    "absolute times, across machines.\n"
    "\n"
    "Exit status: 0, 1 a benchmark failed or none was found, 2 usage error.\n";

enum { OPT_OUT = OPT_FIRST_FREE };

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool wanted(const char *name, char **only, int n_only)
{
    if (n_only == 0) return true;
    for (int i = 0; i < n_only; i++)
        if (strcmp(name + 6, only[i]) == 0 || strcmp(name, only[i]) == 0) return true;
    return false;
}

/* Runs DIR/NAME with OUT as its argument and TMP as its TMPDIR; its own
 * output goes to stderr. */
static int run_bench(const char *dir, const char *name, const char *out, const char *tmp)
{
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(STDERR_FILENO, STDOUT_FILENO);
        if (setenv("TMPDIR", tmp, 1) == 0 && chdir(dir) == 0) execl(path, path, out, (char *)NULL);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0) return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* The names in directory DIR, sorted, as one malloc'd array (*N of them). */
static char **list_dir(const char *dir, size_t *n)
{
    *n = 0;
    char **names = NULL;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char **grown = realloc(names, (*n + 1) * sizeof *names);
        if (!grown) break;
        names = grown;
        if ((names[*n] = strdup(e->d_name))) (*n)++;
    }
    if (d) closedir(d);
    if (*n) qsort(names, *n, sizeof *names, compare_names);
    return names;
}

static void free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static int left_count;

/* nftw callback: counts and removes one entry of a benchmark's TMPDIR. */
static int remove_left(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type;
    if (ftw->level == 0) return 0; /* the directory itself stays */
    left_count++;
    if (remove(path) != 0)
        fprintf(stderr, "aloft bench: cannot remove %s: %s\n", path, strerror(errno));
    return 0;
}

/* What NAME left behind: entries in its TMPDIR TMP (removed) and new
 * entries among the BEFORE names of DIR (named, not removed: they sit
 * beside the build's own files). */
static int left_behind(const char *name, const char *tmp, const char *dir, char **before,
                       size_t n_before)
{
    left_count = 0;
    nftw(tmp, remove_left, 16, FTW_DEPTH | FTW_PHYS);
    int left = left_count;
    if (left)
        fprintf(stderr, "aloft bench: %s left %d file(s) in its TMPDIR (removed)\n", name, left);
    size_t n_after;
    char **after = list_dir(dir, &n_after);
    for (size_t i = 0; i < n_after; i++) {
        if (bsearch(&after[i], before, n_before, sizeof *before, compare_names)) continue;
        fprintf(stderr, "aloft bench: %s left %s/%s\n", name, dir, after[i]);
        left++;
    }
    free_names(after, n_after);
    return left;
}

/* Adds one row per number in V (objects {"value","unit"} give the unit). */
static void print_rows(const char *bench, const char *prefix, const cJSON *v)
{
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(v, "value");
    if (cJSON_IsObject(v) && cJSON_IsNumber(value)) {
        const cJSON *unit = cJSON_GetObjectItemCaseSensitive(v, "unit");
        printf("%-16s %-44s %14.6g  %s\n", bench, prefix, value->valuedouble,
               cJSON_IsString(unit) ? unit->valuestring : "");
        return;
    }
    if (cJSON_IsNumber(v)) {
        printf("%-16s %-44s %14.6g\n", bench, prefix, v->valuedouble);
        return;
    }
    /* A target's verdict ("..._met": true or false) reads as one. */
    if (cJSON_IsBool(v)) {
        size_t n = strlen(prefix);
        bool verdict = n >= 4 && strcmp(prefix + n - 4, "_met") == 0;
        printf("%-16s %-44s %14s\n", bench, prefix,
               verdict ? (cJSON_IsTrue(v) ? "met" : "MISSED")
                       : (cJSON_IsTrue(v) ? "true" : "false"));
        return;
    }
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) return;
    int i = 0;
    for (const cJSON *c = v->child; c; c = c->next, i++) {
        char key[256];
        if (cJSON_IsArray(v))
            snprintf(key, sizeof key, "%s[%d]", prefix, i);
        else
            snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", c->string);
        print_rows(bench, key, c);
    }
}

static int take_out(void *ud, int opt, const char *arg)
{
    if (opt != OPT_OUT) return cli_usage_error("bench", "unknown option");
    *(const char **)ud = arg;
    return 0;
}

int cmd_bench(int argc, char **argv)
{
    cli_common c = {.cmd = "bench"};
    const char *out_path = NULL;
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS, {"out", required_argument, 0, OPT_OUT}, {0, 0, 0, 0}};
    int rc = cli_parse_options(&c, argc, argv, opts, usage, take_out, &out_path);
    if (rc >= 0) return rc;

    char dir[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0) return cli_fail(c.cmd, "cannot find the aloft binary: %s", strerror(errno));
    dir[n] = '\0';
    *strrchr(dir, '/') = '\0';

    DIR *d = opendir(dir);
    char **names = NULL;
    size_t count = 0;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strncmp(e->d_name, "bench_", 6) != 0 || strchr(e->d_name, '.')) continue;
        if (!wanted(e->d_name, argv + optind, argc - optind)) continue;
        names = realloc(names, (count + 1) * sizeof *names);
        names[count++] = strdup(e->d_name);
    }
    if (d) closedir(d);
    if (count == 0)
        return cli_fail(c.cmd,
                        "no benchmark programs beside %s/aloft: build them with "
                        "'make bench' in the source tree",
                        dir);
    qsort(names, count, sizeof *names, compare_names);

    char tmp[PATH_MAX];
    const char *tmpdir = getenv("TMPDIR");
    snprintf(tmp, sizeof tmp, "%s/aloft-bench-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(tmp)) {
        for (size_t i = 0; i < count; i++)
            free(names[i]);
        free(names);
        return cli_fail(c.cmd, "cannot make a temporary directory in %s: %s",
                        tmpdir && *tmpdir ? tmpdir : "/tmp", strerror(errno));
    }
    cJSON *all = cJSON_CreateObject();
    int failed = 0;
    for (size_t i = 0; i < count; i++) {
        char out[PATH_MAX + 64], own_tmp[PATH_MAX + 64], msg[256];
        snprintf(out, sizeof out, "%s/%s.json", tmp, names[i]);
        snprintf(own_tmp, sizeof own_tmp, "%s/%s.tmp", tmp, names[i]);
        fprintf(stderr, "== %s\n", names[i]);
        size_t len, n_before;
        char *text = NULL;
        char **before = list_dir(dir, &n_before);
        if (mkdir(own_tmp, 0700) == 0 && run_bench(dir, names[i], out, own_tmp) == 0)
            text = cli_read_input(out, CLI_MAX_INPUT, &len, msg, sizeof msg);
        int left = left_behind(names[i], own_tmp, dir, before, n_before);
        free_names(before, n_before);
        rmdir(own_tmp);
        cJSON *result = text ? cJSON_Parse(text) : NULL;
        if (!result || !cJSON_IsObject(result)) {
            failed++;
            fprintf(stderr, "aloft bench: %s failed or wrote no JSON\n", names[i]);
            cJSON_Delete(result);
            result = cJSON_CreateObject();
            cJSON_AddStringToObject(result, "error", "failed or wrote no JSON");
        }
        cJSON *row = cJSON_AddObjectToObject(result, "left_behind");
        cJSON_AddNumberToObject(row, "value", left);
        cJSON_AddStringToObject(row, "unit", "files");
        cJSON_AddBoolToObject(result, "leaves_nothing_met", left == 0);
        cJSON_AddItemToObject(all, names[i], result);
        free(text);
        unlink(out);
        free(names[i]);
    }
    free(names);
    rmdir(tmp);

    char default_out[PATH_MAX + 16];
    snprintf(default_out, sizeof default_out, "%s/bench.json", dir);
    if (!out_path) out_path = default_out;
    char *text = cJSON_Print(all);
    FILE *f = fopen(out_path, "w");
    if (f) {
        fputs(text, f);
        fputc('\n', f);
        fclose(f);
    } else {
        fprintf(stderr, "aloft bench: cannot write %s: %s\n", out_path, strerror(errno));
        failed++;
    }
    free(text);
    if (c.json) {
        cli_print_json(all);
    } else {
        printf("%-16s %-44s %14s  %s\n", "benchmark", "metric", "value", "unit");
        for (const cJSON *b = all->child; b; b = b->next)
            print_rows(b->string, "", b);
        printf("\nwritten to %s\n", out_path);
        cJSON_Delete(all);
    }
    return failed ? CLI_FAIL : CLI_OK;
}
