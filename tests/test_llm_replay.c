/*
 * Real servers' replies, replayed byte-exact (SPEC §8). Each file in
 * tests/llm/ is a recording of what one server family sends (its source is
 * named in the file): OpenAI, Azure OpenAI, Ollama, llama.cpp's server,
 * vLLM, OpenRouter, error pages. tests/fake_llm.py plays each one back over
 * loopback HTTP twice: in the chunks it was recorded in, and with every
 * byte its own HTTP chunk (so every event, line and UTF-8 sequence is split
 * at every byte boundary). The client must make of it what the file's
 * "expect" says: the status, the text handed over, the finish reason, the
 * usage, the attempts made, and an error message that quotes the server's
 * words briefly, as valid UTF-8, with one progress line per retry.
 */
#include "fake_llm.h"
#include "llm/llm.h"
#include "utf8.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct got {
    char text[8192];
    size_t len;
    int progress;
} got;

static int on_delta(void *ud, const char *text, size_t len)
{
    got *g = ud;
    if (g->len + len < sizeof g->text) {
        memcpy(g->text + g->len, text, len);
        g->len += len;
        g->text[g->len] = '\0';
    }
    return 0;
}

static void on_progress(void *ud, const char *line)
{
    got *g = ud;
    g->progress++;
    CHECK(strstr(line, "retrying") != NULL, "progress line: %s", line);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

static int num(const cJSON *o, const char *key, int dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valueint : dflt;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Checks one call's result against EXPECT. */
static void judge(const char *name, const char *split, const cJSON *expect, const llm_result *r,
                  const got *g)
{
    const char *status = str(expect, "status");
    CHECK(strcmp(llm_status_name(r->status), status) == 0, "%s (%s): status %s, want %s: %s", name,
          split, llm_status_name(r->status), status, r->error);
    const char *text = str(expect, "text");
    if (text) {
        CHECK(strcmp(r->text, text) == 0, "%s (%s): text [%s], want [%s]", name, split, r->text,
              text);
        /* What was handed over is what came, never a refusal or a tool call. */
        CHECK(strcmp(g->text, r->status == LLM_OK || g->len ? text : "") == 0,
              "%s (%s): delivered [%s]", name, split, g->text);
    }
    const char *finish = str(expect, "finish");
    if (finish)
        CHECK(strcmp(r->finish_reason, finish) == 0, "%s (%s): finish [%s], want [%s]", name, split,
              r->finish_reason, finish);
    int pt = num(expect, "prompt_tokens", -2);
    if (pt == -1) CHECK(!r->usage_known, "%s (%s): usage known", name, split);
    if (pt >= 0)
        CHECK(r->usage_known && r->prompt_tokens == pt &&
                  r->completion_tokens == num(expect, "completion_tokens", -1),
              "%s (%s): usage %d/%d (known %d)", name, split, r->prompt_tokens,
              r->completion_tokens, r->usage_known);
    int cached = num(expect, "cached_tokens", -1);
    if (cached >= 0)
        CHECK(r->cached_tokens == cached, "%s (%s): cached %d", name, split, r->cached_tokens);
    int attempts = num(expect, "attempts", 1);
    CHECK(r->attempts == attempts, "%s (%s): %d attempts, want %d: %s", name, split, r->attempts,
          attempts, r->error);
    CHECK(g->progress == r->attempts - 1, "%s (%s): %d progress lines for %d attempts", name, split,
          g->progress, r->attempts);
    CHECK(utf8_valid(r->error, strlen(r->error)), "%s (%s): error not UTF-8: %s", name, split,
          r->error);
    CHECK((r->status == LLM_OK) == (r->error[0] == '\0'), "%s (%s): error [%s]", name, split,
          r->error);
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(expect, "error_has"))
        CHECK(strstr(r->error, s->valuestring) != NULL, "%s (%s): error [%s] lacks [%s]", name,
              split, r->error, s->valuestring);
    cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(expect, "error_lacks"))
        CHECK(strstr(r->error, s->valuestring) == NULL, "%s (%s): error [%s] has [%s]", name, split,
              r->error, s->valuestring);
    int max = num(expect, "error_max", 0);
    if (max)
        CHECK(strlen(r->error) <= (size_t)max, "%s (%s): error of %zu bytes", name, split,
              strlen(r->error));
}

static void replay(const fake_llm *f, const char *name, const cJSON *rec, const char *split)
{
    llm_config cfg;
    llm_config_defaults(&cfg);
    snprintf(cfg.base_url, sizeof cfg.base_url, "%s", f->base_url);
    snprintf(cfg.model, sizeof cfg.model, "m");
    cfg.max_retries = 2;
    cfg.backoff_ms = 10;
    cfg.stream = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "stream"));
    got g = {0};
    cfg.progress = on_progress;
    cfg.progress_ud = &g;
    char key[512];
    snprintf(key, sizeof key, "[%s %s]", name, split);
    llm_message m[] = {{"user", key}};
    llm_request req = {.messages = m, .nmessages = 1, .on_delta = on_delta, .ud = &g};
    llm_result r;
    llm_call(&cfg, &req, &r);
    judge(name, split, cJSON_GetObjectItemCaseSensitive(rec, "expect"), &r, &g);
    llm_result_free(&r);
}

int main(void)
{
    char dir[1024];
    const char *src = getenv("SRC");
    snprintf(dir, sizeof dir, "%s/tests/llm", src && *src ? src : ".");
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return 1;
    }
    /* One server for every recording: each request names the recording and
     * the split it wants in its message, and "match" picks the response. */
    cJSON *script = cJSON_CreateObject();
    cJSON *resp = cJSON_AddArrayToObject(script, "responses");
    cJSON *recs = cJSON_CreateObject();
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
        char path[2048], name[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(name, sizeof name, "%.*s", (int)(n - 5), e->d_name);
        char *text = slurp(path);
        cJSON *rec = text ? cJSON_Parse(text) : NULL;
        free(text);
        CHECK(rec && str(rec, "source") && *str(rec, "source"), "%s: no source named", path);
        if (!rec) continue;
        cJSON_AddItemToObject(recs, name, rec);
        for (int i = 0; i < 2; i++) {
            const char *split = i ? "bytes" : "recorded";
            char key[512];
            snprintf(key, sizeof key, "[%s %s]", name, split);
            cJSON *r = cJSON_CreateObject();
            cJSON_AddStringToObject(r, "match", key);
            cJSON_AddStringToObject(r, "replay", path);
            cJSON_AddStringToObject(r, "split", split);
            cJSON_AddItemToArray(resp, r);
        }
    }
    closedir(d);
    CHECK(cJSON_GetArraySize(recs) >= 20, "only %d recordings", cJSON_GetArraySize(recs));
    char *js = cJSON_PrintUnformatted(script);
    fake_llm f;
    if (fake_llm_start(&f, js, 0) < 0) return 1;
    cJSON *rec;
    cJSON_ArrayForEach(rec, recs)
    {
        replay(&f, rec->string, rec, "recorded");
        replay(&f, rec->string, rec, "bytes");
    }
    fake_llm_stop(&f);
    free(js);
    cJSON_Delete(script);
    cJSON_Delete(recs);
    if (!failures) printf("every recording read as expected\n");
    return failures ? 1 : 0;
}
