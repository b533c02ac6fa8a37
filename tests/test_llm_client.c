/*
 * The LLM client (host/llm/llm.h) against the scripted fake server
 * (tests/fake_llm.py) over real HTTP on 127.0.0.1: replies, usage, retries,
 * faults, cancellation.
 */
#include "fake_llm.h"
#include "llm/llm.h"
#include "llm/plan_text.h"
#include "llm/prompt.h"
#include "llm/retry_after.h"
#include "loader/loader.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const llm_message msgs[] = {
    {"system", "You write MiniSpec plans."},
    {"user", "find the apple"},
};

/* A config for the fake server: fast backoff so retry tests stay quick. */
static void config_for(llm_config *c, const fake_llm *f)
{
    llm_config_defaults(c);
    snprintf(c->base_url, sizeof c->base_url, "%s", f->base_url);
    snprintf(c->api_key, sizeof c->api_key, "test-key");
    snprintf(c->model, sizeof c->model, "fake-model");
    c->backoff_ms = 20;
    c->idle_timeout_ms = 5000;
    c->total_timeout_ms = 60000;
}

typedef struct deltas {
    char text[4096];
    size_t len;
    int calls;
    double first_ms, last_ms;
    int abort_after; /* return non-zero on this call (1-based); 0 = never */
} deltas;

static int on_delta(void *ud, const char *text, size_t len)
{
    deltas *d = ud;
    double t = now_ms();
    if (d->calls == 0) d->first_ms = t;
    d->last_ms = t;
    if (d->len + len < sizeof d->text) {
        memcpy(d->text + d->len, text, len);
        d->len += len;
        d->text[d->len] = '\0';
    }
    d->calls++;
    return d->abort_after && d->calls >= d->abort_after;
}

/* Runs one call against a fresh server with SCRIPT. */
typedef struct run {
    fake_llm f;
    llm_config cfg;
    llm_result res;
    deltas d;
    atomic_bool cancel;
    long budget_ms; /* the request's budget_ms */
} run;

static int start(run *r, const char *script)
{
    memset(r, 0, sizeof *r);
    if (fake_llm_start(&r->f, script, 0) < 0) {
        failures++;
        return -1;
    }
    config_for(&r->cfg, &r->f);
    return 0;
}

static void call(run *r)
{
    llm_request req = {msgs, 2, on_delta, &r->d, &r->cancel, r->budget_ms, 0};
    llm_call(&r->cfg, &req, &r->res);
}

static void finish(run *r)
{
    llm_result_free(&r->res);
    fake_llm_stop(&r->f);
}

static const char *str_at(const cJSON *o, const char *path1, const char *path2)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, path1);
    if (path2) v = cJSON_GetObjectItemCaseSensitive(v, path2);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_stream_delivers_deltas_as_they_arrive_with_usage(void)
{
    run r;
    /* 12 tokens at 10 tokens/s: about 1.1 s from first to last token */
    if (start(&r, "[{\"content\":\"scan('apple');approach();log('found it')\","
                  "\"token_rate\":10}]") < 0)
        return;
    call(&r);
    CHECK(r.res.status == LLM_OK, "status %s: %s", llm_status_name(r.res.status), r.res.error);
    CHECK(strcmp(r.res.text, "scan('apple');approach();log('found it')") == 0, "text [%s]",
          r.res.text);
    CHECK(strcmp(r.d.text, r.res.text) == 0, "deltas [%s] differ from the text", r.d.text);
    CHECK(r.d.calls >= 5, "only %d delta calls: the reply was not streamed", r.d.calls);
    CHECK(r.d.last_ms - r.d.first_ms > 300, "deltas arrived together (%.0f ms apart)",
          r.d.last_ms - r.d.first_ms);
    CHECK(r.res.usage_known && r.res.prompt_tokens > 0 && r.res.completion_tokens >= 10,
          "usage %d/%d (known %d)", r.res.prompt_tokens, r.res.completion_tokens,
          r.res.usage_known);
    CHECK(r.res.ttft_ms >= 0 && r.res.ttft_ms < r.res.latency_ms, "ttft %.1f latency %.1f",
          r.res.ttft_ms, r.res.latency_ms);
    CHECK(r.res.attempts == 1 && r.res.http_status == 200, "attempts %d http %d", r.res.attempts,
          r.res.http_status);
    CHECK(strcmp(r.res.finish_reason, "stop") == 0, "finish [%s]", r.res.finish_reason);

    cJSON *reqs = fake_llm_requests(&r.f);
    const cJSON *q = cJSON_GetArrayItem(reqs, 0);
    const cJSON *body = cJSON_GetObjectItemCaseSensitive(q, "body");
    CHECK(cJSON_GetArraySize(reqs) == 1, "%d requests", cJSON_GetArraySize(reqs));
    CHECK(str_at(q, "auth", NULL) && strcmp(str_at(q, "auth", NULL), "Bearer test-key") == 0,
          "Authorization header missing");
    CHECK(str_at(body, "model", NULL) && strcmp(str_at(body, "model", NULL), "fake-model") == 0,
          "model not sent");
    CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(body, "stream")), "stream not asked");
    CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
              cJSON_GetObjectItemCaseSensitive(body, "stream_options"), "include_usage")),
          "usage not asked");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(body, "messages");
    CHECK(cJSON_GetArraySize(m) == 2 &&
              strcmp(str_at(cJSON_GetArrayItem(m, 0), "role", NULL), "system") == 0 &&
              strcmp(str_at(cJSON_GetArrayItem(m, 1), "content", NULL), "find the apple") == 0,
          "messages not sent as given");
    cJSON_Delete(reqs);
    finish(&r);
}

