/*
 * Small blocks of a Lua state from chunks (see arena.h).
 */
#include "sandbox/arena.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK (64u * 1024u)

static bool small(size_t n)
{
    return SANDBOX_ARENA_ON && n > 0 && n <= SANDBOX_ARENA_SMALL;
}

/* The size class of a small block: 16-byte steps. */
static size_t class_of(size_t n)
{
    return (n - 1) / 16;
}

static void *take(sandbox_arena *a, size_t n)
{
    size_t c = class_of(n);
    void *p = a->free_list[c];
    if (p) {
        memcpy(&a->free_list[c], p, sizeof p);
        return p;
    }
    size_t want = (c + 1) * 16;
    if (a->left < want) {
        char *chunk = malloc(ARENA_CHUNK);
        if (!chunk) return NULL;
        memcpy(chunk, &a->chunks, sizeof a->chunks);
        a->chunks = chunk;
        /* the first 16 bytes link the chunks (and keep blocks aligned) */
        a->cur = chunk + 16;
        a->left = ARENA_CHUNK - 16;
    }
    p = a->cur;
    a->cur += want;
    a->left -= want;
    return p;
}

static void give(sandbox_arena *a, void *p, size_t n)
{
    size_t c = class_of(n);
    memcpy(p, &a->free_list[c], sizeof p);
    a->free_list[c] = p;
}

void *sandbox_arena_realloc(sandbox_arena *a, void *ptr, size_t osize, size_t nsize)
{
    if (!ptr) osize = 0;
    if (nsize == 0) {
        if (small(osize))
            give(a, ptr, osize);
        else
            free(ptr);
        return NULL;
    }
    bool was = ptr && small(osize), will = small(nsize);
    if (!was && !will) return realloc(ptr, nsize);
    if (was && will && class_of(osize) == class_of(nsize)) return ptr;
    void *p = will ? take(a, nsize) : malloc(nsize);
    if (!p) return NULL;
    if (ptr) {
        memcpy(p, ptr, osize < nsize ? osize : nsize);
        if (was)
            give(a, ptr, osize);
        else
            free(ptr);
    }
    return p;
}

void sandbox_arena_release(sandbox_arena *a)
{
    while (a->chunks) {
        void *next;
        memcpy(&next, a->chunks, sizeof next);
        free(a->chunks);
        a->chunks = next;
    }
    memset(a, 0, sizeof *a);
}
