/*
 * The stream parser: fed one byte at a time (or in random chunks), a plan
 * yields the same events as fed whole, each statement at the earliest byte
 * that proves it complete; a malformed plan stops at the same first error
 * the whole-plan checker reports.
 */
#include "minispec/stream.h"
#include "test_minispec_util.h"

#include <ctype.h>

#include "check.h"

typedef struct rec {
    ms_event_kind kind;
    size_t off, len, at; /* at: bytes fed when reported (len + 1: at the end) */
    char *lua;
    char message[320];
} rec;

typedef struct recs {
    rec *v;
    int n;
    bool stopped; /* an error was reported: the stream says nothing more */
} recs;

static skill_registry *reg;

static void drain(ms_stream *s, recs *out, size_t fed)
{
    ms_event ev;
    ms_event_kind k;
    while (!out->stopped && (k = ms_stream_next(s, &ev)) != MS_EV_NONE && k != MS_EV_DONE) {
        out->v = realloc(out->v, sizeof *out->v * (size_t)(out->n + 1));
        rec *r = &out->v[out->n++];
        memset(r, 0, sizeof *r);
        r->kind = k;
        r->off = ev.off;
        r->len = ev.len;
        r->at = fed;
        r->lua = strdup(ev.lua ? ev.lua : (ev.code ? ev.code : ""));
        if (k == MS_EV_ERROR && ev.diag)
            snprintf(r->message, sizeof r->message, "%d:%d: %s", ev.diag->line, ev.diag->col,
                     ev.diag->message);
        if (k == MS_EV_ERROR) out->stopped = true;
    }
}

/* Feeds PLAN in chunks given by NEXT_SIZE (NULL: whole). */
static recs feed(const char *plan, size_t len, unsigned *seed, size_t max_chunk)
{
    recs out = {0};
    ms_stream *s = ms_stream_new(reg, NULL);
    size_t fed = 0;
    while (fed < len) {
        size_t n = max_chunk == 0 ? len : 1 + (seed ? (size_t)rand_r(seed) % max_chunk : 0);
        if (n > len - fed) n = len - fed;
        ms_stream_feed(s, plan + fed, n);
        fed += n;
        drain(s, &out, fed);
    }
    ms_stream_finish(s);
    drain(s, &out, len + 1);
    ms_stream_free(s);
    return out;
}

static void free_recs(recs *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->v[i].lua);
    free(r->v);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* A statement `name(...)` ends at its ')': nothing may follow it. */
static bool ends_itself(const char *plan, const rec *r)
{
    const char *p = plan + r->off, *end = plan + r->off + r->len;
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) return false;
    while (p < end && (isalnum((unsigned char)*p) || *p == '_'))
        p++;
    while (p < end && is_space(*p))
        p++;
    if (p >= end || *p != '(') return false;
    int depth = 0;
    bool in_str = false;
    char q = 0;
    for (; p < end; p++) {
        if (in_str) {
            if (*p == '\\')
                p++;
            else if (*p == q && !(q == '\'' && (isalnum((unsigned char)p[1]) || p[1] == '_')))
                in_str = false;
            continue;
        }
        if (*p == '\'' || *p == '"') {
            in_str = true;
            q = *p;
        } else if (*p == '(')
            depth++;
        else if (*p == ')' && --depth == 0)
            return p + 1 == end;
    }
    return false;
}

/* Where a statement is proven complete, computed from the text alone. */
static size_t earliest(const char *plan, size_t len, const rec *r)
{
    size_t end = r->off + r->len;
    if (r->kind != MS_EV_STATEMENT || ends_itself(plan, r)) return end;
    size_t i = end;
    while (i < len && is_space(plan[i]))
        i++;
    if (i == len) return len + 1; /* only the end of the plan tells */
    /* '$' and a name (not an argument): an error quoted whole, so its end */
    if (plan[i] == '$' && i + 1 < len && !isdigit((unsigned char)plan[i + 1])) {
        size_t j = i + 1;
        while (j < len && (isalnum((unsigned char)plan[j]) || plan[j] == '_'))
            j++;
        if (j > i + 1) return j < len ? j + 1 : len + 1;
    }
    /* a byte whose token the next byte settles: '-' or '->', '=' or '==', '&' or '&&' ...,
     * '_' alone (an error) or '_x' (a variable), '$' or '$1'; a '.' right after a
     * number, which may still become a fraction */
    size_t d = end;
    while (d > r->off && isdigit((unsigned char)plan[d - 1]))
        d--;
    bool number = d < end && (d == r->off || !(isalnum((unsigned char)plan[d - 1]) ||
                                               plan[d - 1] == '_' || plan[d - 1] == '$'));
    if (strchr("-=<>!&|_$", plan[i]) || (plan[i] == '.' && i == end && number))
        return i + 2 <= len ? i + 2 : len + 1;
    return i + 1;
}

