/*
 * The LLM client (SPEC §8): OpenAI Chat Completions over libcurl, streaming
 * (SSE) or not. Works with any server that speaks the protocol: OpenAI,
 * Ollama, llama.cpp's server, vLLM.
 *
 * Streaming is the point of the whole product: the mission controller feeds
 * each content delta to the incremental MiniSpec parser and runs statements
 * while the reply is still being written. So llm_call runs the transfer on
 * the calling thread and invokes the delta callback from inside it, as the
 * bytes arrive.
 *
 * Retries (network errors, timeouts, 408, 409, 429, 5xx) happen only while nothing has
 * been delivered to the callback: once the caller has acted on part of a
 * reply, a failure is reported (e.g. LLM_E_TRUNCATED), never papered over by
 * a silent second attempt whose text could differ. Never retried: other
 * 4xx (the same request would fail the same way) and a host name that does
 * not resolve. Each retry is announced through llm_config.progress.
 *
 * Timing: the delta callback may take long (the mission runs statements in
 * it, so the drone flies while the reply streams in). That time is the
 * caller's: latency_ms is the time spent waiting for the server, wall_ms
 * the whole call, callback_ms the time inside the callback.
 *
 * A reply counts as complete only when the server says it finished: a
 * finish_reason of "length" (max_tokens) or "content_filter", or a stream
 * that ends without any finish_reason ([DONE] or not), is LLM_E_TRUNCATED,
 * with the text that came. Streamed and whole replies share one size cap
 * (8 MiB of response body).
 */
#ifndef ALOFT_LLM_LLM_H
#define ALOFT_LLM_LLM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define LLM_URL_MAX 512
#define LLM_KEY_MAX 512
#define LLM_MODEL_MAX 128
#define LLM_ERR_MAX 512
#define LLM_DEFAULT_BASE_URL "https://api.openai.com/v1"

/* Receives one line of progress (no newline): a retry about to happen. */
typedef void (*llm_progress_fn)(void *ud, const char *line);

/* Prints LINE to stderr as "aloft: LINE". */
void llm_progress_stderr(void *ud, const char *line);

typedef struct llm_config {
    char base_url[LLM_URL_MAX]; /* ".../v1"; "/chat/completions" is appended */
    char api_key[LLM_KEY_MAX];  /* "" sends no Authorization header */
    char model[LLM_MODEL_MAX];  /* required */
    long connect_timeout_ms;    /* default 10000 */
    long idle_timeout_ms;       /* streaming: longest silence, default 30000 */
    long total_timeout_ms;      /* whole call including retries, default 120000 */
    int max_retries;            /* retries after the first attempt, default 3 */
    long backoff_ms;            /* first backoff, doubled each retry, default 1000 */
    long backoff_max_ms;        /* backoff cap, default 16000 */
    long retry_after_max_ms;    /* a longer Retry-After fails the call, default 60000 */
    bool stream;                /* default true */
    bool stream_usage;          /* send stream_options.include_usage, default true */
    double temperature;         /* < 0: not sent (server default); default 0 */
    int max_tokens;             /* <= 0: not sent; default 0 */
    llm_progress_fn progress;   /* NULL: silent; default llm_progress_stderr */
    void *progress_ud;
} llm_config;

/* Fills C with the defaults above, taking the base URL from $OPENAI_BASE_URL
 * (else https://api.openai.com/v1), the key from $OPENAI_API_KEY and the
 * model from $ALOFT_MODEL. Flags parsed afterwards override fields. */
void llm_config_defaults(llm_config *c);

typedef struct llm_message {
    const char *role; /* "system", "user" or "assistant" */
    const char *content;
} llm_message;

/* Called with each piece of reply text as it arrives (LEN bytes, not
 * NUL-terminated), on the thread that called llm_call. Return 0 to go on, or
 * non-zero to abort the transfer (llm_call then returns LLM_E_ABORTED). In
 * non-streaming mode it is called once with the whole text. */
typedef int (*llm_delta_fn)(void *ud, const char *text, size_t len);

