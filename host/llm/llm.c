/*
 * The chat-completions client. See llm.h for the contract.
 *
 * One call = up to 1 + max_retries attempts. Each attempt runs an easy handle
 * inside a private multi handle so that the loop wakes every POLL_MS to check
 * what libcurl cannot: the caller's cancel flag and the idle timeout of a
 * stream (libcurl's low-speed limit has one-second granularity and cannot be
 * cancelled). Body bytes go to on_body, which either feeds the SSE reader
 * (streams) or collects the JSON body (non-streaming replies and errors).
 */
#include "jsonout.h"
#include "llm/chat_reply.h"
#include "llm/llm.h"
#include "llm/retry_after.h"
#include "llm/sse.h"
#include "textbuf.h"
#include "utf8.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <ctype.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* What bounds a call in time: the configured total or the caller's budget. */
typedef struct call_limit {
    double deadline; /* now_ms() clock */
    long ms;
    bool budget; /* the caller's budget_ms is the tighter one */
} call_limit;

#define POLL_MS 50
#define BODY_MAX (8u * 1024u * 1024u)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void copy_env(char *dst, size_t n, const char *var, const char *fallback)
{
    const char *v = getenv(var);
    snprintf(dst, n, "%s", v && *v ? v : fallback);
}

void llm_config_defaults(llm_config *c)
{
    memset(c, 0, sizeof *c);
    copy_env(c->base_url, sizeof c->base_url, "OPENAI_BASE_URL", LLM_DEFAULT_BASE_URL);
    copy_env(c->api_key, sizeof c->api_key, "OPENAI_API_KEY", "");
    copy_env(c->model, sizeof c->model, "ALOFT_MODEL", "");
    c->connect_timeout_ms = 10000;
    c->idle_timeout_ms = 30000;
    c->total_timeout_ms = 120000;
    c->max_retries = 3;
    c->backoff_ms = 1000;
    c->backoff_max_ms = 16000;
    c->retry_after_max_ms = 60000;
    c->stream = true;
    c->stream_usage = true;
    c->temperature = 0;
    c->max_tokens = 0;
    c->progress = llm_progress_stderr;
}

void llm_progress_stderr(void *ud, const char *line)
{
    (void)ud;
    fprintf(stderr, "aloft: %s\n", line);
}

const char *llm_status_name(llm_status s)
{
    static const char *const names[] = {
        "ok",   "config", "network",  "timeout",   "auth",      "not_found", "http",
        "rate", "server", "protocol", "truncated", "cancelled", "aborted",   "refused",
    };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown";
}

/* Ends S before a character that a length limit cut in two: messages quote
 * the server, and every byte of them must stay valid UTF-8. */
static void utf8_cut_clean(char *s)
{
    size_t n = strlen(s), i = 0;
    while (i < n) {
        uint32_t cp;
        int k = utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (k < 0) {
            s[i] = '\0';
            return;
        }
        i += k > 0 ? (size_t)k : 1;
    }
}

/* ---- one attempt ---------------------------------------------------------- */

enum body_mode { MODE_UNKNOWN, MODE_SSE, MODE_BODY };
enum timeout_kind { TO_NONE, TO_IDLE, TO_TOTAL };

typedef struct attempt {
    const llm_config *cfg;
    const llm_request *req;
    CURL *h;
    double t_call; /* start of the whole call */
    const call_limit *limit;
    double *ttft; /* where the first content time goes (shared by attempts) */
    double last_rx;

    enum body_mode mode;
    sse_reader sse;
    textbuf body; /* non-SSE body */
    textbuf text; /* content received */

    bool delivered;   /* content went to the callback */
    bool done_marker; /* saw data: [DONE] */
    bool cancelled, aborted;
    bool final;        /* a failure no retry can mend (an unknown host name, a 4xx) */
    double *in_caller; /* ms spent inside the delta callback (shared by attempts) */
    enum timeout_kind timeout;
    chat_reply rep;
    size_t rx;           /* response body bytes received, against BODY_MAX */
    long retry_after_ms; /* from a Retry-After header; -1 if none or unreadable */
    llm_choice *choices; /* n > 1: the reply's choices (parse_choices) */
    int nchoices;

    llm_status fail; /* set by the body handlers */
    char err[LLM_ERR_MAX];
} attempt;

