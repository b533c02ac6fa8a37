/*
 * The small blocks of one Lua state (sandbox.c's allocator): most of what a
 * VM allocates is a few dozen bytes (strings, closures, table nodes), and a
 * mission or a verified world creates and closes a whole VM, so that
 * malloc's bookkeeping for thousands of small blocks (and its consolidation
 * on the way out) was a quarter of a world's cost. An arena hands out
 * blocks of up to SANDBOX_ARENA_SMALL bytes from large chunks, keeps the
 * freed ones on a list per size class for the same state, and returns every
 * chunk at once when the state closes. Larger blocks, and every block in a
 * sanitizer build (so that the sanitizers see Lua's memory), go to malloc.
 *
 * One arena per state, used by the state's thread only. What the sandbox
 * counts against its memory cap is unchanged: the sizes Lua asks for.
 */
#ifndef ALOFT_SANDBOX_ARENA_H
#define ALOFT_SANDBOX_ARENA_H

#include <stddef.h>

/* false in a sanitizer build: every block is malloc's */
#if defined(__SANITIZE_ADDRESS__)
#define SANDBOX_ARENA_ON 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define SANDBOX_ARENA_ON 0
#endif
#endif
#ifndef SANDBOX_ARENA_ON
#define SANDBOX_ARENA_ON 1
#endif

#define SANDBOX_ARENA_SMALL 256
#define SANDBOX_ARENA_CLASSES (SANDBOX_ARENA_SMALL / 16)

typedef struct sandbox_arena {
    void *free_list[SANDBOX_ARENA_CLASSES];
    char *cur; /* the unused end of the newest chunk */
    size_t left;
    void *chunks; /* every chunk, linked through its first bytes */
} sandbox_arena;

/* Lua's allocator contract (lua_Alloc) on A: PTR with its size OSIZE (0 when
 * PTR is NULL) becomes a block of NSIZE bytes, or is freed when NSIZE is 0
 * (then NULL). NULL when memory is short (PTR is then untouched). */
void *sandbox_arena_realloc(sandbox_arena *a, void *ptr, size_t osize, size_t nsize);

/* Returns every chunk of A (after lua_close). */
void sandbox_arena_release(sandbox_arena *a);

#endif
