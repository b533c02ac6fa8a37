/*
 * A growable, NUL-terminated text buffer for building prompts, replies and
 * diagnostics. Running out of memory is sticky: the buffer stops growing,
 * `oom` stays set, and the caller checks once at the end. (The MiniSpec
 * compiler has its own tuned buffer, host/minispec/buf.h.)
 */
#ifndef ALOFT_TEXTBUF_H
#define ALOFT_TEXTBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct textbuf {
    char *s; /* NULL until something is added; NUL-terminated after */
    size_t len, cap;
    bool oom;
} textbuf;

/* Appends N bytes of S. Returns 0, or -1 (and sets oom) when out of memory. */
int textbuf_add(textbuf *t, const char *s, size_t n);
int textbuf_adds(textbuf *t, const char *s);

/* The text so far ("" when empty). */
const char *textbuf_str(const textbuf *t);

/* Empties the buffer, keeping its memory. */
void textbuf_clear(textbuf *t);

/* Gives the text to the caller (malloc'd; "" when empty) and empties T.
 * NULL if memory ran out at any point. */
char *textbuf_take(textbuf *t);

void textbuf_free(textbuf *t);

#endif