static void fail(attempt *a, llm_status s, const char *fmt, ...)
{
    if (a->fail) return; /* keep the first cause */
    a->fail = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->err, sizeof a->err, fmt, ap);
    va_end(ap);
}

/* Hands S (N bytes, already added to a->text) to the caller. Returns
 * non-zero to stop the transfer. */
static int hand_over(attempt *a, const char *s, size_t n)
{
    double t = now_ms();
    if (*a->ttft < 0) *a->ttft = t - a->t_call;
    a->delivered = true;
    if (!a->req->on_delta) return 0;
    /* The caller may act on the text right here (run a statement, fly):
     * that time is the caller's, not the server's, and is kept apart. */
    int stop = a->req->on_delta(a->req->ud, s, n);
    *a->in_caller += now_ms() - t;
    if (stop != 0) {
        a->aborted = true;
        return 1;
    }
    return 0;
}

/* Hands content to the caller. Returns non-zero to stop the transfer. */
static int deliver(void *ud, const char *s, size_t n)
{
    attempt *a = ud;
    if (n == 0) return 0;
    if (textbuf_add(&a->text, s, n) < 0) {
        fail(a, LLM_E_PROTOCOL, "out of memory while reading the reply");
        return 1;
    }
    return hand_over(a, s, n);
}

/* Hands the whole of a->text to the caller (a non-streamed reply). */
static void deliver_kept(attempt *a)
{
    if (a->text.len) hand_over(a, a->text.s, a->text.len);
}

/* A finish_reason saying the server stopped the reply before its end: the
 * text that came is a prefix, whatever it looks like. Fails A if so. */
static bool cut_by_server(attempt *a)
{
    if (strcmp(a->rep.finish, "length") == 0)
        fail(a, LLM_E_TRUNCATED,
             "the server cut the reply short after %zu bytes (finish_reason \"length\": "
             "the token limit was reached)",
             a->text.len);
    else if (strcmp(a->rep.finish, "content_filter") == 0)
        fail(a, LLM_E_TRUNCATED,
             "the server's content filter cut the reply short after %zu bytes "
             "(finish_reason \"content_filter\")",
             a->text.len);
    else
        return false;
    return true;
}

/* A whole reply that holds no text: a refusal or a tool call says why.
 * Fails A with that reason. */
static void no_text(attempt *a)
{
    if (a->text.len) return;
    if (a->rep.refusal.len) {
        char why[CHAT_SUMMARY_MAX + 8];
        chat_error_summary(a->rep.refusal.s, a->rep.refusal.len, why, sizeof why);
        fail(a, LLM_E_REFUSED, "the model refused to answer: %s", why);
    } else if (a->rep.tool_call) {
        /* aloft offers the model no tools: a call is never run. */
        fail(a, LLM_E_PROTOCOL,
             "the model answered with a call to a tool%s%s%s instead of text: aloft offers no "
             "tools and needs a MiniSpec plan written as text",
             *a->rep.tool ? " ('" : "", a->rep.tool, *a->rep.tool ? "')" : "");
    }
}

/* An HTTP status that a second attempt would meet again: the server judged
 * the request wrong (4xx) or cannot serve it at all (501). A timeout (408),
 * a conflict (409) and a rate limit (429) pass on their own, and so may the
 * server's other failures (5xx). */
static bool never_passes(long code)
{
    return (code >= 400 && code < 500 && code != 408 && code != 409 && code != 429) || code == 501;
}

/* One SSE event of a chat-completions stream. */
static int on_event(void *ud, const char *data, size_t len)
{
    attempt *a = ud;
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        a->done_marker = true;
        return 0;
    }
    int rc = chat_reply_event(&a->rep, a->sse.event, data, len, deliver, a);
    if (rc < 0) {
        char ex[CHAT_SUMMARY_MAX + 8];
        chat_error_summary(data, len, ex, sizeof ex);
        fail(a, LLM_E_PROTOCOL, "malformed JSON in the stream: %s", ex);
    } else if (rc > 0 && a->rep.error) {
        /* llama.cpp says what kind of failure it was: a request it judged
         * wrong (the prompt exceeds the context) fails the same way again. */
        a->final = a->rep.error_code && never_passes(a->rep.error_code);
        fail(a, LLM_E_SERVER, "the server reported an error in the stream: %s",
             *a->rep.error_msg ? a->rep.error_msg : "(no message)");
    }
    return rc ? 1 : 0;
}

