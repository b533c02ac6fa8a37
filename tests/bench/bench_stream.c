/*
 * Stream interpreting vs batch, whole missions: for each reference plan of
 * the benchmark suite (examples/benchmark/NAME/plan.ms) the fake LLM server
 * replies with the plan at a fixed token rate (20 tokens/s by default, like a
 * hosted GPT-4-class model) and the mission controller flies it in the
 * task's scene (simulated time runs instantly), once streamed and once batch.
 *
 *   response time  mission start (task received) to the first drone-moving
 *                  or vision skill call (the report's first_action_ms);
 *   reduction      1 - stream / batch response time;
 *   overhead       host time from the arrival of the reply bytes that
 *                  complete a statement to that statement's first skill
 *                  call (the mission's first statement, and the mean over
 *                  every statement that called a skill as soon as it came).
 *
 * Usage: bench_stream [OUT.json] [--rate TOKENS_PER_S]
 * Prints a table; writes JSON to OUT.json when given. Needs $SRC (or the
 * source root as working directory's parent) to find the suite.
 */
#include "../fake_llm.h"
#include "loader/loader.h"
#include "mission/controller.h"
#include "suite.h"

#include <dirent.h>

typedef struct row {
    char name[64];
    int tokens;
    double stream_ms, batch_ms, first_us, mean_us;
    bool ok;
} row;

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Where the missions' pictures go: a directory of this benchmark's, emptied
 * after every flight and removed at the end, so that nothing is left. */
static char pictures[] = "/tmp/aloft-bench-stream-XXXXXX";

/* Flies PLAN's reply in SCENE; returns the report, fills *STATS. */
static cJSON *fly(const skill_registry *reg, const prompt_set *ps, const char *base_url,
                  const char *scene, const char *task, bool stream, mission_stats *stats)
{
    llm_config cfg;
    llm_config_defaults(&cfg);
    snprintf(cfg.base_url, sizeof cfg.base_url, "%s", base_url);
    snprintf(cfg.model, sizeof cfg.model, "fake");
    cfg.api_key[0] = '\0';
    mission_world w;
    char err[256];
    sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = pictures};
    if (mission_world_sim(&w, scene, &so, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", scene, err);
        return NULL;
    }
    mission_opts mo;
    mission_opts_defaults(&mo);
    mo.run.reg = reg;
    mo.run.world = &w;
    mo.run.limits.max_instructions = 10000000;
    mo.run.limits.max_memory = 16 << 20;
    mo.run.limits.timeout_ms = 300000;
    mo.run.limits.max_output = 65536;
    mo.task = task;
    mo.prompts = ps;
    mo.llm = mission_llm_default(&cfg);
    mo.stream = stream;
    mo.max_tries = 1;
    mo.max_replans = 0;
    mo.stats = stats;
    cJSON *doc = mission_run(&mo);
    mission_world_close(&w, true);
    suite_clean_dir(pictures);
    return doc;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *buf = calloc(1, 65536);
    size_t n = buf ? fread(buf, 1, 65535, f) : 0;
    fclose(f);
    while (buf && n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return buf;
}

static double first_action(const cJSON *doc)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "first_action_ms");
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static cJSON *value(double v, const char *unit)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "value", v);
    cJSON_AddStringToObject(o, "unit", unit);
    return o;
}

