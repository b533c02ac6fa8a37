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
 *
 * An arena can keep an image of every byte it handed out (sandbox.c keeps
 * one of a state just built, to rewind the state to it instead of building
 * the next one): the larger blocks are linked through a header, and once an
 * image is kept, a block of the image is never freed or moved while the
 * state runs (a free only unlinks it, a realloc copies it), so that every
 * address of the image stays the state's and rewinding copies the bytes
 * back to where they were.
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

struct sandbox_arena_big;
struct sandbox_arena_image;

typedef struct sandbox_arena {
    void *free_list[SANDBOX_ARENA_CLASSES];
    char *cur; /* the unused end of the newest chunk */
    size_t left;
    void *chunks;                      /* every chunk, linked through its first bytes */
    struct sandbox_arena_big *big;     /* every larger block, newest first */
    struct sandbox_arena_image *image; /* the kept image, or NULL */
} sandbox_arena;

/* Lua's allocator contract (lua_Alloc) on A: PTR with its size OSIZE (0 when
 * PTR is NULL) becomes a block of NSIZE bytes, or is freed when NSIZE is 0
 * (then NULL). NULL when memory is short (PTR is then untouched). */
void *sandbox_arena_realloc(sandbox_arena *a, void *ptr, size_t osize, size_t nsize);

/* Returns every chunk and block of A (after lua_close), and its image. */
void sandbox_arena_release(sandbox_arena *a);

/* Keeps an image of every block A has handed out now. Returns 0, or -1
 * when memory is short (then A keeps none). */
int sandbox_arena_keep_image(sandbox_arena *a);

/* Frees every block handed out since the image was kept and copies the
 * image back: A and all its blocks are byte for byte as they were then.
 * A must have an image. */
void sandbox_arena_rewind(sandbox_arena *a);

#endif