static void test_non_streaming_reply_has_text_and_usage(void)
{
    run r;
    if (start(&r, "[{\"content\":\"tc(90);a\"}]") < 0) return;
    r.cfg.stream = false;
    call(&r);
    CHECK(r.res.status == LLM_OK, "status %s: %s", llm_status_name(r.res.status), r.res.error);
    CHECK(strcmp(r.res.text, "tc(90);a") == 0, "text [%s]", r.res.text);
    CHECK(r.d.calls == 1 && strcmp(r.d.text, "tc(90);a") == 0, "callback %d [%s]", r.d.calls,
          r.d.text);
    CHECK(r.res.usage_known && r.res.completion_tokens > 0, "usage missing");
    cJSON *reqs = fake_llm_requests(&r.f);
    const cJSON *body = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(reqs, 0), "body");
    CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(body, "stream")), "stream was asked");
    CHECK(!cJSON_GetObjectItemCaseSensitive(body, "stream_options"), "stream_options sent");
    cJSON_Delete(reqs);
    finish(&r);
}

static void test_rate_limit_then_success_honours_retry_after(void)
{
    run r;
    if (start(&r, "[{\"fault\":\"429\",\"retry_after\":1},{\"content\":\"a\"}]") < 0) return;
    call(&r);
    CHECK(r.res.status == LLM_OK, "status %s: %s", llm_status_name(r.res.status), r.res.error);
    CHECK(r.res.attempts == 2, "attempts %d", r.res.attempts);
    CHECK(strcmp(r.res.text, "a") == 0, "text [%s]", r.res.text);
    cJSON *reqs = fake_llm_requests(&r.f);
    CHECK(cJSON_GetArraySize(reqs) == 2, "%d requests", cJSON_GetArraySize(reqs));
    double t0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(reqs, 0), "t")->valuedouble;
    double t1 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(reqs, 1), "t")->valuedouble;
    /* backoff_ms is 20: only Retry-After explains a wait of a second */
    CHECK(t1 - t0 >= 0.95, "retried after %.3f s, Retry-After was 1 s", t1 - t0);
    cJSON_Delete(reqs);
    finish(&r);
}

static void test_persistent_5xx_fails_after_bounded_retries(void)
{
    run r;
    if (start(&r, "[{\"fault\":\"503\",\"times\":100}]") < 0) return;
    call(&r);
    CHECK(r.res.status == LLM_E_SERVER, "status %s", llm_status_name(r.res.status));
    CHECK(r.res.attempts == 4 && fake_llm_count(&r.f) == 4, "attempts %d, server saw %d",
          r.res.attempts, fake_llm_count(&r.f));
    CHECK(r.res.http_status == 503, "http %d", r.res.http_status);
    CHECK(strstr(r.res.error, "503") && strstr(r.res.error, "4 attempts") &&
              strstr(r.res.error, "internal error (injected)"),
          "unclear message: %s", r.res.error);
    CHECK(r.d.calls == 0, "callback called on an error");
    finish(&r);
}

