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

/* Moves the parser's findings (diagnostics, dialect, skills) into OUT. */
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
    if (P->ndiags) {
        out->diags = P->diags;
        out->ndiags = P->ndiags;
        P->diags = NULL;
        P->ndiags = P->cap_diags = 0;
    }
    out->ok = out->ndiags == 0;
    out->dialect = ms_parser_dialect(P);
    /* The names and the array in one block: ms_result_free frees it whole. */
    size_t bytes = sizeof *out->skills * (size_t)(P->nused + 1);
    for (int i = 0; i < P->nused; i++)
        bytes += strlen(P->used[i]->name) + 1;
    out->skills = malloc(bytes);
    if (!out->skills) abort();
    char *text = (char *)(out->skills + P->nused + 1);
    for (int i = 0; i < P->nused; i++) {
        size_t n = strlen(P->used[i]->name) + 1;
        memcpy(text, P->used[i]->name, n);
        out->skills[i] = text;
        text += n;
    }
    out->skills[P->nused] = NULL;
    out->nskills = P->nused;
}

/* One parser per thread is kept between compiles with its memory, which
 * saves a dozen allocations per plan. */
static _Thread_local ms_parser *spare;

static ms_parser *parser_get(const skill_registry *reg, const ms_options *opts)
{
    ms_parser *P = spare;
    spare = NULL;
    if (P) {
        ms_parser_reset(P, reg, opts, true);
        return P;
    }
    P = malloc(sizeof *P);
    if (!P) abort();
    ms_parser_init(P, reg, opts, true);
    return P;
}

static void parser_put(ms_parser *P)
{
    if (!spare) {
        spare = P;
        return;
    }
    ms_parser_free(P);
    free(P);
}

/* HEAD + the statements + TAIL, in one allocation. */
static char *assemble(const ms_parser *P, const char *head, size_t h, const char *tail, size_t t)
{
    char *lua = malloc(h + P->lua.len + t + 1);
    if (!lua) abort();
    memcpy(lua, head, h);
    if (P->lua.len) memcpy(lua + h, P->lua.data, P->lua.len);
    memcpy(lua + h + P->lua.len, tail, t + 1);
    return lua;
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
    collect(P, out);
    static const char head[] = "local ms, v = minispec, {}\n";
    if (out->ok) out->lua = assemble(P, head, sizeof head - 1, "", 0);
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
    collect(P, out);
    if (out->ok) {
        ms_buf head = {0};
        ms_buf_addlit(&head, "local ms = minispec\nreturn function(");
        for (int i = 1; i <= def.nparams; i++) {
            if (i > 1) ms_buf_add(&head, ", ", 2);
            ms_buf_addc(&head, 'a');
            ms_buf_addi(&head, i);
        }
        ms_buf_addlit(&head, ")\n  local v = {}\n");
        out->lua = assemble(P, head.data, head.len, "end\n", 4);
        ms_buf_free(&head);
    }
    parser_put(P);
    return out->ok ? 0 : -1;
}

void ms_result_free(ms_result *r)
{
    if (!r) return;
    free(r->lua);
    free(r->diags);
    free(r->skills); /* names included */
    memset(r, 0, sizeof *r);
}
