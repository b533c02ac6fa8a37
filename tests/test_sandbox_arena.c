/*
 * The small blocks of a Lua state (sandbox/arena.h): a block keeps its
 * bytes when it grows or shrinks, across the boundary between the arena's
 * blocks and malloc's and at the edge of a size class; a freed block is
 * handed out again for its class only; chunks run out and new ones come.
 * labels: sandbox
 */
#include "check.h"
#include "sandbox/arena.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void fill(unsigned char *p, size_t n, unsigned char seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + i);
}

static bool same(const unsigned char *p, size_t n, unsigned char seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed + i)) return false;
    return true;
}

/* Every pair of sizes around the edges: the bytes that fit survive. */
static void check_resizes(void)
{
    static const size_t sizes[] = {1,   15,  16,  17,  31,  32,   33,   240,
                                   255, 256, 257, 300, 512, 4096, 70000};
    size_t n = sizeof sizes / sizeof sizes[0];
    sandbox_arena a = {0};
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            unsigned char *p = sandbox_arena_realloc(&a, NULL, 0, sizes[i]);
            CHECK(p, "new block of %zu", sizes[i]);
            if (!p) continue;
            CHECK((uintptr_t)p % 16 == 0, "block of %zu aligned", sizes[i]);
            fill(p, sizes[i], (unsigned char)i);
            unsigned char *q = sandbox_arena_realloc(&a, p, sizes[i], sizes[j]);
            CHECK(q, "%zu -> %zu", sizes[i], sizes[j]);
            if (!q) continue;
            size_t keep = sizes[i] < sizes[j] ? sizes[i] : sizes[j];
            CHECK(same(q, keep, (unsigned char)i), "%zu -> %zu kept its bytes", sizes[i], sizes[j]);
            memset(q, 0xee, sizes[j]); /* the whole new size is writable */
            CHECK(sandbox_arena_realloc(&a, q, sizes[j], 0) == NULL);
        }
    sandbox_arena_release(&a);
    CHECK(a.chunks == NULL && a.left == 0, "released");
}

/* A freed block comes back for its own class, not for another. */
static void check_reuse(void)
{
    sandbox_arena a = {0};
    void *p = sandbox_arena_realloc(&a, NULL, 0, 40);
    sandbox_arena_realloc(&a, p, 40, 0);
    void *other = sandbox_arena_realloc(&a, NULL, 0, 100);
    CHECK(other != p, "another class does not get the freed block");
    void *again = sandbox_arena_realloc(&a, NULL, 0, 48);
    CHECK(again == p, "the same class (33..48 bytes) gets it back");
    /* a size class's growth stays in place */
    CHECK(sandbox_arena_realloc(&a, again, 48, 33) == again);
    sandbox_arena_release(&a);
}

/* Many live blocks: several chunks, none overlapping another. */
static void check_many(void)
{
    enum { N = 20000 };
    static unsigned char *blocks[N];
    sandbox_arena a = {0};
    for (int i = 0; i < N; i++) {
        size_t n = 1 + (size_t)(i * 37) % 256;
        blocks[i] = sandbox_arena_realloc(&a, NULL, 0, n);
        if (blocks[i]) fill(blocks[i], n, (unsigned char)i);
    }
    int bad = 0;
    for (int i = 0; i < N; i++) {
        size_t n = 1 + (size_t)(i * 37) % 256;
        if (!blocks[i] || !same(blocks[i], n, (unsigned char)i)) bad++;
    }
    CHECK(bad == 0, "%d of %d blocks overwritten or missing", bad, N);
    sandbox_arena_release(&a);
}

int main(void)
{
    check_resizes();
    if (SANDBOX_ARENA_ON) check_reuse(); /* else malloc's own choice */
    check_many();
    return failures ? 1 : 0;
}
