/* What the host lets out (SPEC §2): UTF-8 repair (host/utf8.h), JSON text
 * with no invalid UTF-8 and no raw control character (host/jsonout.h), also
 * in the web UI's event stream, and the terminal escape (host/term.h),
 * also across writes that cut a UTF-8 sequence in two. */
#include "check.h"
#include "jsonout.h"
#include "term.h"
#include "utf8.h"
#include "web/web_events.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool valid(const char *s)
{
    return s && utf8_valid(s, strlen(s));
}

static void test_utf8(void)
{
    /* at, inside and outside the edges of each form */
    const char *good[] = {"",
                          "plain",
                          "\xC2\x80",
                          "\xDF\xBF",
                          "\xE0\xA0\x80",
                          "\xED\x9F\xBF",
                          "\xEE\x80\x80",
                          "\xEF\xBF\xBF",
                          "\xF0\x90\x80\x80",
                          "\xF4\x8F\xBF\xBF"};
    const char *bad[] = {"\x80",
                         "\xC0\xAF",
                         "\xC1\xBF",
                         "\xC2",
                         "\xE0\x9F\xBF",
                         "\xED\xA0\x80",
                         "\xF0\x8F\xBF\xBF",
                         "\xF4\x90\x80\x80",
                         "\xF5\x80\x80\x80",
                         "\xFF",
                         "a\xE2\x82"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        CHECK(utf8_valid(good[i], strlen(good[i])), "good %zu", i);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(!utf8_valid(bad[i], strlen(bad[i])), "bad %zu", i);
    size_t n;
    char *r = utf8_repair("a\xFF\xE2\x82z\xE2\x82\xAC", 8, NULL, &n);
    CHECK(r && strcmp(r, "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDz\xE2\x82\xAC") == 0 && n == 14,
          "%s", r);
    free(r);
    /* a NUL inside counts as invalid: C strings end there */
    r = utf8_repair("a\0b", 3, NULL, &n);
    CHECK(r && strcmp(r, "a\xEF\xBF\xBD"
                         "b") == 0);
    free(r);
}

static void test_jsonout(void)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "log", "esc\x1b]0;x\x07 del\x7F c1\xC2\x9B bad\xFF\xC3");
    cJSON *arr = cJSON_AddArrayToObject(doc, "args\xFE");
    cJSON_AddItemToArray(arr, cJSON_CreateString("deep\x80"));
    char *t = jsonout_print(doc);
    CHECK(valid(t), "%s", t);
    CHECK(t && strstr(t, "esc\\u001b]0;x\\u0007 del\\u007f c1\\u009b bad\xEF\xBF\xBD\xEF\xBF\xBD"),
          "%s", t);
    CHECK(t && strstr(t, "\"args\xEF\xBF\xBD\":[\"deep\xEF\xBF\xBD\"]"), "%s", t);
    for (const char *p = t; p && *p; p++)
        CHECK((unsigned char)*p >= 0x20 && *p != 0x7F, "raw control 0x%02x", (unsigned char)*p);
    free(t);
    cJSON_Delete(doc);

    /* The web UI's events are JSON too. */
    web_events *h = web_events_new();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "text", "llm said \xC0\xAF\x1b[2J");
    CHECK(web_events_add(h, "log", o) == 1);
    web_events_cursor cur = {0};
    char evbuf[4096];
    long evlen = web_events_read(h, &cur, evbuf, sizeof evbuf - 1, 1000);
    evbuf[evlen > 0 ? evlen : 0] = '\0';
    char *ev = evlen > 0 ? strdup(evbuf) : NULL;
    CHECK(valid(ev) && ev && strstr(ev, "llm said \xEF\xBF\xBD\xEF\xBF\xBD\\u001b[2J"), "%s", ev);
    free(ev);
    web_events_free(h);
}

typedef struct sink {
    char s[256];
    size_t n;
} sink;

static int to_sink(void *ud, const char *p, size_t n)
{
    sink *k = ud;
    if (k->n + n >= sizeof k->s) return -1;
    memcpy(k->s + k->n, p, n);
    k->n += n;
    k->s[k->n] = '\0';
    return 0;
}

static void test_term_escape(void)
{
    sink k = {.n = 0};
    const char in[] = "t\x1b]0;x\x07\r\bok\tnl\n\x7F\xC2\x85\xC2\xA0\xE2\x82\xAC\xFF";
    CHECK(term_escape(in, sizeof in - 1, false, to_sink, &k) == (long)(sizeof in - 1));
    CHECK(strcmp(k.s,
                 "t\\x1b]0;x\\x07\\x0d\\x08ok\tnl\n\\x7f\\xc2\\x85\xC2\xA0\xE2\x82\xAC\\xff") == 0,
          "%s", k.s);
    /* a sequence cut at the end is kept for the next write when more comes */
    k.n = 0;
    CHECK(term_escape("ab\xE2\x82", 4, true, to_sink, &k) == 2 && strcmp(k.s, "ab") == 0);
    k.n = 0;
    CHECK(term_escape("ab\xE2\x82", 4, false, to_sink, &k) == 4 && strcmp(k.s, "ab\\xe2\\x82") == 0,
          "%s", k.s);

    /* The stream: a C1 control cut between two unbuffered writes is still
     * caught, and a euro sign cut the same way still passes whole. */
    int fds[2];
    CHECK(pipe(fds) == 0);
    FILE *f = term_stream(fds[1], _IONBF);
    CHECK(f != NULL);
    fputs("x\xC2", f);
    fputs("\x9B"
          "1m\xE2\x82",
          f);
    fputs("\xAC\n", f);
    fclose(f);
    close(fds[1]);
    char buf[128] = "";
    ssize_t got = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    CHECK(got > 0 && strcmp(buf, "x\\xc2\\x9b1m\xE2\x82\xAC\n") == 0, "%s", buf);
}

int main(void)
{
    test_utf8();
    test_jsonout();
    test_term_escape();
    return failures ? 1 : 0;
}