static void test_unauthorized_fails_at_once(void)
{
    run r;
    if (start(&r, "[{\"fault\":\"401\",\"times\":10}]") < 0) return;
    call(&r);
    CHECK(r.res.status == LLM_E_AUTH, "status %s", llm_status_name(r.res.status));
    CHECK(r.res.attempts == 1 && fake_llm_count(&r.f) == 1, "retried a 401");
    CHECK(strstr(r.res.error, "401") && strstr(r.res.error, "OPENAI_API_KEY") &&
              strstr(r.res.error, "invalid API key"),
          "unclear message: %s", r.res.error);
    CHECK(!strstr(r.res.error, "test-key"), "the key leaked into the message");
    finish(&r);
}

static void test_not_found_fails_at_once_naming_the_model(void)
{
    run r;
    if (start(&r, "[{\"fault\":\"404\",\"times\":10}]") < 0) return;
    call(&r);
    CHECK(r.res.status == LLM_E_NOT_FOUND, "status %s", llm_status_name(r.res.status));
    CHECK(r.res.attempts == 1, "retried a 404");
    CHECK(strstr(r.res.error, "fake-model"), "model not named: %s", r.res.error);
    finish(&r);
}

static void test_truncated_stream_is_detected_not_retried(void)
{
    static const char *const scripts[] = {
        "[{\"content\":\"scan('apple');approach()\",\"fault\":\"truncate\",\"truncate_after\":3},"
        "{\"content\":\"a\"}]",
        "[{\"content\":\"scan('apple');approach()\",\"fault\":\"truncate_clean\","
        "\"truncate_after\":3},{\"content\":\"a\"}]",
    };
    for (int i = 0; i < 2; i++) {
        run r;
        if (start(&r, scripts[i]) < 0) return;
        call(&r);
        CHECK(r.res.status == LLM_E_TRUNCATED, "script %d: status %s: %s", i,
              llm_status_name(r.res.status), r.res.error);
        CHECK(r.res.attempts == 1, "script %d: retried after content was delivered", i);
        CHECK(strcmp(r.res.text, "scan('apple'") == 0 && strcmp(r.d.text, r.res.text) == 0,
              "script %d: partial text [%s] deltas [%s]", i, r.res.text, r.d.text);
        finish(&r);
    }
}

static void test_non_streaming_faults(void)
{
    run r;
    /* half a body, then the connection drops: nothing was delivered, so retry */
    if (start(&r, "[{\"content\":\"s,apple;a\",\"fault\":\"truncate\"},{\"content\":\"a\"}]") < 0)
        return;
    r.cfg.stream = false;
    call(&r);
    CHECK(r.res.status == LLM_OK && r.res.attempts == 2 && strcmp(r.res.text, "a") == 0,
          "cut body: status %s attempts %d [%s]: %s", llm_status_name(r.res.status), r.res.attempts,
          r.res.text, r.res.error);
    finish(&r);

    /* a server that never answers hits the total timeout */
    if (start(&r, "[{\"content\":\"a\",\"fault\":\"stall\",\"stall_seconds\":60}]") < 0) return;
    r.cfg.stream = false;
    r.cfg.total_timeout_ms = 1000;
    call(&r);
    CHECK(r.res.status == LLM_E_TIMEOUT, "stalled batch: status %s: %s",
          llm_status_name(r.res.status), r.res.error);
    CHECK(r.res.latency_ms < 30000, "total timeout took %.0f ms", r.res.latency_ms);
    finish(&r);
}

static void test_stream_cut_before_any_content_is_retried(void)
{
    run r;
    if (start(&r, "[{\"content\":\"a\",\"fault\":\"truncate\",\"truncate_after\":0},"
                  "{\"content\":\"s,apple\"}]") < 0)
        return;
    call(&r);
    CHECK(r.res.status == LLM_OK, "status %s: %s", llm_status_name(r.res.status), r.res.error);
    CHECK(r.res.attempts == 2, "attempts %d", r.res.attempts);
    CHECK(strcmp(r.d.text, "s,apple") == 0, "deltas [%s]", r.d.text);
    finish(&r);
}

