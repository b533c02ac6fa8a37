/* The web UI's event log (host/web/web_events.h): SSE text, ids, replay of
 * the current mission, waiting across threads, the size cap and close. */
#include "check.h"
#include "web/web_events.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static cJSON *obj(const char *key, const char *value)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, key, value);
    return o;
}

static void *add_later(void *ud)
{
    usleep(50 * 1000);
    web_events_add(ud, "log", obj("text", "late"));
    return NULL;
}

static void *close_later(void *ud)
{
    usleep(50 * 1000);
    web_events_close(ud);
    return NULL;
}

/* The SSE text of every kept event with an id above AFTER, waiting up to
 * MS for one (malloc'd, NULL when none), the last id sent in *LAST: what a
 * reader with a 64 KiB buffer gets in one read. */
static char *wait_text(web_events *h, long after, int ms, long *last)
{
    char *buf = malloc(65537);
    web_events_cursor cur = {.last = after};
    long n = web_events_read(h, &cur, buf, 65536, ms);
    if (n <= 0) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *last = cur.last;
    return buf;
}

int main(void)
{
    web_events *h = web_events_new();
    CHECK(h);
    long last = -1;
    CHECK(web_events_first(h) == 0);
    CHECK(wait_text(h, 0, 10, &last) == NULL, "nothing yet: times out");

    CHECK(web_events_add(h, "start", obj("task", "line one\nline two")) == 1);
    CHECK(web_events_add(h, "log", obj("text", "hi")) == 2);
    char *t = wait_text(h, web_events_first(h), 1000, &last);
    CHECK(t && strcmp(t, "id: 1\nevent: start\ndata: {\"task\":\"line one\\nline two\"}\n\n"
                         "id: 2\nevent: log\ndata: {\"text\":\"hi\"}\n\n") == 0,
          "SSE text, newlines escaped: %s", t);
    CHECK(last == 2);
    free(t);
    t = wait_text(h, 1, 1000, &last);
    CHECK(t && strncmp(t, "id: 2\n", 6) == 0 && last == 2, "only what came after id 1");
    free(t);

    /* A new mission: ids go on, readers start at its first event. */
    web_events_reset(h);
    CHECK(web_events_first(h) == 2);
    CHECK(wait_text(h, 2, 10, &last) == NULL);
    CHECK(web_events_add(h, "start", obj("task", "b")) == 3);
    CHECK(web_events_first(h) == 2);
    t = wait_text(h, 0, 1000, &last); /* an old Last-Event-ID */
    CHECK(t && strncmp(t, "id: 3\n", 6) == 0 && !strstr(t, "id: 2"), "%s", t);
    free(t);

    /* A waiting reader wakes when another thread adds. */
    pthread_t th;
    pthread_create(&th, NULL, add_later, h);
    t = wait_text(h, 3, 5000, &last);
    CHECK(t && strstr(t, "late") && last == 4, "woken by the add: %s", t);
    free(t);
    pthread_join(th, NULL);

    /* The cap: a flood keeps its first events, and the end still arrives. */
    web_events_reset(h);
    int kept = 0;
    for (int i = 0; i < 30000; i++)
        kept += web_events_add(h, "plan_text", obj("text", "x")) > 0;
    CHECK(kept > 1000 && kept < 30000, "kept %d", kept);
    long end = web_events_add(h, "end", obj("status", "ok"));
    CHECK(end > 0, "the end is never dropped");
    t = wait_text(h, end - 1, 1000, &last);
    CHECK(t && strstr(t, "event: end") && last == end);
    free(t);

    /* A smaller cap (a server's share for each of many drones): events of
     * about 1 KiB stop at the one that crosses 4 KiB; the end still comes. */
    web_events *small = web_events_new_capped(4096);
    char *kib = malloc(1001);
    memset(kib, 'z', 1000);
    kib[1000] = '\0';
    kept = 0;
    for (int i = 0; i < 20; i++)
        kept += web_events_add(small, "log", obj("text", kib)) > 0;
    free(kib);
    CHECK(kept == 4, "a 4 KiB log keeps four 1 KiB events, kept %d", kept);
    CHECK(web_events_add(small, "end", obj("status", "ok")) > 0, "its end is never dropped");
    web_events_free(small);

    /* Readers copy whole events into their own buffer, as many as fit; an
     * event bigger than the buffer comes in pieces, still from the log. */
    web_events_reset(h);
    long a = web_events_add(h, "log", obj("text", "one")) - 1;
    char *huge = malloc(100000);
    memset(huge, 'y', 99999);
    huge[99999] = '\0';
    long hid = web_events_add(h, "log", obj("text", huge));
    free(huge);
    char buf[64];
    web_events_cursor cur = {.last = a};
    long n = web_events_read(h, &cur, buf, sizeof buf, 10);
    CHECK(n > 0 && n < (long)sizeof buf && cur.last == a + 1 && !cur.part, "the small one: %ld", n);
    CHECK(n >= 4 && memcmp(buf + n - 2, "\n\n", 2) == 0, "a whole event");
    char *whole = malloc(200000);
    size_t got = 0;
    int pieces = 0;
    while (got < 190000 && (n = web_events_read(h, &cur, buf, sizeof buf, 10)) > 0) {
        memcpy(whole + got, buf, (size_t)n);
        got += (size_t)n;
        pieces++;
        if (!cur.part) break;
    }
    whole[got] = '\0';
    CHECK(pieces > 1000 && cur.last == hid && !cur.part, "the big one in %d pieces", pieces);
    CHECK(got > 100000 && strncmp(whole, "id: ", 4) == 0 && strcmp(whole + got - 4, "\"}\n\n") == 0,
          "the big event whole: %zu bytes", got);
    free(whole);
    /* A new mission while a reader is in the middle of an event: the rest
     * is gone, and the reader hears so. */
    long h2 = web_events_add(h, "log",
                             obj("text", "0123456789012345678901234567890123456789"
                                         "0123456789012345678901234567890123456789"));
    CHECK(web_events_read(h, &cur, buf, sizeof buf, 10) == (long)sizeof buf && cur.part == h2);
    web_events_reset(h);
    CHECK(web_events_read(h, &cur, buf, sizeof buf, 10) == -1, "a cut event ends the stream");
    end = web_events_add(h, "end", obj("status", "ok"));

    /* Close wakes a waiting reader for good. */
    pthread_create(&th, NULL, close_later, h);
    CHECK(wait_text(h, end, 5000, &last) == NULL);
    pthread_join(th, NULL);
    CHECK(web_events_closed(h));
    CHECK(wait_text(h, 0, 10, &last) == NULL, "nothing after close");
    web_events_free(h);
    return failures ? 1 : 0;
}
