/*
 * A Server-Sent Events reader: bytes in, events out. Only the parts the
 * chat-completions stream uses: `data:` lines (joined with '\n' when an
 * event has several), `event:` (the event's type), a blank line ends an
 * event, comments (`:`, e.g. OpenRouter's `: OPENROUTER PROCESSING`) and
 * other fields are skipped. CR, LF and CRLF line ends are all accepted.
 *
 * One field beyond the standard: llama.cpp's server has sent a failure in a
 * stream as a line `error: {...}` (a field the standard would drop). It is
 * read as the data of an event of type "error", so the failure is seen.
 * Ollama's OpenAI layer writes one as a bare JSON line (`{"error":..}`, no
 * field name, no blank line after it): a line starting with `{` is read as
 * data.
 */
#ifndef ALOFT_LLM_SSE_H
#define ALOFT_LLM_SSE_H

#include <stddef.h>

/* Receives one event's data (NUL-terminated, LEN bytes). Return non-zero to
 * stop: sse_feed then returns that value. During the call the reader's
 * `event` holds the event's type ("" when the event named none). */
typedef int (*sse_event_fn)(void *ud, const char *data, size_t len);

typedef struct sse_reader {
    char *line; /* the line being read */
    size_t line_len, line_cap;
    char *data; /* the data of the event being read */
    size_t data_len, data_cap;
    int has_data;
    char event[32];   /* the type of the event being read ("" if none; cut to fit) */
    int last_cr;      /* the previous byte was CR: a following LF is the same line end */
    size_t max_event; /* events larger than this fail (default 4 MiB) */
} sse_reader;

void sse_init(sse_reader *r);
void sse_free(sse_reader *r);

/* Feeds LEN bytes. Returns 0, the non-zero value of the callback, or -1 if
 * an event grew beyond max_event or memory ran out. */
int sse_feed(sse_reader *r, const char *buf, size_t len, sse_event_fn fn, void *ud);

/* The stream ended: dispatches an event still pending without its blank line
 * (servers that close right after the last `data:` line). Same returns. */
int sse_finish(sse_reader *r, sse_event_fn fn, void *ud);

#endif