static void test_stalled_stream_hits_the_idle_timeout(void)
{
    run r;
    if (start(&r, "[{\"content\":\"scan('apple');a\",\"fault\":\"stall\",\"stall_after\":2,"
                  "\"stall_seconds\":60}]") < 0)
        return;
    r.cfg.idle_timeout_ms = 1000;
    call(&r);
    CHECK(r.res.status == LLM_E_TIMEOUT, "status %s: %s", llm_status_name(r.res.status),
          r.res.error);
    CHECK(strstr(r.res.error, "idle"), "unclear message: %s", r.res.error);
    CHECK(r.res.attempts == 1, "retried after content was delivered");
    CHECK(r.res.latency_ms >= 1000 && r.res.latency_ms < 30000, "latency %.0f ms",
          r.res.latency_ms);
    CHECK(strcmp(r.res.text, "scan('ap") == 0, "partial text [%s]", r.res.text);
    finish(&r);
}

static void test_malformed_json_is_a_protocol_error(void)
{
    for (int stream = 0; stream < 2; stream++) {
        run r;
        if (start(&r, "[{\"content\":\"s,apple;a\",\"fault\":\"malformed\",\"truncate_after\":1,"
                      "\"times\":5}]") < 0)
            return;
        r.cfg.stream = stream;
        call(&r);
        CHECK(r.res.status == LLM_E_PROTOCOL, "stream %d: status %s: %s", stream,
              llm_status_name(r.res.status), r.res.error);
        CHECK(strstr(r.res.error, "malformed JSON"), "stream %d: message %s", stream, r.res.error);
        CHECK(r.res.attempts == 1, "stream %d: attempts %d", stream, r.res.attempts);
        finish(&r);
    }
}

static void test_error_object_mid_stream_is_reported(void)
{
    run r;
    if (start(&r, "[{\"content\":\"s,apple;a\",\"fault\":\"stream_error\",\"truncate_after\":1}]") <
        0)
        return;
    call(&r);
    CHECK(r.res.status == LLM_E_SERVER, "status %s", llm_status_name(r.res.status));
    CHECK(strstr(r.res.error, "model overloaded"), "message %s", r.res.error);
    CHECK(r.res.attempts == 1, "retried after content");
    finish(&r);
}

static void test_prose_reply_arrives_and_is_recognised(void)
{
    run r;
    if (start(&r, "[{\"content\":\"I am sorry, but I cannot see a kitchen from here.\"}]") < 0)
        return;
    call(&r);
    CHECK(r.res.status == LLM_OK, "status %s: %s", llm_status_name(r.res.status), r.res.error);
    char *plan = NULL;
    size_t len = 0;
    plan_text_status st = plan_text_clean(r.res.text, r.res.len, &plan, &len);
    CHECK(st == PLAN_TEXT_PROSE && len == 0, "prose taken for a plan: %s [%s]",
          plan_text_status_name(st), plan ? plan : "");
    free(plan);
    finish(&r);
}

static void test_callback_can_abort_the_transfer(void)
{
    run r;
    if (start(&r, "[{\"content\":\"scan('apple');approach();tc(90);tc(90)\",\"token_rate\":20}]") <
        0)
        return;
    r.d.abort_after = 2;
    call(&r);
    CHECK(r.res.status == LLM_E_ABORTED, "status %s", llm_status_name(r.res.status));
    CHECK(r.d.calls == 2 && r.res.attempts == 1, "calls %d attempts %d", r.d.calls, r.res.attempts);
    finish(&r);
}

static void *cancel_later(void *arg)
{
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    atomic_store((atomic_bool *)arg, true);
    return NULL;
}

static void test_cancel_flag_stops_a_call_in_flight(void)
{
    run r;
    /* 200 tokens at 5 tokens/s would take 40 s */
    char script[2048] = "[{\"token_rate\":5,\"content\":\"";
    for (int i = 0; i < 100; i++)
        strcat(script, "tc(9);");
    strcat(script, "\"}]");
    if (start(&r, script) < 0) return;
    pthread_t th;
    pthread_create(&th, NULL, cancel_later, &r.cancel);
    call(&r);
    pthread_join(th, NULL);
    CHECK(r.res.status == LLM_E_CANCELLED, "status %s", llm_status_name(r.res.status));
    CHECK(r.res.latency_ms < 20000, "cancel took %.0f ms", r.res.latency_ms);
    finish(&r);

    /* also during a backoff wait */
    if (start(&r, "[{\"fault\":\"503\",\"times\":10}]") < 0) return;
    r.cfg.backoff_ms = 60000;
    r.cfg.backoff_max_ms = 60000;
    r.cfg.retry_after_max_ms = 120000;
    r.cfg.total_timeout_ms = 300000;
    pthread_create(&th, NULL, cancel_later, &r.cancel);
    call(&r);
    pthread_join(th, NULL);
    CHECK(r.res.status == LLM_E_CANCELLED, "backoff: status %s", llm_status_name(r.res.status));
    CHECK(r.res.latency_ms < 20000, "backoff cancel took %.0f ms", r.res.latency_ms);
    finish(&r);
}

