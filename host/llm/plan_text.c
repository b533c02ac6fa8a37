/*
 * The reply cleaner: a small state machine over bytes. See plan_text.h for
 * the rules; the classifier below is where a line is judged.
 */
#include "llm/plan_text.h"
#include "textbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

enum { S_LINE, S_PLAN, S_SKIP };

enum line_kind { L_UNDECIDED, L_BLANK, L_PLAN, L_PROSE, L_FENCE, L_LABEL, L_INLINE };

void plan_stream_init(plan_stream *s)
{
    memset(s, 0, sizeof *s);
    s->state = S_LINE;
}

bool plan_stream_done(const plan_stream *s)
{
    return s->done;
}

const char *plan_text_status_name(plan_text_status st)
{
    switch (st) {
    case PLAN_TEXT_OK: return "ok";
    case PLAN_TEXT_EMPTY: return "empty";
    case PLAN_TEXT_PROSE: return "prose";
    }
    return "unknown";
}

static bool is_word(int c)
{
    return isalnum(c) || c == '_';
}

/* strchr, but a NUL byte is never in the set. */
static bool in_set(int c, const char *set)
{
    return c != 0 && strchr(set, c) != NULL;
}

static size_t skip_blanks(const char *s, size_t i, size_t n)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

/* Judges the start of a line (S[0..N), no line end). FINAL: the line is
 * complete, so an undecided prefix must be decided now. For L_LABEL, *CUT is
 * the length of the label with its colon. */
static enum line_kind classify(const char *s, size_t n, bool final, size_t *cut)
{
    enum line_kind later = final ? L_PROSE : L_UNDECIDED;
    size_t i = skip_blanks(s, 0, n);
    if (i == n) return final ? L_BLANK : L_UNDECIDED;
    unsigned char c = (unsigned char)s[i];

    if (c == '`') { /* a fence, or inline code: `g('chair_1')` */
        if (n - i >= 2 && s[i + 1] != '`') {
            *cut = i + 1;
            return L_INLINE;
        }
        if (n - i < 3) return later;
        return memcmp(s + i, "```", 3) == 0 ? L_FENCE : L_PROSE;
    }
    if (c == '-') { /* "->" returns; "- item" is a markdown list */
        if (n - i < 2) return later;
        return s[i + 1] == '>' ? L_PLAN : L_PROSE;
    }
    if (in_set(c, "?_${};(")) return L_PLAN;
    if (isdigit(c)) { /* a loop "3{" or a numbered list "1. " */
        size_t j = i;
        while (j < n && isdigit((unsigned char)s[j]))
            j++;
        j = skip_blanks(s, j, n);
        if (j == n) return later;
        return s[j] == '{' ? L_PLAN : L_PROSE;
    }
    if (!isalpha(c)) return L_PROSE;

    size_t j = i;
    while (j < n && is_word((unsigned char)s[j]))
        j++;
    if (j == n) return final ? L_PLAN : L_UNDECIDED; /* "a" alone is a plan */
    if (s[j] == ':') {
        *cut = j + 1;
        return L_LABEL;
    }
    if (in_set(s[j], "(,;{}=`")) return L_PLAN; /* "a`": a closing backtick */
    if (s[j] != ' ' && s[j] != '\t') return L_PROSE;
    size_t k = skip_blanks(s, j, n);
    if (k == n) return final ? L_PLAN : L_UNDECIDED;
    return in_set(s[k], "(,;{}=") ? L_PLAN : L_PROSE;
}

/* ---- output --------------------------------------------------------------- */

/* One plan byte: whitespace waits until something follows it, and leading
 * whitespace never comes out. */
static void put(plan_stream *s, textbuf *o, char c)
{
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        if (s->emitted == 0) return;
        if (s->nws == sizeof s->ws) { /* a long run: it is inner whitespace anyway */
            textbuf_add(o, s->ws, s->nws);
            s->nws = 0;
        }
        s->ws[s->nws++] = c;
        return;
    }
    textbuf_add(o, s->ws, s->nws);
    s->nws = 0;
    textbuf_add(o, &c, 1);
    s->emitted++;
}

/* ---- the machine ------------------------------------------------------------ */

static void end_plan(plan_stream *s)
{
    s->done = true;
    s->nhold = 0;
    s->ticks = 0;
}

