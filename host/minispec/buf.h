/*
 * Growable byte buffers and a bump allocator for the MiniSpec compiler. The
 * compiler's speed budget is a few nanoseconds per plan byte, so text is
 * appended by hand rather than through printf.
 */
#ifndef ALOFT_MINISPEC_BUF_H
#define ALOFT_MINISPEC_BUF_H

#include <stddef.h>
#include <string.h>

typedef struct ms_buf {
    char *data; /* NUL-terminated whenever len > 0 */
    size_t len, cap;
} ms_buf;

/* Appends N bytes (aborts the process only if memory is exhausted). */
void ms_buf_add_slow(ms_buf *b, const char *s, size_t n);
static inline void ms_buf_add(ms_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        ms_buf_add_slow(b, s, n);
        return;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}
void ms_buf_adds(ms_buf *b, const char *s);
/* Makes room for N more bytes and their NUL. */
void ms_buf_reserve(ms_buf *b, size_t n);
/* Appends a string literal (its length known at compile time). */
#define ms_buf_addlit(b, lit) ms_buf_add((b), (lit), sizeof(lit) - 1)
static inline void ms_buf_addc(ms_buf *b, char c)
{
    if (b->len + 2 > b->cap) {
        ms_buf_add_slow(b, &c, 1);
        return;
    }
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}
void ms_buf_addi_slow(ms_buf *b, long long v);
/* Appends V in decimal (one digit, the common case, inline). */
static inline void ms_buf_addi(ms_buf *b, long long v)
{
    if (v >= 0 && v <= 9)
        ms_buf_addc(b, (char)('0' + v));
    else
        ms_buf_addi_slow(b, v);
}
/* Appends LEVELS levels of indentation (two spaces each). */
static inline void ms_buf_indent(ms_buf *b, int levels)
{
    if (levels <= 0) return;
    size_t n = 2 * (size_t)levels;
    if (b->len + n + 8 > b->cap) ms_buf_reserve(b, n + 8);
    if (n <= 8) /* one 8-byte store (past the end is room to spare) */
        memcpy(b->data + b->len, "        ", 8);
    else
        memset(b->data + b->len, ' ', n);
    b->len += n;
    b->data[b->len] = '\0';
}
/* Gives the text to the caller (malloc'd, NUL-terminated) and empties B. */
char *ms_buf_take(ms_buf *b);
void ms_buf_free(ms_buf *b);

/* Doubles the capacity *CAP (at least 8) of array P of ELEM-byte items. */
void *ms_grow(void *p, int *cap, size_t elem);

/* Memory for one statement's syntax tree; reset between statements. */
typedef struct ms_arena_block ms_arena_block;
typedef struct ms_arena {
    ms_arena_block *head;
    char *cur, *end; /* the free part of the head block */
    char *first;     /* the data of the only block, NULL if none or several */
} ms_arena;

void *ms_arena_alloc_slow(ms_arena *a, size_t n);
/* N bytes aligned for any type, valid until the next reset. */
static inline void *ms_arena_alloc(ms_arena *a, size_t n)
{
    n = (n + _Alignof(max_align_t) - 1) & ~(size_t)(_Alignof(max_align_t) - 1);
    if ((size_t)(a->end - a->cur) >= n) {
        void *p = a->cur;
        a->cur += n;
        return p;
    }
    return ms_arena_alloc_slow(a, n);
}
/* Frees everything but the first block, which is kept for reuse. */
void ms_arena_reset_slow(ms_arena *a);
static inline void ms_arena_reset(ms_arena *a)
{
    if (a->first)
        a->cur = a->first;
    else
        ms_arena_reset_slow(a);
}
void ms_arena_free(ms_arena *a);

#endif
