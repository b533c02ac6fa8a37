/*
 * Whole-plan compilation: the stream parser's units, read from a buffer that
 * is already complete, in a mode that goes on after an error so that every
 * independent error is reported at once.
 */
#include "minispec/parser.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int diag_order(const void *a, const void *b)
{
    const ms_diag *x = a, *y = b;
    if (x->line != y->line) return x->line < y->line ? -1 : 1;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    return 0;
}

/* Moves the parser's findings into OUT: diagnostics, dialect, the skills
 * used and, when the plan is valid, HEAD + the plan's Lua + TAIL. The
 * skills' array, their names and the Lua share one allocation (the array
 * first), which ms_result_free frees whole. */
static void collect(ms_parser *P, ms_result *out, const char *head, size_t h, const char *tail,
                    size_t t)
{
    if (P->ndiags > 1) qsort(P->diags, (size_t)P->ndiags, sizeof *P->diags, diag_order);
    if (P->dropped_diags) {
        /* one line for the rest, after the last one shown */
        ms_diag more = P->diags[P->ndiags - 1];
        snprintf(more.message, sizeof more.message, "%d more error%s not shown", P->dropped_diags,
                 P->dropped_diags == 1 ? "" : "s");
        P->diags = realloc(P->diags, (size_t)(P->ndiags + 1) * sizeof *P->diags);
        if (!P->diags) abort();
        P->diags[P->ndiags++] = more;
    }
    if (P->ndiags) {
        out->diags = P->diags;
        out->ndiags = P->ndiags;
        P->diags = NULL;
        P->ndiags = P->cap_diags = 0;
    }
    out->ok = out->ndiags == 0;
    out->dialect = ms_parser_dialect(P);
    /* Room for the longest names saves measuring each one twice. */
    size_t n = (size_t)P->nused;
    size_t lua = out->ok ? h + P->lua.len + t + 1 : 0;
    out->skills = malloc(sizeof *out->skills * (n + 1) + n * sizeof P->used[0]->name + lua);
    if (!out->skills) abort();
    char *text = (char *)(out->skills + n + 1);
    for (size_t i = 0; i < n; i++) {
        out->skills[i] = text;
        text = stpcpy(text, P->used[i]->name) + 1;
    }
    out->skills[n] = NULL;
    out->nskills = P->nused;
    if (out->ok) {
        out->lua = text;
        memcpy(text, head, h);
        if (P->lua.len) memcpy(text + h, P->lua.data, P->lua.len);
        memcpy(text + h + P->lua.len, tail, t + 1);
    }
}

/* One parser per thread is kept between compiles with its memory, which
 * saves a dozen allocations per plan. A thread-specific key frees it when
 * its thread ends (missions run on threads of their own). A compile that
 * starts while the thread's parser is in use gets a parser of its own. */
static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;
static _Thread_local ms_parser *kept;
static _Thread_local bool kept_busy;

static void kept_free(void *p)
{
    ms_parser_free(p);
    free(p);
}

static void kept_key_init(void)
{
    if (pthread_key_create(&kept_key, kept_free)) abort();
}

static ms_parser *parser_get(const skill_registry *reg, const ms_options *opts)
{
    if (kept && !kept_busy) {
        kept_busy = true;
        ms_parser_reset(kept, reg, opts, true);
        return kept;
    }
    ms_parser *P = malloc(sizeof *P);
    if (!P) abort();
    ms_parser_init(P, reg, opts, true);
    if (!kept) {
        pthread_once(&kept_once, kept_key_init);
        if (pthread_setspecific(kept_key, P)) abort();
        kept = P;
        kept_busy = true;
    }
    return P;
}

static void parser_put(ms_parser *P)
{
    if (P == kept) {
        kept_busy = false;
        return;
    }
    ms_parser_free(P);
    free(P);
}

int minispec_compile(const skill_registry *reg, const char *src, size_t len, const ms_options *opts,
                     ms_result *out)
{
    memset(out, 0, sizeof *out);
    ms_options plan = opts ? *opts : (ms_options){0};
    plan.nparams = 0;
    ms_parser *P = parser_get(reg, &plan);
    ms_parser_set_input(P, src, len, true);
    ms_parser_run(P);
    static const char head[] = "local ms, v = minispec, {}\n";
    collect(P, out, head, sizeof head - 1, "", 0);
    parser_put(P);
    return out->ok ? 0 : -1;
}

int minispec_compile_definition(const skill_registry *reg, const char *src, size_t len, int nparams,
                                const ms_options *opts, ms_result *out)
{
    memset(out, 0, sizeof *out);
    ms_options def = opts ? *opts : (ms_options){0};
    def.nparams = nparams > 0 ? nparams : 0;
    ms_parser *P = parser_get(reg, &def);
    P->indent = 1;
    P->in_skill = true;
    ms_parser_set_input(P, src, len, true);
    ms_parser_run(P);
    ms_buf head = {0};
    ms_buf_addlit(&head, "local ms = minispec\nreturn function(");
    for (int i = 1; i <= def.nparams; i++) {
        if (i > 1) ms_buf_add(&head, ", ", 2);
        ms_buf_addc(&head, 'a');
        ms_buf_addi(&head, i);
    }
    ms_buf_addlit(&head, ")\n  local v = {}\n");
    collect(P, out, head.data, head.len, "end\n", 4);
    ms_buf_free(&head);
    parser_put(P);
    return out->ok ? 0 : -1;
}

void ms_result_free(ms_result *r)
{
    if (!r) return;
    free(r->diags);
    free(r->skills); /* names and Lua included */
    memset(r, 0, sizeof *r);
}
