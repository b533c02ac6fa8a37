/*
 * Server-Sent Events, reduced to what an OpenAI-style stream needs. See
 * sse.h. The reader is a two-level buffer: bytes collect into a line; a
 * complete `data:` line is appended to the event; a blank line dispatches it.
 */
#include "llm/sse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SSE_DEFAULT_MAX (4u * 1024u * 1024u)

void sse_init(sse_reader *r)
{
    memset(r, 0, sizeof *r);
    r->max_event = SSE_DEFAULT_MAX;
}

void sse_free(sse_reader *r)
{
    free(r->line);
    free(r->data);
    memset(r, 0, sizeof *r);
}

static int grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 256;
    while (n < need)
        n *= 2;
    char *p = realloc(*buf, n);
    if (!p) return -1;
    *buf = p;
    *cap = n;
    return 0;
}

static int dispatch(sse_reader *r, sse_event_fn fn, void *ud)
{
    if (!r->has_data) {
        r->event[0] = '\0'; /* an event without data is dropped, its type too */
        return 0;
    }
    r->has_data = 0;
    size_t len = r->data_len;
    r->data_len = 0;
    if (grow(&r->data, &r->data_cap, len + 1) < 0) return -1;
    r->data[len] = '\0';
    int rc = fn(ud, r->data, len);
    r->event[0] = '\0';
    return rc;
}

/* The field name of a line: "data", "event", "error" (llama.cpp), else
 * NULL. *VALUE and *VN get the value without its one optional space. */
static const char *field(const char *s, size_t n, const char **value, size_t *vn)
{
    static const char *const names[] = {"data", "event", "error"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t k = strlen(names[i]);
        if (n <= k || memcmp(s, names[i], k) != 0 || s[k] != ':') continue;
        *value = s + k + 1;
        *vn = n - k - 1;
        if (*vn > 0 && **value == ' ') (*value)++, (*vn)--;
        return names[i];
    }
    return NULL;
}

static int add_data(sse_reader *r, const char *s, size_t n)
{
    size_t need = r->data_len + (r->has_data ? 1 : 0) + n + 1;
    if (need > r->max_event) return -1;
    if (grow(&r->data, &r->data_cap, need) < 0) return -1;
    if (r->has_data) r->data[r->data_len++] = '\n';
    memcpy(r->data + r->data_len, s, n);
    r->data_len += n;
    r->has_data = 1;
    return 0;
}

/* One complete line (without its end). */
static int end_line(sse_reader *r, sse_event_fn fn, void *ud)
{
    size_t n = r->line_len;
    r->line_len = 0;
    if (n == 0) return dispatch(r, fn, ud);
    const char *v;
    size_t vn;
    /* Ollama writes a failure inside a stream as a bare JSON line */
    if (r->line[0] == '{') return add_data(r, r->line, n);
    const char *name = field(r->line, n, &v, &vn);
    if (!name) return 0; /* another field, or a comment */
    if (strcmp(name, "event") == 0) {
        snprintf(r->event, sizeof r->event, "%.*s", (int)vn, v);
        return 0;
    }
    if (strcmp(name, "error") == 0) snprintf(r->event, sizeof r->event, "error");
    return add_data(r, v, vn);
}

int sse_feed(sse_reader *r, const char *buf, size_t len, sse_event_fn fn, void *ud)
{
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '\n' && r->last_cr) {
            r->last_cr = 0;
            continue;
        }
        r->last_cr = (c == '\r');
        if (c == '\r' || c == '\n') {
            int rc = end_line(r, fn, ud);
            if (rc) return rc;
            continue;
        }
        if (r->line_len + 1 > r->max_event) return -1;
        if (grow(&r->line, &r->line_cap, r->line_len + 1) < 0) return -1;
        r->line[r->line_len++] = c;
    }
    return 0;
}

int sse_finish(sse_reader *r, sse_event_fn fn, void *ud)
{
    if (r->line_len > 0) {
        int rc = end_line(r, fn, ud);
        if (rc) return rc;
    }
    return dispatch(r, fn, ud);
}
