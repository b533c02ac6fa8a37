/*
 * Inside the MiniSpec compiler: the statement-at-a-time parser shared by the
 * whole-plan compiler (compile.c), skill definitions (skilldef.c) and the
 * stream parser (stream.c). Not a public interface.
 *
 * The parser reads one unit at a time (a statement, a block header, a '}' or
 * an empty ';') from a buffer that may still grow. A unit is parsed, checked
 * and translated as a whole; if the buffer ends before the unit is proven
 * complete, everything done for it is dropped and the unit is read again
 * once more bytes arrive. Checking effects (variables assigned, skills used,
 * diagnostics) are committed only when a unit completes.
 */
#ifndef ALOFT_MINISPEC_PARSER_H
#define ALOFT_MINISPEC_PARSER_H

#include "minispec/buf.h"
#include "minispec/lexer.h"
#include "minispec/minispec.h"
#include "minispec/stream.h"

#include <setjmp.h>

/* Nesting of blocks, parentheses and calls together. Keeps the emitted Lua
 * well inside Lua's own parser limits (C levels and registers). */
#define MS_MAX_NESTING 20
/* Longest statement or block header: the stream parser reads a statement
 * again each time more of it arrives, so this bounds its work. */
#define MS_MAX_UNIT_BYTES 65536
/* Diagnostics kept per plan; the rest are summarised in one line. */
#define MS_MAX_DIAGS 20
/* Variables: `_1` .. `_9999` are numbered by their digits; named ones
 * (`_obj`, TypeFly's) get numbers from MS_VAR_NAMED in order of first
 * appearance, for the definite-assignment bits. */
#define MS_VAR_NAMED 10000
#define MS_VAR_NAME_MAX 32

/* How a unit's parse unwinds (longjmp to ms_parser_step). */
enum { MS_JMP_MORE = 1, MS_JMP_SYNTAX = 2 };

typedef struct ms_expr ms_expr;

typedef struct ms_open_block {
    ms_block_kind kind;
    int line, col;     /* of its '{' */
    long count;        /* loop iterations */
    size_t body_start; /* offset of the body in the whole-plan Lua */
    size_t defs_mark;  /* assigned-variable log length at the '{' */
} ms_open_block;

