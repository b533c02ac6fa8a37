/* aloft bench: runs the benchmark programs built beside the binary
 * (tests/bench/bench_*.c, built by `make bench`), each with the path of a JSON
 * file to write, then prints every number they reported as one table and
 * writes them all to one JSON document (SPEC §15). */
#include "cmd/cli.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Runs DIR/NAME with OUT as its argument; its own output goes to stderr. */
static int run_bench(const char *dir, const char *name, const char *out)
{
    char path[PATH_MAX + 256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(STDERR_FILENO, STDOUT_FILENO);
        if (chdir(dir) == 0) execl(path, path, out, (char *)NULL);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0) return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
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

    char tmp[] = "/tmp/aloft-bench-XXXXXX";
    if (!mkdtemp(tmp)) return cli_fail(c.cmd, "cannot make a temporary directory");
    cJSON *all = cJSON_CreateObject();
    int failed = 0;
    for (size_t i = 0; i < count; i++) {
        char out[PATH_MAX + 64], msg[256];
        snprintf(out, sizeof out, "%s/%s.json", tmp, names[i]);
        fprintf(stderr, "== %s\n", names[i]);
        size_t len;
        char *text = NULL;
        if (run_bench(dir, names[i], out) == 0)
            text = cli_read_input(out, CLI_MAX_INPUT, &len, msg, sizeof msg);
        cJSON *result = text ? cJSON_Parse(text) : NULL;
        if (!result) {
            failed++;
            fprintf(stderr, "aloft bench: %s failed or wrote no JSON\n", names[i]);
            result = cJSON_CreateObject();
            cJSON_AddStringToObject(result, "error", "failed or wrote no JSON");
        }
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
