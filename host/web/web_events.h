/*
 * A drone's event log for the web UI: what its current (or last) mission did,
 * as Server-Sent Events. The mission thread appends; any number of readers
 * wait for what came after the last event they sent.
 *
 * Each event gets an id that only grows over the server's life, so that a
 * browser reconnecting with Last-Event-ID misses nothing that is still kept.
 * A new mission forgets the previous one's events (web_events_reset): a page
 * opened mid-mission replays the mission so far, then follows it live.
 */
#ifndef ALOFT_WEB_EVENTS_H
#define ALOFT_WEB_EVENTS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct web_events web_events;

/* The most a log keeps of one mission, in bytes of SSE text (and events):
 * past it, events are dropped but the end. */
#define WEB_EVENTS_MAX_BYTES (8u * 1024u * 1024u)
#define WEB_EVENTS_MAX_COUNT 20000

/* A new, empty log keeping up to WEB_EVENTS_MAX_BYTES, or NULL when out of
 * memory. */
web_events *web_events_new(void);

/* The same, keeping up to MAX_BYTES (at most WEB_EVENTS_MAX_BYTES): a
 * server with many drones gives each a share of its budget. */
web_events *web_events_new_capped(size_t max_bytes);

/* Frees H; no reader may still wait on it. */
void web_events_free(web_events *h);

/* Forgets every kept event (a new mission starts). */
void web_events_reset(web_events *h);

/* Appends event KIND with DATA (a JSON object, taken and freed). Past the
 * size cap, events are dropped, except "end": a mission's end always
 * arrives. Returns the event's id, or -1 when it was dropped. */
long web_events_add(web_events *h, const char *kind, cJSON *data);

/* Where a reader is in the log: the last event it sent whole, and the
 * event it sent only part of (0: none) and how much of it. */
typedef struct web_events_cursor {
    long last;
    long part;
    size_t off;
} web_events_cursor;

/* Copies into BUF, at most MAX bytes (MAX > 0), the SSE text that comes
 * after CUR, waiting up to TIMEOUT_MS for an event to arrive, and moves CUR
 * on: whole events, as many as fit, or the next piece of an event bigger
 * than MAX. Every reader copies from the one log, so that a replay costs no
 * memory per reader. Returns the bytes copied; 0 when nothing came (or the
 * log is closed); -1 when the event CUR was in the middle of was forgotten
 * (a new mission): the stream cannot go on, its client must reconnect. */
long web_events_read(web_events *h, web_events_cursor *cur, char *buf, size_t max, int timeout_ms);

/* The id before the first kept event: a reader starting there replays the
 * current mission. */
long web_events_first(web_events *h);

/* Wakes every reader for good (the server stops). */
void web_events_close(web_events *h);

/* True after web_events_close. */
bool web_events_closed(web_events *h);

#endif
