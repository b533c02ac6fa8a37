/*
 * Plan token counts (SPEC §15): what the planner has to write, and read, for
 * each setup of the benchmark suite, counted with real BPE tokenizers
 * (cl100k_base and o200k_base through js-tiktoken, tests/bench/node, offline
 * once `scripts/setup.sh --test` has installed it): the reference MiniSpec
 * plan, the Lua it compiles to, the plan's compact Python twin
 * (plan.py in each task directory, the same steps with the skills' full
 * names, as a general-purpose-language planner would write them), and the
 * planning prompt (task + the scene seen from the start pose) with the full
 * scene description and with the task-relevant one (vision/relevance.h), on
 * the suite and on a crowded scene (tests/bench/crowded.scene.json, 61
 * objects, 59 in view).
 *
 *   bench_tokens [OUT.json]      (SRC=source root, default ".")
 */
#include "bench_out.h"
#include "llm/prompt.h"
#include "loader/loader.h"
#include "minispec/minispec.h"
#include "mission/runner.h"
#include "suite.h"
#include "vision/relevance.h"

#include <ctype.h>
#include <unistd.h>

#define MAX_SETUPS 64

/* The task text beside the setup's scene, or "" (malloc'd). */
static char *task_of(const setup *s)
{
    char path[1500], err[256];
    snprintf(path, sizeof path, "%.1400s", s->scene);
    char *slash = strrchr(path, '/');
    if (slash) snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "task.txt");
    size_t len;
    char *text = cli_read_input(path, 1 << 16, &len, err, sizeof err);
    return text ? text : strdup("");
}

/* The scene description from the start pose of SCENE (malloc'd): the full
 * view, or for TASK the planning prompt's (relevant objects first, capped). */
static char *scene_of(const char *scene, const char *task)
{
    mission_world w;
    char err[256];
    sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = NULL};
    if (mission_world_sim(&w, scene, &so, err, sizeof err)) return strdup("");
    vision_object objs[VISION_MAX_OBJECTS];
    int n = sim_observe(w.sim, objs, VISION_MAX_OBJECTS);
    if (n < 0) n = 0;
    size_t need = (task ? vision_describe_for_task(objs, n, task, NULL, 0)
                        : vision_describe(objs, n, NULL, 0)) +
                  1;
    char *out = malloc(need);
    if (out && task)
        vision_describe_for_task(objs, n, task, out, need);
    else if (out)
        vision_describe(objs, n, out, need);
    mission_world_close(&w, false);
    return out;
}

/* A file beside the setup's scene (malloc'd), or "" when there is none. */
static char *beside(const setup *s, const char *name)
{
    char path[1500], err[256];
    snprintf(path, sizeof path, "%.1400s", s->scene);
    char *slash = strrchr(path, '/');
    if (slash) snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "%s", name);
    size_t len;
    char *text = cli_read_input(path, 1 << 16, &len, err, sizeof err);
    return text ? text : strdup("");
}

enum { T_MINISPEC, T_LUA, T_PYTHON, T_PROMPT_FULL, T_PROMPT, T_KINDS };
static const char *const KEY[T_KINDS] = {"plan_tokens_minispec", "plan_tokens_lua",
                                         "plan_tokens_python", "prompt_tokens_full_scene",
                                         "prompt_tokens_plan"};
static const char *const ENCODING[] = {"cl100k_base", "o200k_base"};
#define N_ENC 2
#define CROWDED_TASK "Could you find an apple? If so, go to it."

/* The planning prompt of TASK with SCENE_TEXT as one string into TEXTS. */
static int add_prompt(cJSON *texts, const skill_registry *reg, const prompt_set *ps,
                      const char *task, const char *scene_text)
{
    prompt_msgs pm;
    char err[512];
    if (prompt_plan(ps, reg, task, scene_text, NULL, &pm, err, sizeof err) != 0) {
        fprintf(stderr, "bench_tokens: %s\n", err);
        return -1;
    }
    size_t n = (pm.system ? strlen(pm.system) : 0) + strlen(pm.user) + 1;
    char *prompt = malloc(n);
    if (prompt) snprintf(prompt, n, "%s%s", pm.system ? pm.system : "", pm.user);
    cJSON_AddItemToArray(texts, cJSON_CreateString(prompt ? prompt : ""));
    free(prompt);
    prompt_msgs_free(&pm);
    return 0;
}

