/*
 * The small blocks of a Lua state (sandbox/arena.h): a block keeps its
 * bytes when it grows or shrinks, across the boundary between the arena's
 * blocks and malloc's and at the edge of a size class; a freed block is
 * handed out again for its class only; chunks run out and new ones come.
 * An image kept of the blocks comes back byte for byte, however the blocks
 * were written, freed or moved since, and whatever was handed out since is
 * gone.
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

/* The blocks of the image, as check_image fills them. */
static const size_t image_sizes[] = {16, 40, 256, 257, 300, 4096};
#define IMAGE_N (sizeof image_sizes / sizeof image_sizes[0])

static int image_intact(unsigned char *const *blocks)
{
    int bad = 0;
    for (size_t i = 0; i < IMAGE_N; i++)
        if (!same(blocks[i], image_sizes[i], (unsigned char)(i + 1))) bad++;
    return bad;
}

/* A world's worth of changes to the image: rewritten, freed and moved
 * blocks of the image, new chunks and new larger blocks. */
static void scribble(sandbox_arena *a, unsigned char **blocks)
{
    for (size_t i = 0; i < IMAGE_N; i++)
        memset(blocks[i], 0xa5, image_sizes[i]);
    sandbox_arena_realloc(a, blocks[1], image_sizes[1], 0); /* a small one freed */
    sandbox_arena_realloc(a, blocks[4], image_sizes[4], 0); /* a larger one freed */
    unsigned char *moved = sandbox_arena_realloc(a, blocks[5], image_sizes[5], 9000);
    CHECK(moved && moved[0] == 0xa5 && moved[4095] == 0xa5, "a block of the image grows");
    unsigned char *shrunk = sandbox_arena_realloc(a, blocks[3], image_sizes[3], 200);
    CHECK(shrunk && shrunk[199] == 0xa5, "a larger block of the image becomes small");
    for (int i = 0; i < 3000; i++) /* more than a chunk */
        memset(sandbox_arena_realloc(a, NULL, 0, 64), 0x5a, 64);
    for (int i = 0; i < 10; i++)
        sandbox_arena_realloc(a, NULL, 0, 1000 + (size_t)i);
}

static void check_image(void)
{
    sandbox_arena a = {0};
    unsigned char *blocks[IMAGE_N];
    for (size_t i = 0; i < IMAGE_N; i++) {
        blocks[i] = sandbox_arena_realloc(&a, NULL, 0, image_sizes[i]);
        fill(blocks[i], image_sizes[i], (unsigned char)(i + 1));
    }
    void *spare = sandbox_arena_realloc(&a, NULL, 0, 100);
    sandbox_arena_realloc(&a, spare, 100, 0); /* on a free list in the image */
    CHECK(sandbox_arena_keep_image(&a) == 0);
    void *next = sandbox_arena_realloc(&a, NULL, 0, 100);
    for (int round = 0; round < 3; round++) {
        scribble(&a, blocks);
        sandbox_arena_rewind(&a);
        CHECK(image_intact(blocks) == 0, "round %d: %d blocks not as in the image", round,
              image_intact(blocks));
        void *again = sandbox_arena_realloc(&a, NULL, 0, 100);
        if (SANDBOX_ARENA_ON) CHECK(again == next, "round %d: the free list as it was", round);
    }
    /* released after a world: the blocks of the image it freed too (the
     * sanitizer build reports a leak otherwise) */
    scribble(&a, blocks);
    sandbox_arena_release(&a);
    CHECK(a.chunks == NULL && a.big == NULL && a.image == NULL, "released");
}

int main(void)
{
    check_image();
    check_resizes();
    if (SANDBOX_ARENA_ON) check_reuse(); /* else malloc's own choice */
    check_many();
    return failures ? 1 : 0;
}
