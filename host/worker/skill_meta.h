/*
 * What a user skill file says about itself, as plain data (SPEC §5, §6).
 *
 * A skill file is Lua that returns a table {name=, description=, args=,
 * returns=, abbr=, run= | minispec=}. Learning those fields means running
 * the file's top-level chunk, which is user code: in a worker process
 * (skill_meta_read_in_worker), never in the host, except with
 * `--in-process` and for the built-in skills the binary carries. Where the
 * chunk runs, skill_meta_from_lua copies the fields it returned into a
 * skill_meta: each field's Lua type and its text, cut to the size the host
 * accepts plus one byte (so that the host can still say "too long"). The
 * host then judges every field itself (host/loader/loader.c), the same way
 * whichever process ran the chunk: what a worker sends is untrusted input.
 */
#ifndef ALOFT_WORKER_SKILL_META_H
#define ALOFT_WORKER_SKILL_META_H

#include "sandbox/sandbox.h"
#include "skills/registry.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest type name a field may hold ("float"), with room to spare. */
#define SKILL_META_TYPE_MAX 16
/* The longest minispec= text a skill file may give (a MiniSpec body). */
#define SKILL_META_MINISPEC_MAX (256u * 1024u)

/* One field: its Lua type (LUA_TNIL when absent) and, when it is a string
 * (or, for returns=, a number), its first bytes, NUL-terminated. LEN is
 * the number of bytes kept, at most the field's size: LEN equal to the
 * size means the string was longer than the host accepts. */
typedef struct skill_meta_text {
    int type;
    size_t len;
    char *text; /* malloc'd, or NULL */
} skill_meta_text;

typedef struct skill_meta_arg {
    int type; /* the Lua type of args[i] */
    skill_meta_text name, tname;
    bool optional;
} skill_meta_arg;

typedef struct skill_meta {
    int type; /* the Lua type of what the chunk returned */
    skill_meta_text name, description, abbr, returns, minispec;
    int args_type; /* the Lua type of args= */
    int64_t nargs; /* #args, raw */
    int nread;     /* args[1..nread] read: min(nargs, SKILL_MAX_ARGS), or 0 */
    skill_meta_arg args[SKILL_MAX_ARGS];
    int run_type; /* the Lua type of run= */
} skill_meta;

/* The size of each text field: the host's buffer for it (loader.c). */
#define SKILL_META_NAME_SIZE SKILL_NAME_MAX
#define SKILL_META_DESC_SIZE SKILL_DESC_MAX
#define SKILL_META_ABBR_SIZE 3

void skill_meta_free(skill_meta *m);

/* Reads the fields of the table at the top of SB's stack into *M (under
 * SB's budgets and protected: a metamethod of the table runs as the
 * chunk's own code). The table stays. Returns SANDBOX_OK, or the status
 * with a message. */
sandbox_status skill_meta_from_lua(sandbox *sb, skill_meta *m, char *err, size_t errlen);

/* Runs the skill file SRC (LEN bytes, named PATH in messages) in a fresh
 * sandbox of this process with LIM, and reads its table into *M. 0, or -1
 * with the chunk's error in ERR (its type need not be a table: the caller
 * judges *M). */
int skill_meta_run_here(const char *path, const char *src, size_t len, const sandbox_limits *lim,
                        skill_meta *m, char *err, size_t errlen);

/* A place in the worker pool (worker/vm.h) for reading skill files one
 * after another: one worker reads them all (a fresh one after a worker
 * that died), and no worker is started before the first file. */
typedef struct skill_reader skill_reader;
skill_reader *skill_reader_new(void);
void skill_reader_free(skill_reader *r);

/* The same as skill_meta_run_here, in a worker process of R (NULL: one
 * for this file only): the text goes there in one frame, the fields come
 * back in one frame, checked for shape (types, sizes, counts); a worker
 * that crashes, is killed by its filter (SIGSYS), stalls past LIM's time
 * plus a grace or answers out of turn is reported in ERR, and the host
 * goes on. 0, or -1. */
int skill_meta_read_in_worker(skill_reader *r, const char *path, const char *src, size_t len,
                              const sandbox_limits *lim, skill_meta *m, char *err, size_t errlen);

#endif
