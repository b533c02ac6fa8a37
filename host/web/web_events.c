/* The event log behind a drone's SSE stream (see web_events.h). */
#include "web/web_events.h"

#include "jsonout.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct event {
    long id;
    char *sse; /* "id: N\nevent: KIND\ndata: JSON\n\n" */
    size_t len;
} event;

struct web_events {
    pthread_mutex_t lock;
    pthread_cond_t grew;
    event *ev;
    int n, cap;
    size_t bytes;
    size_t max_bytes; /* a mission that logs more keeps its first events and its end */
    long next_id;
    bool closed;
};

web_events *web_events_new(void)
{
    return web_events_new_capped(WEB_EVENTS_MAX_BYTES);
}

web_events *web_events_new_capped(size_t max_bytes)
{
    web_events *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->max_bytes = max_bytes < WEB_EVENTS_MAX_BYTES ? max_bytes : WEB_EVENTS_MAX_BYTES;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->grew, &ca);
    pthread_condattr_destroy(&ca);
    h->next_id = 1;
    return h;
}

static void forget(web_events *h)
{
    for (int i = 0; i < h->n; i++)
        free(h->ev[i].sse);
    h->n = 0;
    h->bytes = 0;
}

void web_events_free(web_events *h)
{
    if (!h) return;
    forget(h);
    free(h->ev);
    pthread_cond_destroy(&h->grew);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

void web_events_reset(web_events *h)
{
    pthread_mutex_lock(&h->lock);
    forget(h);
    pthread_mutex_unlock(&h->lock);
}

long web_events_add(web_events *h, const char *kind, cJSON *data)
{
    char *json = data ? jsonout_print(data) : NULL;
    cJSON_Delete(data);
    if (!json) return -1;
    long id = -1;
    pthread_mutex_lock(&h->lock);
    bool full = h->n >= WEB_EVENTS_MAX_COUNT || h->bytes >= h->max_bytes;
    if (!full || strcmp(kind, "end") == 0) {
        if (h->n == h->cap) {
            int cap = h->cap ? h->cap * 2 : 64;
            event *ev = realloc(h->ev, (size_t)cap * sizeof *ev);
            if (ev) h->ev = ev, h->cap = cap;
        }
        /* cJSON escapes newlines in strings: DATA is one line, as SSE needs. */
        size_t need = strlen(json) + strlen(kind) + 64;
        char *sse = h->n < h->cap ? malloc(need) : NULL;
        if (sse) {
            id = h->next_id++;
            int len = snprintf(sse, need, "id: %ld\nevent: %s\ndata: %s\n\n", id, kind, json);
            h->ev[h->n++] = (event){id, sse, (size_t)len};
            h->bytes += (size_t)len;
            pthread_cond_broadcast(&h->grew);
        }
    }
    pthread_mutex_unlock(&h->lock);
    free(json);
    return id;
}

long web_events_first(web_events *h)
{
    pthread_mutex_lock(&h->lock);
    long first = h->n ? h->ev[0].id - 1 : h->next_id - 1;
    pthread_mutex_unlock(&h->lock);
    return first;
}

/* Index of the first kept event with an id above AFTER, or h->n. */
static int after_index(const web_events *h, long after)
{
    int lo = 0, hi = h->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (h->ev[mid].id <= after)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Waits up to TIMEOUT_MS for an event with an id above AFTER; the index of
 * the first such event, or -1 when none came or the log is closed. Called
 * with the lock held. */
static int wait_after(web_events *h, long after, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    int i;
    while (!h->closed && (i = after_index(h, after)) == h->n)
        if (pthread_cond_timedwait(&h->grew, &h->lock, &until) == ETIMEDOUT) break;
    if (h->closed || (i = after_index(h, after)) == h->n) return -1;
    return i;
}

/* Index of the kept event with id ID, or -1. Called with the lock held. */
static int index_of(const web_events *h, long id)
{
    int i = after_index(h, id - 1);
    return i < h->n && h->ev[i].id == id ? i : -1;
}

long web_events_read(web_events *h, web_events_cursor *cur, char *buf, size_t max, int timeout_ms)
{
    long at = 0;
    pthread_mutex_lock(&h->lock);
    if (cur->part) {
        /* The rest of an event too big for one buffer, still from the log. */
        int i = index_of(h, cur->part);
        if (i < 0) {
            at = -1; /* forgotten (a new mission): its rest is gone */
        } else {
            size_t n = h->ev[i].len - cur->off;
            if (n > max) n = max;
            memcpy(buf, h->ev[i].sse + cur->off, n);
            cur->off += n;
            at = (long)n;
            if (cur->off == h->ev[i].len) cur->last = cur->part, cur->part = 0;
        }
        pthread_mutex_unlock(&h->lock);
        return at;
    }
    int i = wait_after(h, cur->last, timeout_ms);
    /* Whole events, straight from the shared log: a reader holds no copy
     * of its own, however much it replays. */
    for (int k = i; k >= 0 && k < h->n && (size_t)at + h->ev[k].len <= max; k++) {
        memcpy(buf + at, h->ev[k].sse, h->ev[k].len);
        at += (long)h->ev[k].len;
        cur->last = h->ev[k].id;
    }
    if (i >= 0 && at == 0) {
        /* One event bigger than BUF: its first MAX bytes now. */
        memcpy(buf, h->ev[i].sse, max);
        cur->part = h->ev[i].id;
        cur->off = max;
        at = (long)max;
    }
    pthread_mutex_unlock(&h->lock);
    return at;
}

void web_events_close(web_events *h)
{
    pthread_mutex_lock(&h->lock);
    h->closed = true;
    pthread_cond_broadcast(&h->grew);
    pthread_mutex_unlock(&h->lock);
}

bool web_events_closed(web_events *h)
{
    pthread_mutex_lock(&h->lock);
    bool c = h->closed;
    pthread_mutex_unlock(&h->lock);
    return c;
}