/* The server ended the reply before its end (SPEC §7, §8): never a reply. */
static void test_cut_replies_are_truncated(void)
{
    static const struct {
        const char *fault;
        int after;
        const char *text, *finish, *says;
    } cases[] = {
        {"length", 3, "scan('apple'", "length", "finish_reason \"length\""},
        {"content_filter", 3, "scan('apple'", "content_filter", "content_filter"},
        {"no_finish", 3, "scan('apple'", "", "[DONE] came without one"},
        /* nothing came: still not retried, the server ended it on purpose */
        {"content_filter", 0, "", "content_filter", "content_filter"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run r;
        char script[256];
        snprintf(script, sizeof script,
                 "[{\"content\":\"scan('apple');approach()\",\"fault\":\"%s\","
                 "\"truncate_after\":%d},{\"content\":\"a\"}]",
                 cases[i].fault, cases[i].after);
        if (start(&r, script) < 0) return;
        call(&r);
        CHECK(r.res.status == LLM_E_TRUNCATED, "%s/%d: status %s: %s", cases[i].fault,
              cases[i].after, llm_status_name(r.res.status), r.res.error);
        CHECK(strstr(r.res.error, cases[i].says), "%s: unclear message: %s", cases[i].fault,
              r.res.error);
        CHECK(strcmp(r.res.text, cases[i].text) == 0 &&
                  strcmp(r.res.finish_reason, cases[i].finish) == 0,
              "%s: text [%s] finish [%s]", cases[i].fault, r.res.text, r.res.finish_reason);
        CHECK(r.res.attempts == 1, "%s/%d: %d attempts", cases[i].fault, cases[i].after,
              r.res.attempts);
        finish(&r);
    }

    /* Not streamed: the cut text is kept for the caller to read but never
     * handed to the delta callback as a reply. */
    run r;
    if (start(&r, "[{\"content\":\"scan('apple');approach()\",\"fault\":\"length\","
                  "\"truncate_after\":3},{\"content\":\"a\"}]") < 0)
        return;
    r.cfg.stream = false;
    call(&r);
    CHECK(r.res.status == LLM_E_TRUNCATED && strstr(r.res.error, "\"length\""),
          "batch: status %s: %s", llm_status_name(r.res.status), r.res.error);
    CHECK(strcmp(r.res.text, "scan('apple'") == 0 && r.d.calls == 0 && r.res.attempts == 1,
          "batch: text [%s], %d callbacks, %d attempts", r.res.text, r.d.calls, r.res.attempts);
    finish(&r);
}

/* One 8 MiB cap for streams too: a body of exactly 8 MiB passes, one byte
 * more is refused. */
static void test_stream_size_cap(void)
{
    static const long sizes[] = {8L << 20, (8L << 20) + 1};
    for (int i = 0; i < 2; i++) {
        run r;
        char script[256];
        snprintf(script, sizeof script,
                 "[{\"content\":\"tc(10)\",\"fault\":\"big\",\"big_bytes\":%ld}]", sizes[i]);
        if (start(&r, script) < 0) return;
        r.cfg.max_retries = 0;
        call(&r);
        if (i == 0)
            CHECK(r.res.status == LLM_OK && strcmp(r.res.text, "tc(10)") == 0,
                  "8 MiB: status %s: %s", llm_status_name(r.res.status), r.res.error);
        else
            CHECK(r.res.status == LLM_E_PROTOCOL && strstr(r.res.error, "larger than 8 MiB"),
                  "8 MiB + 1: status %s: %s", llm_status_name(r.res.status), r.res.error);
        finish(&r);
    }
}

static void test_retry_after_is_read_without_overflow(void)
{
    static const struct {
        const char *v;
        long ms;
    } cases[] = {
        {"0", 0},
        {"1", 1000},
        {" 2 \r\n", 2000},
        {"86399", 86399000L},
        {"86400", LLM_RETRY_AFTER_CAP_MS},
        {"9223372036854775807", LLM_RETRY_AFTER_CAP_MS},  /* 2^63 - 1 */
        {"9223372036854775808", LLM_RETRY_AFTER_CAP_MS},  /* 2^63 */
        {"18446744073709551616", LLM_RETRY_AFTER_CAP_MS}, /* 2^64 */
        {"0000000000000000000000000000000000000000000000000000000000000000000000000003", 3000},
        {"99999999999999999999999999999999999999999999999999999999999999999999999999999",
         LLM_RETRY_AFTER_CAP_MS},
        {"-1", -1},
        {"+5", -1},
        {"1.5", -1},
        {"5s", -1},
        {"garbage", -1},
        {"", -1},
        {"   ", -1},
        /* the date form, against NOW = Sun, 06 Nov 1994 08:49:37 GMT */
        {"Sun, 06 Nov 1994 08:49:47 GMT", 10000},
        {"Sun, 06 Nov 1994 08:00:00 GMT", 0},
        {"Fri, 31 Dec 9999 23:59:59 GMT", LLM_RETRY_AFTER_CAP_MS},
        {"Sun, 06 Nov 1994 08:49:47 GMT and a very long tail after the date ...", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long ms = llm_retry_after_ms(cases[i].v, strlen(cases[i].v), (time_t)784111777);
        CHECK(ms == cases[i].ms, "Retry-After [%s]: %ld ms, expected %ld", cases[i].v, ms,
              cases[i].ms);
    }

    /* From a real 429: a huge value is refused at once, never waited for
     * (nor wrapped into a short or negative wait); an unreadable one falls
     * back to the backoff (20 ms here). */
    static const char *const huge[] = {"9223372036854775808", "18446744073709551616",
                                       "99999999999999999999999999999"};
    for (int i = 0; i < 3; i++) {
        run r;
        char script[256];
        snprintf(script, sizeof script,
                 "[{\"fault\":\"429\",\"retry_after\":\"%s\"},{\"content\":\"a\"}]", huge[i]);
        if (start(&r, script) < 0) return;
        call(&r);
        CHECK(r.res.status == LLM_E_RATE && r.res.attempts == 1 &&
                  strstr(r.res.error, "longer than allowed"),
              "Retry-After %s: status %s, %d attempts: %s", huge[i], llm_status_name(r.res.status),
              r.res.attempts, r.res.error);
        finish(&r);
    }
    static const char *const unreadable[] = {"-1", "garbage", "1e9"};
    for (int i = 0; i < 3; i++) {
        run r;
        char script[256];
        snprintf(script, sizeof script,
                 "[{\"fault\":\"429\",\"retry_after\":\"%s\"},{\"content\":\"a\"}]", unreadable[i]);
        if (start(&r, script) < 0) return;
        call(&r);
        /* generous: a fallback to the 20 ms backoff, not a wait of seconds */
        CHECK(r.res.status == LLM_OK && r.res.attempts == 2 && r.res.latency_ms < 5000,
              "Retry-After %s: status %s, %d attempts, %.0f ms: %s", unreadable[i],
              llm_status_name(r.res.status), r.res.attempts, r.res.latency_ms, r.res.error);
        finish(&r);
    }
}

/* The caller's budget (the mission's remaining time) bounds the whole call:
 * a trickling stream, a Retry-After and a backoff that would outlast it. */
static void test_budget_bounds_the_call(void)
{
    run r;
    /* 300 tokens at 5 tokens/s: a minute of trickle, never idle */
    char script[4096] = "[{\"token_rate\":5,\"content\":\"";
    for (int i = 0; i < 150; i++)
        strcat(script, "tc(9);");
    strcat(script, "\"}]");
    if (start(&r, script) < 0) return;
    r.budget_ms = 1000;
    call(&r);
    CHECK(r.res.status == LLM_E_TIMEOUT && strstr(r.res.error, "1000 ms") &&
              strstr(r.res.error, "time left"),
          "trickle: status %s: %s", llm_status_name(r.res.status), r.res.error);
    /* 1 s budget; up to 2 s more for a loaded test machine */
    CHECK(r.res.latency_ms >= 950 && r.res.latency_ms < 3000, "trickle: ended after %.0f ms",
          r.res.latency_ms);
    CHECK(r.d.calls > 0, "the trickle did arrive");
    finish(&r);

    if (start(&r, "[{\"fault\":\"429\",\"retry_after\":5},{\"content\":\"a\"}]") < 0) return;
    r.budget_ms = 1500;
    call(&r);
    CHECK(r.res.status == LLM_E_RATE && strstr(r.res.error, "no time left") &&
              r.res.latency_ms < 1500,
          "Retry-After beyond the budget: status %s after %.0f ms: %s",
          llm_status_name(r.res.status), r.res.latency_ms, r.res.error);
    finish(&r);

    if (start(&r, "[{\"fault\":\"503\",\"times\":10}]") < 0) return;
    r.cfg.backoff_ms = 10000;
    r.budget_ms = 1500;
    call(&r);
    CHECK(r.res.status == LLM_E_SERVER && r.res.attempts == 1 && r.res.latency_ms < 1500,
          "backoff beyond the budget: status %s, %d attempts after %.0f ms",
          llm_status_name(r.res.status), r.res.attempts, r.res.latency_ms);
    finish(&r);
}

/* Cancel while the TCP connection is still being set up: a listener whose
 * accept queue is full leaves further SYNs unanswered. */
static void test_cancel_while_connecting(void)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) || listen(lfd, 0) ||
        getsockname(lfd, (struct sockaddr *)&sa, &sl)) {
        CHECK(0, "listener");
        return;
    }
    int fill[4];
    for (int i = 0; i < 4; i++) { /* fill the accept queue */
        fill[i] = socket(AF_INET, SOCK_STREAM, 0);
        fcntl(fill[i], F_SETFL, O_NONBLOCK);
        connect(fill[i], (struct sockaddr *)&sa, sizeof sa);
    }
    struct timespec settle = {0, 200 * 1000 * 1000};
    nanosleep(&settle, NULL);
    run r;
    memset(&r, 0, sizeof r);
    llm_config_defaults(&r.cfg);
    snprintf(r.cfg.base_url, sizeof r.cfg.base_url, "http://127.0.0.1:%d/v1", ntohs(sa.sin_port));
    snprintf(r.cfg.model, sizeof r.cfg.model, "m");
    pthread_t th;
    pthread_create(&th, NULL, cancel_later, &r.cancel); /* after 300 ms */
    call(&r);
    pthread_join(th, NULL);
    CHECK(r.res.status == LLM_E_CANCELLED && r.res.http_status == 0,
          "connecting: status %s http %d: %s", llm_status_name(r.res.status), r.res.http_status,
          r.res.error);
    /* cancelled after 300 ms; the SPEC's 1 s, with slack for a loaded machine */
    CHECK(r.res.latency_ms < 2000, "cancel while connecting took %.0f ms", r.res.latency_ms);
    llm_result_free(&r.res);
    for (int i = 0; i < 4; i++)
        close(fill[i]);
    close(lfd);
}

