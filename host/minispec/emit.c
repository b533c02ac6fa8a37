/*
 * Lua for MiniSpec expressions. The emitted code is meant to be read: plain
 * Lua operators where Lua's meaning is MiniSpec's, and a call into the
 * runtime (lua/minispec.lua, the global `minispec`, local `ms`) where it is
 * not:
 *
 *   _1, _obj        v._1, v._obj         (the plan's variable table)
 *   $1              a1                   (a skill definition's parameter)
 *   tc,45           ms.call("turn_cw", 45)
 *   a == b, a != b  a == b, a ~= b       (Lua's rules are MiniSpec's: 1 == 1.0,
 *                                         different types are never equal)
 *   a < b ...       ms.lt(a, b) ...      (numbers only, else a clear error)
 *   a + b, a * b    a + b                (operands checked by ms.num)
 *   a / b           ms.div(a, b)         (division by zero is an error)
 *   ?x{ (x a value) if ms.truth(x) then  (False, None, 0 and '' are false)
 *   a & b, a | b    and / or over truth values
 *
 * Parentheses are written only where Lua's precedence needs them, so long
 * sums stay flat (Lua's parser would reject deeply nested ones).
 */
#include "minispec/parser.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lua binding power of the code emitted for E (higher binds tighter). */
static int power(const ms_expr *e)
{
    switch (e->kind) {
    case MS_E_OR: return 1;
    case MS_E_AND: return 2;
    case MS_E_COMPARE: return e->op == MS_T_EQ || e->op == MS_T_NE ? 3 : 9;
    case MS_E_BINARY:
        if (e->op == MS_T_PLUS || e->op == MS_T_MINUS) return 4;
        return e->op == MS_T_STAR ? 5 : 9;
    case MS_E_NEG: return 6;
    default: return 9;
    }
}

static void emit_at(ms_buf *out, const ms_expr *e, int need)
{
    bool paren = power(e) < need;
    if (paren) ms_buf_addc(out, '(');
    ms_emit_expr(out, e);
    if (paren) ms_buf_addc(out, ')');
}

/* True when E is certainly a number at run time, so needs no check. */
static bool numeric(const ms_expr *e)
{
    return e->kind == MS_E_NUMBER || e->kind == MS_E_BINARY || e->kind == MS_E_NEG;
}

static void emit_number_operand(ms_buf *out, const ms_expr *e, int need)
{
    if (numeric(e)) {
        emit_at(out, e, need);
        return;
    }
    ms_buf_addlit(out, "ms.num(");
    ms_emit_expr(out, e);
    ms_buf_addc(out, ')');
}

static bool boolean(const ms_expr *e)
{
    return e->kind == MS_E_COMPARE || e->kind == MS_E_AND || e->kind == MS_E_OR ||
           e->kind == MS_E_TRUE || e->kind == MS_E_FALSE;
}

void ms_emit_truth(ms_buf *out, const ms_expr *e)
{
    if (boolean(e)) {
        ms_emit_expr(out, e);
        return;
    }
    ms_buf_addlit(out, "ms.truth(");
    ms_emit_expr(out, e);
    ms_buf_addc(out, ')');
}

static void emit_truth_at(ms_buf *out, const ms_expr *e, int need)
{
    if (boolean(e))
        emit_at(out, e, need);
    else
        ms_emit_truth(out, e);
}

void ms_emit_string(ms_buf *out, const char *s, size_t n)
{
    ms_buf_addc(out, '"');
    size_t start = 0; /* bytes copied as they are, in one go */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!ms_lua_escape[c]) continue;
        ms_buf_add(out, s + start, i - start);
        start = i + 1;
        if (c == '"')
            ms_buf_addlit(out, "\\\"");
        else if (c == '\\')
            ms_buf_addlit(out, "\\\\");
        else if (c == '\n')
            ms_buf_addlit(out, "\\n");
        else {
            char esc[8] = {'\\', (char)('0' + c / 100), (char)('0' + c / 10 % 10),
                           (char)('0' + c % 10)};
            ms_buf_add(out, esc, 4);
        }
    }
    ms_buf_add(out, s + start, n - start);
    ms_buf_addc(out, '"');
}

/* A skill name as a Lua string. registry_add admits only names of
 * lower-case letters, digits and '_', so the bytes need no escapes. */
static void emit_name(ms_buf *out, const char *name)
{
    size_t n = strnlen(name, SKILL_NAME_MAX);
    ms_buf_reserve(out, n + 2);
    char *d = out->data + out->len;
    d[0] = '"';
    memcpy(d + 1, name, n);
    d[n + 1] = '"';
    out->len += n + 2;
    out->data[out->len] = '\0';
}

