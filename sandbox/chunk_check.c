/*
 * A check on a chunk's text before Lua compiles it: one expression may chain
 * at most SANDBOX_MAX_CHAIN field accesses (`a.b.c`, `a[k]`).
 *
 * Why. When an error names the value it is about ("attempt to index a nil
 * value (field 'x')"), Lua 5.4.4 finds that name by recursing once per
 * access of the chain, and each step scans the function's code from the
 * start (fixed upstream in 7923dbbf, Lua 5.4.7). A chain of a few hundred
 * thousand accesses overflows the C stack; one of a hundred thousand works
 * for minutes inside the error, where no hook runs, so neither the
 * instruction budget nor the deadline nor Ctrl-C can stop it. No plan or
 * skill needs more than a handful of accesses in a row.
 *
 * How. A small lexer (comments, strings and long brackets skipped, lines
 * counted) follows suffix chains per bracket level. A name after `.` or an
 * index `[...]` after a primary adds one; what a bracket held is added to
 * the chain around it when it closes, since Lua's recursion follows keys
 * and parenthesised expressions too (this over-counts a call's arguments,
 * which only makes the bound safer). Any other token ends the chain.
 */
#include "sandbox/sandbox_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define MAX_LEVELS 256 /* deeper nesting is refused by Lua's own parser */

typedef struct lexer {
    const char *s, *end;
    int line;
} lexer;

typedef enum tok {
    T_END,
    T_NAME,    /* a name that is not a keyword */
    T_KEYWORD, /* including true/false/nil: none can be indexed directly */
    T_VALUE,   /* a string literal: ("x").len is an access */
    T_OTHER,   /* numbers, operators, ',' ';' '=' ... */
    T_DOT,
    T_COLON,
    T_OPEN,  /* ( [ { */
    T_CLOSE, /* ) ] } */
} tok;

static const char *const keywords[] = {
    "and",      "break",  "do",   "else", "elseif", "end",   "false", "for",
    "function", "goto",   "if",   "in",   "local",  "nil",   "not",   "or",
    "repeat",   "return", "then", "true", "until",  "while", NULL,
};

static bool is_keyword(const char *s, size_t n)
{
    for (const char *const *k = keywords; *k; k++)
        if (strlen(*k) == n && !memcmp(*k, s, n)) return true;
    return false;
}

/* Length of the long bracket opening at S ("[[" "[==["), or -1. */
static int long_bracket_level(const lexer *lx, const char *s)
{
    if (s >= lx->end || *s != '[') return -1;
    const char *p = s + 1;
    while (p < lx->end && *p == '=')
        p++;
    return p < lx->end && *p == '[' ? (int)(p - s - 1) : -1;
}

/* Skips a long string or comment whose opening bracket has LEVEL '='. */
static void skip_long(lexer *lx, int level)
{
    lx->s += level + 2;
    while (lx->s < lx->end) {
        char c = *lx->s++;
        if (c == '\n') {
            lx->line++;
        } else if (c == ']') {
            const char *p = lx->s;
            while (p < lx->end && *p == '=')
                p++;
            if (p < lx->end && *p == ']' && p - lx->s == level) {
                lx->s = p + 1;
                return;
            }
        }
    }
}

static void skip_quoted(lexer *lx)
{
    char q = *lx->s++;
    while (lx->s < lx->end && *lx->s != q) {
        if (*lx->s == '\n') lx->line++;
        if (*lx->s == '\\' && lx->s + 1 < lx->end) {
            lx->s++;
            if (*lx->s == '\n') lx->line++;
        }
        lx->s++;
    }
    if (lx->s < lx->end) lx->s++;
}

/* Skips blanks and comments. */
static void skip_space(lexer *lx)
{
    while (lx->s < lx->end) {
        char c = *lx->s;
        if (c == '\n') {
            lx->line++;
            lx->s++;
        } else if (isspace((unsigned char)c)) {
            lx->s++;
        } else if (c == '-' && lx->s + 1 < lx->end && lx->s[1] == '-') {
            lx->s += 2;
            int level = long_bracket_level(lx, lx->s);
            if (level >= 0) {
                skip_long(lx, level);
            } else {
                while (lx->s < lx->end && *lx->s != '\n')
                    lx->s++;
            }
        } else {
            return;
        }
    }
}

