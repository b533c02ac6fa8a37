/*
 * Text for a terminal. Plans, skill arguments, LLM replies and the store's
 * rows end up on stdout and stderr; a control character among them could
 * retitle the window, move the cursor, rewrite lines already printed or
 * worse (`l('\033]0;...')`). term_escape is the one rule for what may reach
 * a terminal as it is: printable UTF-8, newline and tab. Everything else is
 * written as \xHH escapes, one per byte: C0 controls, DEL, the C1 controls
 * (U+0080-U+009F, two bytes each) and bytes that are not valid UTF-8. That
 * is also how Lua and C write those bytes in a string, so the Lua that
 * `aloft transpile` prints stays Lua.
 */
#ifndef ALOFT_TERM_H
#define ALOFT_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Writes the escaped form of S's N bytes through WRITE (called with pieces
 * of at most a few kilobytes; it returns 0, or -1 to stop). When MORE is
 * true and S ends inside a UTF-8 sequence that more bytes could complete,
 * those last bytes are not written: the count consumed is returned so that
 * the caller can hand them in again with what follows. Returns the bytes of
 * S consumed, or -1 when WRITE failed. */
long term_escape(const char *s, size_t n, bool more, int (*write)(void *ud, const char *, size_t),
                 void *ud);

/* A stream on file descriptor FD that writes everything through
 * term_escape, buffered as MODE (_IONBF, _IOLBF, _IOFBF). A write error of
 * FD (a full disk, EFBIG past RLIMIT_FSIZE, a closed pipe) sets the
 * stream's error flag. NULL when out of memory. */
FILE *term_stream(int fd, int mode);

#endif