static bool is_success(long code)
{
    return code >= 200 && code < 300;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    attempt *a = ud;
    size_t len = size * n;
    static const char name[] = "retry-after:";
    a->last_rx = now_ms();
    if (len > sizeof name - 1 && strncasecmp(p, name, sizeof name - 1) == 0)
        a->retry_after_ms =
            llm_retry_after_ms(p + sizeof name - 1, len - (sizeof name - 1), time(NULL));
    return len;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    attempt *a = ud;
    size_t len = size * n;
    a->last_rx = now_ms();
    /* One cap for streamed and whole replies: a stream of many small events
     * must not grow without end either. */
    if (len > BODY_MAX - a->rx) {
        fail(a, LLM_E_PROTOCOL, "the reply is larger than %u MiB: refused",
             BODY_MAX / (1024u * 1024u));
        return 0;
    }
    a->rx += len;
    if (a->mode == MODE_UNKNOWN) {
        /* A stream is SSE unless the server answered with JSON anyway (an
         * error, or a server that ignores "stream"). */
        long code = 0;
        char *ct = NULL;
        curl_easy_getinfo(a->h, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_getinfo(a->h, CURLINFO_CONTENT_TYPE, &ct);
        bool json = ct && strstr(ct, "json");
        a->mode = (a->cfg->stream && is_success(code) && !json) ? MODE_SSE : MODE_BODY;
    }
    if (a->mode == MODE_SSE) {
        int rc = sse_feed(&a->sse, p, len, on_event, a);
        if (rc < 0) fail(a, LLM_E_PROTOCOL, "a stream event was too large");
        return rc ? 0 : len;
    }
    if (textbuf_add(&a->body, p, len) < 0) {
        fail(a, LLM_E_PROTOCOL, "out of memory while reading the reply");
        return 0;
    }
    return len;
}

/* ---- the request ---------------------------------------------------------- */

static char *request_json(const llm_config *cfg, const llm_request *req)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "model", cfg->model);
    cJSON *msgs = cJSON_AddArrayToObject(root, "messages");
    for (int i = 0; i < req->nmessages; i++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", req->messages[i].role);
        cJSON_AddStringToObject(m, "content", req->messages[i].content);
        cJSON_AddItemToArray(msgs, m);
    }
    cJSON_AddBoolToObject(root, "stream", cfg->stream);
    if (cfg->stream && cfg->stream_usage) {
        cJSON *so = cJSON_AddObjectToObject(root, "stream_options");
        cJSON_AddBoolToObject(so, "include_usage", 1);
    }
    if (cfg->temperature >= 0) cJSON_AddNumberToObject(root, "temperature", cfg->temperature);
    if (cfg->max_tokens > 0) cJSON_AddNumberToObject(root, "max_tokens", cfg->max_tokens);
    if (req->n > 1 && !cfg->stream) cJSON_AddNumberToObject(root, "n", req->n);
    /* A task or a skill description with invalid UTF-8 must still make a
     * request body the server can parse. */
    char *s = jsonout_print(root);
    cJSON_Delete(root);
    return s;
}

static void run_transfer(attempt *a, double deadline, CURLcode *res)
{
    CURLM *m = curl_multi_init();
    if (!m) {
        *res = CURLE_OUT_OF_MEMORY;
        return;
    }
    curl_multi_add_handle(m, a->h);
    int running = 1;
    *res = CURLE_OK;
    a->last_rx = now_ms();
    for (;;) {
        if (curl_multi_perform(m, &running) != CURLM_OK) {
            *res = CURLE_FAILED_INIT;
            break;
        }
        CURLMsg *msg;
        int left;
        while ((msg = curl_multi_info_read(m, &left)))
            if (msg->msg == CURLMSG_DONE) *res = msg->data.result;
        if (!running) break;
        if (a->req->cancel && atomic_load(a->req->cancel)) {
            a->cancelled = true;
            break;
        }
        double t = now_ms();
        if (t >= deadline) {
            a->timeout = TO_TOTAL;
            break;
        }
        if (a->cfg->stream && a->cfg->idle_timeout_ms > 0 &&
            t - a->last_rx >= a->cfg->idle_timeout_ms) {
            a->timeout = TO_IDLE;
            break;
        }
        curl_multi_poll(m, NULL, 0, POLL_MS, NULL);
    }
    curl_multi_remove_handle(m, a->h);
    curl_multi_cleanup(m);
}

