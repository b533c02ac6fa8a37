/*
 * From an LLM reply to plan text (SPEC §4): models wrap plans in markdown
 * fences (```minispec ... ```), prefix them with a label (`response:`,
 * `Plan:`), or add a sentence before or after. The checker sees none of
 * that: this module strips it, and says when a reply holds no plan at all.
 *
 * It works on a stream: the mission controller feeds it each delta and
 * passes what comes out straight to the incremental MiniSpec parser. A byte
 * is held back only while it cannot yet be told apart from a wrapper (the
 * first word of a line, a backtick that may open a fence, whitespace that
 * may turn out to be trailing). The whole-reply cleaner is the same machine
 * fed once.
 *
 * How a line outside a fence is judged: a line that starts like MiniSpec
 * (`?`, `_`, `->`, a loop count and `{`, a name followed by `(`, `,`, `;`,
 * `{` or `=`, or a single word) is plan; a word followed by `:` is a label
 * and dropped; a fence line opens (or closes) a block; a single backtick
 * opens inline code, which the next backtick closes; anything else is
 * prose. Prose before the plan is skipped; prose after it ends the plan.
 * Inside a fence everything is plan until the closing fence.
 */
#ifndef ALOFT_LLM_PLAN_TEXT_H
#define ALOFT_LLM_PLAN_TEXT_H

#include <stdbool.h>
#include <stddef.h>

typedef enum plan_text_status {
    PLAN_TEXT_OK = 0, /* some plan text came out */
    PLAN_TEXT_EMPTY,  /* the reply was empty or only wrappers */
    PLAN_TEXT_PROSE,  /* the reply is prose with no plan in it */
} plan_text_status;

/* Receives plan bytes. Return non-zero to stop; plan_stream_feed returns it. */
typedef int (*plan_text_emit_fn)(void *ud, const char *text, size_t len);

#define PLAN_STREAM_HOLD 256

typedef struct plan_stream {
    int state;
    bool fenced;                 /* inside a ``` block */
    bool inline_code;            /* the plan opened with a single backtick */
    bool saw_prose;              /* a prose line was dropped */
    bool done;                   /* the plan has ended; later input is ignored */
    size_t emitted;              /* plan bytes passed on */
    int ticks;                   /* backticks held back (1..2) */
    char hold[PLAN_STREAM_HOLD]; /* the undecided start of a line */
    size_t nhold;
    char ws[64]; /* whitespace held back: emitted only if more plan follows */
    size_t nws;
} plan_stream;

void plan_stream_init(plan_stream *s);

/* Feeds LEN bytes of reply; plan bytes go to EMIT (at most one call per
 * feed). Returns 0 or the non-zero value EMIT returned. */
int plan_stream_feed(plan_stream *s, const char *text, size_t len, plan_text_emit_fn emit,
                     void *ud);

/* The reply is complete: decides a held line, drops trailing whitespace and
 * reports what the reply held. EMIT may be called once more. */
plan_text_status plan_stream_finish(plan_stream *s, plan_text_emit_fn emit, void *ud);

/* True once the plan has ended (closing fence, or prose after the plan): the
 * caller may stop reading the reply. */
bool plan_stream_done(const plan_stream *s);

/* Cleans a whole reply. *OUT gets a malloc'd NUL-terminated plan (possibly
 * empty; NULL only if memory ran out, then PLAN_TEXT_EMPTY is returned). */
plan_text_status plan_text_clean(const char *reply, size_t len, char **out, size_t *outlen);

const char *plan_text_status_name(plan_text_status st);

#endif
