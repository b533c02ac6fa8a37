/*
 * The SSE reader (host/llm/sse.h): events come out the same however the
 * bytes are split, with any line-end style; comments and other fields are
 * skipped; an event without its blank line is delivered at the end.
 */
#include "llm/sse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct events {
    char all[1024]; /* events joined with '|' */
    int n;
    int stop_at; /* return 7 from this event (1-based); 0 = never */
    const sse_reader *r;
} events;

static int on_event(void *ud, const char *data, size_t len)
{
    events *e = ud;
    CHECK(data[len] == '\0', "event not NUL-terminated");
    size_t used = strlen(e->all);
    /* an event with a type shows as TYPE=DATA */
    snprintf(e->all + used, sizeof e->all - used, "%s%s%s%s", e->n ? "|" : "", e->r->event,
             *e->r->event ? "=" : "", data);
    e->n++;
    return e->stop_at && e->n == e->stop_at ? 7 : 0;
}

static void expect(const char *stream, const char *want, int want_n)
{
    size_t n = strlen(stream);
    for (size_t chunk = 1; chunk <= n; chunk = chunk < 4 ? chunk + 1 : chunk * 2) {
        sse_reader r;
        events e = {.r = &r};
        sse_init(&r);
        int rc = 0;
        for (size_t i = 0; i < n && !rc; i += chunk)
            rc = sse_feed(&r, stream + i, n - i < chunk ? n - i : chunk, on_event, &e);
        if (!rc) rc = sse_finish(&r, on_event, &e);
        CHECK(rc == 0, "rc %d", rc);
        CHECK(strcmp(e.all, want) == 0 && e.n == want_n,
              "stream [%s] in %zu-byte pieces: got [%s] (%d), want [%s] (%d)", stream, chunk, e.all,
              e.n, want, want_n);
        sse_free(&r);
    }
}

int main(void)
{
    expect("data: {\"a\":1}\n\ndata: [DONE]\n\n", "{\"a\":1}|[DONE]", 2);
    expect("data: x\r\n\r\ndata: y\r\n\r\n", "x|y", 2);
    expect("data: x\r\rdata: y\r\r", "x|y", 2);
    expect("data:nospace\n\n", "nospace", 1);
    expect("data: line1\ndata: line2\n\n", "line1\nline2", 1);
    expect(": keep-alive comment\n\nevent: message\nid: 4\ndata: z\nretry: 10\n\n", "message=z", 1);
    expect("data: last without blank line", "last without blank line", 1);
    expect("\n\n\n", "", 0);
    expect("database: no\n\n", "", 0);
    expect("data: \n\n", "", 1);
    /* OpenRouter's keep-alive comments come before the first event */
    expect(": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\ndata: {}\n\n", "{}", 1);
    /* llama.cpp's `error:` line is an event of type "error" */
    expect("error: {\"code\":500}\n\n", "error={\"code\":500}", 1);
    expect("event: error\ndata: x\n\ndata: y\n\n", "error=x|y", 2);
    /* a type without data is dropped with its event: it does not stick */
    expect("event: ping\n\ndata: z\n\n", "z", 1);
    expect("errors: no\n\nevents: no\n\n", "", 0);
    /* Ollama's bare JSON error line, at the end of the stream */
    expect("data: a\n\n{\"error\":{}}\n", "a|{\"error\":{}}", 2);

    /* a callback's stop value comes back from sse_feed */
    sse_reader r;
    events e = {.stop_at = 1, .r = &r};
    sse_init(&r);
    const char *s = "data: a\n\ndata: b\n\n";
    CHECK(sse_feed(&r, s, strlen(s), on_event, &e) == 7 && e.n == 1, "stop not honoured");
    sse_free(&r);

    /* an oversized event is refused, not buffered without bound */
    sse_init(&r);
    r.max_event = 16;
    e = (events){.r = &r};
    s = "data: 0123456789abcdefghij\n\n";
    CHECK(sse_feed(&r, s, strlen(s), on_event, &e) == -1 && e.n == 0, "oversized event accepted");
    sse_free(&r);

    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
