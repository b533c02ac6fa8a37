/*
 * Reply cleaning (host/llm/plan_text.h): the same reply must give the same
 * plan whether it arrives whole, byte by byte or in odd-sized pieces, and
 * plan bytes must come out before the reply is complete.
 */
#include "llm/plan_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct sink {
    char buf[4096];
    size_t len;
    int calls;
} sink;

static int to_sink(void *ud, const char *text, size_t len)
{
    sink *s = ud;
    if (s->len + len < sizeof s->buf) {
        memcpy(s->buf + s->len, text, len);
        s->len += len;
        s->buf[s->len] = '\0';
    }
    s->calls++;
    return 0;
}

/* Feeds REPLY in pieces of CHUNK bytes (0 = whole). */
static plan_text_status run_stream(const char *reply, size_t chunk, sink *out)
{
    plan_stream ps;
    plan_stream_init(&ps);
    memset(out, 0, sizeof *out);
    size_t n = strlen(reply);
    if (chunk == 0) chunk = n ? n : 1;
    for (size_t i = 0; i < n; i += chunk) {
        size_t k = n - i < chunk ? n - i : chunk;
        plan_stream_feed(&ps, reply + i, k, to_sink, out);
    }
    return plan_stream_finish(&ps, to_sink, out);
}

static void expect(const char *reply, plan_text_status want_st, const char *want)
{
    char *plan = NULL;
    size_t len = 0;
    plan_text_status st = plan_text_clean(reply, strlen(reply), &plan, &len);
    CHECK(st == want_st, "reply %s: status %s, want %s", reply, plan_text_status_name(st),
          plan_text_status_name(want_st));
    CHECK(plan && strcmp(plan, want) == 0, "reply %s: plan [%s], want [%s]", reply,
          plan ? plan : "(null)", want);
    CHECK(plan && len == strlen(plan), "reply %s: length %zu", reply, len);
    free(plan);
    static const size_t chunks[] = {1, 2, 3, 7};
    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        sink s;
        st = run_stream(reply, chunks[c], &s);
        CHECK(st == want_st, "reply %s in %zu-byte pieces: status %s", reply, chunks[c],
              plan_text_status_name(st));
        CHECK(strcmp(s.buf, want) == 0, "reply %s in %zu-byte pieces: plan [%s], want [%s]", reply,
              chunks[c], s.buf, want);
    }
}

static void test_plain_plans_pass_unchanged(void)
{
    expect("s,apple;a", PLAN_TEXT_OK, "s,apple;a");
    expect("scan('apple'); approach()", PLAN_TEXT_OK, "scan('apple'); approach()");
    expect("a", PLAN_TEXT_OK, "a");
    expect("3{tc(120)}", PLAN_TEXT_OK, "3{tc(120)}");
    expect("->True", PLAN_TEXT_OK, "->True");
    expect("_1=p('how many people?');?_1>2{l('crowd')}", PLAN_TEXT_OK,
           "_1=p('how many people?');?_1>2{l('crowd')}");
    expect("s,apple;\n?iv,apple==True{\n  a\n}\n", PLAN_TEXT_OK,
           "s,apple;\n?iv,apple==True{\n  a\n}");
    expect("l('a`b')", PLAN_TEXT_OK, "l('a`b')");
    expect("move_forward (50)", PLAN_TEXT_OK, "move_forward (50)");
}

static void test_whitespace_is_trimmed(void)
{
    expect("  \n\n  s,apple  \n\n", PLAN_TEXT_OK, "s,apple");
    expect("\r\ns,apple\r\n", PLAN_TEXT_OK, "s,apple");
}

static void test_fences_are_stripped(void)
{
    expect("```minispec\ns,apple;a\n```", PLAN_TEXT_OK, "s,apple;a");
    expect("```\ntc(90)\n```\n", PLAN_TEXT_OK, "tc(90)");
    expect("```minispec\r\ns,apple\r\n```\r\n", PLAN_TEXT_OK, "s,apple");
    expect("```\n\n  8{?iv('bottle'){->True}tc(45)}\n\n```", PLAN_TEXT_OK,
           "8{?iv('bottle'){->True}tc(45)}");
    expect("```minispec\ns,apple;a```", PLAN_TEXT_OK, "s,apple;a");
    expect("`g('chair_1')`", PLAN_TEXT_OK, "g('chair_1')");
    expect("Plan: `tc(90);a` should work.", PLAN_TEXT_OK, "tc(90);a");
    expect("`a`\n`b`", PLAN_TEXT_OK, "a");
}

static void test_labels_are_dropped(void)
{
    expect("response: s,apple;a", PLAN_TEXT_OK, "s,apple;a");
    expect("Plan:\n```minispec\ntc(90);l('done')\n```", PLAN_TEXT_OK, "tc(90);l('done')");
    expect("Answer:   ->True", PLAN_TEXT_OK, "->True");
    expect("response:```minispec\na\n```", PLAN_TEXT_OK, "a");
}

static void test_prose_around_a_plan_is_dropped(void)
{
    expect("Sure! Here is the plan:\n```\n?iv('apple'){a}\n```\nIt approaches the apple.",
           PLAN_TEXT_OK, "?iv('apple'){a}");
    expect("Here is the plan:\ns,apple;a", PLAN_TEXT_OK, "s,apple;a");
    expect("s,apple;a\nThis scans for an apple and approaches it.", PLAN_TEXT_OK, "s,apple;a");
    expect("s,apple\nNote: the apple may be hidden.", PLAN_TEXT_OK, "s,apple");
    expect("```\ns,apple\n```\n```\ntc(90)\n```", PLAN_TEXT_OK, "s,apple");
}