typedef struct llm_request {
    const llm_message *messages;
    int nmessages;
    llm_delta_fn on_delta; /* may be NULL */
    void *ud;
    /* Set (from any thread) to abort the call promptly: an in-flight transfer
     * (also while connecting) or a backoff wait ends within ~50 ms with
     * LLM_E_CANCELLED. May be NULL. */
    const atomic_bool *cancel;
    /* > 0: the caller's own time limit for the whole call (connecting,
     * waiting, streaming, retries and their backoff), on top of
     * total_timeout_ms; the call ends with LLM_E_TIMEOUT when it runs out.
     * The mission controller passes what is left of the mission's time. */
    long budget_ms;
    /* > 1: ask for this many alternative replies in one request (OpenAI's
     * `n`; not streamed: a streaming call ignores it). The server may
     * return fewer, or only one when it does not know `n` (Ollama): the
     * caller counts llm_result.nchoices. <= 1: `n` is not sent. */
    int n;
} llm_request;

/* One of the replies of a request with n > 1, in the order of the server's
 * `index`. A choice the server cut ("length", "content_filter") keeps its
 * text and finish_reason: the caller must not act on it as whole. */
typedef struct llm_choice {
    char *text; /* malloc'd, NUL-terminated ("" for a null content) */
    size_t len;
    char finish_reason[32]; /* "" if the server sent none */
    int index;              /* the server's choices[i].index, else the position */
    bool refused;           /* the choice is a refusal (or a tool call), no text */
} llm_choice;

typedef enum llm_status {
    LLM_OK = 0,
    LLM_E_CONFIG,    /* bad configuration (no model, bad URL) */
    LLM_E_NETWORK,   /* could not connect / connection failed / unknown host name */
    LLM_E_TIMEOUT,   /* connect, idle or total timeout */
    LLM_E_AUTH,      /* 401 / 403: not retried */
    LLM_E_NOT_FOUND, /* 404: wrong base URL or model; not retried */
    LLM_E_HTTP,      /* another 4xx: not retried, except 408 and 409 */
    LLM_E_RATE,      /* 429 after every retry */
    LLM_E_SERVER,    /* 5xx after every retry, or an error object in the stream */
    LLM_E_PROTOCOL,  /* malformed JSON or an unexpected reply shape */
    LLM_E_TRUNCATED, /* the reply is incomplete: the stream broke off or ended without a
                        finish_reason, or the server cut it ("length", "content_filter") */
    LLM_E_CANCELLED, /* the cancel flag was set */
    LLM_E_ABORTED,   /* the delta callback asked to stop */
    LLM_E_REFUSED,   /* the model refused (a `refusal` and no content): the error quotes it */
} llm_status;

typedef struct llm_result {
    llm_status status;
    int http_status;        /* of the last attempt; 0 if none got a response */
    char *text;             /* malloc'd, NUL-terminated: all content received */
    size_t len;             /* (even on failure: what arrived, and was delivered, before it) */
    char finish_reason[32]; /* as the server sent it ("stop"; "" if none came) */
    bool usage_known;       /* the server reported usage */
    int prompt_tokens;
    int completion_tokens;
    int cached_tokens;  /* prompt tokens served from the server's prompt cache
                           (usage.prompt_tokens_details.cached_tokens); 0 if unsaid */
    double latency_ms;  /* waiting for the server: wall_ms less callback_ms */
    double wall_ms;     /* call start to end, retries and callbacks included */
    double callback_ms; /* time spent inside the delta callback */
    double ttft_ms;     /* call start to first content byte; -1 if none */
    int attempts;       /* HTTP requests made */
    /* A request with n > 1 that succeeded: every choice that came (at
     * least one; TEXT is a copy of the first's). NULL, 0 otherwise. */
    llm_choice *choices;
    int nchoices;
    char error[LLM_ERR_MAX]; /* a message a user understands; "" when ok */
} llm_result;

/* Sends one chat completion request and waits for the reply, retrying as
 * described at the top. Returns 0 (out->status == LLM_OK) or -1; OUT is
 * filled either way and must be released with llm_result_free. Thread-safe:
 * calls share nothing. */
int llm_call(const llm_config *cfg, const llm_request *req, llm_result *out);

void llm_result_free(llm_result *r);

/* The reply's text without leading and trailing white space, into OUT
 * (cut to fit; "" when there is none): a probe's answer. */
void llm_result_trimmed(const llm_result *r, char *out, size_t outlen);

/* URL as an error message names it, into OUT: with a note when it is the
 * built-in default because OPENAI_BASE_URL is unset (a user who set
 * nothing may not know where the request went). */
void llm_url_describe(const char *url, char *out, size_t n);

/* A short name for STATUS ("truncated", "auth", ...). */
const char *llm_status_name(llm_status status);

#endif
