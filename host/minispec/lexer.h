/*
 * The MiniSpec lexer (SPEC §4). It scans one token at a time from a buffer
 * that may still grow: a token that touches the end of the buffer before the
 * input is final is marked partial, because more bytes could still change it
 * (`4` may become `45`, `-` may become `->`). The parser decides whether it
 * can act on a partial token (its kind is already certain for words, numbers,
 * strings and variables) or must wait for more input.
 *
 * Whitespace may appear anywhere between tokens and is skipped.
 */
#ifndef ALOFT_MINISPEC_LEXER_H
#define ALOFT_MINISPEC_LEXER_H

#include <stdbool.h>
#include <stddef.h>

typedef enum ms_tok_kind {
    MS_T_EOF = 0,
    MS_T_ERROR,    /* bad character or unterminated string; message in ms_lexer.error */
    MS_T_WORD,     /* a skill name, a bare word, True/False/None */
    MS_T_INT,      /* 45 */
    MS_T_FLOAT,    /* 0.6 */
    MS_T_STRING,   /* 'text' or "text" */
    MS_T_VAR,      /* _1, _obj */
    MS_T_ARG,      /* $1 */
    MS_T_SEMI,     /* ; */
    MS_T_LBRACE,   /* { */
    MS_T_RBRACE,   /* } */
    MS_T_LPAREN,   /* ( */
    MS_T_RPAREN,   /* ) */
    MS_T_COMMA,    /* , */
    MS_T_QUESTION, /* ? */
    MS_T_ARROW,    /* -> */
    MS_T_ASSIGN,   /* = */
    MS_T_EQ,       /* == */
    MS_T_NE,       /* != */
    MS_T_LT,       /* < */
    MS_T_GT,       /* > */
    MS_T_LE,       /* <= */
    MS_T_GE,       /* >= */
    MS_T_AND,      /* & or && */
    MS_T_OR,       /* | or || */
    MS_T_PLUS,     /* + */
    MS_T_MINUS,    /* - */
    MS_T_STAR,     /* * */
    MS_T_SLASH,    /* / */
    MS_T_COLON,    /* : (an else branch: ?c{...}:{...}) */
} ms_tok_kind;

typedef struct ms_token {
    size_t off;         /* first byte in the source */
    unsigned len;       /* bytes */
    int line, col;      /* 1-based position of the first byte */
    unsigned char kind; /* ms_tok_kind */
    bool partial;       /* touches the end of a buffer that may still grow */
    bool plain;         /* STRING: no escape, and no byte that Lua's string
                           literal needs escaped: its body goes to Lua as is */
} ms_token;

/* Where the lexer stands: saved and restored by the parser. */
typedef struct ms_lexpos {
    size_t pos; /* next byte to scan */
    int line, col;
} ms_lexpos;

typedef struct ms_lexer {
    const char *src;
    size_t len;
    bool final; /* no more bytes will arrive */
    ms_lexpos at;
    char error[128]; /* message of the last MS_T_ERROR token */
    size_t work;     /* bytes scanned so far, counted again when read again */
} ms_lexer;

void ms_lexer_init(ms_lexer *lx, const char *src, size_t len, bool final);

/* Scans the next token into T and advances past it; returns its kind. */
ms_tok_kind ms_lexer_next(ms_lexer *lx, ms_token *t);

/* Moves past whitespace (counted in work). */
void ms_lexer_skip_space(ms_lexer *lx);

/* True for the kinds whose first byte already fixes the kind, so that a
 * partial token of that kind can be peeked at (not consumed). */
bool ms_tok_kind_certain(ms_tok_kind k);

/* 1 for the bytes that a Lua string literal cannot hold as they are (the
 * emitter escapes them): a string without any goes to Lua as it is. */
extern const unsigned char ms_lua_escape[256];

/* A short printable name for diagnostics: "'{'", "number", "end of plan". */
const char *ms_tok_kind_name(ms_tok_kind k);

/* The text of token T of SRC for messages, cut short and quoted
 * ('turnleft', string 'abc', number '4'), written into OUT, which it returns. */
const char *ms_token_describe(const char *src, const ms_token *t, char *out, size_t outlen);

/* Decodes the body of a string token (between its quotes, with backslash
 * escapes) into OUT, which must hold tok->len bytes. Returns the length. */
size_t ms_string_decode(const char *src, const ms_token *tok, char *out);

#endif
