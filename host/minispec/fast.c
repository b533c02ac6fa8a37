/*
 * The whole-plan compiler's fast path. Nearly every plan a planner sends is
 * valid, and for a valid plan most of the general parser's machinery does
 * nothing useful: tokens that may still grow, units read again as bytes
 * arrive, lines and columns kept for diagnostics, recovery after an error.
 * This path reads a final plan once, left to right, with a lexer that keeps
 * no positions, builds the same syntax tree as parser.c and hands it to the
 * same checker functions and the same Lua emitter.
 *
 * It never writes a diagnostic. At the first thing the general parser
 * would report (or anything unusual it does not handle: escapes in strings,
 * very long numerals, `$N`), it gives up and minispec_compile reads the
 * plan again with the general parser, so diagnostics come from one place.
 * Tests and the fuzzer compile every plan both ways and require the same
 * result.
 */
#include "minispec/parser.h"

#include <limits.h>
#include <setjmp.h>
#include <string.h>

/* Limits of parser.c, judged the same way. */
#define FAST_MAX_UNIT_NODES 1000
#define FAST_MAX_CALL_ARGS 16

typedef struct fast {
    ms_parser *P;
    const unsigned char *src;
    size_t len;
    size_t pos; /* next byte to scan */
    /* the current token: kind, first byte, length */
    int kind;
    size_t off;
    size_t tlen;
    int nesting; /* open blocks + parentheses and calls of the current unit */
    int nodes;   /* syntax tree nodes of the current unit */
    bool plain;  /* the last string scanned needs no escapes in Lua */
    jmp_buf give_up;
} fast;

static _Noreturn void fast_give_up(fast *F)
{
    longjmp(F->give_up, 1);
}

/* ---- tokens ---- */

/* What a byte starts: a one-byte token (its kind), or one of these. */
enum {
    B_OTHER = 0, /* not MiniSpec outside a string: give up */
    B_SPACE = 100,
    B_ALPHA,
    B_DIGIT,
    B_UNDER,
    B_QUOTE,
    B_MINUS,
    B_EQUAL,
    B_LESS,
    B_GREATER,
    B_BANG,
    B_AMP,
    B_BAR,
};

static const unsigned char fast_byte_class[256] = {
    [' '] = B_SPACE,         ['\t'] = B_SPACE,    ['\n'] = B_SPACE,        ['\r'] = B_SPACE,
    ['\f'] = B_SPACE,        ['\v'] = B_SPACE,    [';'] = MS_T_SEMI,       [','] = MS_T_COMMA,
    ['{'] = MS_T_LBRACE,     ['}'] = MS_T_RBRACE, ['('] = MS_T_LPAREN,     [')'] = MS_T_RPAREN,
    ['?'] = MS_T_QUESTION,   ['+'] = MS_T_PLUS,   ['*'] = MS_T_STAR,       ['/'] = MS_T_SLASH,
    ['_'] = B_UNDER,         ['\''] = B_QUOTE,    ['"'] = B_QUOTE,         ['-'] = B_MINUS,
    ['='] = B_EQUAL,         ['<'] = B_LESS,      ['>'] = B_GREATER,       ['!'] = B_BANG,
    ['&'] = B_AMP,           ['|'] = B_BAR,       ['0' ... '9'] = B_DIGIT, ['a' ... 'z'] = B_ALPHA,
    ['A' ... 'Z'] = B_ALPHA,
};

/* Bytes that continue a name: letters, digits, '_'. */
static const unsigned char fast_name_byte[256] = {
    ['0' ... '9'] = 1,
    ['a' ... 'z'] = 1,
    ['A' ... 'Z'] = 1,
    ['_'] = 1,
};

static bool fast_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* What ends a run of ordinary bytes inside a string: 1 its closing quote,
 * 2 a byte that Lua's string literal needs escaped (the string is then
 * not plain), 3 a byte the fast path leaves to parser.c (a backslash, a
 * newline). One table per quote. */
static const unsigned char fast_in_single[256] = {
    [0 ... 9] = 2, ['\n'] = 3, [11 ... 31] = 2, ['"'] = 2, ['\''] = 1, ['\\'] = 3, [127] = 2,
};
static const unsigned char fast_in_double[256] = {
    [0 ... 9] = 2, ['\n'] = 3, [11 ... 31] = 2, ['"'] = 1, ['\\'] = 3, [127] = 2,
};

/* A string from its opening quote at I; the token ends past the closing
 * one. A single quote followed by a letter or digit is an apostrophe, as
 * in the lexer. Sets F->plain. */
