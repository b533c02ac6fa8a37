/*
 * Turns flights into scores. A flight whose LLM was never reached is not a
 * failure of the model: it is not scored at all, and eval reports it.
 */
#include "eval/score.h"

#include "eval/check.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double num(const cJSON *o, const char *key, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : def;
}

/* No plan text ever arrived and the mission failed in the LLM client: the
 * server was not reached, refused or never answered. */
static bool llm_unreached(const cJSON *report)
{
    const char *error = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(report, "error"));
    if (!error || strncmp(error, "the LLM failed", strlen("the LLM failed")) != 0) return false;
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(report, "plans"))
    {
        const char *s = cJSON_GetStringValue(p);
        if (s && *s) return false;
    }
    return true;
}

void evalscore_flight(evalrun *r, const char *out, int status, const char *stderr_tail,
                      const evalsuite_setup *setup)
{
    r->first_action_ms = NAN;
    cJSON *report = out ? cJSON_Parse(out) : NULL;
    if (!cJSON_IsObject(report)) {
        r->state = EVALRUN_NO_REPORT;
        snprintf(r->why, sizeof r->why, "no report (exit %d): %s", status,
                 stderr_tail ? stderr_tail : "");
        cJSON_Delete(report);
        return;
    }
    const cJSON *tokens = cJSON_GetObjectItemCaseSensitive(report, "tokens");
    r->tries = num(report, "tries", 0);
    r->replans = num(report, "replans", 0);
    r->violations = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(report, "violations"));
    r->first_action_ms = num(report, "first_action_ms", NAN);
    r->total_ms = num(report, "total_ms", 0);
    r->prompt_tokens = num(tokens, "prompt", 0);
    r->completion_tokens = num(tokens, "completion", 0);
    r->cached_tokens = num(report, "cached_tokens", 0);
    if (llm_unreached(report)) {
        r->state = EVALRUN_NO_LLM;
        snprintf(r->why, sizeof r->why, "%s",
                 cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(report, "error")));
    } else {
        r->state = EVALRUN_SCORED;
        r->success =
            evalcheck_judge(report, setup->scene, setup->check, r->why, sizeof r->why) == 0;
    }
    cJSON_Delete(report);
}

/* Length of the valid UTF-8 sequence at S, or 0 when it is not one. */
static size_t utf8_seq(const unsigned char *s)
{
    if (s[0] < 0x80) return 1;
    size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
    if (n == 0 || s[0] > 0xf4) return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    unsigned cp = n == 2   ? (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu)
                  : n == 3 ? (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu)
                           : (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 |
                                 (s[3] & 0x3fu);
    bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return n;
}

/* A string from outside (command line, directory names) as valid UTF-8:
 * each invalid byte becomes U+FFFD (SPEC §2). */
static void add_string(cJSON *o, const char *key, const char *s)
{
    size_t len = strlen(s);
    char *clean = malloc(3 * len + 1), *w = clean;
    if (!clean) return;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_seq(p);
        if (n) {
            memcpy(w, p, n);
            w += n;
            p += n;
        } else {
            memcpy(w, "\xef\xbf\xbd", 3);
            w += 3;
            p++;
        }
    }
    *w = '\0';
    cJSON_AddStringToObject(o, key, clean);
    free(clean);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the first N values (sorted in place); NAN when there are none. */
static double median(double *v, int n)
{
    if (n == 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct tally {
    int runs, success;
    double tries, replans, violations, prompt, completion, cached;
    double *first, *total;
    int n_first;
} tally;

static void tally_add(tally *t, const evalrun *r)
{
    t->runs++;
    t->success += r->success;
    t->tries += r->tries;
    t->replans += r->replans;
    t->violations += r->violations;
    t->prompt += r->prompt_tokens;
    t->completion += r->completion_tokens;
    t->cached += r->cached_tokens;
    if (!isnan(r->first_action_ms)) t->first[t->n_first++] = r->first_action_ms;
    t->total[t->runs - 1] = r->total_ms;
}

/* A number, or null for NAN (JSON has no NaN). */
static void add_num(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static void add_cost(cJSON *o, const tally *t, const evalscore_opts *opt)
{
    if (opt->price_in < 0 || opt->price_out < 0) return;
    add_num(o, "cost", (t->prompt * opt->price_in + t->completion * opt->price_out) / 1e6);
}

/* One task's figures, or the whole run's when NAME is NULL: the same keys
 * either way (SPEC §2 `eval --json`), "task" first for a task. */
static cJSON *tally_entry(const char *name, tally *t, const evalscore_opts *opt)
{
    cJSON *e = cJSON_CreateObject();
    double runs = t->runs ? t->runs : NAN;
    if (name) add_string(e, "task", name);
    cJSON_AddNumberToObject(e, "runs", t->runs);
    cJSON_AddNumberToObject(e, "success", t->success);
    add_num(e, "success_rate", t->success / runs);
    add_num(e, "tries_mean", t->tries / runs);
    add_num(e, "replans_mean", t->replans / runs);
    add_num(e, "first_action_ms_median", median(t->first, t->n_first));
    add_num(e, "total_ms_median", median(t->total, t->runs));
    cJSON_AddNumberToObject(e, "prompt_tokens", t->prompt);
    cJSON_AddNumberToObject(e, "completion_tokens", t->completion);
    cJSON_AddNumberToObject(e, "cached_tokens", t->cached);
    cJSON_AddNumberToObject(e, "violations", t->violations);
    add_cost(e, t, opt);
    return e;
}

cJSON *evalscore_document(const evalsuite *suite, const evalrun *runs, int n,
                          const evalscore_opts *o)
{
    size_t cap = (size_t)(n > 0 ? n : 1);
    tally all = {.first = malloc(cap * sizeof(double)), .total = malloc(cap * sizeof(double))};
    tally t = {.first = malloc(cap * sizeof(double)), .total = malloc(cap * sizeof(double))};
    cJSON *doc = cJSON_CreateObject(), *tasks = NULL;
    if (!all.first || !all.total || !t.first || !t.total || !doc) goto oom;
    add_string(doc, "model", o->model ? o->model : "");
    add_string(doc, "llm_url", o->llm_url ? o->llm_url : "");
    cJSON_AddNumberToObject(doc, "repeat", o->repeat);
    tasks = cJSON_AddArrayToObject(doc, "tasks");
    for (int k = 0; k < suite->n_tasks; k++) {
        t.runs = t.success = t.n_first = 0;
        t.tries = t.replans = t.violations = t.prompt = t.completion = t.cached = 0;
        for (int i = 0; i < n; i++) {
            if (runs[i].task != k || runs[i].state != EVALRUN_SCORED) continue;
            tally_add(&t, &runs[i]);
            tally_add(&all, &runs[i]);
        }
        cJSON_AddItemToArray(tasks, tally_entry(suite->tasks[k].name, &t, o));
    }
    cJSON_AddItemToObject(doc, "overall", tally_entry(NULL, &all, o));
    goto done;
oom:
    cJSON_Delete(doc);
    doc = NULL;
done:
    free(all.first);
    free(all.total);
    free(t.first);
    free(t.total);
    return doc;
}