void llm_url_describe(const char *url, char *out, size_t n)
{
    const char *env = getenv("OPENAI_BASE_URL");
    size_t k = strlen(LLM_DEFAULT_BASE_URL);
    bool dflt = (!env || !*env) && strncmp(url, LLM_DEFAULT_BASE_URL, k) == 0 &&
                (url[k] == '\0' || url[k] == '/');
    snprintf(out, n, "%s%s", url, dflt ? " (the default: OPENAI_BASE_URL is unset)" : "");
}

static void http_failure(attempt *a, long code, const char *url)
{
    char msg[CHAT_SUMMARY_MAX + 8];
    chat_error_summary(a->body.s, a->body.len, msg, sizeof msg);
    const char *sep = *msg ? ": " : "";
    a->final = never_passes(code);
    if (code == 401 || code == 403)
        fail(a, LLM_E_AUTH,
             "HTTP %ld from %s: the server refused the request (check OPENAI_API_KEY)%s%s", code,
             url, sep, msg);
    else if (code == 404)
        fail(a, LLM_E_NOT_FOUND, "HTTP 404 from %s: check the base URL and the model name '%s'%s%s",
             url, a->cfg->model, sep, msg);
    else if (code == 429)
        fail(a, LLM_E_RATE, "HTTP 429 from %s: rate limited%s%s", url, sep, msg);
    else if (code >= 500)
        fail(a, LLM_E_SERVER, "HTTP %ld from %s: server error%s%s", code, url, sep, msg);
    else
        fail(a, LLM_E_HTTP, "HTTP %ld from %s%s%s", code, url, sep, msg);
}

/* A whole reply to a request with n > 1: every choice, each judged by the
 * caller (one cut or refused choice does not sink the others). */
static void parse_choices(attempt *a)
{
    int max = a->req->n;
    a->choices = calloc((size_t)max, sizeof *a->choices);
    if (!a->choices) {
        fail(a, LLM_E_PROTOCOL, "out of memory while reading the reply");
        return;
    }
    int n = chat_reply_choices(a->body.s ? a->body.s : "", a->body.len, a->choices, max);
    if (n <= 0) {
        fail(a, LLM_E_PROTOCOL, "the reply holds no choices (asked for %d)", max);
        return;
    }
    a->nchoices = n;
    textbuf_clear(&a->text);
    textbuf_add(&a->text, a->choices[0].text, a->choices[0].len);
}

/* A whole (non-SSE) successful body: {"choices":[{"message":{"content":..}}]}. */
static void parse_body(attempt *a)
{
    bool has_content;
    int rc =
        chat_reply_body(&a->rep, a->body.s ? a->body.s : "", a->body.len, &a->text, &has_content);
    char ex[CHAT_SUMMARY_MAX + 8];
    if (rc < 0) {
        chat_error_summary(a->body.s, a->body.len, ex, sizeof ex);
        fail(a, LLM_E_PROTOCOL, "malformed JSON in the reply: %s", ex);
    } else if (rc > 0) {
        fail(a, LLM_E_SERVER, "the server reported an error: %s",
             *a->rep.error_msg ? a->rep.error_msg : "(no message)");
    } else if (a->text.oom) {
        fail(a, LLM_E_PROTOCOL, "out of memory while reading the reply");
    } else if (a->req->n > 1 && !a->cfg->stream) { /* `n` was sent */
        parse_choices(a);
    } else if (!cut_by_server(a)) {
        no_text(a);
        if (!a->fail && !has_content)
            fail(a, LLM_E_PROTOCOL, "the reply has no choices[0].message.content");
        /* A cut reply is kept for the caller to see, never handed over as a
         * reply: nobody may act on it. */
        else if (!a->fail)
            deliver_kept(a);
    }
}

/* Runs one HTTP request and classifies its outcome into a->fail / a->err.
 * *retry_after_ms is set from a Retry-After header, else -1. */
