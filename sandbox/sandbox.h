/*
 * The sandbox: one Lua 5.4 state per mission, with hard limits that guarantee
 * every script ends (SPEC §6).
 *
 *  - memory: a capped allocator; a refused allocation raises Lua's memory error
 *    and poisons the state;
 *  - instructions: a count hook charges the budget every SANDBOX_HOOK_STEP
 *    instructions and also checks the wall-clock deadline and the cancel flag;
 *  - poison: once any limit trips, the hook fires on every instruction of every
 *    thread and raises the limit error again, so no pcall/xpcall/coroutine/
 *    __close can let the script run on; skills refuse to act (sandbox_alive).
 *  - environment: an exact allow-list (sandbox/env.c states the policy).
 *
 * The limit error is a unique light userdata, recognised by identity; its
 * message cannot be forged into a limit error by a script.
 *
 * Thread-safety: everything but sandbox_cancel must be called from the thread
 * that runs the state. sandbox_cancel may be called from any thread or from a
 * signal handler.
 */
#ifndef ALOFT_SANDBOX_H
#define ALOFT_SANDBOX_H

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SANDBOX_HOOK_STEP 1000
#define SANDBOX_DEFAULT_INSTRUCTIONS 10000000ull
#define SANDBOX_DEFAULT_MEMORY (16u * 1024u * 1024u)
#define SANDBOX_DEFAULT_TIMEOUT_MS 300000ull
#define SANDBOX_MAX_TIMEOUT_MS 3153600000000ull /* 100 years: longer limits are cut to it */
#define SANDBOX_DEFAULT_OUTPUT (64u * 1024u)
/* Field accesses one expression may chain (`a.b.c`: 2); more is refused at
 * load (sandbox/chunk_check.c says why). */
#define SANDBOX_MAX_CHAIN 200

typedef struct sandbox_limits {
    uint64_t max_instructions; /* 0 = default */
    size_t max_memory;         /* bytes; 0 = default */
    uint64_t timeout_ms;       /* wall clock from sandbox_new; 0 = default */
    size_t max_output;         /* bytes of print/log text kept; 0 = default */
} sandbox_limits;

/* Why a run ended. */
typedef enum sandbox_status {
    SANDBOX_OK = 0,
    SANDBOX_ERROR,        /* a Lua error raised by the script or a skill */
    SANDBOX_INSTRUCTIONS, /* instruction budget exhausted */
    SANDBOX_MEMORY,       /* memory cap reached */
    SANDBOX_TIMEOUT,      /* wall-clock deadline passed */
    SANDBOX_CANCELLED,    /* sandbox_cancel was called */
    /* Never the sandbox's own: the worker process running a VM (worker/vm.h)
     * died or was cut off, or was killed past its deadline. */
    SANDBOX_CRASHED,
    SANDBOX_HUNG,
} sandbox_status;

typedef struct sandbox_usage {
    uint64_t instructions; /* charged in steps of SANDBOX_HOOK_STEP */
    size_t memory_now;
    size_t memory_peak;
} sandbox_usage;

typedef struct sandbox sandbox;

/* Creates a state with the allow-listed environment. Returns NULL (and a
 * message in ERR) only when the state cannot be created at all. The state
 * may be one sandbox_free rewound to exactly what a state just built is
 * (sandbox.c): nothing of what ran in it before can be seen. */
sandbox *sandbox_new(const sandbox_limits *limits, char *err, size_t errlen);

/* Closes the state (with the hook still armed) and frees everything, or
 * rewinds it to the state just built and keeps it for the next sandbox_new. */
void sandbox_free(sandbox *sb);

lua_State *sandbox_lua(sandbox *sb);

/* Requests cancellation; the script stops at its next hook or skill poll. */
void sandbox_cancel(sandbox *sb);

/* Registers a C function as a read-only global of the allow-listed
 * environment (used to bind skills). Must be called before scripts run. */
void sandbox_set_global(sandbox *sb, const char *name, lua_CFunction fn, void *upvalue);

/* Pops the table on top of the stack and makes a read-only view of it a
 * global of the base environment (used for lua/NAME.lua runtime tables). */
void sandbox_set_global_table(sandbox *sb, const char *name);

/* Pushes the read-only base environment table (the table every chunk's
 * globals fall back to). */
void sandbox_push_base(sandbox *sb);

/* Loads a text chunk (never bytecode) with a fresh global table whose reads
 * fall back to the base environment; pushes the function on success.
 * Returns SANDBOX_OK or SANDBOX_ERROR with the message in ERR. */
sandbox_status sandbox_load(sandbox *sb, const char *code, size_t len, const char *chunkname,
                            char *err, size_t errlen);

/* Like sandbox_load, for the host's own trusted sources (the lua/ runtime,
 * skill files): the text is compiled once per process and later loads reuse
 * the compiled form, which is never taken from a script. Thread-safe. */
sandbox_status sandbox_load_cached(sandbox *sb, const char *code, size_t len, const char *chunkname,
                                   char *err, size_t errlen);

/* Calls the function on top of the stack with NARGS arguments below it,
 * protected. On success leaves NRESULTS results (LUA_MULTRET allowed). On
 * failure the stack is restored and ERR holds a readable message: for limits,
 * the host's own message, never the script's text. */
sandbox_status sandbox_call(sandbox *sb, int nargs, int nresults, char *err, size_t errlen);

/* Convenience: load + call, discarding results. */
sandbox_status sandbox_run(sandbox *sb, const char *code, size_t len, const char *chunkname,
                           char *err, size_t errlen);

/* True while no limit has tripped and no cancel was requested (also checks the
 * deadline). Blocking skills poll this; a skill must not act when false. */
bool sandbox_alive(sandbox *sb);

/* Poisons the state with ST (a limit status) as if that limit had tripped
 * here: a limit that tripped on the other side of a process boundary. */
void sandbox_poison_with(sandbox *sb, sandbox_status st);

/* The status that poisoned the state, or SANDBOX_OK. */
sandbox_status sandbox_poison(const sandbox *sb);

/* Raises the limit error if the state is poisoned; returns otherwise. For C
 * functions called from Lua (skills) that must not act on a dead state. */
void sandbox_check(lua_State *L);

/* True if the value at IDX is the sandbox's limit error object. */
bool sandbox_is_limit_error(lua_State *L, int idx);

/* Milliseconds left before the deadline (0 when passed). */
uint64_t sandbox_remaining_ms(const sandbox *sb);

sandbox_usage sandbox_get_usage(const sandbox *sb);

/* The sandbox that owns L (any thread of it). */
sandbox *sandbox_from_lua(lua_State *L);

/* Output written by print and the log skill, capped at max_output bytes;
 * further text is dropped and sandbox_output_truncated becomes true. */
void sandbox_write(sandbox *sb, const char *text, size_t len);
const char *sandbox_output(const sandbox *sb, size_t *len);
bool sandbox_output_truncated(const sandbox *sb);

/* Called for each line written by print/log (after capping), for live
 * progress; may be NULL. */
void sandbox_set_output_hook(sandbox *sb, void (*fn)(void *ud, const char *line, size_t len),
                             void *ud);

const char *sandbox_status_name(sandbox_status st);

#endif
