/*
 * Whole-plan compilation: the stream parser's units, read from a buffer that
 * is already complete, in a mode that goes on after an error so that every
 * independent error is reported at once.
 */
#include "minispec/parser.h"

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

/* Moves the parser's findings into OUT; BODY is the Lua around the
 * statements (the caller adds head and tail). */
static void collect(ms_parser *P, ms_result *out)
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
    out->diags = P->diags;
    out->ndiags = P->ndiags;
    P->diags = NULL;
    P->ndiags = 0;
    out->ok = out->ndiags == 0;
    out->dialect = ms_parser_dialect(P);
    out->nskills = P->nused;
    out->skills = calloc((size_t)(P->nused ? P->nused : 1), sizeof *out->skills);
    if (!out->skills) abort();
    for (int i = 0; i < P->nused; i++) {
        out->skills[i] = strdup(P->used[i]->name);
        if (!out->skills[i]) abort();
    }
}

static void run(ms_parser *P)
{
    ms_event ev;
    while (ms_parser_step(P, &ev) != MS_EV_DONE) {
    }
}

int minispec_compile(const skill_registry *reg, const char *src, size_t len, const ms_options *opts,
                     ms_result *out)
{
    memset(out, 0, sizeof *out);
    ms_options plan = opts ? *opts : (ms_options){0};
    plan.nparams = 0;
    ms_parser P;
    ms_parser_init(&P, reg, &plan, true);
    ms_parser_set_input(&P, src, len, true);
    run(&P);
    collect(&P, out);
    if (out->ok) {
        ms_buf lua = {0};
        ms_buf_adds(&lua, "local ms, v = minispec, {}\n");
        if (P.lua.len) ms_buf_add(&lua, P.lua.data, P.lua.len);
        out->lua = ms_buf_take(&lua);
    }
    ms_parser_free(&P);
    return out->ok ? 0 : -1;
}

int minispec_compile_definition(const skill_registry *reg, const char *src, size_t len, int nparams,
                                const ms_options *opts, ms_result *out)
{
    memset(out, 0, sizeof *out);
    ms_options def = opts ? *opts : (ms_options){0};
    def.nparams = nparams > 0 ? nparams : 0;
    ms_parser P;
    ms_parser_init(&P, reg, &def, true);
    P.indent = 1;
    P.in_skill = true;
    ms_parser_set_input(&P, src, len, true);
    run(&P);
    collect(&P, out);
    if (out->ok) {
        ms_buf lua = {0};
        ms_buf_adds(&lua, "local ms = minispec\nreturn function(");
        for (int i = 1; i <= nparams; i++) {
            if (i > 1) ms_buf_add(&lua, ", ", 2);
            ms_buf_addc(&lua, 'a');
            ms_buf_addi(&lua, i);
        }
        ms_buf_adds(&lua, ")\n  local v = {}\n");
        if (P.lua.len) ms_buf_add(&lua, P.lua.data, P.lua.len);
        ms_buf_adds(&lua, "end\n");
        out->lua = ms_buf_take(&lua);
    }
    ms_parser_free(&P);
    return out->ok ? 0 : -1;
}

void ms_result_free(ms_result *r)
{
    if (!r) return;
    free(r->lua);
    free(r->diags);
    for (int i = 0; i < r->nskills; i++)
        free(r->skills[i]);
    free(r->skills);
    memset(r, 0, sizeof *r);
}