static void attempt_run(attempt *a, const char *url, struct curl_slist *hdrs, const char *body,
                        long *http_code, long *retry_after_ms)
{
    char curl_err[CURL_ERROR_SIZE] = "";
    double deadline = a->limit->deadline;
    a->retry_after_ms = -1;
    *retry_after_ms = -1;
    *http_code = 0;
    a->h = curl_easy_init();
    if (!a->h) {
        fail(a, LLM_E_NETWORK, "cannot create a curl handle");
        return;
    }
    /* libcurl's own timeouts are a backstop a little beyond the deadline:
     * run_transfer ends the transfer at the deadline itself, so a call cut
     * by the time limit always says so. */
    long remaining = (long)(deadline - now_ms()) + 2 * POLL_MS;
    if (remaining < 1) remaining = 1;
    long connect_ms = a->cfg->connect_timeout_ms;
    if (connect_ms <= 0 || connect_ms > remaining) connect_ms = remaining;
    curl_easy_setopt(a->h, CURLOPT_URL, url);
    curl_easy_setopt(a->h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(a->h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(a->h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(a->h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
    curl_easy_setopt(a->h, CURLOPT_TIMEOUT_MS, remaining);
    curl_easy_setopt(a->h, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(a->h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(a->h, CURLOPT_WRITEDATA, a);
    curl_easy_setopt(a->h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(a->h, CURLOPT_HEADERDATA, a);

    CURLcode res;
    run_transfer(a, deadline, &res);
    char where[LLM_URL_MAX + 96];
    llm_url_describe(url, where, sizeof where);
    curl_easy_getinfo(a->h, CURLINFO_RESPONSE_CODE, http_code);
    *retry_after_ms = a->retry_after_ms;
    curl_easy_cleanup(a->h);
    a->h = NULL;

    if (a->cancelled) {
        a->fail = LLM_E_CANCELLED;
        snprintf(a->err, sizeof a->err, "cancelled");
    } else if (a->aborted) {
        a->fail = LLM_E_ABORTED;
        snprintf(a->err, sizeof a->err, "stopped by the caller after %zu bytes", a->text.len);
    } else if (a->fail) {
        /* a malformed or failing stream, already described */
    } else if (a->timeout == TO_IDLE) {
        fail(a, LLM_E_TIMEOUT,
             "the stream stalled: no data for %ld ms (idle timeout) after %zu bytes of reply",
             a->cfg->idle_timeout_ms, a->text.len);
    } else if (a->timeout == TO_TOTAL ||
               (res == CURLE_OPERATION_TIMEDOUT && now_ms() >= deadline - POLL_MS)) {
        fail(a, LLM_E_TIMEOUT, "no complete reply from %s within %ld ms (%s)", url, a->limit->ms,
             a->limit->budget ? "the time left to the caller" : "the total timeout");
    } else if (res == CURLE_OPERATION_TIMEDOUT) {
        fail(a, LLM_E_TIMEOUT, "no reply from %s: %s", url,
             *curl_err ? curl_err : curl_easy_strerror(res));
    } else if (res == CURLE_COULDNT_RESOLVE_HOST || res == CURLE_COULDNT_RESOLVE_PROXY) {
        /* A name that does not resolve now will not resolve in a second
         * either: say so at once instead of retrying for seconds. */
        a->final = true;
        fail(a, LLM_E_NETWORK, "cannot resolve the host name of %s: %s", where,
             *curl_err ? curl_err : curl_easy_strerror(res));
    } else if (res != CURLE_OK) {
        if (a->mode == MODE_SSE && is_success(*http_code))
            fail(a, LLM_E_TRUNCATED, "the stream broke off after %zu bytes of reply: %s",
                 a->text.len, *curl_err ? curl_err : curl_easy_strerror(res));
        else
            fail(a, LLM_E_NETWORK, "cannot get a reply from %s: %s", where,
                 *curl_err ? curl_err : curl_easy_strerror(res));
    } else if (!is_success(*http_code)) {
        http_failure(a, *http_code, where);
    } else if (a->mode == MODE_SSE) {
        /* Only a finish_reason says the reply is whole: [DONE] alone does
         * not (a proxy or a crashing server may close a stream with it). */
        if (sse_finish(&a->sse, on_event, a) == 0 && !cut_by_server(a) && !*a->rep.finish)
            fail(a, LLM_E_TRUNCATED,
                 "the stream ended without a finish_reason (%s) after %zu bytes "
                 "of reply: it may be incomplete",
                 a->done_marker ? "[DONE] came without one" : "and without [DONE]", a->text.len);
        else if (!a->fail)
            no_text(a);
    } else {
        parse_body(a);
    }
    if (a->aborted && !a->cancelled) { /* the callback stopped a late delivery */
        a->fail = LLM_E_ABORTED;
        snprintf(a->err, sizeof a->err, "stopped by the caller after %zu bytes", a->text.len);
    }
}

static void choices_free(llm_choice *c, int n)
{
    for (int i = 0; i < n; i++)
        free(c[i].text);
    free(c);
}

/* Everything but the text and the choices, which may go to the caller. */
static void attempt_free(attempt *a)
{
    sse_free(&a->sse);
    textbuf_free(&a->body);
    chat_reply_free(&a->rep);
}

static bool retryable(const attempt *a)
{
    if (a->delivered) return false; /* the caller may have acted on it */
    if (a->final) return false;
    if (*a->rep.finish) return false; /* the server ended the reply on purpose */
    switch (a->fail) {
    case LLM_E_HTTP: /* 408, 409: the others are final */
    case LLM_E_NETWORK:
    case LLM_E_TIMEOUT:
    case LLM_E_RATE:
    case LLM_E_SERVER:
    case LLM_E_TRUNCATED: return true;
    default: return false;
    }
}

/* Sleeps MS milliseconds unless the cancel flag is set first. */
static bool wait_ms(const llm_request *req, long ms)
{
    double end = now_ms() + ms;
    for (;;) {
        if (req->cancel && atomic_load(req->cancel)) return false;
        double left = end - now_ms();
        if (left <= 0) return true;
        if (left > POLL_MS / 2) left = POLL_MS / 2;
        struct timespec ts = {0, (long)(left * 1e6)};
        nanosleep(&ts, NULL);
    }
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void set_error(llm_result *out, llm_status s, const char *fmt, ...)
{
    out->status = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->error, sizeof out->error, fmt, ap);
    va_end(ap);
}

static int check_config(const llm_config *cfg, const llm_request *req, llm_result *out)
{
    if (!*cfg->model) {
        set_error(out, LLM_E_CONFIG, "no model given: use --model or set ALOFT_MODEL");
        return -1;
    }
    if (strncmp(cfg->base_url, "http://", 7) != 0 && strncmp(cfg->base_url, "https://", 8) != 0) {
        set_error(out, LLM_E_CONFIG, "the LLM base URL '%s' must start with http:// or https://",
                  cfg->base_url);
        return -1;
    }
    if (req->nmessages < 1 || !req->messages) {
        set_error(out, LLM_E_CONFIG, "a request needs at least one message");
        return -1;
    }
    return 0;
}

int llm_call(const llm_config *cfg, const llm_request *req, llm_result *out)
{
    memset(out, 0, sizeof *out);
    out->ttft_ms = -1;
    double t0 = now_ms();
    if (check_config(cfg, req, out) < 0) goto done;
    pthread_once(&curl_once, curl_init_once);

    char url[LLM_URL_MAX + 32];
    size_t blen = strlen(cfg->base_url);
    while (blen > 0 && cfg->base_url[blen - 1] == '/')
        blen--;
    snprintf(url, sizeof url, "%.*s/chat/completions", (int)blen, cfg->base_url);

    char *body = request_json(cfg, req);
    if (!body) {
        set_error(out, LLM_E_CONFIG, "out of memory while building the request");
        goto done;
    }
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    if (cfg->stream) hdrs = curl_slist_append(hdrs, "Accept: text/event-stream");
    if (*cfg->api_key) {
        char auth[LLM_KEY_MAX + 32];
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", cfg->api_key);
        hdrs = curl_slist_append(hdrs, auth);
    }
    call_limit limit = {.ms = cfg->total_timeout_ms > 0 ? cfg->total_timeout_ms : 120000};
    if (req->budget_ms > 0 && req->budget_ms < limit.ms) {
        limit.ms = req->budget_ms;
        limit.budget = true;
    }
    limit.deadline = t0 + (double)limit.ms;
    double deadline = limit.deadline;
    long backoff = cfg->backoff_ms;

    for (int i = 0;; i++) {
        if (req->cancel && atomic_load(req->cancel)) {
            set_error(out, LLM_E_CANCELLED, "cancelled");
            break;
        }
        attempt a = {.cfg = cfg,
                     .req = req,
                     .t_call = t0,
                     .limit = &limit,
                     .ttft = &out->ttft_ms,
                     .in_caller = &out->callback_ms};
        sse_init(&a.sse);
        long code, retry_after;
        attempt_run(&a, url, hdrs, body, &code, &retry_after);
        out->attempts = i + 1;
        out->http_status = (int)code;
        bool again = a.fail && retryable(&a) && i < cfg->max_retries;
        long wait = backoff;
        if (again && a.fail == LLM_E_RATE && retry_after >= 0) wait = retry_after;
        if (again && wait > cfg->retry_after_max_ms) {
            if (wait >= LLM_RETRY_AFTER_CAP_MS)
                snprintf(a.err + strlen(a.err), sizeof a.err - strlen(a.err),
                         " (the server asks to wait a day or more, longer than allowed)");
            else
                snprintf(a.err + strlen(a.err), sizeof a.err - strlen(a.err),
                         " (the server asks to wait %ld s, longer than allowed)", wait / 1000);
            again = false;
        } else if (again && now_ms() + wait >= deadline) {
            snprintf(a.err + strlen(a.err), sizeof a.err - strlen(a.err),
                     " (no time left to retry)");
            again = false;
        }
        if (!again) {
            out->status = a.fail;
            if (a.fail && out->attempts > 1)
                snprintf(out->error, sizeof out->error, "%.460s [after %d attempts]", a.err,
                         out->attempts);
            else
                snprintf(out->error, sizeof out->error, "%s", a.err);
            utf8_cut_clean(out->error);
            out->text = a.text.s;
            out->len = a.text.len;
            snprintf(out->finish_reason, sizeof out->finish_reason, "%s", a.rep.finish);
            out->usage_known = a.rep.usage_known;
            out->prompt_tokens = a.rep.prompt_tokens;
            out->completion_tokens = a.rep.completion_tokens;
            out->cached_tokens = a.rep.cached_tokens;
            if (a.fail) {
                choices_free(a.choices, a.nchoices);
            } else {
                out->choices = a.choices;
                out->nchoices = a.nchoices;
            }
            attempt_free(&a);
            break;
        }
        if (cfg->progress) {
            char line[LLM_ERR_MAX + 64];
            snprintf(line, sizeof line, "LLM attempt %d of %d failed, retrying in %.1f s: %.400s",
                     i + 1, cfg->max_retries + 1, wait / 1000.0, a.err);
            cfg->progress(cfg->progress_ud, line);
        }
        attempt_free(&a);
        choices_free(a.choices, a.nchoices);
        textbuf_free(&a.text);
        if (!wait_ms(req, wait)) {
            set_error(out, LLM_E_CANCELLED, "cancelled");
            break;
        }
        backoff = backoff * 2 > cfg->backoff_max_ms ? cfg->backoff_max_ms : backoff * 2;
    }
    curl_slist_free_all(hdrs);
    cJSON_free(body);
done:
    if (!out->text) out->text = calloc(1, 1);
    out->wall_ms = now_ms() - t0;
    out->latency_ms = out->wall_ms - out->callback_ms;
    return out->status == LLM_OK ? 0 : -1;
}

void llm_result_trimmed(const llm_result *r, char *out, size_t outlen)
{
    const char *a = r->text ? r->text : "";
    size_t len = r->text ? r->len : 0;
    while (len && isspace((unsigned char)*a))
        a++, len--;
    while (len && isspace((unsigned char)a[len - 1]))
        len--;
    snprintf(out, outlen, "%.*s", len > INT_MAX ? INT_MAX : (int)len, a);
}

void llm_result_free(llm_result *r)
{
    choices_free(r->choices, r->nchoices);
    r->choices = NULL;
    r->nchoices = 0;
    free(r->text);
    r->text = NULL;
    r->len = 0;
}