static void test_unreachable_server_is_a_network_error(void)
{
    run r;
    if (start(&r, "[]") < 0) return;
    fake_llm_stop(&r.f); /* nobody listens on that port any more */
    r.cfg.max_retries = 1;
    call(&r);
    CHECK(r.res.status == LLM_E_NETWORK, "status %s: %s", llm_status_name(r.res.status),
          r.res.error);
    CHECK(r.res.attempts == 2, "attempts %d", r.res.attempts);
    CHECK(strstr(r.res.error, "127.0.0.1"), "message does not say where: %s", r.res.error);
    llm_result_free(&r.res);
}

static void test_bad_config_fails_before_any_request(void)
{
    llm_config c;
    llm_result res;
    llm_config_defaults(&c);
    c.model[0] = '\0';
    llm_request req = {msgs, 2, NULL, NULL, NULL, 0, 0};
    CHECK(llm_call(&c, &req, &res) == -1 && res.status == LLM_E_CONFIG &&
              strstr(res.error, "model"),
          "no model: %s", res.error);
    llm_result_free(&res);
    snprintf(c.model, sizeof c.model, "m");
    snprintf(c.base_url, sizeof c.base_url, "ftp://example");
    CHECK(llm_call(&c, &req, &res) == -1 && res.status == LLM_E_CONFIG, "bad URL accepted");
    llm_result_free(&res);
}

