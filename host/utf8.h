/*
 * UTF-8 as the outputs need it (SPEC §2: every string in any JSON output is
 * valid UTF-8, invalid bytes replaced with U+FFFD). Text from plans, skills,
 * the LLM and the store crosses the host as bytes; these functions are the
 * one place that decides which bytes are well-formed UTF-8.
 */
#ifndef ALOFT_UTF8_H
#define ALOFT_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length (1-4) of the well-formed sequence at S, N bytes available,
 * with its code point in *CP. 0 when the byte at S starts no well-formed
 * sequence (overlong forms, surrogates and code points past U+10FFFF
 * included): take that one byte as invalid. -1 when the N bytes end inside
 * a sequence that more bytes could still complete. */
int utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* True when the N bytes of S are well-formed UTF-8. */
bool utf8_valid(const char *s, size_t n);

/* A NUL-terminated copy of the N bytes of S with each invalid byte (and a NUL
 * byte) replaced by U+FFFD; its length in *OUTLEN when not NULL. Allocated
 * with ALLOC (malloc when NULL); NULL when out of memory. */
char *utf8_repair(const char *s, size_t n, void *(*alloc)(size_t), size_t *outlen);

#endif