static size_t fast_scan_string(fast *F, size_t i)
{
    const unsigned char *s = F->src;
    size_t n = F->len;
    const unsigned char *stop = s[i] == '\'' ? fast_in_single : fast_in_double;
    bool single = s[i] == '\'';
    F->plain = true;
    i++;
    for (;;) {
        while (i < n && !stop[s[i]])
            i++;
        if (i >= n || stop[s[i]] == 3) fast_give_up(F);
        if (stop[s[i]] == 2) {
            F->plain = false;
            i++;
            continue;
        }
        i++;                                                   /* a quote */
        if (single && i < n && fast_name_byte[s[i]]) continue; /* what's */
        return i;
    }
}

/* The tokens that fast_scan leaves out of its own short path: numbers,
 * variables, strings and operators, starting at I with class C. */
static __attribute__((noinline)) void fast_scan_other(fast *F, size_t i, unsigned c)
{
    const unsigned char *s = F->src;
    size_t n = F->len, end = i + 1;
    int kind;
    switch (c) {
    case B_DIGIT:
        while (end < n && fast_digit(s[end]))
            end++;
        kind = MS_T_INT;
        if (end + 1 < n && s[end] == '.' && fast_digit(s[end + 1])) {
            end += 2;
            while (end < n && fast_digit(s[end]))
                end++;
            kind = MS_T_FLOAT;
        }
        break;
    case B_UNDER:
        while (end < n && fast_digit(s[end]))
            end++;
        /* `_obj` (named) and `_` alone: parser.c's business */
        if (end == i + 1 || (end < n && fast_name_byte[s[end]])) fast_give_up(F);
        kind = MS_T_VAR;
        break;
    case B_QUOTE:
        end = fast_scan_string(F, i);
        kind = MS_T_STRING;
        break;
    case B_MINUS: kind = end < n && s[end] == '>' ? (end++, MS_T_ARROW) : MS_T_MINUS; break;
    case B_EQUAL: kind = end < n && s[end] == '=' ? (end++, MS_T_EQ) : MS_T_ASSIGN; break;
    case B_LESS: kind = end < n && s[end] == '=' ? (end++, MS_T_LE) : MS_T_LT; break;
    case B_GREATER: kind = end < n && s[end] == '=' ? (end++, MS_T_GE) : MS_T_GT; break;
    case B_BANG:
        if (end >= n || s[end] != '=') fast_give_up(F);
        end++;
        kind = MS_T_NE;
        break;
    case B_AMP:
    case B_BAR:
        if (end < n && s[end] == s[i]) fast_give_up(F); /* && and || are refused */
        kind = c == B_AMP ? MS_T_AND : MS_T_OR;
        break;
    default: fast_give_up(F);
    }
    F->kind = kind;
    F->tlen = end - i;
    F->pos = end;
}

/* Scans the next token into F->kind/off/tlen: one-byte tokens and words
 * here, the rest in fast_scan_other. */
static void fast_scan(fast *F)
{
    const unsigned char *s = F->src;
    size_t i = F->pos, n = F->len;
    unsigned c = B_SPACE;
    while (i < n && (c = fast_byte_class[s[i]]) == B_SPACE)
        i++;
    F->off = i;
    if (i >= n) {
        F->kind = MS_T_EOF;
        F->tlen = 0;
        F->pos = i;
        return;
    }
    if (c < B_SPACE && c != B_OTHER) { /* a one-byte token: its kind */
        F->kind = (int)c;
        F->tlen = 1;
        F->pos = i + 1;
        return;
    }
    if (c == B_ALPHA) {
        size_t end = i + 1;
        while (end < n && fast_name_byte[s[end]])
            end++;
        F->kind = MS_T_WORD;
        F->tlen = end - i;
        F->pos = end;
        return;
    }
    fast_scan_other(F, i, c);
}

static bool fast_word_is(const fast *F, size_t off, size_t len, const char *w, size_t wlen)
{
    return len == wlen && memcmp(F->src + off, w, wlen) == 0;
}

/* ---- syntax tree (the nodes of parser.c, without positions) ---- */

static ms_expr *fast_node(fast *F, ms_expr_kind kind)
{
    if (++F->nodes > FAST_MAX_UNIT_NODES) fast_give_up(F);
    return ms_expr_new(&F->P->arena, kind);
}

static void fast_enter(fast *F)
{
    if (++F->nesting > MS_MAX_NESTING) fast_give_up(F);
}

static long fast_index_of(const fast *F, size_t off, size_t len)
{
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (v > (LONG_MAX - 9) / 10) return LONG_MAX;
        v = v * 10 + (F->src[off + i] - '0');
    }
    return v;
}

