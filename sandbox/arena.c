/*
 * Small blocks of a Lua state from chunks, larger ones from malloc behind a
 * header, and the image of them all (see arena.h).
 */
#include "sandbox/arena.h"

#include <stdalign.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK (64u * 1024u)

/* The header of a larger block: the list of them, and whether the block is
 * part of the image (pinned: never freed nor moved while an image is kept). */
typedef struct sandbox_arena_big {
    alignas(16) struct sandbox_arena_big *prev;
    struct sandbox_arena_big *next;
    size_t size;
    bool pinned;
} sandbox_arena_big;

/* What the arena was, and a copy of each block it had handed out. */
typedef struct sandbox_arena_image {
    sandbox_arena saved;
    size_t nchunks, nbig;
    char **chunks; /* the chunks, newest first, and their used bytes */
    size_t *chunk_len;
    sandbox_arena_big **big; /* the pinned blocks and their bytes (header too) */
    char **copy;             /* chunk copies, then block copies */
} sandbox_arena_image;

/* The chunk made before chunk C (linked through its first bytes). */
static char *chunk_next(const char *c)
{
    char *next;
    memcpy(&next, c, sizeof next);
    return next;
}

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

static void big_link(sandbox_arena *a, sandbox_arena_big *b)
{
    b->prev = NULL;
    b->next = a->big;
    if (a->big) a->big->prev = b;
    a->big = b;
}

static void big_unlink(sandbox_arena *a, sandbox_arena_big *b)
{
    if (b->prev)
        b->prev->next = b->next;
    else
        a->big = b->next;
    if (b->next) b->next->prev = b->prev;
}

static void *big_new(sandbox_arena *a, size_t n)
{
    sandbox_arena_big *b = malloc(sizeof *b + n);
    if (!b) return NULL;
    b->size = n;
    b->pinned = false;
    big_link(a, b);
    return b + 1;
}

static sandbox_arena_big *big_of(void *p)
{
    return (sandbox_arena_big *)p - 1;
}

/* A block of the image stays where it is, with its bytes, until rewound. */
static void big_free(sandbox_arena *a, void *p)
{
    sandbox_arena_big *b = big_of(p);
    big_unlink(a, b);
    if (!b->pinned) free(b);
}

static void *big_resize(sandbox_arena *a, void *p, size_t osize, size_t n)
{
    sandbox_arena_big *b = big_of(p);
    if (b->pinned) {
        void *q = big_new(a, n);
        if (!q) return NULL;
        memcpy(q, p, osize < n ? osize : n);
        big_unlink(a, b);
        return q;
    }
    big_unlink(a, b);
    sandbox_arena_big *g = realloc(b, sizeof *b + n);
    if (!g) {
        big_link(a, b);
        return NULL;
    }
    g->size = n;
    big_link(a, g);
    return g + 1;
}

void *sandbox_arena_realloc(sandbox_arena *a, void *ptr, size_t osize, size_t nsize)
{
    if (!ptr) osize = 0;
    if (nsize == 0) {
        if (small(osize))
            give(a, ptr, osize);
        else if (ptr)
            big_free(a, ptr);
        return NULL;
    }
    bool was = ptr && small(osize), will = small(nsize);
    if (ptr && !was && !will) return big_resize(a, ptr, osize, nsize);
    if (was && will && class_of(osize) == class_of(nsize)) return ptr;
    void *p = will ? take(a, nsize) : big_new(a, nsize);
    if (!p) return NULL;
    if (ptr) {
        memcpy(p, ptr, osize < nsize ? osize : nsize);
        if (was)
            give(a, ptr, osize);
        else
            big_free(a, ptr);
    }
    return p;
}

static void image_free(sandbox_arena_image *img)
{
    if (!img) return;
    for (size_t i = 0; img->copy && i < img->nchunks + img->nbig; i++)
        free(img->copy[i]);
    free(img->chunks);
    free(img->chunk_len);
    free(img->big);
    free(img->copy);
    free(img);
}

void sandbox_arena_release(sandbox_arena *a)
{
    /* Blocks of the image a free only unlinked are the arena's again. */
    if (a->image) sandbox_arena_rewind(a);
    while (a->big) {
        sandbox_arena_big *next = a->big->next;
        free(a->big);
        a->big = next;
    }
    while (a->chunks) {
        void *next;
        memcpy(&next, a->chunks, sizeof next);
        free(a->chunks);
        a->chunks = next;
    }
    image_free(a->image);
    memset(a, 0, sizeof *a);
}

/* Counts the chunks and larger blocks and lists them in IMG. */
static int image_list(const sandbox_arena *a, sandbox_arena_image *img)
{
    for (char *c = a->chunks; c; c = chunk_next(c))
        img->nchunks++;
    for (sandbox_arena_big *b = a->big; b; b = b->next)
        img->nbig++;
    size_t n = img->nchunks + img->nbig;
    img->chunks = calloc(img->nchunks + 1, sizeof *img->chunks);
    img->chunk_len = calloc(img->nchunks + 1, sizeof *img->chunk_len);
    img->big = calloc(img->nbig + 1, sizeof *img->big);
    img->copy = calloc(n + 1, sizeof *img->copy);
    if (!img->chunks || !img->chunk_len || !img->big || !img->copy) return -1;
    size_t i = 0;
    for (char *c = a->chunks; c; c = chunk_next(c), i++) {
        img->chunks[i] = c;
        /* the newest chunk is used up to cur; an older one may be whole */
        img->chunk_len[i] = i == 0 ? (size_t)(a->cur - c) : ARENA_CHUNK;
    }
    i = 0;
    for (sandbox_arena_big *b = a->big; b; b = b->next)
        img->big[i++] = b;
    return 0;
}

int sandbox_arena_keep_image(sandbox_arena *a)
{
    if (a->image) return 0;
    sandbox_arena_image *img = calloc(1, sizeof *img);
    if (!img || image_list(a, img)) {
        image_free(img);
        return -1;
    }
    for (size_t i = 0; i < img->nbig; i++)
        img->big[i]->pinned = true;
    for (size_t i = 0; i < img->nchunks + img->nbig; i++) {
        bool chunk = i < img->nchunks;
        size_t len = chunk ? img->chunk_len[i]
                           : sizeof(sandbox_arena_big) + img->big[i - img->nchunks]->size;
        const void *from = chunk ? (void *)img->chunks[i] : (void *)img->big[i - img->nchunks];
        img->copy[i] = malloc(len ? len : 1);
        if (!img->copy[i]) {
            for (size_t k = 0; k < img->nbig; k++)
                img->big[k]->pinned = false;
            image_free(img);
            return -1;
        }
        memcpy(img->copy[i], from, len);
    }
    img->saved = *a;
    a->image = img;
    return 0;
}

void sandbox_arena_rewind(sandbox_arena *a)
{
    sandbox_arena_image *img = a->image;
    for (sandbox_arena_big *b = a->big, *next; b; b = next) {
        next = b->next;
        if (!b->pinned) free(b);
    }
    char *oldest_new = a->chunks;
    while (oldest_new != img->saved.chunks) {
        char *next = chunk_next(oldest_new);
        free(oldest_new);
        oldest_new = next;
    }
    for (size_t i = 0; i < img->nchunks; i++)
        memcpy(img->chunks[i], img->copy[i], img->chunk_len[i]);
    for (size_t i = 0; i < img->nbig; i++)
        memcpy(img->big[i], img->copy[img->nchunks + i],
               sizeof(sandbox_arena_big) + img->big[i]->size);
    *a = img->saved;
    a->image = img;
}
