/*
 * Plan token counts: what the planner has to write, and read, for each task
 * of the benchmark suite. For every setup: the tokens of its reference
 * MiniSpec plan, of the same plan as the Lua it compiles to (the plan an
 * LLM would write in a general-purpose language with the same skills), and
 * of the planning prompt (task + the scene seen from the start pose).
 *
 * Tokens are counted the way tests/fake_llm.py cuts replies: a run of at
 * most four non-space characters with the whitespace before it. That is
 * close to what BPE tokenizers give for code but not the same; no model's
 * own tokenizer is available offline, so compare the ratios.
 *
 *   bench_tokens [OUT.json]      (SRC=source root, default ".")
 */
#include "bench_out.h"
#include "llm/prompt.h"
#include "minispec/minispec.h"
#include "mission/runner.h"
#include "suite.h"

#include <ctype.h>

#define MAX_SETUPS 64

static long count_tokens(const char *s)
{
    long n = 0;
    while (*s) {
        while (*s && isspace((unsigned char)*s))
            s++;
        if (!*s) break;
        int k = 0;
        while (*s && !isspace((unsigned char)*s) && k < 4) {
            s++;
            k++;
        }
        n++;
    }
    return n;
}

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

/* The scene description from the setup's start pose (malloc'd). */
static char *scene_of(const setup *s)
{
    mission_world w;
    char err[256];
    sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = NULL};
    if (mission_world_sim(&w, s->scene, &so, err, sizeof err)) return strdup("");
    vision_object objs[VISION_MAX_OBJECTS];
    int n = sim_observe(w.sim, objs, VISION_MAX_OBJECTS);
    if (n < 0) n = 0;
    size_t need = vision_describe(objs, n, NULL, 0) + 1;
    char *out = malloc(need);
    if (out) vision_describe(objs, n, out, need);
    mission_world_close(&w, false);
    return out;
}

int main(int argc, char **argv)
{
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    char root[600], err[512];
    snprintf(root, sizeof root, "%s/examples/benchmark", src);
    static setup setups[MAX_SETUPS];
    int n = find_setups(root, setups, MAX_SETUPS);
    skill_registry *reg = registry_standard(NULL, 0, NULL, NULL);
    prompt_set *ps = prompt_load(NULL, err, sizeof err);
    if (n == 0 || !reg || !ps) {
        fprintf(stderr, "bench_tokens: no setups under %s, or %s\n", root, err);
        return 1;
    }
    long ms_tokens = 0, lua_tokens = 0, prompt_tokens = 0, ms_bytes = 0, lua_bytes = 0;
    int failed = 0;
    for (int i = 0; i < n; i++) {
        ms_result r;
        if (minispec_compile(reg, setups[i].plan, setups[i].plan_len, NULL, &r)) {
            fprintf(stderr, "%s: the reference plan does not compile\n", setups[i].scene);
            failed++;
            ms_result_free(&r);
            continue;
        }
        /* The plan's own Lua, without the runtime header line. */
        const char *body = strchr(r.lua, '\n');
        body = body ? body + 1 : r.lua;
        char *task = task_of(&setups[i]), *scene = scene_of(&setups[i]);
        prompt_msgs pm;
        long p = 0;
        if (prompt_plan(ps, reg, task, scene, &pm, err, sizeof err) == 0) {
            p = (pm.system ? count_tokens(pm.system) : 0) + count_tokens(pm.user);
            prompt_msgs_free(&pm);
        } else {
            fprintf(stderr, "%s: %s\n", setups[i].scene, err);
            failed++;
        }
        ms_tokens += count_tokens(setups[i].plan);
        lua_tokens += count_tokens(body);
        ms_bytes += (long)setups[i].plan_len;
        lua_bytes += (long)strlen(body);
        prompt_tokens += p;
        free(task);
        free(scene);
        ms_result_free(&r);
    }
    double ms_avg = (double)ms_tokens / n, lua_avg = (double)lua_tokens / n;
    double prompt_avg = (double)prompt_tokens / n;
    printf("bench_tokens: %d setups: MiniSpec plan %.1f tokens (%.0f bytes), the same plan in "
           "Lua %.1f tokens (%.0f bytes): %.2fx; planning prompt %.0f tokens\n",
           n, ms_avg, (double)ms_bytes / n, lua_avg, (double)lua_bytes / n, lua_avg / ms_avg,
           prompt_avg);
    FILE *f = bench_out(argc, argv);
    if (f) {
        fprintf(f,
                "{\"plan_tokens_minispec\": {\"value\": %.1f, \"unit\": \"tokens\"},\n"
                " \"plan_tokens_lua\": {\"value\": %.1f, \"unit\": \"tokens\"},\n"
                " \"plan_tokens_ratio\": {\"value\": %.2f, \"unit\": \"x\"},\n"
                " \"prompt_tokens_plan\": {\"value\": %.0f, \"unit\": \"tokens\"}}\n",
                ms_avg, lua_avg, lua_avg / ms_avg, prompt_avg);
        fclose(f);
    }
    for (int i = 0; i < n; i++)
        free(setups[i].plan);
    prompt_free(ps);
    registry_free(reg);
    return failed != 0;
}