static void fast_note_skill(ms_parser *P, const skill *s)
{
    for (int i = 0; i < P->nused; i++)
        if (P->used[i] == s) return;
    if (P->nused == P->cap_used) P->used = ms_grow(P->used, &P->cap_used, sizeof *P->used);
    P->used[P->nused++] = s;
}

static ms_expr *fast_expr(fast *F, bool in_args, int min);

/* True when a call to S with ARGS certainly passes ms_check_call: the count
 * is in range and no literal argument has a type the skill refuses. When
 * false, ms_check_call decides. */
static bool fast_args_fit(const skill *s, ms_expr *const *args, int n)
{
    if (n < s->min_args || n > s->nargs) return false;
    for (int i = 0; i < n; i++) {
        skill_type want = s->args[i].type;
        if (want == SKILL_T_ANY || want == SKILL_T_NONE) continue;
        const ms_expr *a = args[i]->kind == MS_E_NEG ? args[i]->a : args[i];
        switch (a->kind) {
        case MS_E_NUMBER:
            if (!(want == SKILL_T_FLOAT || (want == SKILL_T_INT && a->is_int))) return false;
            break;
        case MS_E_STRING:
            if (want != SKILL_T_STR || a != args[i]) return false;
            break;
        case MS_E_TRUE:
        case MS_E_FALSE:
            if (want != SKILL_T_BOOL || a != args[i]) return false;
            break;
        case MS_E_NONE: return false;
        default: break; /* known only when it runs */
        }
    }
    return true;
}

/* 1 when the current token starts a call's arguments (as parser.c's
 * args_follow). */
static int fast_args_follow(const fast *F)
{
    return F->kind == MS_T_COMMA || F->kind == MS_T_LPAREN;
}

/* The arguments of a call to S, named SRC[OFF..OFF+LEN), the current token
 * following its name. */
static ms_expr *fast_call(fast *F, const skill *s, size_t off, size_t len)
{
    ms_parser *P = F->P;
    ms_expr *e = fast_node(F, MS_E_CALL);
    e->skill = s;
    ms_expr **args = ms_arena_alloc(&P->arena, sizeof *args * FAST_MAX_CALL_ARGS);
    int n = 0;
    if (F->kind == MS_T_LPAREN) {
        fast_scan(F);
        fast_enter(F);
        P->v2_calls++;
        if (F->kind != MS_T_RPAREN) {
            for (;;) {
                if (n == FAST_MAX_CALL_ARGS) fast_give_up(F);
                args[n++] = fast_expr(F, true, 1);
                if (F->kind != MS_T_COMMA) break;
                fast_scan(F);
            }
        }
        if (F->kind != MS_T_RPAREN) fast_give_up(F);
        fast_scan(F);
        F->nesting--;
    } else if (F->kind == MS_T_COMMA) {
        fast_enter(F);
        P->v1_calls++;
        do {
            fast_scan(F);
            if (n == FAST_MAX_CALL_ARGS) fast_give_up(F);
            args[n++] = fast_expr(F, true, 4);
        } while (F->kind == MS_T_COMMA);
        F->nesting--;
    }
    e->args = args;
    e->nargs = n;
    const skill *run = ms_call_skill(P, (const char *)F->src + off, len, s, n);
    if (run != s) fast_note_skill(P, run);
    e->skill = s = run;
    if (!fast_args_fit(s, args, n)) {
        ms_token at = {0};
        ms_check_call(P, &at, s, args, n);
        if (P->npending) fast_give_up(F);
    }
    return e;
}

