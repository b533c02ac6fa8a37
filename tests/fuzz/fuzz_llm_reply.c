/*
 * libFuzzer harness for what the LLM client reads from a server: the SSE
 * reader, the chat-completions document reader and the error summariser.
 * Properties, each an abort when broken:
 *   - no crash, no undefined behaviour, no leak (ASan/UBSan/LeakSanitizer);
 *   - the events, the text and every field read come out the same whether
 *     the bytes arrive whole or in pieces of pseudo-random sizes (down to
 *     one byte);
 *   - a summary of any body is valid UTF-8 and within its bound.
 *
 * The sources are included rather than linked so that they carry the
 * fuzzer's coverage instrumentation.
 */
#include "../../host/llm/chat_reply.c"
#include "../../host/llm/sse.c"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct seen {
    sse_reader *r;
    chat_reply rep;
    textbuf log; /* every event as TYPE \1 DATA \2, then every text piece */
    textbuf text;
} seen;

static int on_text(void *ud, const char *s, size_t n)
{
    seen *v = ud;
    textbuf_add(&v->text, s, n);
    return 0;
}

static int on_event(void *ud, const char *data, size_t len)
{
    seen *v = ud;
    textbuf_adds(&v->log, v->r->event);
    textbuf_add(&v->log, "\1", 1);
    textbuf_add(&v->log, data, len);
    textbuf_add(&v->log, "\2", 1);
    chat_reply_event(&v->rep, v->r->event, data, len, on_text, v);
    return 0;
}

/* Feeds DATA in pieces whose sizes come from SEED (0: whole). */
static void feed(const uint8_t *data, size_t size, unsigned seed, seen *v)
{
    sse_reader r;
    sse_init(&r);
    r.max_event = 1 << 16;
    v->r = &r;
    size_t i = 0;
    int rc = 0;
    while (i < size && rc == 0) {
        size_t n = seed ? 1 + (seed = seed * 1103515245u + 12345u) % 7 : size;
        if (n > size - i) n = size - i;
        rc = sse_feed(&r, (const char *)data + i, n, on_event, v);
        i += n;
    }
    if (rc == 0) sse_finish(&r, on_event, v);
    textbuf_adds(&v->log, rc ? "stopped" : "ended");
    sse_free(&r);
}

static bool same(const textbuf *a, const textbuf *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->s, b->s, a->len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    seen whole = {0}, split = {0};
    feed(data, size, 0, &whole);
    feed(data, size, (unsigned)size * 2654435761u + 1, &split);
    if (!same(&whole.log, &split.log) || !same(&whole.text, &split.text) ||
        strcmp(whole.rep.finish, split.rep.finish) != 0 ||
        whole.rep.usage_known != split.rep.usage_known ||
        whole.rep.prompt_tokens != split.rep.prompt_tokens || whole.rep.error != split.rep.error ||
        strcmp(whole.rep.error_msg, split.rep.error_msg) != 0 ||
        !same(&whole.rep.refusal, &split.rep.refusal))
        abort();
    if (whole.rep.error && !utf8_valid(whole.rep.error_msg, strlen(whole.rep.error_msg))) abort();

    char out[CHAT_SUMMARY_MAX + 8];
    chat_error_summary((const char *)data, size, out, sizeof out);
    if (strlen(out) > CHAT_SUMMARY_MAX + 3 || !utf8_valid(out, strlen(out))) abort();

    textbuf body = {0};
    bool has;
    chat_reply r = {0};
    chat_reply_body(&r, (const char *)data, size, &body, &has);
    chat_reply_free(&r);
    textbuf_free(&body);
    chat_reply_free(&whole.rep);
    chat_reply_free(&split.rep);
    textbuf_free(&whole.log);
    textbuf_free(&split.log);
    textbuf_free(&whole.text);
    textbuf_free(&split.text);
    return 0;
}
