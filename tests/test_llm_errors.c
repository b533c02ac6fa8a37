/*
 * The LLM client's failures and timings (SPEC §8): a host name that does not
 * resolve fails at once; the error names the URL and says when it is the
 * default; a 400 is not retried while a 503 is, with one progress line per
 * retry; error bodies are summarised within a bound; and the time the caller
 * spends in the delta callback (the mission flies there) is not counted as
 * the LLM's.
 */
#include "fake_llm.h"
#include "llm/chat_reply.h"
#include "llm/llm.h"
#include "utf8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static const llm_message msgs[] = {{"user", "turn around"}};

typedef struct slow {
    int calls;
    long sleep_ms;
    char text[1024];
    size_t len;
} slow;

/* A caller that acts on each piece for a while, as the mission does when a
 * statement completes and the drone flies it. */
static int slow_delta(void *ud, const char *text, size_t len)
{
    slow *s = ud;
    s->calls++;
    if (s->len + len < sizeof s->text) {
        memcpy(s->text + s->len, text, len);
        s->len += len;
        s->text[s->len] = '\0';
    }
    struct timespec ts = {s->sleep_ms / 1000, (s->sleep_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    return 0;
}

static int lines;
static char last_line[LLM_ERR_MAX + 64];

static void count_line(void *ud, const char *line)
{
    (void)ud;
    lines++;
    snprintf(last_line, sizeof last_line, "%s", line);
}

static void config_for(llm_config *c, const fake_llm *f)
{
    llm_config_defaults(c);
    snprintf(c->base_url, sizeof c->base_url, "%s", f->base_url);
    snprintf(c->model, sizeof c->model, "m");
    c->backoff_ms = 10;
    c->progress = count_line;
}

static void test_time_in_the_callback_is_not_the_llms(void)
{
    fake_llm f;
    /* 8 tokens at 20 tokens/s: the server needs about 0.4 s. The caller
     * spends 150 ms on each piece, about 1.2 s in all, while the server
     * has long finished writing. */
    if (fake_llm_start(&f, "[{\"content\":\"tc(90);tc(90);tc(90);tc(90)\",\"token_rate\":20}]", 0) <
        0)
        return;
    llm_config cfg;
    config_for(&cfg, &f);
    slow s = {.sleep_ms = 150};
    llm_request req = {msgs, 1, slow_delta, &s, NULL, 0, 0};
    llm_result r;
    llm_call(&cfg, &req, &r);
    CHECK(r.status == LLM_OK && strcmp(s.text, "tc(90);tc(90);tc(90);tc(90)") == 0, "%s: [%s]",
          r.error, s.text);
    CHECK(s.calls >= 4, "only %d pieces", s.calls);
    /* nanosleep sleeps at least as long as asked */
    CHECK(r.callback_ms >= s.calls * 150.0, "callback_ms %.1f for %d pieces of 150 ms",
          r.callback_ms, s.calls);
    CHECK(r.wall_ms >= r.callback_ms, "wall %.1f < callback %.1f", r.wall_ms, r.callback_ms);
    CHECK(fabs(r.latency_ms - (r.wall_ms - r.callback_ms)) < 0.001,
          "latency %.1f is not wall %.1f less callback %.1f", r.latency_ms, r.wall_ms,
          r.callback_ms);
    CHECK(r.latency_ms <= r.wall_ms - s.calls * 150.0,
          "latency %.1f counts the callback (wall %.1f)", r.latency_ms, r.wall_ms);
    CHECK(r.ttft_ms >= 0 && r.ttft_ms <= r.latency_ms, "ttft %.1f latency %.1f", r.ttft_ms,
          r.latency_ms);
    llm_result_free(&r);
    fake_llm_stop(&f);
}

static void test_a_host_name_that_does_not_resolve_fails_at_once(void)
{
    llm_config cfg;
    llm_config_defaults(&cfg);
    /* .invalid never resolves (RFC 6761): no request leaves the machine. */
    snprintf(cfg.base_url, sizeof cfg.base_url, "http://aloft-llm.invalid/v1");
    snprintf(cfg.model, sizeof cfg.model, "m");
    cfg.backoff_ms = 1000; /* a retry would show in attempts, not only in time */
    cfg.progress = count_line;
    lines = 0;
    llm_request req = {msgs, 1, NULL, NULL, NULL, 0, 0};
    llm_result r;
    llm_call(&cfg, &req, &r);
    CHECK(r.status == LLM_E_NETWORK, "status %s: %s", llm_status_name(r.status), r.error);
    CHECK(r.attempts == 1 && lines == 0, "%d attempts, %d progress lines: %s", r.attempts, lines,
          r.error);
    CHECK(strstr(r.error, "http://aloft-llm.invalid/v1/chat/completions") &&
              strstr(r.error, "resolve"),
          "message: %s", r.error);
    CHECK(!strstr(r.error, "default"), "not the default URL: %s", r.error);
    llm_result_free(&r);
}

static void test_the_default_url_is_named_as_such(void)
{
    char out[LLM_URL_MAX + 96];
    unsetenv("OPENAI_BASE_URL");
    llm_url_describe(LLM_DEFAULT_BASE_URL "/chat/completions", out, sizeof out);
    CHECK(strstr(out, "https://api.openai.com/v1/chat/completions") &&
              strstr(out, "OPENAI_BASE_URL is unset"),
          "%s", out);
    llm_url_describe("https://api.openai.com/v10/chat/completions", out, sizeof out);
    CHECK(!strstr(out, "unset"), "another URL called the default: %s", out);
    llm_url_describe("http://127.0.0.1:8080/v1/chat/completions", out, sizeof out);
    CHECK(strcmp(out, "http://127.0.0.1:8080/v1/chat/completions") == 0, "%s", out);
    setenv("OPENAI_BASE_URL", LLM_DEFAULT_BASE_URL, 1); /* set on purpose: no note */
    llm_url_describe(LLM_DEFAULT_BASE_URL "/chat/completions", out, sizeof out);
    CHECK(!strstr(out, "unset"), "%s", out);
    unsetenv("OPENAI_BASE_URL");
}

static void test_400_is_final_503_is_retried_with_a_line_each(void)
{
    fake_llm f;
    if (fake_llm_start(
            &f, "[{\"fault\":\"400\"},{\"fault\":\"503\",\"times\":2},{\"content\":\"tu(9)\"}]",
            0) < 0)
        return;
    llm_config cfg;
    config_for(&cfg, &f);
    llm_request req = {msgs, 1, NULL, NULL, NULL, 0, 0};
    llm_result r;
    lines = 0;
    llm_call(&cfg, &req, &r);
    CHECK(r.status == LLM_E_HTTP && r.attempts == 1 && lines == 0, "400: %s, %d attempts: %s",
          llm_status_name(r.status), r.attempts, r.error);
    CHECK(strstr(r.error, "HTTP 400") && strstr(r.error, f.base_url), "400 message: %s", r.error);
    llm_result_free(&r);
    lines = 0;
    llm_call(&cfg, &req, &r);
    CHECK(r.status == LLM_OK && r.attempts == 3 && strcmp(r.text, "tu(9)") == 0,
          "503 twice then ok: %s, %d attempts: %s", llm_status_name(r.status), r.attempts, r.error);
    CHECK(lines == 2 && strstr(last_line, "attempt 2 of 4") && strstr(last_line, "HTTP 503"),
          "%d progress lines, last: %s", lines, last_line);
    llm_result_free(&r);
    fake_llm_stop(&f);
}

/* The summary bound, at, just inside and just outside. */
static void test_summaries_are_bounded_on_character_boundaries(void)
{
    char body[1024], out[CHAT_SUMMARY_MAX + 8];
    memset(body, 'a', sizeof body);
    chat_error_summary(body, CHAT_SUMMARY_MAX, out, sizeof out);
    CHECK(strlen(out) == CHAT_SUMMARY_MAX && !strstr(out, "..."), "at the bound: %zu [%s]",
          strlen(out), out);
    chat_error_summary(body, CHAT_SUMMARY_MAX - 1, out, sizeof out);
    CHECK(strlen(out) == CHAT_SUMMARY_MAX - 1, "inside: %zu", strlen(out));
    chat_error_summary(body, CHAT_SUMMARY_MAX + 1, out, sizeof out);
    CHECK(strlen(out) == CHAT_SUMMARY_MAX + 3 && strcmp(out + CHAT_SUMMARY_MAX, "...") == 0,
          "outside: %zu [%s]", strlen(out), out);
    /* a two-byte character across the bound is dropped whole */
    size_t n = 0;
    body[n++] = 'x';
    for (; n + 2 <= 300; n += 2)
        memcpy(body + n, "\xc3\xa9", 2);
    chat_error_summary(body, n, out, sizeof out);
    CHECK(utf8_valid(out, strlen(out)) && strlen(out) <= CHAT_SUMMARY_MAX + 3, "é run: %zu",
          strlen(out));
    /* invalid bytes become U+FFFD, a NUL byte is no end */
    chat_error_summary("bad \xff\xfe\0 end", 12, out, sizeof out);
    CHECK(strcmp(out, "bad \xef\xbf\xbd\xef\xbf\xbd end") == 0, "[%s]", out);
    chat_error_summary("", 0, out, sizeof out);
    CHECK(out[0] == '\0', "empty: [%s]", out);
}

/* What a stream event says, read directly. */
static void test_events_in_plain_words_and_error_codes(void)
{
    chat_reply r = {0};
    CHECK(chat_reply_event(&r, "error", "model overloaded", 16, NULL, NULL) == 1 && r.error &&
              strcmp(r.error_msg, "model overloaded") == 0,
          "plain error event: [%s]", r.error_msg);
    chat_reply_free(&r);
    r = (chat_reply){0};
    CHECK(chat_reply_event(&r, "", "model overloaded", 16, NULL, NULL) == -1 && !r.error,
          "plain data is not JSON");
    chat_reply_free(&r);
    r = (chat_reply){0};
    const char *ev = "{\"code\":400,\"message\":\"too long\"}";
    CHECK(chat_reply_event(&r, "error", ev, strlen(ev), NULL, NULL) == 1 && r.error_code == 400 &&
              strcmp(r.error_msg, "too long") == 0,
          "llama.cpp error: %d [%s]", r.error_code, r.error_msg);
    chat_reply_free(&r);
    r = (chat_reply){0};
    ev = "{\"error\":{\"code\":1e300,\"message\":\"x\"}}";
    CHECK(chat_reply_event(&r, "", ev, strlen(ev), NULL, NULL) == 1 && r.error_code == 0,
          "a code out of range is no code: %d", r.error_code);
    chat_reply_free(&r);
}

int main(void)
{
    test_events_in_plain_words_and_error_codes();
    test_the_default_url_is_named_as_such();
    test_summaries_are_bounded_on_character_boundaries();
    test_a_host_name_that_does_not_resolve_fails_at_once();
    test_400_is_final_503_is_retried_with_a_line_each();
    test_time_in_the_callback_is_not_the_llms();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