static void check_plan(const char *name, const char *plan, size_t len)
{
    recs whole = feed(plan, len, NULL, 0);
    recs bytes = feed(plan, len, NULL, 1);
    CHECK(whole.n == bytes.n, "%s: %d events whole, %d byte by byte", name, whole.n, bytes.n);
    for (int i = 0; i < whole.n && i < bytes.n; i++) {
        rec *a = &whole.v[i], *b = &bytes.v[i];
        CHECK(a->kind == b->kind && a->off == b->off && a->len == b->len &&
                  strcmp(a->lua, b->lua) == 0 && strcmp(a->message, b->message) == 0,
              "%s: event %d differs: %d@%zu+%zu '%s' %s vs %d@%zu+%zu '%s' %s", name, i, a->kind,
              a->off, a->len, a->lua, a->message, b->kind, b->off, b->len, b->lua, b->message);
        if (b->kind == MS_EV_ERROR) continue;
        size_t want = earliest(plan, len, b);
        CHECK(b->at == want, "%s: event %d (%.*s) reported after %zu bytes, earliest is %zu: %.*s",
              name, i, (int)b->len, plan + b->off, b->at, want, (int)len, plan);
    }
    for (unsigned seed = 1; seed <= 5; seed++) {
        unsigned st = seed;
        recs chunks = feed(plan, len, &st, 1 + seed * 3);
        bool same = chunks.n == whole.n;
        for (int i = 0; same && i < whole.n; i++)
            same = chunks.v[i].kind == whole.v[i].kind && chunks.v[i].off == whole.v[i].off &&
                   strcmp(chunks.v[i].lua, whole.v[i].lua) == 0;
        CHECK(same, "%s: random chunks (seed %u) give other events", name, seed);
        free_recs(&chunks);
    }
    /* The stream stops at the whole-plan checker's first error, or at none. */
    ms_result r;
    minispec_compile(reg, plan, len, NULL, &r);
    bool stream_error = whole.n > 0 && whole.v[whole.n - 1].kind == MS_EV_ERROR;
    CHECK(r.ok == !stream_error, "%s: whole ok=%d but stream error=%d", name, r.ok, stream_error);
    if (!r.ok && stream_error) {
        char first[320];
        snprintf(first, sizeof first, "%d:%d: %s", r.diags[0].line, r.diags[0].col,
                 r.diags[0].message);
        CHECK(strcmp(first, whole.v[whole.n - 1].message) == 0, "%s: stream says %s, checker %s",
              name, whole.v[whole.n - 1].message, first);
    }
    ms_result_free(&r);
    free_recs(&whole);
    free_recs(&bytes);
}

static void test_example_plans(const char *src)
{
    char **files;
    int n = test_ms_plan_files(src, &files);
    for (int i = 0; i < n; i++) {
        size_t len;
        char *text = test_ms_read_file(files[i], &len);
        check_plan(files[i], text, len);
        free(text);
        free(files[i]);
    }
    free(files);
}

static void test_malformed_plans(void)
{
    static const struct {
        const char *what, *plan, *diags;
    } cases[] = {
#include "test_minispec_cases.h"
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_plan(cases[i].what, cases[i].plan, strlen(cases[i].plan));
}

static void test_edge_plans(void)
{
    static const char *const plans[] = {
        "tc,45",
        "tc(45)",
        "a",
        "->True",
        "_1=5;->_1->False",
        "l,'it's'",
        "tc , 45 ; mf ( 10 )",
        "  \n ",
        "",
        "8{}",
        "?1{}l('x')",
        "tc(4)tc(5)",
        "a;a;a",
        "tc,45 mf,10",
        "_1=2;->_1<3",
        "l,'a' ->True",
        "?iv,x{rp}",
        "3{4{tc(1)}}",
        "mf(1.)",
        "_1=1;_2=_1- -1",
        "?iv,x{tc,1}:{tc,2}",
        "?iv,x{tc,1} : {tc,2}l,3",
        "?iv,x{tc,1}:",
        "->rp",
        "->rp;tc(1)",
        "_obj=1;l(_obj)",
        "_1a=1",
        "_",
        "o,chair_1;p",
        "p;p,'x';p()",
        "?iv,x&&iv,y||True{}",
        "?iv,x&&&iv,y{}",
        "l,3;l(-3)",
        "l('it's \\' \\\\ \\\n x')",
        "l('it'",
        "l('it' )",
        "?_1=iv,x{l,_1}l,_1",
        "?_1 = p('a') {}:{}",
        "r(-30)",
    };
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++)
        check_plan(plans[i], plans[i], strlen(plans[i]));
}