static void test_prose_without_plan_is_detected(void)
{
    expect("I'm sorry, but I cannot fly to the moon.", PLAN_TEXT_PROSE, "");
    expect("I cannot see any apple in the scene.", PLAN_TEXT_PROSE, "");
    expect("1. Scan for the apple\n2. Approach it", PLAN_TEXT_PROSE, "");
    expect("- scan for the apple\n- approach it", PLAN_TEXT_PROSE, "");
    expect("# Plan\n**Step 1**", PLAN_TEXT_PROSE, "");
    expect("Sure!", PLAN_TEXT_PROSE, "");
}

static void test_empty_replies(void)
{
    expect("", PLAN_TEXT_EMPTY, "");
    expect("   \n  ", PLAN_TEXT_EMPTY, "");
    expect("```\n```", PLAN_TEXT_EMPTY, "");
    expect("response:", PLAN_TEXT_EMPTY, "");
}

/* The controller must see plan bytes while the reply is still streaming. */
static void test_plan_bytes_pass_before_the_reply_ends(void)
{
    plan_stream ps;
    sink s = {0};
    plan_stream_init(&ps);
    plan_stream_feed(&ps, "```minispec\ns,apple;", 20, to_sink, &s);
    CHECK(strcmp(s.buf, "s,apple;") == 0, "fenced stream: got [%s] before the end", s.buf);
    plan_stream_feed(&ps, "a\n``", 4, to_sink, &s);
    CHECK(strcmp(s.buf, "s,apple;a") == 0, "fenced stream: got [%s]", s.buf);
    CHECK(!plan_stream_done(&ps), "done before the closing fence");
    plan_stream_feed(&ps, "`\nThis plan works.", 18, to_sink, &s);
    CHECK(plan_stream_done(&ps), "not done after the closing fence");
    CHECK(plan_stream_finish(&ps, to_sink, &s) == PLAN_TEXT_OK, "status");
    CHECK(strcmp(s.buf, "s,apple;a") == 0, "fenced stream: final [%s]", s.buf);

    plan_stream_init(&ps);
    memset(&s, 0, sizeof s);
    plan_stream_feed(&ps, "scan", 4, to_sink, &s);
    CHECK(s.len == 0, "an undecided first word was passed on: [%s]", s.buf);
    plan_stream_feed(&ps, "('apple');tc(", 13, to_sink, &s);
    CHECK(strcmp(s.buf, "scan('apple');tc(") == 0, "unfenced stream: got [%s]", s.buf);

    /* whitespace is held until more plan follows */
    plan_stream_feed(&ps, "90); ", 5, to_sink, &s);
    CHECK(strcmp(s.buf, "scan('apple');tc(90);") == 0, "trailing blank passed: [%s]", s.buf);
    plan_stream_feed(&ps, "a", 1, to_sink, &s);
    CHECK(strcmp(s.buf, "scan('apple');tc(90); a") == 0, "inner blank lost: [%s]", s.buf);
}

/* Random replies built from the pieces that matter: however a reply is cut
 * into deltas, the plan is the same, and it never keeps a fence or edge
 * whitespace. A fixed seed keeps the test repeatable. */
static void test_any_split_gives_the_same_plan(void)
{
    static const char *const pieces[] = {
        "```",   "minispec", "\n", "\r\n", "response:", " ",       "s,apple", ";",
        "Sure!", "`",        "{",  "}",    "tc(90)",    "Here is", "->True",  "1.",
        "- ",    "Plan:",    "a",  "_1=",  "?iv('x')",  "3{",      "'",       "\t",
    };
    const int npieces = (int)(sizeof pieces / sizeof pieces[0]);
    unsigned seed = 12345;
    for (int round = 0; round < 3000; round++) {
        char reply[512] = "";
        int parts = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 12;
        for (int i = 0; i < parts; i++) {
            seed = seed * 1103515245u + 12345u;
            strcat(reply, pieces[(seed >> 16) % (unsigned)npieces]);
        }
        char *whole = NULL;
        size_t len = 0;
        plan_text_status st = plan_text_clean(reply, strlen(reply), &whole, &len);
        if (!whole) {
            CHECK(0, "out of memory");
            return;
        }
        CHECK(!strstr(whole, "```"), "fence kept: [%s] from [%s]", whole, reply);
        CHECK(len == 0 || (!strchr(" \t\r\n", whole[0]) && !strchr(" \t\r\n", whole[len - 1])),
              "edge whitespace kept: [%s] from [%s]", whole, reply);
        CHECK((st == PLAN_TEXT_OK) == (len > 0), "status %s with plan [%s]",
              plan_text_status_name(st), whole);
        for (size_t chunk = 1; chunk <= 5; chunk++) {
            sink sk;
            plan_text_status st2 = run_stream(reply, chunk, &sk);
            CHECK(st2 == st && strcmp(sk.buf, whole) == 0,
                  "[%s] in %zu-byte pieces: [%s] %s, whole: [%s] %s", reply, chunk, sk.buf,
                  plan_text_status_name(st2), whole, plan_text_status_name(st));
        }
        free(whole);
    }
}

int main(void)
{
    test_plain_plans_pass_unchanged();
    test_whitespace_is_trimmed();
    test_fences_are_stripped();
    test_labels_are_dropped();
    test_prose_around_a_plan_is_dropped();
    test_prose_without_plan_is_detected();
    test_empty_replies();
    test_plan_bytes_pass_before_the_reply_ends();
    test_any_split_gives_the_same_plan();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
