#include "minispec/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void grow(ms_buf *b, size_t need)
{
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        fputs("aloft: out of memory\n", stderr);
        abort();
    }
    b->data = p;
    b->cap = cap;
}

void ms_buf_add_slow(ms_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) grow(b, b->len + n + 1);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void ms_buf_reserve(ms_buf *b, size_t n)
{
    if (b->len + n + 1 > b->cap) grow(b, b->len + n + 1);
}

void ms_buf_adds(ms_buf *b, const char *s)
{
    ms_buf_add(b, s, strlen(s));
}

void ms_buf_addi_slow(ms_buf *b, long long v)
{
    char tmp[24];
    int n = sizeof tmp;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[--n] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[--n] = '-';
    ms_buf_add(b, tmp + n, sizeof tmp - (size_t)n);
}

char *ms_buf_take(ms_buf *b)
{
    if (!b->data) {
        char *p = malloc(1);
        if (!p) abort();
        p[0] = '\0';
        return p;
    }
    char *p = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

void ms_buf_free(ms_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

struct ms_arena_block {
    ms_arena_block *next;
    size_t cap;
    max_align_t data[];
};

#define ARENA_BLOCK 8192

void *ms_arena_alloc_slow(ms_arena *a, size_t n)
{
    size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
    ms_arena_block *blk = malloc(sizeof *blk + cap);
    if (!blk) {
        fputs("aloft: out of memory\n", stderr);
        abort();
    }
    blk->cap = cap;
    blk->next = a->head;
    a->first = a->head ? NULL : (char *)blk->data;
    a->head = blk;
    a->cur = (char *)blk->data + n;
    a->end = (char *)blk->data + cap;
    return blk->data;
}

void ms_arena_reset_slow(ms_arena *a)
{
    ms_arena_block *blk = a->head;
    if (!blk) return;
    while (blk->next) {
        ms_arena_block *next = blk->next;
        free(blk);
        blk = next;
    }
    a->head = blk;
    a->first = (char *)blk->data;
    a->cur = (char *)blk->data;
    a->end = (char *)blk->data + blk->cap;
}

void ms_arena_free(ms_arena *a)
{
    ms_arena_reset(a);
    free(a->head);
    a->head = NULL;
    a->cur = a->end = a->first = NULL;
}

void *ms_grow(void *p, int *cap, size_t elem)
{
    int ncap = *cap ? *cap * 2 : 8;
    void *q = realloc(p, (size_t)ncap * elem);
    if (!q) abort();
    *cap = ncap;
    return q;
}