/* Both planning prompts of TASK in SCENE: full view, then task-relevant. */
static int add_prompts(cJSON *texts, const skill_registry *reg, const prompt_set *ps,
                       const char *task, const char *scene)
{
    char *full = scene_of(scene, NULL), *relevant = scene_of(scene, task);
    int rc = add_prompt(texts, reg, ps, task, full) | add_prompt(texts, reg, ps, task, relevant);
    free(full);
    free(relevant);
    return rc;
}

/* The five texts of setup S into TEXTS (a JSON array). Returns 0, or -1. */
static int add_texts(cJSON *texts, const setup *s, const skill_registry *reg, const prompt_set *ps)
{
    ms_result r;
    if (minispec_compile(reg, s->plan, s->plan_len, NULL, &r)) {
        fprintf(stderr, "%s: the reference plan does not compile\n", s->scene);
        ms_result_free(&r);
        return -1;
    }
    /* The plan's own Lua, without the runtime header line. */
    const char *body = strchr(r.lua, '\n');
    body = body ? body + 1 : r.lua;
    char *task = task_of(s), *py = beside(s, "plan.py");
    cJSON_AddItemToArray(texts, cJSON_CreateString(s->plan));
    cJSON_AddItemToArray(texts, cJSON_CreateString(body));
    cJSON_AddItemToArray(texts, cJSON_CreateString(py));
    int rc = add_prompts(texts, reg, ps, task, s->scene);
    if (!*py) {
        fprintf(stderr, "%s: no plan.py (the Python twin) beside it\n", s->scene);
        rc = -1;
    }
    free(task);
    free(py);
    ms_result_free(&r);
    return rc;
}

/* Counts every text of TEXTS with tests/bench/node/count_tokens.js. Returns
 * its {"cl100k_base": [..], "o200k_base": [..]} or NULL after saying why. */
static cJSON *count_with_bpe(const char *src, const cJSON *texts)
{
    char in[] = "/tmp/aloft-bench-tokens-XXXXXX";
    int fd = mkstemp(in);
    char *json = cJSON_PrintUnformatted(texts);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f || !json) {
        fprintf(stderr, "bench_tokens: cannot write %s\n", in);
        free(json);
        return NULL;
    }
    fputs(json, f);
    fclose(f);
    free(json);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "node '%.900s/tests/bench/node/count_tokens.js' < '%s'", src, in);
    FILE *p = popen(cmd, "r");
    static char out[1 << 16];
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    int status = p ? pclose(p) : -1;
    out[n] = '\0';
    unlink(in);
    cJSON *doc = status == 0 ? cJSON_Parse(out) : NULL;
    if (!doc)
        fprintf(stderr,
                "bench_tokens: the tokenizer failed (exit %d); install it with "
                "scripts/setup.sh --test (npm ci in tests/bench/node)\n",
                status);
    return doc;
}

/* The longest prefix that the planning prompts of all N setups share, byte
 * for byte: what a server's prompt cache can reuse from one task to the
 * next (malloc'd). */
static char *common_prefix(const cJSON *texts, int n)
{
    const char *first = cJSON_GetStringValue(cJSON_GetArrayItem(texts, T_PROMPT));
    size_t len = first ? strlen(first) : 0;
    for (int i = 1; i < n; i++) {
        const char *t = cJSON_GetStringValue(cJSON_GetArrayItem(texts, i * T_KINDS + T_PROMPT));
        size_t k = 0;
        while (t && k < len && t[k] == first[k])
            k++;
        len = k;
    }
    return strndup(first ? first : "", len);
}

static double pct_fewer(double fewer, double than)
{
    return than > 0 ? 100 * (1 - fewer / than) : 0;
}

static void print_results(const char *enc, int n, const double *avg, const double *crowded,
                          double prefix)
{
    printf("bench_tokens: %s, %d setups: MiniSpec plan %.1f tokens, the same plan in Lua "
           "%.1f, in compact Python %.1f: MiniSpec %.0f %% fewer than Python, %.0f %% fewer "
           "than Lua\n",
           enc, n, avg[T_MINISPEC], avg[T_LUA], avg[T_PYTHON],
           pct_fewer(avg[T_MINISPEC], avg[T_PYTHON]), pct_fewer(avg[T_MINISPEC], avg[T_LUA]));
    printf("bench_tokens: %s planning prompt, full scene -> task-relevant scene: suite %.0f -> "
           "%.0f tokens (%.1f %% fewer), crowded scene %.0f -> %.0f (%.0f %% fewer)\n",
           enc, avg[T_PROMPT_FULL], avg[T_PROMPT], pct_fewer(avg[T_PROMPT], avg[T_PROMPT_FULL]),
           crowded[0], crowded[1], pct_fewer(crowded[1], crowded[0]));
    printf("bench_tokens: %s planning prompt's static part, first and byte-identical across "
           "the %d setups: %.0f tokens, %.1f %% of the prompt\n",
           enc, n, prefix, 100 * prefix / avg[T_PROMPT]);
}