static void emit_number(ms_buf *out, const ms_expr *e)
{
    /* The source digits are valid Lua as they are; Lua refuses numerals
     * longer than 200 characters, so those are written by value. */
    if (e->len <= 100) {
        ms_buf_add(out, e->text, e->len);
        return;
    }
    if (isinf(e->value)) {
        ms_buf_addlit(out, "math.huge");
        return;
    }
    char tmp[40];
    snprintf(tmp, sizeof tmp, "%.17g", e->value);
    ms_buf_adds(out, tmp);
}

static const char *ordering_fn(ms_tok_kind op)
{
    switch (op) {
    case MS_T_LT: return "ms.lt(";
    case MS_T_GT: return "ms.gt(";
    case MS_T_LE: return "ms.le(";
    default: return "ms.ge(";
    }
}

void ms_emit_var(ms_buf *out, long id, const char *text, size_t len)
{
    if (id >= MS_VAR_NAMED) { /* `_obj`: letters, digits and '_', a Lua name as it is */
        ms_buf_add(out, "v.", 2);
        ms_buf_add(out, text, len);
        return;
    }
    ms_buf_add(out, "v._", 3);
    ms_buf_addi(out, id);
}

void ms_emit_expr(ms_buf *out, const ms_expr *e)
{
    switch (e->kind) {
    case MS_E_NUMBER: emit_number(out, e); break;
    case MS_E_STRING:
        if (e->plain) { /* the bytes as they are, between quotes */
            ms_buf_reserve(out, e->len + 2);
            char *d = out->data + out->len;
            d[0] = '"';
            memcpy(d + 1, e->text, e->len);
            d[e->len + 1] = '"';
            out->len += e->len + 2;
            out->data[out->len] = '\0';
        } else {
            ms_emit_string(out, e->text, e->len);
        }
        break;
    case MS_E_TRUE: ms_buf_add(out, "true", 4); break;
    case MS_E_FALSE: ms_buf_add(out, "false", 5); break;
    case MS_E_NONE: ms_buf_add(out, "nil", 3); break;
    case MS_E_VAR: ms_emit_var(out, e->id, e->text, e->len); break;
    case MS_E_ARG:
        ms_buf_addc(out, 'a');
        ms_buf_addi(out, e->id);
        break;
    case MS_E_CALL:
        ms_buf_add(out, "ms.call(", 8);
        emit_name(out, e->skill ? e->skill->name : "?");
        for (int i = 0; i < e->nargs; i++) {
            ms_buf_add(out, ", ", 2);
            ms_emit_expr(out, e->args[i]);
        }
        ms_buf_addc(out, ')');
        break;
    case MS_E_NEG:
        if (e->a->kind == MS_E_NUMBER) {
            ms_buf_addc(out, '-');
            emit_number(out, e->a);
        } else if (numeric(e->a)) {
            ms_buf_add(out, "-(", 2);
            ms_emit_expr(out, e->a);
            ms_buf_addc(out, ')');
        } else {
            ms_buf_addc(out, '-');
            emit_number_operand(out, e->a, 9);
        }
        break;
    case MS_E_BINARY:
        if (e->op == MS_T_SLASH) {
            ms_buf_add(out, "ms.div(", 7);
            ms_emit_expr(out, e->a);
            ms_buf_add(out, ", ", 2);
            ms_emit_expr(out, e->b);
            ms_buf_addc(out, ')');
        } else {
            int p = power(e);
            emit_number_operand(out, e->a, p);
            ms_buf_add(out, e->op == MS_T_PLUS ? " + " : e->op == MS_T_MINUS ? " - " : " * ", 3);
            emit_number_operand(out, e->b, p + 1); /* a - (b - c) keeps its parentheses */
        }
        break;
    case MS_E_COMPARE:
        if (e->op == MS_T_EQ || e->op == MS_T_NE) {
            emit_at(out, e->a, 4);
            ms_buf_add(out, e->op == MS_T_EQ ? " == " : " ~= ", 4);
            emit_at(out, e->b, 4);
        } else {
            ms_buf_add(out, ordering_fn(e->op), 6);
            ms_emit_expr(out, e->a);
            ms_buf_add(out, ", ", 2);
            ms_emit_expr(out, e->b);
            ms_buf_addc(out, ')');
        }
        break;
    case MS_E_AND:
    case MS_E_OR: {
        int p = power(e);
        emit_truth_at(out, e->a, p);
        if (e->kind == MS_E_AND)
            ms_buf_addlit(out, " and ");
        else
            ms_buf_addlit(out, " or ");
        emit_truth_at(out, e->b, p + 1);
        break;
    }
    }
}
