/*
 * Units: the parser is driven one statement, block header, '}' or ';' at a
 * time. A unit that the input so far does not prove complete is dropped and
 * read again later; a complete one is committed: its checking effects,
 * its line of whole-plan Lua and, for the stream parser, its event chunk.
 * After a syntax error the whole-plan compiler skips to the end of the
 * broken statement and goes on, so that every independent error is found.
 */
#include "minispec/parser.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* After a syntax error (whole-plan mode): skip to the end of the broken
 * statement: past the next ';', up to a '}' that closes an open block, or
 * past a whole '{...}' group (the broken statement's block). */
static void resync(ms_parser *P)
{
    P->have_ahead = false;
    P->lx.at.pos = P->err_at.off;
    P->lx.at.line = P->err_at.line;
    P->lx.at.col = P->err_at.col;
    int depth = 0;
    for (;;) {
        ms_lexpos before = P->lx.at;
        ms_token t;
        ms_lexer_next(&P->lx, &t);
        if (t.kind == MS_T_EOF) {
            P->lx.at = before;
            return;
        }
        if (t.kind == MS_T_SEMI && depth == 0) return;
        if (t.kind == MS_T_LBRACE) depth++;
        if (t.kind == MS_T_RBRACE) {
            if (depth == 0) {
                P->lx.at = before;
                return;
            }
            if (--depth == 0) return; /* a whole block was skipped: it ended the statement */
        }
    }
}

static void emit_line(ms_parser *P, const char *text, size_t len)
{
    ms_buf_indent(&P->lua, P->indent);
    ms_buf_add(&P->lua, text, len);
    ms_buf_addc(&P->lua, '\n');
}

static const char chunk_head[] = "local ms, v = minispec, ...\n";

/* Puts the unit's diagnostics in source order (a call's arity is found
 * after its arguments' problems, an operator's after its operands'), so
 * that the first one the stream reports is the first the whole-plan
 * checker lists. Stable: a unit has few. */
static void sort_pending(ms_parser *P)
{
    for (int i = 1; i < P->npending; i++) {
        ms_diag d = P->pending[i];
        int j = i;
        while (j > 0 && (P->pending[j - 1].line > d.line ||
                         (P->pending[j - 1].line == d.line && P->pending[j - 1].col > d.col))) {
            P->pending[j] = P->pending[j - 1];
            j--;
        }
        P->pending[j] = d;
    }
}

/* Applies a completed unit's checking effects. */
static void commit_checks(ms_parser *P)
{
    sort_pending(P);
    for (int i = 0; i < P->npending; i++) {
        ms_diag *d = &P->pending[i];
        ms_parser_diag(P, d->line, d->col, "%s", d->message);
    }
    for (int i = 0; i < P->nunit_used; i++) {
        int j = 0;
        while (j < P->nused && P->used[j] != P->unit_used[i])
            j++;
        if (j < P->nused) continue;
        if (P->nused == P->cap_used) P->used = ms_grow(P->used, &P->cap_used, sizeof *P->used);
        P->used[P->nused++] = P->unit_used[i];
    }
    P->v1_calls += P->unit_v1;
    P->v2_calls += P->unit_v2;
    if (P->unit_assign >= 0) ms_define(P, P->unit_assign);
}

/* Applies a completed unit: its checking effects, its Lua, its event. */
static void commit(ms_parser *P, ms_event_kind kind, ms_event *ev)
{
    commit_checks(P);
    size_t else_mark = P->else_mark;
    P->else_mark = (size_t)-1;
    ev->len = P->unit_end > ev->off ? P->unit_end - ev->off : 0;
    ev->depth = P->nblocks;
    ev->lua = NULL;
    ev->lua_len = 0;
    ev->code = P->code.data ? P->code.data : "";
    switch (kind) {
    case MS_EV_STATEMENT:
        emit_line(P, P->code.data, P->code.len);
        P->chunk.len = 0;
        if (P->recover) break; /* a whole plan needs no per-statement chunks */
        ms_buf_adds(&P->chunk, chunk_head);
        ms_buf_add(&P->chunk, P->code.data, P->code.len);
        ms_buf_addc(&P->chunk, '\n');
        break;
    case MS_EV_BLOCK_BEGIN: {
        ev->depth = P->nblocks - 1;
        /* a condition's own assignment (?_1=...{) outlives its block */
        P->blocks[P->nblocks - 1].defs_mark = P->ndefs_log;
        if (ev->block == MS_BLOCK_ELSE) P->lua.len = else_mark; /* the "end" becomes "else" */
        emit_line(P, P->code.data, P->code.len);
        P->indent++;
        P->blocks[P->nblocks - 1].body_start = P->lua.len;
        if (ev->block == MS_BLOCK_COND && !P->recover) {
            ms_buf cond = P->chunk;
            P->chunk = (ms_buf){0};
            ms_buf_adds(&P->chunk, chunk_head);
            ms_buf_add(&P->chunk, cond.data, cond.len);
            ms_buf_addc(&P->chunk, '\n');
            ms_buf_free(&cond);
        }
        break;
    }
    case MS_EV_BLOCK_END: {
        ms_open_block *b = &P->blocks[--P->nblocks];
        ev->depth = P->nblocks;
        if (b->kind != MS_BLOCK_LOOP) ms_forget_since(P, b->defs_mark);
        if (b->kind == MS_BLOCK_COND) P->else_mark = P->lua.len;
        P->chunk.len = 0;
        if (b->kind == MS_BLOCK_LOOP && !P->recover) {
            ms_buf_adds(&P->chunk, chunk_head);
            ms_buf_addlit(&P->chunk, "for _ = 2, ");
            ms_buf_addi(&P->chunk, b->count);
            ms_buf_addlit(&P->chunk, " do\n");
            ms_buf_add(&P->chunk, P->lua.data + b->body_start, P->lua.len - b->body_start);
            ms_buf_addlit(&P->chunk, "end\n");
        }
        P->indent--;
        emit_line(P, "end", 3);
        break;
    }
    default: break;
    }
    if (P->chunk.len && kind != MS_EV_NONE) {
        ev->lua = P->chunk.data;
        ev->lua_len = P->chunk.len;
    }
}

static void reset_unit(ms_parser *P)
{
    ms_arena_reset(&P->arena);
    P->npending = 0;
    P->nunit_used = 0;
    P->unit_assign = -1;
    P->unit_v1 = P->unit_v2 = 0;
    P->unit_nodes = 0;
    P->nesting = P->nblocks;
    P->code.len = 0;
    if (P->code.data) P->code.data[0] = '\0';
    P->chunk.len = 0;
    P->stall_known = false;
    P->tcache_at = 0;
}

/* Reports a unit longer than MS_MAX_UNIT_BYTES and skips it (whole plan)
 * or stops (stream). */
static void too_long(ms_parser *P, ms_lexpos start, ms_event *ev)
{
    ms_lexpos here = P->lx.at;
    P->lx.at = start;
    ms_token t;
    ms_lexer_next(&P->lx, &t);
    P->lx.at = here;
    ms_parser_diag(P, t.line, t.col, "statement longer than %d bytes", MS_MAX_UNIT_BYTES);
    ev->kind = MS_EV_ERROR;
    ev->diag = &P->diags[P->ndiags - 1];
    if (!P->recover) P->stopped = true;
    /* stream mode stops here; the whole-plan compiler goes on */
}

/* Bytes that lengthen the partial word, number, variable, argument or
 * run of blanks T without ending it. */
static bool continues(const ms_token *t, unsigned char c)
{
    switch (t->kind) {
    case MS_T_EOF: return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
    case MS_T_WORD:
    case MS_T_VAR:
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
    case MS_T_INT:
    case MS_T_ARG: return c >= '0' && c <= '9';
    default: return false;
    }
}

/* Scans a partial string's body from I as the lexer would (an escape, an
 * apostrophe before a letter or digit); returns where it stopped: at the
 * end of the input, at a byte that the next byte decides (a final quote or
 * backslash: scanned again next time), or (size_t)-1 at a byte that ends
 * or breaks the string. */
static size_t string_continues(const unsigned char *src, size_t i, size_t len, unsigned char quote)
{
    while (i < len) {
        unsigned char c = src[i];
        if (c == '\n') return (size_t)-1;
        if (c == '\\' || c == quote) {
            if (i + 1 >= len) return i;
            unsigned char d = src[i + 1];
            if (c == '\\') {
                if (d == '\n') return (size_t)-1;
            } else if (quote != '\'' || !((d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') ||
                                          (d >= '0' && d <= '9') || d == '_')) {
                return (size_t)-1; /* the closing quote */
            }
            i += 2;
            continue;
        }
        i++;
    }
    return i;
}

/* Arms the gate after a unit stalled on P->stall (see parser.h), when the
 * token is of a kind that more of its own bytes keep partial. */
static void arm_gate(ms_parser *P, size_t first)
{
    const ms_token *t = &P->stall;
    P->stall_ok = false;
    if (!P->stall_known || t->off + t->len != P->lx.len || !t->partial) return;
    switch (t->kind) {
    case MS_T_STRING: P->stall_scanned = t->off + 1; break; /* its body: scanned once more */
    case MS_T_EOF:
    case MS_T_WORD:
    case MS_T_VAR:
    case MS_T_INT:
    case MS_T_ARG: P->stall_scanned = P->lx.len; break;
    default: return;
    }
    P->stall_ok = true;
    P->unit_first = first;
}

/* True while every byte that arrived since the stall only continues the
 * stalled token and the unit is not too long: nothing can have changed. */
static bool gate_holds(ms_parser *P)
{
    if (!P->stall_ok || P->lx.final || P->lx.len - P->unit_first > MS_MAX_UNIT_BYTES) return false;
    const unsigned char *src = (const unsigned char *)P->lx.src;
    size_t i = P->stall_scanned, len = P->lx.len;
    if (P->stall.kind == MS_T_STRING) {
        size_t stop = string_continues(src, i, len, src[P->stall.off]);
        if (stop == (size_t)-1) return false;
        P->lx.work += stop - i;
        P->stall_scanned = stop;
        return true;
    }
    while (i < len && continues(&P->stall, src[i]))
        i++;
    P->lx.work += i - P->stall_scanned;
    P->stall_scanned = i;
    return i == len;
}

ms_event_kind ms_parser_step(ms_parser *P, ms_event *ev)
{
    if (!P->recover) memset(ev, 0, sizeof *ev); /* a whole plan reads no events */
    if (P->stopped) {
        ev->kind = MS_EV_ERROR;
        ev->diag = P->ndiags ? &P->diags[0] : NULL;
        return MS_EV_ERROR;
    }
    if (gate_holds(P)) return ev->kind = MS_EV_NONE;
    P->stall_ok = false;
    for (;;) {
        reset_unit(P);
        /* A whole plan keeps the token that ended the previous unit (read
         * once); the stream parser reads it again, as its buffer grows. */
        ms_lexpos start = P->have_ahead ? P->before_ahead : P->lx.at;
        int first_diag = P->ndiags;
        ms_event_kind kind;
        int jumped = setjmp(P->jb);
        if (jumped == MS_JMP_MORE) {
            /* The unit starts at its first byte past whitespace: that
             * whitespace is skipped once, not at every reading. */
            P->lx.at = start;
            P->have_ahead = false;
            ms_lexer_skip_space(&P->lx);
            size_t first = P->lx.at.pos;
            if (P->lx.len - first <= MS_MAX_UNIT_BYTES) {
                arm_gate(P, first);
                return ev->kind = MS_EV_NONE;
            }
            /* A unit is read again as it grows: bound that work. */
            too_long(P, start, ev);
            return MS_EV_ERROR;
        }
        if (jumped == MS_JMP_SYNTAX) {
            P->ntcache = 0; /* the unit is over: its tokens are not read again */
            commit(P, MS_EV_NONE, ev);
            if (!P->recover)
                P->stopped = true;
            else
                resync(P);
            ev->kind = MS_EV_ERROR;
            ev->diag = P->ndiags > first_diag ? &P->diags[first_diag] : NULL;
            return MS_EV_ERROR;
        }
        kind = ms_parse_unit(P, ev);
        P->ntcache = 0;
        if (P->have_ahead && !P->recover) { /* un-read the lookahead */
            P->lx.at = P->before_ahead;
            P->have_ahead = false;
        }
        size_t unit_stop = P->have_ahead ? P->before_ahead.pos : P->lx.at.pos;
        bool long_unit = kind != MS_EV_DONE && unit_stop - ev->off > MS_MAX_UNIT_BYTES;
        if (long_unit) too_long(P, start, ev); /* reported before the unit's own errors */
        if (kind == MS_EV_DONE) {
            if (P->nblocks > 0) {
                ms_open_block *b = &P->blocks[P->nblocks - 1];
                if (P->nblocks == 1)
                    ms_parser_diag(P, ev->line, ev->col,
                                   "missing '}' to close the block opened at %d:%d", b->line,
                                   b->col);
                else
                    ms_parser_diag(P, ev->line, ev->col,
                                   "missing %d '}' (the innermost block opened at %d:%d)",
                                   P->nblocks, b->line, b->col);
                P->nblocks = 0;
                if (!P->recover) {
                    P->stopped = true;
                    ev->kind = MS_EV_ERROR;
                    ev->diag = &P->diags[first_diag];
                    return MS_EV_ERROR;
                }
            }
            return ev->kind = MS_EV_DONE;
        }
        commit(P, kind, ev);
        if (long_unit && !P->recover) {
            ev->kind = MS_EV_ERROR;
            ev->diag = &P->diags[first_diag];
            return MS_EV_ERROR;
        }
        if (P->ndiags > first_diag || P->dropped_diags) {
            if (!P->recover) {
                P->stopped = true;
                ev->kind = MS_EV_ERROR;
                ev->diag = &P->diags[first_diag];
                return MS_EV_ERROR;
            }
        }
        if (kind != MS_EV_NONE) return ev->kind = kind;
    }
}

/* ms_parser_step's whole-plan mode (recover, final input) in one loop, for
 * speed: no events, one setjmp per syntax error instead of one per unit,
 * and each unit's Lua written straight into the plan's Lua (its line's
 * indentation first, taken back if the unit writes no line). */
void ms_parser_run(ms_parser *P)
{
    P->out = &P->lua; /* units write their Lua straight into the plan's */
    ms_event ev;
    ev.off = 0; /* set by each unit (no memset: it would compile to `rep stos`) */
    ev.line = ev.col = 0;
    switch (setjmp(P->jb)) {
    case 0: break;
    case MS_JMP_SYNTAX:
        P->lua.len = P->unit_mark;
        if (P->lua.data) P->lua.data[P->lua.len] = '\0';
        commit_checks(P);
        P->else_mark = (size_t)-1;
        resync(P);
        break;
    default: /* more input: impossible once the input is final */
        P->lua.len = P->unit_mark;
        if (P->lua.data) P->lua.data[P->lua.len] = '\0';
        P->out = &P->code;
        return;
    }
    for (;;) {
        reset_unit(P);
        ms_lexpos start = P->have_ahead ? P->before_ahead : P->lx.at;
        P->unit_mark = P->lua.len;
        ms_buf_indent(&P->lua, P->indent);
        ms_event_kind kind = ms_parse_unit(P, &ev);
        if (kind == MS_EV_DONE) {
            P->lua.len = P->unit_mark;
            if (P->lua.data) P->lua.data[P->lua.len] = '\0';
            if (P->nblocks > 0) {
                ms_open_block *b = &P->blocks[P->nblocks - 1];
                if (P->nblocks == 1)
                    ms_parser_diag(P, ev.line, ev.col,
                                   "missing '}' to close the block opened at %d:%d", b->line,
                                   b->col);
                else
                    ms_parser_diag(P, ev.line, ev.col,
                                   "missing %d '}' (the innermost block opened at %d:%d)",
                                   P->nblocks, b->line, b->col);
                P->nblocks = 0;
            }
            P->out = &P->code;
            return;
        }
        size_t unit_stop = P->have_ahead ? P->before_ahead.pos : P->lx.at.pos;
        if (unit_stop - ev.off > MS_MAX_UNIT_BYTES) too_long(P, start, &ev);
        commit_checks(P);
        size_t else_mark = P->else_mark;
        P->else_mark = (size_t)-1;
        switch (kind) {
        case MS_EV_STATEMENT: ms_buf_addc(&P->lua, '\n'); break;
        case MS_EV_BLOCK_BEGIN:
            P->blocks[P->nblocks - 1].defs_mark = P->ndefs_log; /* as in commit */
            if (P->blocks[P->nblocks - 1].kind == MS_BLOCK_ELSE) {
                P->lua.len = else_mark; /* the condition's "end" becomes "else" */
                emit_line(P, "else", 4);
            } else {
                ms_buf_addc(&P->lua, '\n');
            }
            P->indent++;
            P->blocks[P->nblocks - 1].body_start = P->lua.len;
            break;
        default:
            P->lua.len = P->unit_mark;
            if (P->lua.data) P->lua.data[P->lua.len] = '\0';
            break;
        }
        if (kind == MS_EV_BLOCK_END) {
            ms_open_block *b = &P->blocks[--P->nblocks];
            if (b->kind != MS_BLOCK_LOOP) ms_forget_since(P, b->defs_mark);
            P->indent--;
            if (b->kind == MS_BLOCK_COND) P->else_mark = P->lua.len;
            emit_line(P, "end", 3);
        }
    }
}

void ms_parser_init(ms_parser *P, const skill_registry *reg, const ms_options *opts, bool recover)
{
    memset(P, 0, sizeof *P);
    ms_parser_reset(P, reg, opts, recover);
}

void ms_parser_reset(ms_parser *P, const skill_registry *reg, const ms_options *opts, bool recover)
{
    P->reg = reg;
    P->max_loop = opts && opts->max_loop > 0 ? opts->max_loop : MS_MAX_LOOP_DEFAULT;
    P->nparams = opts ? opts->nparams : 0;
    P->in_skill = false;
    P->recover = recover;
    ms_lexer_init(&P->lx, "", 0, false);
    P->have_ahead = false;
    P->nesting = 0;
    P->lua.len = 0;
    P->indent = 0;
    P->code.len = 0;
    P->out = &P->code;
    P->chunk.len = 0;
    P->nblocks = 0;
    if (P->defined_bytes) memset(P->defined, 0, P->defined_bytes);
    P->ndefs_log = 0;
    P->ndiags = P->dropped_diags = 0;
    P->nused = 0;
    P->v1_calls = P->v2_calls = 0;
    ms_arena_reset(&P->arena);
    P->npending = 0;
    P->nunit_used = 0;
    P->unit_assign = -1;
    P->stopped = false;
    P->nvar_names = 0;
    P->else_mark = (size_t)-1;
    P->stall_known = P->stall_ok = false;
    P->ntcache = P->tcache_at = 0;
    ms_names_sync(P);
}

void ms_parser_set_input(ms_parser *P, const char *src, size_t len, bool final)
{
    P->lx.src = src;
    P->lx.len = len;
    P->lx.final = final;
}

void ms_parser_free(ms_parser *P)
{
    ms_buf_free(&P->lua);
    ms_buf_free(&P->code);
    ms_buf_free(&P->chunk);
    ms_arena_free(&P->arena);
    free(P->blocks);
    free(P->defined);
    free(P->defs_log);
    free(P->diags);
    free(P->pending);
    free(P->used);
    free(P->unit_used);
    free(P->names.table);
    free(P->var_names);
    free(P->tcache);
}

const char *ms_parser_dialect(const ms_parser *P)
{
    if (P->v1_calls && P->v2_calls) return "mixed";
    return P->v1_calls ? "v1" : "v2";
}
