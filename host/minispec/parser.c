/*
 * The MiniSpec grammar (SPEC §4), one unit at a time, in the order of the
 * grammar:
 *
 *   program    := { statement [';'] }
 *   statement  := loop | cond | assign | return | call
 *   loop       := INT '{' program '}'
 *   cond       := '?' [ VAR '=' ] condition '{' program '}'
 *   assign     := VAR '=' expr
 *   return     := '->' expr
 *   call       := NAME [ '(' [ expr {',' expr} ] ')' | ',' expr {',' expr} ]
 *   else       := ':' '{' program '}'     (right after a condition's '}')
 *
 * Expressions use the usual precedence: '|' < '&' < comparison < '+' '-' <
 * '*' '/' < unary '-'. A v1 argument list (after ',') holds arithmetic only,
 * so it ends at a comparator, '&', '|', ';', '{' or '}'. Inside an argument
 * list a word not followed by '(' is a bare-word string (`o,apple`).
 *
 * Running out of input (a partial token) unwinds to ms_parser_step (unit.c)
 * with longjmp; so do syntax errors. Everything a unit allocates lives in
 * the arena, which is reset per unit, so unwinding leaks nothing.
 */
#include "minispec/parser.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values and operators one statement may hold; keeps the recursive emitter
 * and checker shallow. */
#define MS_MAX_UNIT_NODES 1000
#define MS_MAX_CALL_ARGS 16

/* Tokens are read and copied field by field on purpose: the lexer writes
 * them field by field, and a whole-struct copy right after (a 16-byte load
 * over several smaller stores) stalls on store forwarding, which once cost
 * a third of the compile time. */
static void token_copy(ms_token *d, const ms_token *s)
{
    d->off = s->off;
    d->len = s->len;
    d->line = s->line;
    d->col = s->col;
    d->kind = s->kind;
    d->partial = s->partial;
    d->plain = s->plain;
}

/* ---- diagnostics ---- */

static void vdiag(ms_diag **arr, int *n, int *cap, int line, int col, const char *fmt, va_list ap)
{
    if (*n == *cap) *arr = ms_grow(*arr, cap, sizeof **arr);
    ms_diag *d = &(*arr)[(*n)++];
    d->line = line;
    d->col = col;
    vsnprintf(d->message, sizeof d->message, fmt, ap);
}

void ms_parser_diag(ms_parser *P, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (P->ndiags >= MS_MAX_DIAGS)
        P->dropped_diags++;
    else
        vdiag(&P->diags, &P->ndiags, &P->cap_diags, line, col, fmt, ap);
    va_end(ap);
}

/* A problem found while reading the current unit; kept only if the unit
 * completes (a partial unit is read again later). */
void ms_parser_diag_unit(ms_parser *P, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdiag(&P->pending, &P->npending, &P->cap_pending, line, col, fmt, ap);
    va_end(ap);
}

/* The unit needs more input: the token AT touches the end of the buffer
 * (NULL when the wait is for something else). unit.c skips reading the
 * unit again while new bytes only continue AT. */
static _Noreturn void wait_for(ms_parser *P, const ms_token *at)
{
    P->stall_known = at != NULL;
    if (at) token_copy(&P->stall, at);
    longjmp(P->jb, MS_JMP_MORE);
}