int main(int argc, char **argv)
{
    const char *out_path = NULL;
    double rate = 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rate") && i + 1 < argc)
            rate = atof(argv[++i]);
        else
            out_path = argv[i];
    }
    const char *src = getenv("SRC");
    char suite[1024];
    snprintf(suite, sizeof suite, "%s/examples/benchmark", src && *src ? src : "..");
    DIR *d = opendir(suite);
    if (!d) {
        fprintf(stderr, "bench_stream: cannot open %s (set SRC)\n", suite);
        return 1;
    }
    if (!mkdtemp(pictures)) {
        closedir(d);
        return perror("bench_stream: mkdtemp"), 1;
    }
    char *names[64];
    int nnames = 0;
    struct dirent *e;
    while ((e = readdir(d)) && nnames < 64)
        if (e->d_name[0] != '.' && strchr(e->d_name, '-')) names[nnames++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)nnames, sizeof *names, cmp_names);

    skill_registry *reg = loader_standard(NULL, 0, NULL, NULL);
    char err[256];
    prompt_set *ps = prompt_load(NULL, err, sizeof err);
    if (!reg || !ps) {
        fprintf(stderr, "bench_stream: %s\n", err);
        return 1;
    }
    row rows[64];
    int nrows = 0;
    for (int i = 0; i < nnames; i++) {
        char path[1400], scene[1400];
        snprintf(path, sizeof path, "%s/%s/plan.ms", suite, names[i]);
        char *plan = slurp(path);
        snprintf(path, sizeof path, "%s/%s/task.txt", suite, names[i]);
        char *task = slurp(path);
        snprintf(scene, sizeof scene, "%s/%s/scene.json", suite, names[i]);
        if (access(scene, R_OK))
            snprintf(scene, sizeof scene, "%s/%s/apple.scene.json", suite, names[i]);
        if (!plan || !task) {
            free(plan);
            free(task);
            continue;
        }
        /* One server, two replies: the streamed run, then the batch run. */
        cJSON *script = cJSON_CreateObject();
        cJSON *resp = cJSON_AddArrayToObject(script, "responses");
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "content", plan);
        cJSON_AddNumberToObject(r, "times", 2);
        cJSON_AddItemToArray(resp, r);
        char *json = cJSON_PrintUnformatted(script);
        cJSON_Delete(script);
        fake_llm f;
        if (fake_llm_start(&f, json, rate)) return 1;
        free(json);
        row *rw = &rows[nrows++];
        memset(rw, 0, sizeof *rw);
        snprintf(rw->name, sizeof rw->name, "%s", names[i]);
        mission_stats st, sb;
        cJSON *ds = fly(reg, ps, f.base_url, scene, task, true, &st);
        cJSON *db = fly(reg, ps, f.base_url, scene, task, false, &sb);
        fake_llm_stop(&f);
        rw->ok = ds && db && cJSON_IsTrue(cJSON_GetObjectItem(ds, "ok")) &&
                 cJSON_IsTrue(cJSON_GetObjectItem(db, "ok"));
        rw->stream_ms = first_action(ds);
        rw->batch_ms = first_action(db);
        rw->first_us = st.overhead_first_us;
        rw->mean_us = st.overhead_n ? st.overhead_sum_us / st.overhead_n : -1;
        const cJSON *tok = cJSON_GetObjectItem(cJSON_GetObjectItem(db, "tokens"), "completion");
        rw->tokens = cJSON_IsNumber(tok) ? tok->valueint : 0;
        cJSON_Delete(ds);
        cJSON_Delete(db);
        free(plan);
        free(task);
    }

    printf("stream vs batch at %g tokens/s (response time = task to first action)\n", rate);
    printf("%-22s %6s %10s %10s %9s %10s %10s\n", "task", "tokens", "stream ms", "batch ms",
           "reduction", "first us", "mean us");
    double sum_red = 0, sum_first = 0, sum_mean = 0, max_first = 0;
    int n = 0, nmean = 0;
    cJSON *doc = cJSON_CreateObject();
    cJSON *tasks = cJSON_AddObjectToObject(doc, "tasks");
    for (int i = 0; i < nrows; i++) {
        row *rw = &rows[i];
        double red = rw->batch_ms > 0 ? 1 - rw->stream_ms / rw->batch_ms : 0;
        printf("%-22s %6d %10.1f %10.1f %8.1f%% %10.1f %10.1f%s\n", rw->name, rw->tokens,
               rw->stream_ms, rw->batch_ms, 100 * red, rw->first_us, rw->mean_us,
               rw->ok ? "" : "  (mission failed)");
        cJSON *t = cJSON_AddObjectToObject(tasks, rw->name);
        cJSON_AddItemToObject(t, "stream_first_action", value(rw->stream_ms, "ms"));
        cJSON_AddItemToObject(t, "batch_first_action", value(rw->batch_ms, "ms"));
        cJSON_AddItemToObject(t, "ratio",
                              value(rw->batch_ms > 0 ? rw->stream_ms / rw->batch_ms : 0, ""));
        cJSON_AddItemToObject(t, "overhead_first", value(rw->first_us, "us"));
        if (rw->stream_ms < 0 || rw->batch_ms <= 0) continue;
        sum_red += red;
        n++;
        if (rw->first_us >= 0) {
            sum_first += rw->first_us;
            if (rw->first_us > max_first) max_first = rw->first_us;
        }
        if (rw->mean_us >= 0) {
            sum_mean += rw->mean_us;
            nmean++;
        }
    }
    double avg_red = n ? sum_red / n : 0;
    printf("average reduction of response time: %.1f%% (target >= 62%%) over %d tasks\n",
           100 * avg_red, n);
    printf("host overhead: first statement %.1f us on average, %.1f us at most; all statements "
           "%.1f us on average (target < 1000 us)\n",
           n ? sum_first / n : 0, max_first, nmean ? sum_mean / nmean : 0);
    cJSON_AddItemToObject(doc, "token_rate", value(rate, "tokens/s"));
    cJSON_AddItemToObject(doc, "response_time_reduction", value(100 * avg_red, "%"));
    cJSON_AddItemToObject(doc, "response_time_ratio", value(1 - avg_red, ""));
    cJSON_AddItemToObject(doc, "overhead_first_mean", value(n ? sum_first / n : 0, "us"));
    cJSON_AddItemToObject(doc, "overhead_first_max", value(max_first, "us"));
    cJSON_AddItemToObject(doc, "overhead_all_mean", value(nmean ? sum_mean / nmean : 0, "us"));
    if (out_path) {
        FILE *f = fopen(out_path, "w");
        if (f) {
            char *s = cJSON_Print(doc);
            fputs(s, f);
            fputc('\n', f);
            free(s);
            fclose(f);
        }
    }
    cJSON_Delete(doc);
    for (int i = 0; i < nnames; i++)
        free(names[i]);
    prompt_free(ps);
    registry_free(reg);
    rmdir(pictures);
    return 0;
}