/* operand := literal | VAR | call | '(' expr ')' */
static ms_expr *fast_operand(fast *F, bool in_args)
{
    ms_parser *P = F->P;
    size_t off = F->off, len = F->tlen;
    switch (F->kind) {
    case MS_T_INT:
    case MS_T_FLOAT: {
        if (len > 100) fast_give_up(F); /* written by value: parser.c's business */
        ms_expr *e = fast_node(F, MS_E_NUMBER);
        e->text = (const char *)F->src + off;
        e->len = len;
        e->is_int = F->kind == MS_T_INT;
        fast_scan(F);
        return e;
    }
    case MS_T_STRING: {
        ms_expr *e = fast_node(F, MS_E_STRING);
        e->text = (const char *)F->src + off + 1;
        e->len = len - 2;
        e->plain = F->plain;
        fast_scan(F);
        return e;
    }
    case MS_T_VAR: {
        if (len > 5) fast_give_up(F);
        ms_expr *e = fast_node(F, MS_E_VAR);
        e->id = fast_index_of(F, off + 1, len - 1);
        if (!ms_defined(P, e->id)) fast_give_up(F);
        fast_scan(F);
        return e;
    }
    case MS_T_LPAREN: {
        fast_scan(F);
        fast_enter(F);
        ms_expr *e = fast_expr(F, in_args, 1);
        if (F->kind != MS_T_RPAREN) fast_give_up(F);
        fast_scan(F);
        F->nesting--;
        return e;
    }
    case MS_T_WORD: {
        fast_scan(F);
        if (fast_word_is(F, off, len, "True", 4)) return fast_node(F, MS_E_TRUE);
        if (fast_word_is(F, off, len, "False", 5)) return fast_node(F, MS_E_FALSE);
        if (fast_word_is(F, off, len, "None", 4)) return fast_node(F, MS_E_NONE);
        if (in_args && F->kind != MS_T_LPAREN) { /* v1 bare word: o,apple */
            ms_expr *e = fast_node(F, MS_E_STRING);
            e->text = (const char *)F->src + off;
            e->len = len;
            return e;
        }
        const skill *s = ms_lookup_skill(P, (const char *)F->src + off, len);
        if (!s) fast_give_up(F);
        s = ms_call_skill(P, (const char *)F->src + off, len, s, fast_args_follow(F));
        if (s->returns == SKILL_T_NONE) fast_give_up(F);
        fast_note_skill(P, s);
        return fast_call(F, s, off, len);
    }
    default: fast_give_up(F);
    }
}

/* unary := '-' unary | operand */
static ms_expr *fast_unary(fast *F, bool in_args)
{
    if (F->kind != MS_T_MINUS) return fast_operand(F, in_args);
    fast_scan(F);
    fast_enter(F);
    ms_expr *e = fast_node(F, MS_E_NEG);
    e->a = fast_unary(F, in_args);
    F->nesting--;
    return e;
}

/* Binding powers of parser.c: '|' < '&' < comparison < '+' '-' < '*' '/'. */
static const unsigned char fast_power_of[MS_T_SLASH + 1] = {
    [MS_T_OR] = 1,   [MS_T_AND] = 2,   [MS_T_EQ] = 3,   [MS_T_NE] = 3,
    [MS_T_LT] = 3,   [MS_T_GT] = 3,    [MS_T_LE] = 3,   [MS_T_GE] = 3,
    [MS_T_PLUS] = 4, [MS_T_MINUS] = 4, [MS_T_STAR] = 5, [MS_T_SLASH] = 5,
};

static bool fast_non_number_literal(const ms_expr *e)
{
    return e->kind == MS_E_STRING || e->kind == MS_E_TRUE || e->kind == MS_E_FALSE ||
           e->kind == MS_E_NONE;
}

/* binary := unary { OP binary }, operators of power MIN and above */
static ms_expr *fast_expr(fast *F, bool in_args, int min)
{
    ms_expr *e = fast_unary(F, in_args);
    for (;;) {
        int power = fast_power_of[F->kind];
        if (power == 0 || power < min) return e;
        int op = F->kind;
        fast_scan(F);
        ms_expr *rhs = fast_expr(F, in_args, power + 1);
        ms_expr_kind kind = power == 1   ? MS_E_OR
                            : power == 2 ? MS_E_AND
                            : power == 3 ? MS_E_COMPARE
                                         : MS_E_BINARY;
        if (kind == MS_E_BINARY && (fast_non_number_literal(e) || fast_non_number_literal(rhs)))
            fast_give_up(F);
        ms_expr *b = fast_node(F, kind);
        b->op = (ms_tok_kind)op;
        b->a = e;
        b->b = rhs;
        e = b;
        if (power == 3 && fast_power_of[F->kind] == 3) fast_give_up(F); /* a < b < c */
    }
}

/* ---- statements ---- */

static void fast_push_block(ms_parser *P, ms_block_kind kind, long count)
{
    if (P->nblocks == P->cap_blocks)
        P->blocks = ms_grow(P->blocks, &P->cap_blocks, sizeof *P->blocks);
    ms_open_block *b = &P->blocks[P->nblocks++];
    b->kind = kind;
    b->line = b->col = 0;
    b->count = count;
    b->defs_mark = P->ndefs_log;
    P->indent++;
    b->body_start = P->lua.len; /* past the header's line */
}