/* A statement inside a block is reported before the block is closed. */
static void test_statements_inside_open_blocks(void)
{
    const char *plan = "8{?iv('cup'){l('found');->True}tc(45)";
    recs r = feed(plan, strlen(plan), NULL, 1);
    CHECK(r.n >= 5 && r.v[2].kind == MS_EV_STATEMENT && r.v[2].at == 23,
          "l('found') not reported at its ')'");
    CHECK(r.v[r.n - 1].kind == MS_EV_ERROR &&
              strcmp(r.v[r.n - 1].message, "1:38: missing '}' to close the block opened at 1:2") ==
                  0,
          "open block at the end not reported: %s", r.v[r.n - 1].message);
    free_recs(&r);
}

/* A statement longer than the limit stops the stream early, at the same
 * diagnostic the whole-plan checker gives. */
static void test_overlong_statement(void)
{
    size_t n = 70000;
    char *plan = malloc(n + 16);
    memcpy(plan, "tc(1);l('", 9);
    memset(plan + 9, 'x', n);
    strcpy(plan + 9 + n, "')");
    size_t len = strlen(plan);
    ms_result r;
    minispec_compile(reg, plan, len, NULL, &r);
    CHECK(!r.ok && r.ndiags == 1 && r.diags[0].col == 7 &&
              strcmp(r.diags[0].message, "statement longer than 65536 bytes") == 0,
          "whole: %s", r.ndiags ? r.diags[0].message : "ok");
    ms_result_free(&r);
    ms_stream *s = ms_stream_new(reg, NULL);
    ms_event ev;
    ms_event_kind k = MS_EV_NONE;
    size_t fed = 0;
    while (fed < len && k != MS_EV_ERROR) {
        size_t c = len - fed < 1000 ? len - fed : 1000;
        ms_stream_feed(s, plan + fed, c);
        fed += c;
        while ((k = ms_stream_next(s, &ev)) != MS_EV_NONE && k != MS_EV_ERROR) {
        }
    }
    CHECK(k == MS_EV_ERROR && fed < len && ev.diag && ev.diag->col == 7 &&
              strcmp(ev.diag->message, "statement longer than 65536 bytes") == 0,
          "stream did not stop at the long statement");
    ms_stream_free(s);
    free(plan);
}

/* TypeFly's forms mutated (bytes inserted, deleted, replaced): streamed,
 * each gives the events and the first error the whole plan gives, at the
 * earliest byte; the stream parser's shortcut for bytes that only lengthen
 * a token must never change an outcome. */
static void test_mutated_typefly_plans(void)
{
    static const char *const plans[] = {
        "8{_1=q,'what's the edible target?';?_1!=False{o,_1;a;->True}tc,45}->False",
        "4{_1=ox($1);?_1>0.6{tc(15)};?_1<0.4{tu(15)};_2=ox($1);?_2<0.6&_2>0.4{->True}}->rp",
        "o,chair_1;p;_obj=p('what \\'s this?');l,3;g('apple',20)",
        "?iv('a')&&iv('b')||False{l(\"x y\")}:{l('n')}",
        "?_1=sd('Any edible object here?'){g(_1)}r(-30);->re_plan",
        "tcc,180;_1=iis,apple;l,_1   ;  l('it''s')",
    };
    static const char bytes[] = "{};,()?=<>!&|+-*/_$'\"0123456789. \nabcpqrT\\:";
    unsigned seed = 7;
    for (size_t k = 0; k < sizeof plans / sizeof plans[0]; k++) {
        size_t n = strlen(plans[k]);
        for (int m = 0; m < 1500; m++) {
            char buf[256];
            memcpy(buf, plans[k], n + 1);
            size_t len = n;
            for (int edits = 1 + rand_r(&seed) % 3; edits > 0; edits--) {
                size_t at = (size_t)rand_r(&seed) % (len + 1);
                int op = rand_r(&seed) % 3;
                char c = bytes[(size_t)rand_r(&seed) % (sizeof bytes - 1)];
                if (op == 0 && len + 1 < sizeof buf) { /* insert */
                    memmove(buf + at + 1, buf + at, len - at + 1);
                    buf[at] = c;
                    len++;
                } else if (op == 1 && at < len) { /* delete */
                    memmove(buf + at, buf + at + 1, len - at);
                    len--;
                } else if (at < len) {
                    buf[at] = c;
                }
            }
            check_plan("mutated TypeFly plan", buf, len);
        }
    }
}

