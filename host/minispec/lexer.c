/*
 * MiniSpec tokens. The only unusual rule is the apostrophe: TypeFly's own
 * examples write 'what's the animal target?' inside single quotes, so a
 * single quote followed by a letter or digit is part of the string, not its
 * end (no valid plan has a word right after a closing quote).
 */
#include "minispec/lexer.h"

#include <stdio.h>
#include <string.h>

void ms_lexer_init(ms_lexer *lx, const char *src, size_t len, bool final)
{
    lx->src = src;
    lx->len = len;
    lx->final = final;
    lx->at.pos = 0;
    lx->at.line = 1;
    lx->at.col = 1;
    lx->error[0] = '\0';
    lx->work = 0;
}

static bool is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* Bytes that continue a name: letters, digits, '_'. */
static const unsigned char name_byte[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
    ['8'] = 1, ['9'] = 1, ['_'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1,
    ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1,
    ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1,
    ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1,
    ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1,
    ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1,
    ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1,
};

static bool is_alnum(int c)
{
    return c >= 0 && name_byte[c];
}

/* Moves past one byte, keeping line and column (columns count characters:
 * UTF-8 continuation bytes do not advance them). */
static void advance(ms_lexer *lx)
{
    unsigned char c = (unsigned char)lx->src[lx->at.pos++];
    if (c == '\n') {
        lx->at.line++;
        lx->at.col = 1;
    } else if ((c & 0xC0) != 0x80) {
        lx->at.col++;
    }
}

static int peek_at(const ms_lexer *lx, size_t i)
{
    return i < lx->len ? (unsigned char)lx->src[i] : -1;
}

/* True when byte I is past the end of a buffer that may still grow. */
static bool unknown_at(const ms_lexer *lx, size_t i)
{
    return i >= lx->len && !lx->final;
}

/* Moves past the N bytes of the token T and completes it. The token is
 * written in place, field by field: returning it by value made the copy
 * stall on store forwarding in the parser's hottest path. */
static inline ms_tok_kind finish(ms_lexer *lx, ms_token *t, ms_tok_kind kind, size_t n,
                                 bool partial)
{
    if (kind == MS_T_STRING || kind == MS_T_ERROR) { /* may hold UTF-8 */
        for (size_t i = 0; i < n; i++)
            advance(lx);
    } else { /* ASCII on one line */
        lx->at.pos += n;
        lx->at.col += (int)n;
    }
    t->kind = kind;
    t->len = lx->at.pos - t->off;
    t->partial = partial;
    t->plain = false;
    return kind;
}

static ms_tok_kind error_token(ms_lexer *lx, ms_token *t, size_t n, const char *fmt,
                               const char *arg)
{
    snprintf(lx->error, sizeof lx->error, fmt, arg);
    return finish(lx, t, MS_T_ERROR, n, false);
}

const unsigned char ms_lua_escape[256] = {
    [0] = 1,  [1] = 1,  [2] = 1,  [3] = 1,  [4] = 1,  [5] = 1,   [6] = 1,    [7] = 1,    [8] = 1,
    [9] = 1,  [10] = 1, [11] = 1, [12] = 1, [13] = 1, [14] = 1,  [15] = 1,   [16] = 1,   [17] = 1,
    [18] = 1, [19] = 1, [20] = 1, [21] = 1, [22] = 1, [23] = 1,  [24] = 1,   [25] = 1,   [26] = 1,
    [27] = 1, [28] = 1, [29] = 1, [30] = 1, [31] = 1, ['"'] = 1, ['\\'] = 1, [0x7f] = 1,
};

/* Strings are most of a plan's bytes: the loop over ordinary bytes counts
 * columns and notes bytes Lua must escape as it goes instead of walking the
 * token again. */
static ms_tok_kind scan_string(ms_lexer *lx, ms_token *t)
{
    const unsigned char *s = (const unsigned char *)lx->src;
    size_t start = lx->at.pos, i = start + 1, len = lx->len;
    int q = s[start], cols = 1;
    unsigned escape = 0;
    for (;;) {
        while (i < len) {
            unsigned char c = s[i];
            if (c == q || c == '\\' || c == '\n') break;
            cols += (c & 0xC0) != 0x80;
            escape |= ms_lua_escape[c];
            i++;
        }
        if (i >= len || s[i] == '\n') {
            if (unknown_at(lx, i)) return finish(lx, t, MS_T_STRING, i - start, true);
            char quote[2] = {(char)q, 0};
            return error_token(lx, t, i - start, "unterminated string (missing closing %s)", quote);
        }
        if (s[i] == '\\') {
            if (unknown_at(lx, i + 1)) return finish(lx, t, MS_T_STRING, i + 1 - start, true);
            if (i + 1 >= len || s[i + 1] == '\n') { /* a lone backslash */
                escape = 1;
                cols++;
                i++;
                continue;
            }
            cols += 1 + ((s[i + 1] & 0xC0) != 0x80);
            escape = 1;
            i += 2;
            continue;
        }
        if (q == '\'') {
            if (unknown_at(lx, i + 1)) return finish(lx, t, MS_T_STRING, i + 1 - start, true);
            if (i + 1 < len && is_alnum(s[i + 1])) { /* an apostrophe: what's */
                cols++;
                i++;
                continue;
            }
        }
        i++; /* the closing quote */
        t->kind = MS_T_STRING;
        t->len = (unsigned)(i - start);
        t->partial = false;
        t->plain = !escape;
        lx->at.pos = i;
        lx->at.col += cols + 1;
        return MS_T_STRING;
    }
}

static ms_tok_kind scan_number(ms_lexer *lx, ms_token *t)
{
    size_t i = lx->at.pos;
    while (is_digit(peek_at(lx, i)))
        i++;
    if (unknown_at(lx, i)) return finish(lx, t, MS_T_INT, i - lx->at.pos, true);
    if (peek_at(lx, i) != '.') return finish(lx, t, MS_T_INT, i - lx->at.pos, false);
    if (unknown_at(lx, i + 1)) return finish(lx, t, MS_T_INT, i - lx->at.pos, true);
    if (!is_digit(peek_at(lx, i + 1))) return finish(lx, t, MS_T_INT, i - lx->at.pos, false);
    i++;
    while (is_digit(peek_at(lx, i)))
        i++;
    return finish(lx, t, MS_T_FLOAT, i - lx->at.pos, unknown_at(lx, i));
}

/* WORD, a variable (`_1`, `_obj`: '_' and at least one name byte) or `$N`. */
static ms_tok_kind scan_name(ms_lexer *lx, ms_token *t)
{
    int first = peek_at(lx, lx->at.pos);
    size_t i = lx->at.pos + 1;
    if (first == '_') {
        while (is_alnum(peek_at(lx, i)))
            i++;
        if (i > lx->at.pos + 1) return finish(lx, t, MS_T_VAR, i - lx->at.pos, unknown_at(lx, i));
        if (unknown_at(lx, i)) return finish(lx, t, MS_T_ERROR, 1, true);
        return error_token(lx, t, 1, "'%s' is not a variable (variables are _1, _2, ... or _name)",
                           "_");
    }
    if (first == '$') {
        while (is_digit(peek_at(lx, i)))
            i++;
        if (i > lx->at.pos + 1) return finish(lx, t, MS_T_ARG, i - lx->at.pos, unknown_at(lx, i));
        while (is_alnum(peek_at(lx, i)))
            i++;
        /* Not an argument; wait for the whole name to quote it. */
        if (unknown_at(lx, i)) return finish(lx, t, MS_T_ERROR, i - lx->at.pos, true);
        char name[40];
        size_t n = i - lx->at.pos < sizeof name - 1 ? i - lx->at.pos : sizeof name - 1;
        memcpy(name, lx->src + lx->at.pos, n);
        name[n] = '\0';
        return error_token(lx, t, i - lx->at.pos,
                           "'%s' is not an argument (arguments are $1, $2, ...)", name);
    }
    while (is_alnum(peek_at(lx, i)))
        i++;
    return finish(lx, t, MS_T_WORD, i - lx->at.pos, unknown_at(lx, i));
}

/* A one- or two-byte operator: FIRST alone gives K1, FIRST followed by
 * SECOND gives K2. */
static ms_tok_kind scan_pair(ms_lexer *lx, ms_token *t, int second, ms_tok_kind k1, ms_tok_kind k2)
{
    if (unknown_at(lx, lx->at.pos + 1)) return finish(lx, t, k1, 1, true);
    if (peek_at(lx, lx->at.pos + 1) == second) return finish(lx, t, k2, 2, false);
    return finish(lx, t, k1, 1, false);
}

/* Tokens of one byte whatever follows them. */
static const unsigned char single_kind[256] = {
    [';'] = MS_T_SEMI,   [','] = MS_T_COMMA,  ['{'] = MS_T_LBRACE,   ['}'] = MS_T_RBRACE,
    ['('] = MS_T_LPAREN, [')'] = MS_T_RPAREN, ['?'] = MS_T_QUESTION, ['+'] = MS_T_PLUS,
    ['*'] = MS_T_STAR,   ['/'] = MS_T_SLASH,  [':'] = MS_T_COLON,
};

/* Bytes skipped between tokens: 1 for blanks, 2 for a newline. */
static const unsigned char space_byte[256] = {
    [' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\f'] = 1, ['\v'] = 1, ['\n'] = 2,
};

/* Every token but words and one-byte ones, at lx->at (past whitespace),
 * its first byte C. Kept out of line so that the common tokens' path stays
 * small. */
static __attribute__((noinline)) ms_tok_kind scan_other(ms_lexer *lx, ms_token *t, int c)
{
    t->kind = MS_T_EOF;
    t->len = 0;
    switch (c) {
    case '-': return scan_pair(lx, t, '>', MS_T_MINUS, MS_T_ARROW);
    case '=': return scan_pair(lx, t, '=', MS_T_ASSIGN, MS_T_EQ);
    case '<': return scan_pair(lx, t, '=', MS_T_LT, MS_T_LE);
    case '>': return scan_pair(lx, t, '=', MS_T_GT, MS_T_GE);
    case '\'':
    case '"': return scan_string(lx, t);
    case '!':
        if (unknown_at(lx, lx->at.pos + 1)) return finish(lx, t, MS_T_NE, 1, true);
        if (peek_at(lx, lx->at.pos + 1) == '=') return finish(lx, t, MS_T_NE, 2, false);
        return error_token(lx, t, 1, "unexpected '!'%s (use '!=' to compare)", "");
    case '&':
    case '|': {
        ms_tok_kind k = c == '&' ? MS_T_AND : MS_T_OR;
        if (unknown_at(lx, lx->at.pos + 1)) return finish(lx, t, k, 1, true);
        /* TypeFly 2.0 writes && and ||: the same operators (SPEC §4). */
        if (peek_at(lx, lx->at.pos + 1) == c) return finish(lx, t, k, 2, false);
        return finish(lx, t, k, 1, false);
    }
    default: break;
    }
    if (is_digit(c)) return scan_number(lx, t);
    if (is_alpha(c) || c == '_' || c == '$') return scan_name(lx, t);
    /* Anything else: report the whole UTF-8 character (waiting for all of
     * its bytes); bytes that are not valid UTF-8 are shown escaped. */
    size_t n = 1, want = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    while (n < want && (peek_at(lx, lx->at.pos + n) & 0xC0) == 0x80)
        n++;
    if (n < want && unknown_at(lx, lx->at.pos + n)) return finish(lx, t, MS_T_ERROR, n, true);
    char shown[16];
    if (n == want && want > 1 && c < 0xF5) {
        memcpy(shown, lx->src + lx->at.pos, n);
        shown[n] = '\0';
    } else {
        n = 1;
        snprintf(shown, sizeof shown, "\\x%02x", c);
    }
    if (c < 0x80) {
        if (c < 0x20 || c == 0x7f)
            snprintf(shown, sizeof shown, "\\x%02x", c);
        else
            snprintf(shown, sizeof shown, "%c", c);
    }
    return error_token(lx, t, n, "unexpected character '%s'", shown);
}

void ms_lexer_skip_space(ms_lexer *lx)
{
    size_t from = lx->at.pos;
    while (lx->at.pos < lx->len && space_byte[(unsigned char)lx->src[lx->at.pos]])
        advance(lx);
    lx->work += lx->at.pos - from;
}

static inline ms_tok_kind lexer_next(ms_lexer *lx, ms_token *t);

ms_tok_kind ms_lexer_next(ms_lexer *lx, ms_token *t)
{
    size_t from = lx->at.pos;
    ms_tok_kind k = lexer_next(lx, t);
    lx->work += lx->at.pos - from;
    return k;
}

static inline ms_tok_kind lexer_next(ms_lexer *lx, ms_token *t)
{
    const unsigned char *src = (const unsigned char *)lx->src;
    size_t pos = lx->at.pos, len = lx->len;
    int col = lx->at.col;
    while (pos < len && space_byte[src[pos]]) { /* whitespace, kept in locals */
        if (src[pos] == '\n') {
            lx->at.line++;
            col = 1;
        } else {
            col++;
        }
        pos++;
    }
    t->off = pos;
    t->line = lx->at.line;
    t->col = col;
    t->partial = false;
    t->plain = false;
    if (pos >= len) {
        lx->at.pos = pos;
        lx->at.col = col;
        t->kind = MS_T_EOF;
        t->len = 0;
        t->partial = !lx->final;
        return MS_T_EOF;
    }
    int c = src[pos];
    ms_tok_kind single = single_kind[c];
    if (single) {
        lx->at.pos = pos + 1;
        lx->at.col = col + 1;
        t->kind = (unsigned char)single;
        t->len = 1;
        return single;
    }
    if (name_byte[c] && c != '_' && !is_digit(c)) { /* a word: the commonest token */
        size_t i = pos + 1;
        while (i < len && name_byte[src[i]])
            i++;
        lx->at.pos = i;
        lx->at.col = col + (int)(i - pos);
        t->kind = MS_T_WORD;
        t->len = (unsigned)(i - pos);
        t->partial = i >= len && !lx->final;
        return MS_T_WORD;
    }
    /* '=', '==', a plain integer and `_N` with a byte after them: certain
     * here; anything at the end of the buffer goes the careful way. */
    if (c == '=' && pos + 1 < len) {
        size_t n = src[pos + 1] == '=' ? 2 : 1;
        lx->at.pos = pos + n;
        lx->at.col = col + (int)n;
        t->kind = n == 2 ? MS_T_EQ : MS_T_ASSIGN;
        t->len = (unsigned)n;
        return (ms_tok_kind)t->kind;
    }
    if (is_digit(c) || (c == '_' && pos + 1 < len && is_digit(src[pos + 1]))) {
        size_t i = pos + 1;
        while (i < len && is_digit(src[i]))
            i++;
        if (i < len && (c == '_' ? !name_byte[src[i]] : src[i] != '.')) {
            lx->at.pos = i;
            lx->at.col = col + (int)(i - pos);
            t->kind = c == '_' ? MS_T_VAR : MS_T_INT;
            t->len = (unsigned)(i - pos);
            return (ms_tok_kind)t->kind;
        }
    }
    lx->at.pos = pos;
    lx->at.col = col;
    return scan_other(lx, t, c);
}

bool ms_tok_kind_certain(ms_tok_kind k)
{
    switch (k) {
    case MS_T_WORD:
    case MS_T_INT:
    case MS_T_FLOAT:
    case MS_T_STRING:
    case MS_T_VAR:
    case MS_T_ARG: return true;
    default: return false;
    }
}

const char *ms_tok_kind_name(ms_tok_kind k)
{
    static const char *const names[] = {
        [MS_T_EOF] = "end of plan", [MS_T_ERROR] = "bad token", [MS_T_WORD] = "name",
        [MS_T_INT] = "number",      [MS_T_FLOAT] = "number",    [MS_T_STRING] = "string",
        [MS_T_VAR] = "variable",    [MS_T_ARG] = "argument",    [MS_T_SEMI] = "';'",
        [MS_T_LBRACE] = "'{'",      [MS_T_RBRACE] = "'}'",      [MS_T_LPAREN] = "'('",
        [MS_T_RPAREN] = "')'",      [MS_T_COMMA] = "','",       [MS_T_QUESTION] = "'?'",
        [MS_T_ARROW] = "'->'",      [MS_T_ASSIGN] = "'='",      [MS_T_EQ] = "'=='",
        [MS_T_NE] = "'!='",         [MS_T_LT] = "'<'",          [MS_T_GT] = "'>'",
        [MS_T_LE] = "'<='",         [MS_T_GE] = "'>='",         [MS_T_AND] = "'&'",
        [MS_T_OR] = "'|'",          [MS_T_PLUS] = "'+'",        [MS_T_MINUS] = "'-'",
        [MS_T_STAR] = "'*'",        [MS_T_SLASH] = "'/'",       [MS_T_COLON] = "':'",
    };
    return names[k];
}

const char *ms_token_describe(const char *src, const ms_token *t, char *out, size_t outlen)
{
    if (t->kind == MS_T_EOF || t->kind == MS_T_ERROR) {
        snprintf(out, outlen, "%s", ms_tok_kind_name(t->kind));
        return out;
    }
    int n = t->len > 24 ? 24 : (int)t->len;
    const char *kind = "";
    if (t->kind == MS_T_INT || t->kind == MS_T_FLOAT)
        kind = "number ";
    else if (t->kind == MS_T_STRING)
        kind = "string ";
    if (t->kind == MS_T_STRING) /* strings show their own quotes */
        snprintf(out, outlen, "string %.*s%s", n, src + t->off, t->len > 24 ? "..." : "");
    else
        snprintf(out, outlen, "%s'%.*s%s'", kind, n, src + t->off, t->len > 24 ? "..." : "");
    return out;
}

size_t ms_string_decode(const char *src, const ms_token *tok, char *out)
{
    const char *p = src + tok->off + 1, *end = src + tok->off + tok->len - 1;
    size_t n = 0;
    while (p < end) {
        if (*p == '\\' && p + 1 < end) {
            p++;
            switch (*p) {
            case 'n': out[n++] = '\n'; break;
            case 't': out[n++] = '\t'; break;
            default: out[n++] = *p; break; /* \' \" \\ and anything else literally */
            }
            p++;
        } else {
            out[n++] = *p++;
        }
    }
    return n;
}