/* The statement starting with the word at the current token. */
static void fast_call_statement(fast *F)
{
    ms_parser *P = F->P;
    size_t off = F->off, len = F->tlen;
    fast_scan(F);
    if (F->kind == MS_T_ASSIGN) fast_give_up(F);
    if (fast_word_is(F, off, len, "True", 4) || fast_word_is(F, off, len, "False", 5) ||
        fast_word_is(F, off, len, "None", 4))
        fast_give_up(F);
    const skill *s = ms_lookup_skill(P, (const char *)F->src + off, len);
    if (!s) fast_give_up(F);
    s = ms_call_skill(P, (const char *)F->src + off, len, s, fast_args_follow(F));
    fast_note_skill(P, s);
    ms_expr *c = fast_call(F, s, off, len);
    if (s->name[0] == 'r' && strcmp(s->name, "replan") == 0)
        ms_buf_addlit(&P->lua, "do return ms.replan() end");
    else
        ms_emit_expr(&P->lua, c);
}

/* One unit at the current token; false at the end of the plan. */
static bool fast_unit(fast *F)
{
    ms_parser *P = F->P;
    ms_arena_reset(&P->arena);
    F->nodes = 0;
    F->nesting = P->nblocks;
    size_t start = F->off;
    switch (F->kind) {
    case MS_T_EOF:
        if (P->nblocks) fast_give_up(F); /* a block left open */
        return false;
    case MS_T_SEMI: fast_scan(F); return true;
    case MS_T_RBRACE: {
        if (P->nblocks == 0) fast_give_up(F);
        fast_scan(F);
        ms_open_block *b = &P->blocks[--P->nblocks];
        if (b->kind == MS_BLOCK_COND) ms_forget_since(P, b->defs_mark);
        P->indent--;
        ms_buf_indent(&P->lua, P->indent);
        ms_buf_addlit(&P->lua, "end\n");
        return true;
    }
    default: break;
    }
    ms_buf_indent(&P->lua, P->indent);
    long assigned = -1;
    switch (F->kind) {
    case MS_T_INT: { /* loop := INT '{' program '}' */
        long count = fast_index_of(F, F->off, F->tlen);
        fast_scan(F);
        if (F->kind != MS_T_LBRACE) fast_give_up(F);
        fast_scan(F);
        fast_enter(F);
        if (count < 1 || count > P->max_loop) fast_give_up(F);
        ms_buf_addlit(&P->lua, "for _ = 1, ");
        ms_buf_addi(&P->lua, count);
        ms_buf_addlit(&P->lua, " do\n");
        fast_push_block(P, MS_BLOCK_LOOP, count);
        break;
    }
    case MS_T_QUESTION: { /* cond := '?' condition '{' program '}' */
        fast_scan(F);
        ms_expr *cond = fast_expr(F, false, 1);
        if (F->kind != MS_T_LBRACE) fast_give_up(F);
        fast_scan(F);
        fast_enter(F);
        ms_buf_addlit(&P->lua, "if ");
        ms_emit_truth(&P->lua, cond);
        ms_buf_addlit(&P->lua, " then\n");
        fast_push_block(P, MS_BLOCK_COND, 0);
        break;
    }
    case MS_T_VAR: { /* assign := VAR '=' expr */
        size_t off = F->off, len = F->tlen;
        if (len > 5) fast_give_up(F);
        fast_scan(F);
        if (F->kind != MS_T_ASSIGN) fast_give_up(F);
        fast_scan(F);
        ms_expr *e = fast_expr(F, false, 1);
        assigned = fast_index_of(F, off + 1, len - 1);
        ms_buf_addlit(&P->lua, "v._");
        ms_buf_addi(&P->lua, assigned);
        ms_buf_addlit(&P->lua, " = ");
        ms_emit_expr(&P->lua, e);
        ms_buf_addc(&P->lua, '\n');
        break;
    }
    case MS_T_ARROW: { /* return := '->' expr */
        fast_scan(F);
        ms_expr *e = fast_expr(F, false, 1);
        ms_buf_addlit(&P->lua, "do return ");
        ms_emit_expr(&P->lua, e);
        ms_buf_addlit(&P->lua, " end\n");
        break;
    }
    case MS_T_WORD:
        fast_call_statement(F);
        ms_buf_addc(&P->lua, '\n');
        break;
    default: fast_give_up(F);
    }
    /* parser.c measures up to the end of the unit's last token; this
     * measure (up to the next token) is never shorter. */
    if (F->off - start > MS_MAX_UNIT_BYTES) fast_give_up(F);
    if (assigned >= 0) ms_define(P, assigned);
    return true;
}

bool ms_fast_run(ms_parser *P)
{
    fast F;
    F.P = P;
    F.src = (const unsigned char *)P->lx.src;
    F.len = P->lx.len;
    F.pos = 0;
    F.nesting = F.nodes = 0;
    if (setjmp(F.give_up)) return false;
    fast_scan(&F);
    while (fast_unit(&F)) {
    }
    return true;
}