static void test_defaults_come_from_the_environment(void)
{
    llm_config c;
    setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1", 1);
    setenv("OPENAI_API_KEY", "k1", 1);
    setenv("ALOFT_MODEL", "m1", 1);
    llm_config_defaults(&c);
    CHECK(strcmp(c.base_url, "http://127.0.0.1:1/v1") == 0 && strcmp(c.api_key, "k1") == 0 &&
              strcmp(c.model, "m1") == 0,
          "environment ignored");
    CHECK(c.connect_timeout_ms == 10000 && c.idle_timeout_ms == 30000 &&
              c.total_timeout_ms == 120000 && c.max_retries == 3 && c.stream,
          "defaults differ from SPEC §8");
    unsetenv("OPENAI_BASE_URL");
    unsetenv("OPENAI_API_KEY");
    unsetenv("ALOFT_MODEL");
    llm_config_defaults(&c);
    CHECK(strcmp(c.base_url, "https://api.openai.com/v1") == 0 && c.api_key[0] == '\0',
          "fallbacks wrong");
}

/* What the mission controller will do after a checker failure: the retry
 * prompt, as the server receives it, carries the plan and its diagnostics. */
static void test_retry_prompt_reaches_the_server_with_diagnostics(void)
{
    run r;
    if (start(&r, "[{\"content\":\"tu(90)\"}]") < 0) return;
    char err[256];
    skill_registry *reg = loader_standard(NULL, 0, NULL, NULL);
    prompt_set *ps = prompt_load(NULL, err, sizeof err);
    prompt_msgs pm = {0};
    CHECK(reg && ps &&
              prompt_retry(ps, reg, "turn left", "", NULL, "turnleft(90)",
                           "1:1: unknown skill 'turnleft' (did you mean 'turn_ccw' / 'tu'?)", "",
                           &pm, err, sizeof err) == 0,
          "retry prompt: %s", err);
    llm_message m[2];
    llm_request req = {m, prompt_msgs_to_llm(&pm, m), NULL, NULL, NULL, 0, 0};
    llm_call(&r.cfg, &req, &r.res);
    CHECK(r.res.status == LLM_OK, "status %s: %s", llm_status_name(r.res.status), r.res.error);
    cJSON *reqs = fake_llm_requests(&r.f);
    const cJSON *msgs_sent = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(reqs, 0), "body"), "messages");
    const char *sys = str_at(cJSON_GetArrayItem(msgs_sent, 0), "content", NULL);
    const char *user = str_at(cJSON_GetArrayItem(msgs_sent, 1), "content", NULL);
    CHECK(sys && strstr(sys, "tu turn_ccw(degrees:int)"), "skills not sent");
    CHECK(user && strstr(user, "1:1: unknown skill 'turnleft'") && strstr(user, "turnleft(90)"),
          "diagnostics not sent: %s", user ? user : "(none)");
    cJSON_Delete(reqs);
    prompt_msgs_free(&pm);
    prompt_free(ps);
    registry_free(reg);
    finish(&r);
}

int main(void)
{
    test_defaults_come_from_the_environment();
    test_bad_config_fails_before_any_request();
    test_stream_delivers_deltas_as_they_arrive_with_usage();
    test_non_streaming_reply_has_text_and_usage();
    test_rate_limit_then_success_honours_retry_after();
    test_persistent_5xx_fails_after_bounded_retries();
    test_unauthorized_fails_at_once();
    test_not_found_fails_at_once_naming_the_model();
    test_truncated_stream_is_detected_not_retried();
    test_stream_cut_before_any_content_is_retried();
    test_stalled_stream_hits_the_idle_timeout();
    test_non_streaming_faults();
    test_malformed_json_is_a_protocol_error();
    test_error_object_mid_stream_is_reported();
    test_prose_reply_arrives_and_is_recognised();
    test_callback_can_abort_the_transfer();
    test_cancel_flag_stops_a_call_in_flight();
    test_unreachable_server_is_a_network_error();
    test_retry_prompt_reaches_the_server_with_diagnostics();
    test_cut_replies_are_truncated();
    test_stream_size_cap();
    test_retry_after_is_read_without_overflow();
    test_budget_bounds_the_call();
    test_cancel_while_connecting();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