/* A plan byte inside a line, watching for a fence that ends the block. */
static void plan_byte(plan_stream *s, textbuf *o, char c)
{
    if (c == '`') {
        if (s->inline_code || ++s->ticks == 3) end_plan(s);
        return;
    }
    for (; s->ticks > 0; s->ticks--)
        put(s, o, '`'); /* lone backticks were content */
    put(s, o, c);
    if (c == '\n' && !s->fenced) s->state = S_LINE;
}

/* Acts on the held line start. Returns true if the line is decided. */
static bool decide(plan_stream *s, textbuf *o, bool final)
{
    for (;;) {
        size_t cut = 0;
        enum line_kind k = classify(s->hold, s->nhold, final, &cut);
        switch (k) {
        case L_UNDECIDED: return false;
        case L_BLANK: s->nhold = 0; return true;
        case L_LABEL:
            if (s->emitted) { /* "Note: ..." after the plan */
                end_plan(s);
                return true;
            }
            memmove(s->hold, s->hold + cut, s->nhold - cut);
            s->nhold -= cut;
            continue; /* judge what follows the label on the same line */
        case L_INLINE:
            if (s->emitted || s->inline_code) {
                end_plan(s);
                return true;
            }
            s->inline_code = true;
            memmove(s->hold, s->hold + cut, s->nhold - cut);
            s->nhold -= cut;
            continue;
        case L_FENCE:
            s->nhold = 0;
            if (s->emitted)
                end_plan(s); /* closes the plan */
            else {
                s->fenced = true;
                s->state = S_SKIP; /* the info string ("minispec") */
            }
            return true;
        case L_PROSE:
            s->nhold = 0;
            if (s->emitted)
                end_plan(s);
            else {
                s->saw_prose = true;
                s->state = S_SKIP;
            }
            return true;
        case L_PLAN: {
            size_t n = s->nhold;
            s->nhold = 0;
            s->state = S_PLAN;
            for (size_t i = 0; i < n && !s->done; i++)
                plan_byte(s, o, s->hold[i]);
            return true;
        }
        }
    }
}

static void step(plan_stream *s, textbuf *o, char c)
{
    switch (s->state) {
    case S_SKIP:
        if (c == '\n') s->state = s->fenced ? S_PLAN : S_LINE;
        return;
    case S_PLAN: plan_byte(s, o, c); return;
    case S_LINE:
        if (c == '\n' || c == '\r') {
            decide(s, o, true);
            if (!s->done && s->state == S_PLAN)
                plan_byte(s, o, c);
            else if (s->state == S_SKIP && c == '\n')
                s->state = s->fenced ? S_PLAN : S_LINE;
            return;
        }
        s->hold[s->nhold++] = c;
        if (!decide(s, o, s->nhold == sizeof s->hold) && s->nhold == sizeof s->hold) s->nhold = 0;
        return;
    }
}

static int flush(textbuf *o, plan_text_emit_fn emit, void *ud)
{
    int rc = 0;
    if (o->len && emit) rc = emit(ud, o->s, o->len);
    textbuf_free(o);
    return rc;
}

int plan_stream_feed(plan_stream *s, const char *text, size_t len, plan_text_emit_fn emit, void *ud)
{
    textbuf o = {0};
    for (size_t i = 0; i < len && !s->done; i++)
        step(s, &o, text[i]);
    return flush(&o, emit, ud);
}

plan_text_status plan_stream_finish(plan_stream *s, plan_text_emit_fn emit, void *ud)
{
    textbuf o = {0};
    if (!s->done && s->state == S_LINE && s->nhold) decide(s, &o, true);
    s->done = true;
    s->nws = 0; /* trailing whitespace */
    s->ticks = 0;
    flush(&o, emit, ud);
    if (s->emitted) return PLAN_TEXT_OK;
    return s->saw_prose ? PLAN_TEXT_PROSE : PLAN_TEXT_EMPTY;
}

static int collect(void *ud, const char *text, size_t len)
{
    textbuf_add(ud, text, len);
    return 0;
}

plan_text_status plan_text_clean(const char *reply, size_t len, char **outp, size_t *outlen)
{
    plan_stream s;
    textbuf o = {0};
    plan_stream_init(&s);
    plan_stream_feed(&s, reply, len, collect, &o);
    plan_text_status st = plan_stream_finish(&s, collect, &o);
    *outlen = o.len;
    *outp = textbuf_take(&o);
    if (!*outp) {
        *outlen = 0;
        return PLAN_TEXT_EMPTY;
    }
    return st;
}