static _Noreturn void syntax_error(ms_parser *P, const ms_token *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static _Noreturn void syntax_error(ms_parser *P, const ms_token *at, const char *fmt, ...)
{
    /* A token still arriving is quoted in the message: wait for all of it. */
    if (at->partial) wait_for(P, at);
    va_list ap;
    va_start(ap, fmt);
    vdiag(&P->pending, &P->npending, &P->cap_pending, at->line, at->col, fmt, ap);
    va_end(ap);
    if (at->kind == MS_T_ERROR) /* the lexer's own words say more */
        snprintf(P->pending[P->npending - 1].message, sizeof P->pending->message, "%s",
                 P->lx.error);
    token_copy(&P->err_at, at);
    longjmp(P->jb, MS_JMP_SYNTAX);
}

/* ---- tokens ---- */

/* Stream mode reads a waiting unit again as bytes arrive; the tokens it
 * has already read whole are taken from the unit's token cache instead of
 * being scanned again (with the blanks between them): a complete token
 * stays what it is however many bytes follow. Errors are not cached (their
 * message lives in the lexer). */
static bool cached_token(ms_parser *P)
{
    if (P->recover) return false;
    if (P->tcache_at < P->ntcache && P->tcache[P->tcache_at].from == P->lx.at.pos) {
        const struct ms_cached_token *c = &P->tcache[P->tcache_at++];
        token_copy(&P->ahead, &c->tok);
        P->lx.at = c->to;
        return true;
    }
    P->ntcache = P->tcache_at; /* read differently from here: forget the rest */
    return false;
}

static void cache_token(ms_parser *P)
{
    if (P->recover || P->ahead.partial || P->ahead.kind == MS_T_ERROR || P->tcache_at != P->ntcache)
        return;
    if (P->ntcache == P->cap_tcache)
        P->tcache = ms_grow(P->tcache, &P->cap_tcache, sizeof *P->tcache);
    struct ms_cached_token *c = &P->tcache[P->ntcache++];
    c->from = P->before_ahead.pos;
    c->to = P->lx.at;
    token_copy(&c->tok, &P->ahead);
    P->tcache_at = P->ntcache;
}

static const ms_token *peek_slow(ms_parser *P)
{
    if (!P->have_ahead) {
        P->before_ahead.pos = P->lx.at.pos;
        P->before_ahead.line = P->lx.at.line;
        P->before_ahead.col = P->lx.at.col;
        P->have_ahead = true;
        /* A whole plan is final: no token cache, no partial token. */
        if (P->recover && P->lx.final) {
            ms_lexer_next(&P->lx, &P->ahead);
            return &P->ahead;
        }
        if (!cached_token(P)) {
            ms_lexer_next(&P->lx, &P->ahead);
            cache_token(P);
        }
    }
    if (P->ahead.partial && !ms_tok_kind_certain(P->ahead.kind)) wait_for(P, &P->ahead);
    return &P->ahead;
}

/* The lookahead token (scanned once, then kept until consumed). */
static inline const ms_token *peek(ms_parser *P)
{
    if (P->have_ahead && !P->ahead.partial) return &P->ahead;
    return peek_slow(P);
}

/* Consumes the lookahead token, copying it into OUT when OUT is given. */
static inline void next_into(ms_parser *P, ms_token *out)
{
    const ms_token *t = peek(P);
    if (t->partial) wait_for(P, t);
    if (t->kind == MS_T_ERROR) syntax_error(P, t, "%s", P->lx.error);
    P->have_ahead = false;
    P->unit_end = t->off + t->len;
    if (out) token_copy(out, t);
}

static void next(ms_parser *P)
{
    next_into(P, NULL);
}

/* ---- syntax tree ---- */

static ms_expr *new_expr(ms_parser *P, ms_expr_kind kind, const ms_token *at)
{
    if (++P->unit_nodes > MS_MAX_UNIT_NODES)
        syntax_error(P, at, "statement too long (more than %d values and operators)",
                     MS_MAX_UNIT_NODES);
    ms_expr *e = ms_expr_new(&P->arena, kind);
    e->line = at->line;
    e->col = at->col;
    return e;
}

static void enter(ms_parser *P, const ms_token *at)
{
    if (++P->nesting > MS_MAX_NESTING)
        syntax_error(P, at,
                     "nested too deeply (more than %d levels of blocks, parentheses "
                     "and calls)",
                     MS_MAX_NESTING);
}

static long parse_index(const char *s, size_t n)
{
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (v > (LONG_MAX - 9) / 10) return LONG_MAX;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* The number of the variable TOK, or a syntax error when it is too long. */
static long var_id(ms_parser *P, const ms_token *tok)
{
    long id = ms_var_id(P, P->lx.src + tok->off, tok->len);
    if (id >= 0) return id;
    if (id == -2) syntax_error(P, tok, "variable number too large (at most _9999)");
    syntax_error(P, tok, "variable name too long (at most %d characters after '_')",
                 MS_VAR_NAME_MAX);
}

static ms_expr *parse_expr(ms_parser *P, bool in_args);
static ms_expr *parse_additive(ms_parser *P, bool in_args);

static bool word_is(const ms_parser *P, const ms_token *t, const char *w)
{
    const char *p = P->lx.src + t->off;
    if (p[0] != w[0]) return false;
    size_t n = strlen(w);
    return t->len == n && memcmp(p, w, n) == 0;
}

static bool is_replan(const skill *s)
{
    return s && s->name[0] == 'r' && strcmp(s->name, "replan") == 0;
}

/* 1 when the token after a skill's name starts its arguments (a call
 * `p()` is settled once its arguments are read), else 0. */
static int args_follow(const ms_token *t)
{
    return t->kind == MS_T_COMMA || t->kind == MS_T_LPAREN;
}

/* call := NAME [ '(' args ')' | ',' args ]   (NAME already read) */
static ms_expr *parse_call(ms_parser *P, const ms_token *name, const skill *s)
{
    ms_expr *e = new_expr(P, MS_E_CALL, name);
    e->skill = s;
    /* Room for the most arguments a call may have, filled in place: the
     * arena is reset per unit, and a copy of a variable size would compile
     * to `rep movs`, slow to start. */
    ms_expr **args = ms_arena_alloc(&P->arena, sizeof *args * MS_MAX_CALL_ARGS);
    int n = 0;
    const ms_token *t = peek(P);
    if (t->kind == MS_T_LPAREN) {
        ms_token open;
        next_into(P, &open);
        enter(P, &open);
        P->unit_v2++;
        if (peek(P)->kind != MS_T_RPAREN) {
            for (;;) {
                if (n == MS_MAX_CALL_ARGS)
                    syntax_error(P, peek(P), "too many arguments (at most %d)", MS_MAX_CALL_ARGS);
                args[n++] = parse_expr(P, true);
                if (peek(P)->kind != MS_T_COMMA) break;
                next(P);
            }
        }
        if (peek(P)->kind != MS_T_RPAREN) {
            char what[64];
            syntax_error(P, peek(P), "expected ',' or ')' after an argument of '%.*s', found %s",
                         (int)name->len, P->lx.src + name->off,
                         ms_token_describe(P->lx.src, peek(P), what, sizeof what));
        }
        next(P);
        P->nesting--;
    } else if (t->kind == MS_T_COMMA) {
        enter(P, name);
        P->unit_v1++;
        do {
            next(P);
            if (n == MS_MAX_CALL_ARGS)
                syntax_error(P, peek(P), "too many arguments (at most %d)", MS_MAX_CALL_ARGS);
            args[n++] = parse_additive(P, true);
        } while (peek(P)->kind == MS_T_COMMA);
        P->nesting--;
    }
    e->nargs = n;
    e->args = args;
    if (s) {
        const skill *run = ms_call_skill(P, P->lx.src + name->off, name->len, s, n);
        if (run != s) ms_parser_note_skill(P, run);
        e->skill = s = run;
        ms_check_call(P, name, s, e->args, n);
    }
    return e;
}

/* operand := literal | VAR | ARG | call | '(' expr ')' */
static ms_expr *parse_operand(ms_parser *P, bool in_args)
{
    const ms_token *t = peek(P);
    char what[64];
    switch (t->kind) {
    case MS_T_INT:
    case MS_T_FLOAT: {
        ms_token tok;
        next_into(P, &tok);
        ms_expr *e = new_expr(P, MS_E_NUMBER, &tok);
        e->text = P->lx.src + tok.off;
        e->len = tok.len;
        e->is_int = tok.kind == MS_T_INT;
        /* The value is needed only to write a numeral too long for Lua;
         * the checker reads short ones itself when it must. */
        if (tok.len > 100) {
            char digits[400];
            size_t n = tok.len < sizeof digits - 1 ? tok.len : sizeof digits - 1;
            memcpy(digits, e->text, n);
            digits[n] = '\0';
            e->value = tok.len < sizeof digits - 1 ? strtod(digits, NULL) : HUGE_VAL;
        }
        return e;
    }
    case MS_T_STRING: {
        ms_token tok;
        next_into(P, &tok);
        ms_expr *e = new_expr(P, MS_E_STRING, &tok);
        const char *body = P->lx.src + tok.off + 1;
        if (tok.plain) { /* the bytes as they are, also in Lua */
            e->text = body;
            e->len = tok.len - 2;
            e->plain = true;
            return e;
        }
        if (!memchr(body, '\\', tok.len - 2)) { /* no escapes: the bytes as they are */
            e->text = body;
            e->len = tok.len - 2;
            return e;
        }
        char *text = ms_arena_alloc(&P->arena, tok.len);
        e->len = ms_string_decode(P->lx.src, &tok, text);
        e->text = text;
        return e;
    }
    case MS_T_VAR: {
        ms_token tok;
        next_into(P, &tok);
        ms_expr *e = new_expr(P, MS_E_VAR, &tok);
        e->id = var_id(P, &tok);
        e->text = P->lx.src + tok.off;
        e->len = tok.len;
        if (!ms_defined(P, e->id))
            ms_parser_diag_unit(P, tok.line, tok.col, "%.*s used before assignment", (int)tok.len,
                                e->text);
        return e;
    }
    case MS_T_ARG: {
        ms_token tok;
        next_into(P, &tok);
        ms_expr *e = new_expr(P, MS_E_ARG, &tok);
        e->id = tok.len > 10 ? LONG_MAX : parse_index(P->lx.src + tok.off + 1, tok.len - 1);
        if (!P->in_skill)
            ms_parser_diag_unit(P, tok.line, tok.col,
                                "%s can only be used inside a skill definition",
                                ms_token_describe(P->lx.src, &tok, what, sizeof what));
        else if (e->id < 1 || e->id > P->nparams)
            ms_parser_diag_unit(P, tok.line, tok.col,
                                "%s is out of range: this skill takes %d argument%s",
                                ms_token_describe(P->lx.src, &tok, what, sizeof what), P->nparams,
                                P->nparams == 1 ? "" : "s");
        return e;
    }
    case MS_T_LPAREN: {
        ms_token open;
        next_into(P, &open);
        enter(P, &open);
        ms_expr *e = parse_expr(P, in_args);
        const ms_token *c = peek(P);
        if (c->kind != MS_T_RPAREN)
            syntax_error(P, c, "missing ')' to close the '(' at %d:%d (found %s)", open.line,
                         open.col, ms_token_describe(P->lx.src, c, what, sizeof what));
        next(P);
        P->nesting--;
        return e;
    }
    case MS_T_WORD: {
        ms_token tok;
        next_into(P, &tok);
        if (word_is(P, &tok, "True")) return new_expr(P, MS_E_TRUE, &tok);
        if (word_is(P, &tok, "False")) return new_expr(P, MS_E_FALSE, &tok);
        if (word_is(P, &tok, "None")) return new_expr(P, MS_E_NONE, &tok);
        if (in_args && peek(P)->kind != MS_T_LPAREN) { /* v1 bare word: o,apple */
            ms_expr *e = new_expr(P, MS_E_STRING, &tok);
            e->text = P->lx.src + tok.off;
            e->len = tok.len;
            e->plain = true; /* letters, digits and '_' */
            return e;
        }
        const skill *s = ms_lookup_skill(P, P->lx.src + tok.off, tok.len);
        if (s) {
            s = ms_call_skill(P, P->lx.src + tok.off, tok.len, s, args_follow(peek(P)));
            ms_parser_note_skill(P, s);
        } else {
            s = ms_check_skill(P, &tok); /* reports it, with a hint */
        }
        if (s && s->returns == SKILL_T_NONE)
            ms_parser_diag_unit(P, tok.line, tok.col, "%s%s has no value; use it as a statement",
                                s->name, is_replan(s) ? " ends the plan and" : "");
        return parse_call(P, &tok, s);
    }
    case MS_T_ERROR:
        next(P); /* reports the lexer's message */
    /* fallthrough */
    default:
        syntax_error(P, t, "expected a value, found %s",
                     ms_token_describe(P->lx.src, t, what, sizeof what));
    }
}

/* unary := '-' unary | operand */
static ms_expr *parse_unary(ms_parser *P, bool in_args)
{
    if (peek(P)->kind != MS_T_MINUS) return parse_operand(P, in_args);
    ms_token minus;
    next_into(P, &minus);
    enter(P, &minus);
    ms_expr *e = new_expr(P, MS_E_NEG, &minus);
    e->a = parse_unary(P, in_args);
    P->nesting--;
    return e;
}

static bool is_non_number_literal(const ms_expr *e)
{
    return e->kind == MS_E_STRING || e->kind == MS_E_TRUE || e->kind == MS_E_FALSE ||
           e->kind == MS_E_NONE;
}

static ms_expr *binary(ms_parser *P, const ms_token *op, ms_expr_kind kind, ms_expr *a, ms_expr *b)
{
    ms_expr *e = new_expr(P, kind, op);
    e->op = op->kind;
    e->a = a;
    e->b = b;
    if (kind == MS_E_BINARY) {
        const ms_expr *bad = is_non_number_literal(a) ? a : is_non_number_literal(b) ? b : NULL;
        if (bad)
            ms_parser_diag_unit(P, op->line, op->col, "'%.*s' needs numbers, got %s", (int)op->len,
                                P->lx.src + op->off,
                                bad->kind == MS_E_STRING ? "a string"
                                : bad->kind == MS_E_NONE ? "None"
                                                         : "a bool");
    }
    return e;
}

/* Binding power of a binary operator: '|' < '&' < comparison < '+' '-' <
 * '*' '/'; 0 for anything else. */
static int binary_power(int kind)
{
    switch (kind) {
    case MS_T_OR: return 1;
    case MS_T_AND: return 2;
    case MS_T_EQ:
    case MS_T_NE:
    case MS_T_LT:
    case MS_T_GT:
    case MS_T_LE:
    case MS_T_GE: return 3;
    case MS_T_PLUS:
    case MS_T_MINUS: return 4;
    case MS_T_STAR:
    case MS_T_SLASH: return 5;
    default: return 0;
    }
}

/* binary := unary { OP binary }, operators of power MIN and above, all left
 * associative; comparisons do not chain (`a < b < c` is an error). One loop
 * instead of a function per precedence level keeps a plain operand cheap. */
static ms_expr *parse_binary(ms_parser *P, bool in_args, int min)
{
    ms_expr *e = parse_unary(P, in_args);
    for (;;) {
        int power = binary_power(peek(P)->kind);
        if (power == 0 || power < min) return e;
        ms_token op;
        next_into(P, &op);
        ms_expr *rhs = parse_binary(P, in_args, power + 1);
        ms_expr_kind kind = power == 1   ? MS_E_OR
                            : power == 2 ? MS_E_AND
                            : power == 3 ? MS_E_COMPARE
                                         : MS_E_BINARY;
        e = binary(P, &op, kind, e, rhs);
        if (power == 3 && binary_power(peek(P)->kind) == 3)
            syntax_error(P, peek(P), "comparisons cannot be chained; join them with '&'");
    }
}

/* additive := arithmetic only: what a v1 argument may hold */
static ms_expr *parse_additive(ms_parser *P, bool in_args)
{
    return parse_binary(P, in_args, 4);
}

/* expr := the whole expression grammar (a condition is an expr) */
static ms_expr *parse_expr(ms_parser *P, bool in_args)
{
    return parse_binary(P, in_args, 1);
}

/* ---- statements ---- */

static void push_block(ms_parser *P, ms_block_kind kind, const ms_token *brace, long count)
{
    if (P->nblocks == P->cap_blocks)
        P->blocks = ms_grow(P->blocks, &P->cap_blocks, sizeof *P->blocks);
    ms_open_block *b = &P->blocks[P->nblocks++];
    b->kind = kind;
    b->line = brace->line;
    b->col = brace->col;
    b->count = count;
    b->defs_mark = P->ndefs_log;
    b->body_start = 0;
}

/* Takes the '{' that opens a block after WHAT (followed by the text of
 * token AT when given: the loop count) into BRACE and enters the block;
 * any other token is a syntax error. */
static void open_brace(ms_parser *P, const char *what, const ms_token *at, ms_token *brace)
{
    const ms_token *t = peek(P);
    if (t->kind != MS_T_LBRACE) {
        char found[64];
        syntax_error(P, t, "expected '{' after %s%s%.*s, found %s", what, at ? " " : "",
                     at ? (int)at->len : 0, at ? P->lx.src + at->off : "",
                     ms_token_describe(P->lx.src, t, found, sizeof found));
    }
    next_into(P, brace);
    enter(P, brace);
}

/* loop := INT '{' program '}'   (header only: the body comes unit by unit) */
static ms_event_kind parse_loop(ms_parser *P, ms_event *ev)
{
    ms_token num;
    next_into(P, &num);
    char what[64];
    if (num.kind == MS_T_FLOAT)
        syntax_error(P, &num, "expected a statement, found %s",
                     ms_token_describe(P->lx.src, &num, what, sizeof what));
    ms_token brace;
    open_brace(P, "the loop count", &num, &brace);
    long count = parse_index(P->lx.src + num.off, num.len);
    if (count < 1 || count > P->max_loop)
        ms_parser_diag_unit(P, num.line, num.col, "loop count %.*s%s must be between 1 and %d",
                            num.len > 20 ? 20 : (int)num.len, P->lx.src + num.off,
                            num.len > 20 ? "..." : "", P->max_loop);
    ms_buf_addlit(P->out, "for _ = 1, ");
    ms_buf_addi(P->out, count);
    ms_buf_addlit(P->out, " do");
    ev->block = MS_BLOCK_LOOP;
    ev->count = count;
    push_block(P, MS_BLOCK_LOOP, &brace, count);
    return MS_EV_BLOCK_BEGIN;
}

/* "v._1 = VALUE; " for a condition that assigns VAR. */
static void emit_assign(ms_buf *out, const ms_expr *var, const ms_expr *value)
{
    ms_emit_var(out, var->id, var->text, var->len);
    ms_buf_addlit(out, " = ");
    ms_emit_expr(out, value);
    ms_buf_addlit(out, "; ");
}

/* cond := '?' [ VAR '=' ] condition '{' program '}'
 * `?_1=sd('edible?'){g(_1)}` (TypeFly 2.0) assigns the value and tests it. */
static ms_event_kind parse_cond(ms_parser *P, ms_event *ev)
{
    next(P);
    int npending = P->npending;
    ms_expr *cond = parse_expr(P, false);
    ms_expr *assigned = NULL;
    if (cond->kind == MS_E_VAR && peek(P)->kind == MS_T_ASSIGN) {
        P->npending = npending; /* it is being assigned, not used */
        next(P);
        assigned = cond;
        cond = parse_expr(P, false);
        P->unit_assign = assigned->id;
    }
    ms_token brace;
    open_brace(P, "the condition", NULL, &brace);
    ms_expr *value = cond;
    if (assigned) { /* v._1 = value; if ms.truth(v._1) then */
        emit_assign(P->out, assigned, value);
        cond = assigned;
    }
    ms_buf_addlit(P->out, "if ");
    ms_emit_truth(P->out, cond);
    ms_buf_addlit(P->out, " then");
    if (!P->recover) { /* the chunk a stream controller runs to decide the branch */
        if (assigned) emit_assign(&P->chunk, assigned, value);
        ms_buf_addlit(&P->chunk, "return ");
        ms_emit_truth(&P->chunk, cond);
    }
    ev->block = MS_BLOCK_COND;
    push_block(P, MS_BLOCK_COND, &brace, 0);
    return MS_EV_BLOCK_BEGIN;
}

/* assign := VAR '=' expr */
static ms_event_kind parse_assign(ms_parser *P)
{
    ms_token var;
    next_into(P, &var);
    long id = var_id(P, &var);
    const ms_token *t = peek(P);
    if (t->kind != MS_T_ASSIGN) {
        char what[64];
        syntax_error(P, t, "expected '=' after %.*s, found %s", (int)var.len, P->lx.src + var.off,
                     ms_token_describe(P->lx.src, t, what, sizeof what));
    }
    next(P);
    ms_expr *e = parse_expr(P, false);
    P->unit_assign = id;
    ms_emit_var(P->out, id, P->lx.src + var.off, var.len);
    ms_buf_addlit(P->out, " = ");
    ms_emit_expr(P->out, e);
    return MS_EV_STATEMENT;
}

/* `->rp`: TypeFly 2024's own `orienting` ends so. The return is the
 * replan: the plan (or skill) stops and a new plan is asked for. */
static bool parse_return_replan(ms_parser *P)
{
    const ms_token *t = peek(P);
    if (t->kind != MS_T_WORD) return false;
    /* `->True`/`->False` end most plans; skill names are lower-case, and a
     * name of no skill costs a walk over the whole registry (check.c). */
    if (word_is(P, t, "True") || word_is(P, t, "False")) return false;
    const skill *s = ms_lookup_skill(P, P->lx.src + t->off, t->len);
    if (!is_replan(s)) return false;
    ms_token name;
    next_into(P, &name);
    ms_parser_note_skill(P, s);
    parse_call(P, &name, s);
    const ms_token *after = peek(P);
    if (binary_power(after->kind)) {
        char what[64];
        syntax_error(P, after, "%s ends the plan and has no value; found %s after it", s->name,
                     ms_token_describe(P->lx.src, after, what, sizeof what));
    }
    ms_buf_addlit(P->out, "do return ms.replan() end");
    return true;
}

/* return := '->' expr */
static ms_event_kind parse_return(ms_parser *P)
{
    next(P);
    if (parse_return_replan(P)) return MS_EV_STATEMENT;
    ms_expr *e = parse_expr(P, false);
    ms_buf_addlit(P->out, "do return ");
    ms_emit_expr(P->out, e);
    ms_buf_addlit(P->out, " end");
    return MS_EV_STATEMENT;
}

/* Quotes the text of a line from OFF for "found text '...'" messages. */
static void quote_line(ms_parser *P, size_t off, char *out, size_t outlen)
{
    size_t n = 0;
    while (off + n < P->lx.len && n < 40 && P->lx.src[off + n] != '\n' && P->lx.src[off + n] != ';')
        n++;
    if (n < 40 && off + n == P->lx.len && !P->lx.final)
        wait_for(P, NULL); /* quote the same text however the plan arrives */
    snprintf(out, outlen, "%.*s%s", (int)n, P->lx.src + off, n == 40 ? "..." : "");
}

/* A statement that starts with a name: a call, `rp`, or not MiniSpec. */
static ms_event_kind parse_call_statement(ms_parser *P)
{
    ms_token name;
    next_into(P, &name);
    char what[64];
    const ms_token *t = peek(P);
    if (t->kind == MS_T_ASSIGN)
        syntax_error(P, &name, "cannot assign to '%.*s' (variables are _1, _2, ...)", (int)name.len,
                     P->lx.src + name.off);
    if (word_is(P, &name, "True") || word_is(P, &name, "False") || word_is(P, &name, "None"))
        syntax_error(P, &name, "expected a statement, found %s",
                     ms_token_describe(P->lx.src, &name, what, sizeof what));
    const skill *s = ms_lookup_skill(P, P->lx.src + name.off, name.len);
    if (!s && (t->kind == MS_T_WORD || t->kind == MS_T_INT || t->kind == MS_T_FLOAT ||
               t->kind == MS_T_ERROR || t->kind == MS_T_STRING)) {
        /* Two words in a row: prose or another language, not a call. */
        char text[64];
        quote_line(P, name.off, text, sizeof text);
        syntax_error(P, &name, "expected a MiniSpec statement, found text '%s'", text);
    }
    if (s) {
        s = ms_call_skill(P, P->lx.src + name.off, name.len, s, args_follow(t));
        ms_parser_note_skill(P, s);
    } else {
        s = ms_check_skill(P, &name); /* reports it, with a hint */
    }
    ms_expr *call = parse_call(P, &name, s);
    if (is_replan(s)) {
        ms_buf_addlit(P->out, "do return ms.replan() end");
    } else {
        ms_emit_expr(P->out, call);
    }
    return MS_EV_STATEMENT;
}

/* ---- units ---- */

static ms_event_kind parse_close(ms_parser *P, ms_event *ev)
{
    ms_token brace;
    next_into(P, &brace);
    if (P->nblocks == 0) {
        ms_parser_diag_unit(P, brace.line, brace.col, "unexpected '}' (no block is open)");
        return MS_EV_NONE;
    }
    ms_open_block *b = &P->blocks[P->nblocks - 1];
    ev->block = b->kind;
    ev->count = b->count;
    return MS_EV_BLOCK_END;
}

/* else := ':' '{' program '}'   right after the '}' of a condition */
static ms_event_kind parse_else(ms_parser *P, ms_event *ev)
{
    ms_token colon;
    next_into(P, &colon);
    if (P->else_mark == (size_t)-1)
        syntax_error(P, &colon,
                     "':' may only follow the '}' of a condition (an else branch: "
                     "?cond{...}:{...})");
    ms_token brace;
    open_brace(P, "':'", NULL, &brace);
    ms_buf_addlit(P->out, "else");
    ev->block = MS_BLOCK_ELSE;
    push_block(P, MS_BLOCK_ELSE, &brace, 0);
    return MS_EV_BLOCK_BEGIN;
}

ms_event_kind ms_parse_unit(ms_parser *P, ms_event *ev)
{
    const ms_token *t = peek(P);
    ev->off = t->off;
    ev->line = t->line;
    ev->col = t->col;
    char what[64];
    switch (t->kind) {
    case MS_T_EOF: return MS_EV_DONE;
    case MS_T_SEMI: next(P); return MS_EV_NONE;
    case MS_T_RBRACE: return parse_close(P, ev);
    case MS_T_INT:
    case MS_T_FLOAT: return parse_loop(P, ev);
    case MS_T_QUESTION: return parse_cond(P, ev);
    case MS_T_VAR: return parse_assign(P);
    case MS_T_ARROW: return parse_return(P);
    case MS_T_WORD: return parse_call_statement(P);
    case MS_T_COLON: return parse_else(P, ev);
    case MS_T_ERROR:
        next(P); /* reports the lexer's message */
    /* fallthrough */
    default:
        syntax_error(P, t, "expected a statement, found %s",
                     ms_token_describe(P->lx.src, t, what, sizeof what));
    }
}
