/*
 * Stream vs batch response time of the LLM client, against the fake server
 * streaming at a fixed token rate (default 20 tokens/s, like a hosted model).
 *
 * For each plan it measures, streaming and not:
 *   ttft   call start to the first content byte;
 *   first  call start to the first complete top-level statement of the
 *          cleaned plan (its first ';' or the end of the reply) — the
 *          earliest moment a stream interpreter could start flying;
 *   total  call start to the end of the reply.
 * In batch mode nothing can run before the whole reply is in, so "first"
 * equals "total". The MiniSpec parser and the drone are not involved; the
 * mission-level benchmark measures the real first action.
 *
 * Usage: bench_llm [--rate TOKENS_PER_S] [--first-token-ms MS] [--runs N] [--json] [OUT.json]
 */
#include "../fake_llm.h"
#include "llm/llm.h"
#include "llm/plan_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const plans[] = {
    "g('chair_1')",
    "4{mf(100);tc(90)}",
    "```minispec\ntc(180);?iv('dog')==True{l('Yes, there is a dog');->True}l('No dog behind "
    "me')\n```",
    "s('bottle');?iv('bottle')==True{g('bottle');->True}l('I could not find a bottle')",
    "_1=sa('Which object here is edible? Answer with its name, or False');?_1!=False{g(_1);->True}"
    "l('Nothing edible found')",
    "response: 8{?iv('person')==True{g('person');l('found you');->True}tc(45)};l('nobody here')",
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct probe {
    double t0, first_stmt;
    plan_stream ps;
} probe;

static int on_plan(void *ud, const char *text, size_t len)
{
    probe *p = ud;
    if (p->first_stmt < 0 && memchr(text, ';', len)) p->first_stmt = now_ms() - p->t0;
    return 0;
}

static int on_delta(void *ud, const char *text, size_t len)
{
    probe *p = ud;
    plan_stream_feed(&p->ps, text, len, on_plan, p);
    return 0;
}

int main(int argc, char **argv)
{
    double rate = 20, first_token_ms = 0;
    int runs = 3;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rate") && i + 1 < argc)
            rate = atof(argv[++i]);
        else if (!strcmp(argv[i], "--first-token-ms") && i + 1 < argc)
            first_token_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (argv[i][0] != '-') { /* aloft bench: the file the JSON goes to */
            json = 1;
            if (!freopen(argv[i], "w", stdout)) {
                perror(argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: bench_llm [--rate TPS] [--first-token-ms MS] [--runs N] "
                            "[--json] [OUT.json]\n");
            return 2;
        }
    }
    int nplans = (int)(sizeof plans / sizeof plans[0]);

    /* one scripted response per request: each plan, runs times, stream and batch */
    size_t cap = 1 << 16;
    char *script = malloc(cap);
    size_t len = (size_t)snprintf(script, cap, "[");
    for (int mode = 0; mode < 2; mode++)
        for (int p = 0; p < nplans; p++)
            for (int r = 0; r < runs; r++) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "content", plans[p]);
                cJSON_AddNumberToObject(o, "first_token_ms", first_token_ms);
                char *s = cJSON_PrintUnformatted(o);
                len += (size_t)snprintf(script + len, cap - len, "%s%s", len > 1 ? "," : "", s);
                cJSON_free(s);
                cJSON_Delete(o);
            }
    snprintf(script + len, cap - len, "]");

    fake_llm f;
    if (fake_llm_start(&f, script, rate) < 0) return 1;
    free(script);
    llm_config cfg;
    llm_config_defaults(&cfg);
    snprintf(cfg.base_url, sizeof cfg.base_url, "%s", f.base_url);
    snprintf(cfg.model, sizeof cfg.model, "fake");
    llm_message msg = {"user", "plan"};

    double sum[2][3] = {{0}};
    if (!json)
        printf("fake LLM at %.0f tokens/s, first token after %.0f ms, %d runs\n"
               "%-4s %-6s %8s %8s %8s %7s\n",
               rate, first_token_ms, runs, "plan", "mode", "ttft", "first", "total", "tokens");
    for (int mode = 0; mode < 2; mode++) {
        cfg.stream = mode == 0;
        for (int p = 0; p < nplans; p++) {
            double acc[3] = {0};
            int tokens = 0;
            for (int r = 0; r < runs; r++) {
                probe pr = {.first_stmt = -1};
                plan_stream_init(&pr.ps);
                llm_request req = {&msg, 1, on_delta, &pr, NULL, 0, 0};
                llm_result res;
                pr.t0 = now_ms();
                if (llm_call(&cfg, &req, &res) < 0) {
                    fprintf(stderr, "bench_llm: %s\n", res.error);
                    llm_result_free(&res);
                    fake_llm_stop(&f);
                    return 1;
                }
                plan_stream_finish(&pr.ps, on_plan, &pr);
                double first = pr.first_stmt >= 0 ? pr.first_stmt : res.latency_ms;
                if (first > res.latency_ms) first = res.latency_ms;
                acc[0] += res.ttft_ms;
                acc[1] += first;
                acc[2] += res.latency_ms;
                tokens = res.completion_tokens;
                llm_result_free(&res);
            }
            for (int k = 0; k < 3; k++) {
                acc[k] /= runs;
                sum[mode][k] += acc[k] / nplans;
            }
            if (!json)
                printf("%-4d %-6s %8.1f %8.1f %8.1f %7d\n", p + 1, cfg.stream ? "stream" : "batch",
                       acc[0], acc[1], acc[2], tokens);
        }
    }
    fake_llm_stop(&f);
    double gain = 100.0 * (1.0 - sum[0][1] / sum[1][1]);
    if (json)
        printf("{\"rate\":%g,\"first_token_ms\":%g,\"runs\":%d,"
               "\"stream\":{\"ttft_ms\":%.1f,\"first_statement_ms\":%.1f,\"total_ms\":%.1f},"
               "\"batch\":{\"ttft_ms\":%.1f,\"first_statement_ms\":%.1f,\"total_ms\":%.1f},"
               "\"first_statement_reduction_pct\":%.1f}\n",
               rate, first_token_ms, runs, sum[0][0], sum[0][1], sum[0][2], sum[1][0], sum[1][1],
               sum[1][2], gain);
    else
        printf("mean  stream: first statement %.1f ms, total %.1f ms; batch: %.1f ms\n"
               "first statement ready %.1f%% sooner when streaming\n",
               sum[0][1], sum[0][2], sum[1][2], gain);
    return 0;
}