static void write_results(FILE *f, const char *enc, const double *avg, const double *crowded,
                          double prefix, bool first)
{
    for (int k = 0; k < T_KINDS; k++)
        fprintf(f, "%s\"%s_%s\": {\"value\": %.1f, \"unit\": \"tokens\"}",
                first && k == 0 ? "" : ",\n ", KEY[k], enc, avg[k]);
    fprintf(f,
            ",\n \"plan_fewer_than_python_%s\": {\"value\": %.1f, \"unit\": \"%%\"}"
            ",\n \"prompt_crowded_full_scene_%s\": {\"value\": %.0f, \"unit\": \"tokens\"}"
            ",\n \"prompt_crowded_relevant_scene_%s\": {\"value\": %.0f, \"unit\": \"tokens\"}",
            enc, pct_fewer(avg[T_MINISPEC], avg[T_PYTHON]), enc, crowded[0], enc, crowded[1]);
    fprintf(f,
            ",\n \"prompt_static_prefix_%s\": {\"value\": %.0f, \"unit\": \"tokens\"}"
            ",\n \"prompt_static_prefix_share_%s\": {\"value\": %.1f, \"unit\": \"%%\"}",
            enc, prefix, enc, 100 * prefix / avg[T_PROMPT]);
}

int main(int argc, char **argv)
{
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    char root[600], crowded_scene[700], err[512];
    snprintf(root, sizeof root, "%s/examples/benchmark", src);
    snprintf(crowded_scene, sizeof crowded_scene, "%.600s/tests/bench/crowded.scene.json", src);
    static setup setups[MAX_SETUPS];
    int n = find_setups(root, setups, MAX_SETUPS);
    skill_registry *reg = loader_standard(NULL, 0, NULL, NULL);
    prompt_set *ps = prompt_load(NULL, err, sizeof err);
    if (n == 0 || !reg || !ps) {
        fprintf(stderr, "bench_tokens: no setups under %s, or %s\n", root, err);
        return 1;
    }
    cJSON *texts = cJSON_CreateArray();
    int failed = 0;
    for (int i = 0; i < n; i++)
        if (add_texts(texts, &setups[i], reg, ps) != 0) failed++;
    if (add_prompts(texts, reg, ps, CROWDED_TASK, crowded_scene) != 0) failed++;
    char *prefix = failed ? NULL : common_prefix(texts, n);
    cJSON_AddItemToArray(texts, cJSON_CreateString(prefix ? prefix : ""));
    free(prefix);
    cJSON *counts = failed ? NULL : count_with_bpe(src, texts);
    double avg[N_ENC][T_KINDS] = {{0}}, crowded[N_ENC][2] = {{0}}, stable[N_ENC] = {0};
    for (int e = 0; counts && e < N_ENC; e++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(counts, ENCODING[e]);
        for (int i = 0; i < n * T_KINDS; i++)
            avg[e][i % T_KINDS] += cJSON_GetNumberValue(cJSON_GetArrayItem(list, i)) / n;
        for (int k = 0; k < 2; k++)
            crowded[e][k] = cJSON_GetNumberValue(cJSON_GetArrayItem(list, n * T_KINDS + k));
        stable[e] = cJSON_GetNumberValue(cJSON_GetArrayItem(list, n * T_KINDS + 2));
        print_results(ENCODING[e], n, avg[e], crowded[e], stable[e]);
    }
    FILE *f = counts ? bench_out(argc, argv) : NULL;
    if (f) {
        fputc('{', f);
        for (int e = 0; e < N_ENC; e++)
            write_results(f, e == 0 ? "cl100k" : "o200k", avg[e], crowded[e], stable[e], e == 0);
        fputs("}\n", f);
        fclose(f);
    }
    for (int i = 0; i < n; i++)
        free(setups[i].plan);
    cJSON_Delete(texts);
    cJSON_Delete(counts);
    prompt_free(ps);
    registry_free(reg);
    return failed != 0 || !counts;
}