/* Reads one token; *BRACKET gets the bracket character of T_OPEN/T_CLOSE. */
static tok next_token(lexer *lx, char *bracket)
{
    skip_space(lx);
    if (lx->s >= lx->end) return T_END;
    const char *s = lx->s;
    unsigned char c = (unsigned char)*s;
    if (isalpha(c) || c == '_') {
        while (lx->s < lx->end && (isalnum((unsigned char)*lx->s) || *lx->s == '_'))
            lx->s++;
        return is_keyword(s, (size_t)(lx->s - s)) ? T_KEYWORD : T_NAME;
    }
    if (isdigit(c) || (c == '.' && s + 1 < lx->end && isdigit((unsigned char)s[1]))) {
        /* a number, with its exponent's sign: 1e-5, 0x1p+4 */
        while (lx->s < lx->end && (isalnum((unsigned char)*lx->s) || *lx->s == '.' ||
                                   ((*lx->s == '+' || *lx->s == '-') && strchr("eEpP", lx->s[-1]))))
            lx->s++;
        return T_OTHER;
    }
    if (c == '"' || c == '\'') {
        skip_quoted(lx);
        return T_VALUE;
    }
    int level = long_bracket_level(lx, s);
    if (level >= 0) {
        skip_long(lx, level);
        return T_VALUE;
    }
    lx->s++;
    if (c == '.') {
        if (lx->s < lx->end && *lx->s == '.') { /* .. or ... */
            while (lx->s < lx->end && *lx->s == '.')
                lx->s++;
            return T_OTHER;
        }
        return T_DOT;
    }
    if (c == ':') {
        if (lx->s < lx->end && *lx->s == ':') {
            lx->s++;
            return T_OTHER;
        }
        return T_COLON;
    }
    *bracket = (char)c;
    if (c == '(' || c == '[' || c == '{') return T_OPEN;
    if (c == ')' || c == ']' || c == '}') return T_CLOSE;
    return T_OTHER;
}

/* True if a token of kind K (with bracket B) can end a primary expression,
 * so that a '[' after it indexes it. */
static bool ends_primary(tok k, char b)
{
    return k == T_NAME || k == T_VALUE || (k == T_CLOSE && b != '}');
}

typedef struct level {
    long chain;    /* accesses in the chain being read at this level */
    bool is_index; /* opened by '[' after a primary */
} level;

int sandbox_chunk_check(const char *code, size_t len, const char *chunkname, char *err,
                        size_t errlen)
{
    lexer lx = {code, code + len, 1};
    level lv[MAX_LEVELS] = {{0, false}};
    int depth = 0;
    tok prev = T_OTHER;
    char prev_b = 0, b = 0;
    if (chunkname[0] == '@' || chunkname[0] == '=') chunkname++;
    for (tok t; (t = next_token(&lx, &b)) != T_END; prev = t, prev_b = b) {
        long *chain = &lv[depth].chain;
        if (t == T_NAME && prev == T_DOT) {
            ++*chain;
        } else if (t == T_OPEN) {
            bool index = b == '[' && ends_primary(prev, prev_b);
            if (depth + 1 < MAX_LEVELS) {
                depth++;
                lv[depth].chain = 0;
                lv[depth].is_index = index;
            }
        } else if (t == T_CLOSE) {
            long inner = *chain + (lv[depth].is_index ? 1 : 0);
            if (depth > 0) depth--;
            lv[depth].chain += inner;
        } else if (t != T_DOT) {
            *chain = 0; /* a name, an operator, a keyword: a new expression */
        }
        if (lv[depth].chain > SANDBOX_MAX_CHAIN) {
            snprintf(err, errlen,
                     "%s:%d: more than %d field accesses chained in one expression; "
                     "split it with local variables",
                     chunkname, lx.line, SANDBOX_MAX_CHAIN);
            return -1;
        }
    }
    return 0;
}