typedef struct ms_parser {
    const skill_registry *reg;
    int max_loop, nparams;
    bool in_skill; /* compiling a skill definition: $N allowed */
    bool recover;  /* whole plan: report every error; stream: stop at the first */

    ms_lexer lx; /* positioned at the start of the current unit */
    ms_token ahead;
    bool have_ahead;
    ms_lexpos before_ahead; /* where the lookahead token starts */
    int nesting;

    ms_buf lua;   /* the whole-plan Lua so far */
    int indent;   /* of the next line */
    ms_buf code;  /* the current unit's Lua */
    ms_buf *out;  /* where a unit's Lua goes: &code, or &lua in ms_parser_run */
    ms_buf chunk; /* the current event's chunk */

    ms_open_block *blocks;
    int nblocks, cap_blocks;

    /* Definite assignment: a bit per variable number, plus a log of the
     * numbers set so that leaving a condition can forget its assignments. */
    unsigned char *defined;
    size_t defined_bytes;
    long *defs_log;
    size_t ndefs_log, cap_defs_log;

    ms_diag *diags;
    int ndiags, cap_diags, dropped_diags;

    /* Named variables seen so far (id MS_VAR_NAMED + index). */
    char (*var_names)[MS_VAR_NAME_MAX + 2];
    int nvar_names, cap_var_names;

    /* An else branch (`:{`) may follow only the '}' of a condition: the
     * plan's Lua length before that '}' wrote its "end" line, or
     * (size_t)-1 when the last unit was anything else. */
    size_t else_mark;

    /* Every name of the registry's skills, hashed (check.c). */
    struct {
        const skill_registry *reg;
        const skill *base;
        size_t count;
        bool built;    /* the table below is up to date */
        unsigned mask; /* table size - 1; 0 = no table (linear search) */
        struct ms_name_slot {
            const char *key; /* the name inside its skill, or NULL (empty) */
            const skill *s;
            size_t len;
        } * table;
    } names;

    const skill **used;
    int nused, cap_used;
    int v1_calls, v2_calls;

    /* The current unit. */
    jmp_buf jb;
    ms_arena arena;
    ms_diag *pending;
    int npending, cap_pending;
    const skill **unit_used;
    int nunit_used, cap_unit_used;
    long unit_assign; /* variable assigned by the unit, or -1 */
    size_t unit_mark; /* ms_parser_run: plan Lua length before the unit */
    size_t unit_end;  /* end of the last token read */
    int unit_nodes;
    ms_token err_at; /* where the last syntax error was found */
    int unit_v1, unit_v2;
    bool stopped; /* stream mode hit an error */

    /* A unit waiting for more input (stream mode, unit.c): the token it
     * waits on, touching the end of the buffer. Bytes that arrive after it
     * and only lengthen that token (a string's body, a word, blanks)
     * cannot change the unit's outcome, so they are scanned once, by
     * themselves, instead of reading the unit again from its start: this
     * keeps a long statement arriving byte by byte linear. */
    ms_token stall;
    bool stall_known;     /* set with stall by the parser */
    bool stall_ok;        /* the gate below is armed */
    size_t stall_scanned; /* bytes up to here continue the token */
    size_t unit_first;    /* first byte of the waiting unit */
    /* The waiting unit's complete tokens, in order (parser.c): read from
     * here when the unit is read again. tcache_at: the next to use. */
    struct ms_cached_token {
        size_t from;  /* where the lexer stood before it (blanks included) */
        ms_lexpos to; /* and after it */
        ms_token tok;
    } * tcache;
    int ntcache, cap_tcache, tcache_at;
} ms_parser;

void ms_parser_init(ms_parser *P, const skill_registry *reg, const ms_options *opts, bool recover);
/* Makes an initialised parser ready for a new plan, keeping its memory. */
void ms_parser_reset(ms_parser *P, const skill_registry *reg, const ms_options *opts, bool recover);
void ms_parser_free(ms_parser *P);

/* Points the parser at SRC[0..LEN) (the same bytes plus more on later
 * calls), FINAL when no more will come. Keeps the current position. */
void ms_parser_set_input(ms_parser *P, const char *src, size_t len, bool final);

/* Reads the next unit. Returns the event kind: MS_EV_NONE when more input
 * is needed, MS_EV_DONE at the end, MS_EV_ERROR with new diagnostics
 * (in recover mode the parser has skipped past the error and can go on). */
ms_event_kind ms_parser_step(ms_parser *P, ms_event *ev);

/* Reads every unit of a final input in recover mode (the whole-plan
 * compiler), with the same results as calling ms_parser_step to the end. */
void ms_parser_run(ms_parser *P);

/* "v1", "v2" or "mixed" (a plan without any call with arguments: "v2"). */
const char *ms_parser_dialect(const ms_parser *P);

