/* Shared between sandbox.c (limits, running) and env.c (the environment). */
#ifndef ALOFT_SANDBOX_INTERNAL_H
#define ALOFT_SANDBOX_INTERNAL_H

#include "sandbox/sandbox.h"

/* Builds the read-only base environment and leaves it on the stack. */
void sandbox_env_build(lua_State *L);

/* Pushes a fresh global table for one chunk: reads fall back to BASE_IDX,
 * writes may create new globals but never replace a base one. */
void sandbox_env_new_chunk_env(lua_State *L, int base_idx);

/* Replaces the functions of the coroutine library table at CO that could
 * run a dead coroutine's __close handlers without the hook (env_coroutine.c). */
void sandbox_env_coroutine(lua_State *L, int co);

/* True if the coroutine CO has an xpcall in progress (env.c says why). */
bool sandbox_env_in_xpcall(lua_State *L, lua_State *co);

/* Adds NAME = value on top of the stack (popped) to the base table at
 * BASE_IDX, bypassing its read-only guard. */
void sandbox_env_set_base(lua_State *L, int base_idx, const char *name);

/* Replaces the table on top of the stack by a read-only proxy of it. */
void sandbox_env_make_readonly(lua_State *L);

/* Charges N units of C-side work to the instruction budget (for library
 * functions that loop in C without running VM instructions). Raises the
 * limit error if the budget runs out. */
void sandbox_charge(lua_State *L, uint64_t n);

/* Collects garbage first if an allocation of N bytes would not fit under
 * the memory cap now. For library functions that allocate big buffers
 * through lauxlib, whose allocations Lua does not retry after collecting. */
void sandbox_make_room(lua_State *L, size_t n);

/* C stack a script may use below the host's entry into the VM. Lua's own
 * limit of 200 nested C calls stays far below it (about 200 KiB); threads
 * that run scripts have at least 2 MiB (glibc's smallest default). */
#define SANDBOX_MAX_CSTACK (1024u * 1024u)

/* Raises a plain error if the C stack is deeper than SANDBOX_MAX_CSTACK
 * below where the host entered the VM (sandbox.c says why). */
void sandbox_check_cstack(lua_State *L);

/* Refuses a chunk text that Lua 5.4.4 could not report an error in safely
 * (chunk_check.c): returns 0, or -1 with "NAME:LINE: message" in ERR. */
int sandbox_chunk_check(const char *code, size_t len, const char *chunkname, char *err,
                        size_t errlen);

#endif
