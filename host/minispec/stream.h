/*
 * The incremental MiniSpec parser (SPEC §4, stream interpreting).
 *
 * Feed the plan in chunks of any size as it arrives from the LLM; each
 * statement is reported as soon as the bytes received prove it complete, also
 * inside a block whose header has arrived. Events come in source order:
 *
 *   MS_EV_STATEMENT    a complete statement. lua is a chunk to run.
 *   MS_EV_BLOCK_BEGIN  a loop or condition whose '{' arrived. For a condition,
 *                      lua is a chunk returning the condition's truth (bool);
 *                      for a loop, count is the iteration count (lua unused).
 *   MS_EV_BLOCK_END    the '}' of the innermost open block. For a loop, lua
 *                      is a chunk running iterations 2..count of the body.
 *   MS_EV_ERROR        a diagnostic (diag); the stream stops: no further
 *                      events, every later call returns MS_EV_ERROR again.
 *
 * Every chunk takes one argument, the plan's variable table (a Lua table the
 * controller creates once per plan and passes to every chunk), and reads the
 * runtime from the global `minispec` (lua/minispec.lua). A chunk that returns
 * no value lets the plan go on; a chunk that returns a value (even nil: test
 * the count of results) ends the plan with that value: `->` and `rp` do so.
 *
 * How a controller executes the events so that a streamed plan behaves
 * exactly like the same plan compiled whole (minispec_compile):
 *   - keep a stack of open blocks, each marked active or skipped; a block is
 *     skipped when its parent is, when it is a condition whose chunk returned
 *     false, or when it is a loop (below) and the plan already ended;
 *   - STATEMENT: run the chunk when every open block is active;
 *   - BLOCK_BEGIN: condition: when active, run its chunk and push active =
 *     its result; loop: push active (its statements arriving now are its
 *     first iteration);
 *   - BLOCK_END: pop; for an active loop, run the chunk (iterations 2..n);
 *   - once a chunk returned a value, the plan is over: run nothing more.
 * stream_exec.h implements exactly this on a sandbox.
 *
 * Statements are reported at the earliest byte that completes them: a call
 * written `name(...)` at its ')', a block header at its '{', a block end at
 * its '}', any other statement at the first byte of whatever follows it
 * (`tc,45` may still become `tc,450` until a ';' or another token arrives).
 */
#ifndef ALOFT_MINISPEC_STREAM_H
#define ALOFT_MINISPEC_STREAM_H

#include "minispec/minispec.h"

typedef enum ms_event_kind {
    MS_EV_NONE = 0, /* nothing more until more input arrives (or the end) */
    MS_EV_STATEMENT,
    MS_EV_BLOCK_BEGIN,
    MS_EV_BLOCK_END,
    MS_EV_ERROR,
    MS_EV_DONE, /* the whole plan was reported (after ms_stream_finish) */
} ms_event_kind;

/* MS_BLOCK_ELSE: the else branch `:{...}` of the condition that closed just
 * before it; it runs when that condition's block was skipped although its
 * parent was active (its BLOCK_BEGIN has no chunk). */
typedef enum ms_block_kind { MS_BLOCK_LOOP = 1, MS_BLOCK_COND, MS_BLOCK_ELSE } ms_block_kind;

typedef struct ms_event {
    ms_event_kind kind;
    size_t off, len; /* source bytes of the statement, header or '}' */
    int line, col;   /* where it starts */
    const char *lua; /* chunk (see above), NUL-terminated; valid until the next call */
    size_t lua_len;
    const char *code;    /* the statement's Lua alone, as in the whole-plan chunk */
    ms_block_kind block; /* BLOCK_BEGIN / BLOCK_END */
    long count;          /* loop iteration count */
    int depth;           /* blocks open around this event */
    const ms_diag *diag; /* ERROR */
} ms_event;

typedef struct ms_stream ms_stream;

/* A parser for one plan against REG (which must outlive it). OPTS as for
 * minispec_compile (NULL = defaults). NULL only when out of memory. */
ms_stream *ms_stream_new(const skill_registry *reg, const ms_options *opts);
void ms_stream_free(ms_stream *s);

/* Appends LEN bytes of plan text. Call ms_stream_next until it returns
 * MS_EV_NONE before feeding more (feeding more first is allowed too). */
void ms_stream_feed(ms_stream *s, const char *chunk, size_t len);

/* Declares the end of the plan: pending statements complete, open blocks
 * become an error. */
void ms_stream_finish(ms_stream *s);

/* The next event, or MS_EV_NONE when the bytes so far complete nothing more
 * (MS_EV_DONE once finished and everything was reported). */
ms_event_kind ms_stream_next(ms_stream *s, ms_event *ev);

/* Bytes consumed into reported events so far. */
size_t ms_stream_consumed(const ms_stream *s);

/* Bytes the parser has scanned so far, counting bytes it read more than
 * once each time: the measure of its work that tests and benchmarks hold
 * to a constant times the plan's length (SPEC §8: linear, also within one
 * long statement). */
size_t ms_stream_work(const ms_stream *s);

/* The dialect seen so far: "v1", "v2" or "mixed". */
const char *ms_stream_dialect(const ms_stream *s);

#endif