/* Adds a diagnostic at LINE:COL (kept in source order by the caller). */
void ms_parser_diag(ms_parser *P, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Parses one unit at the lexer's position (parser.c). Returns the event
 * kind (MS_EV_NONE for an empty statement); unwinds with MS_JMP_MORE when
 * the input ends first, MS_JMP_SYNTAX on a syntax error. */
ms_event_kind ms_parse_unit(ms_parser *P, ms_event *ev);

/* A problem found in the current unit: kept only if the unit completes (a
 * partial unit is read again once more input arrives). */
void ms_parser_diag_unit(ms_parser *P, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- checking (check.c) ---- */

/* The skill called NAME[0..LEN) (as registry_find), or NULL. */
const skill *ms_find_skill(const skill_registry *reg, const char *name, size_t len);
/* Checks the parser's name cache against its registry (once per plan). */
void ms_names_sync(ms_parser *P);
/* ms_find_skill with a per-parser cache. */
const skill *ms_lookup_skill(ms_parser *P, const char *name, size_t len);
/* Resolves NAME or reports it, with a hint, at TOK. NULL when unknown. */
const skill *ms_check_skill(ms_parser *P, const ms_token *tok);
/* Checks the argument count and literal argument types of a call. */
void ms_check_call(ms_parser *P, const ms_token *name, const skill *s, ms_expr **args, int nargs);
/* Writes "did you mean 'x' / 'y'?" for NAME into OUT, or "". */
void ms_check_hint(const skill_registry *reg, const char *name, size_t len, char *out,
                   size_t outlen);

/* The variable number of `_...` TEXT[0..LEN) (the leading '_' included):
 * its digits, or a named variable's number (only definite assignment uses
 * it: the Lua names the variable by its text); -2 when the digits are too
 * many, -1 when the name is too long (the caller reports either). */
long ms_var_id(ms_parser *P, const char *text, size_t len);
/* The skill a call to S by NAME[0..LEN) with NARGS arguments runs: TypeFly
 * 2023's `p` with no argument is take_picture, with one it is probe. */
const skill *ms_call_skill(ms_parser *P, const char *name, size_t len, const skill *s, int nargs);
/* The Lua of variable ID, written TEXT[0..LEN) in the plan. */
void ms_emit_var(ms_buf *out, long id, const char *text, size_t len);

/* Records that the current unit calls S (for ms_result.skills). */
void ms_parser_note_skill(ms_parser *P, const skill *s);

bool ms_defined(const ms_parser *P, long var);
void ms_define(ms_parser *P, long var);
void ms_forget_since(ms_parser *P, size_t mark);

/* ---- syntax tree and Lua (emit.c) ---- */

typedef enum ms_expr_kind {
    MS_E_NUMBER,
    MS_E_STRING,
    MS_E_TRUE,
    MS_E_FALSE,
    MS_E_NONE,
    MS_E_VAR,
    MS_E_ARG,
    MS_E_CALL,
    MS_E_NEG,
    MS_E_BINARY, /* + - * / */
    MS_E_COMPARE,
    MS_E_AND,
    MS_E_OR,
} ms_expr_kind;

struct ms_expr {
    ms_expr_kind kind;
    ms_tok_kind op;
    int line, col;
    const char *text; /* NUMBER: its digits; STRING: decoded bytes */
    size_t len;
    bool is_int;        /* NUMBER */
    bool plain;         /* STRING: no byte needs an escape in Lua (the lexer tells) */
    double value;       /* NUMBER */
    long id;            /* VAR, ARG */
    const skill *skill; /* CALL (NULL when unknown) */
    ms_expr **args;
    int nargs;
    ms_expr *a, *b;
};

/* A node of KIND from arena A, every other field empty (line and col 0).
 * Field by field: a memset of the node compiles to `rep stos`, slow to
 * start for so few bytes. */
static inline ms_expr *ms_expr_new(ms_arena *a, ms_expr_kind kind)
{
    ms_expr *e = ms_arena_alloc(a, sizeof *e);
    e->kind = kind;
    e->op = MS_T_EOF;
    e->line = e->col = 0;
    e->text = NULL;
    e->len = 0;
    e->is_int = false;
    e->plain = false;
    e->value = 0;
    e->id = 0;
    e->skill = NULL;
    e->args = NULL;
    e->nargs = 0;
    e->a = e->b = NULL;
    return e;
}

/* Appends the Lua for E (a value) to OUT. */
void ms_emit_expr(ms_buf *out, const ms_expr *e);
/* Appends the Lua for E used as a condition (a Lua boolean). */
void ms_emit_truth(ms_buf *out, const ms_expr *e);
/* Appends a Lua string literal holding S[0..N). */
void ms_emit_string(ms_buf *out, const char *s, size_t n);

#endif