/* Work (bytes the parser scanned) to stream PLAN byte by byte; *EVENTS
 * counts the events, *LAST is the kind of the last one. */
static size_t work_byte_by_byte(const char *plan, size_t len, int *events, ms_event_kind *last)
{
    ms_stream *s = ms_stream_new(reg, NULL);
    ms_event ev;
    ms_event_kind k;
    *events = 0;
    *last = MS_EV_NONE;
    for (size_t i = 0; i <= len; i++) {
        if (i < len)
            ms_stream_feed(s, plan + i, 1);
        else
            ms_stream_finish(s);
        while ((k = ms_stream_next(s, &ev)) != MS_EV_NONE && k != MS_EV_DONE) {
            ++*events;
            *last = k;
            if (k == MS_EV_ERROR) break;
        }
    }
    size_t work = ms_stream_work(s);
    ms_stream_free(s);
    return work;
}

/* One long statement fed byte by byte costs work linear in its length
 * (SPEC §8): bytes that only lengthen its last token (a string's body, a
 * bare word, blanks) are scanned once, not the statement again from its
 * start at each byte, and tokens already read whole are not scanned again. Measured in bytes
 * scanned, not time: the bound is a small constant times the plan's length at every size, up to the
 * longest statement allowed (65536 bytes). */
static void test_long_statement_streams_in_linear_work(void)
{
    static const struct {
        const char *what, *head, *fill, *tail;
    } shapes[] = {
        {"string", "l('", "x", "')"},
        {"string with apostrophes and escapes", "l('", "it's \\' ", "')"},
        {"double-quoted string", "l(\"", "ab'", "\")"},
        {"v1 bare word", "l,", "w", ";"},
        {"blanks", "tc(", " ", "45)"},
        {"blank lines before a statement", "", "\n", "tc(45)"},
        /* 430 operators at 64 KiB, each ending a token after 150 blanks:
         * the tokens read whole are not scanned again */
        {"many tokens apart", "l(",
         "1+                                                                               "
         "                                                                      ",
         "1)"},
    };
    static const size_t sizes[] = {1024, 16384, 65536};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            size_t n = sizes[z], hl = strlen(shapes[k].head), tl = strlen(shapes[k].tail);
            size_t fl = strlen(shapes[k].fill);
            char *plan = malloc(n + 1);
            memcpy(plan, shapes[k].head, hl);
            for (size_t i = hl; i < n - tl; i++)
                plan[i] = shapes[k].fill[(i - hl) % fl];
            memcpy(plan + n - tl, shapes[k].tail, tl);
            plan[n] = '\0';
            if (k == 1) memcpy(plan + n - tl - 2, "ab", 2); /* no escape left open */
            int events;
            ms_event_kind last;
            size_t work = work_byte_by_byte(plan, n, &events, &last);
            CHECK(events == 1 && last == MS_EV_STATEMENT, "%s of %zu bytes: %d events, last %d",
                  shapes[k].what, n, events, (int)last);
            CHECK(work <= 4 * n, "%s of %zu bytes: %zu bytes scanned (more than 4 per byte)",
                  shapes[k].what, n, work);
            free(plan);
        }
    }
}

int main(void)
{
    const char *src = getenv("SRC");
    if (!src) src = ".";
    reg = test_ms_registry(src);
    test_example_plans(src);
    test_malformed_plans();
    test_edge_plans();
    test_statements_inside_open_blocks();
    test_overlong_statement();
    test_long_statement_streams_in_linear_work();
    test_mutated_typefly_plans();
    registry_free(reg);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
