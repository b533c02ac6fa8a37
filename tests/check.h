/*
 * The check macro of the C tests. CHECK(cond) or CHECK(cond, "fmt", ...):
 * a failed check prints where and what (and the message, if given) and is
 * counted in `failures`; the test goes on, so one run shows every failure.
 * A test's main returns `failures ? 1 : 0`.
 */
#ifndef ALOFT_TESTS_CHECK_H
#define ALOFT_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int failures;

/* No format attribute: CHECK(cond) passes an empty format. */
static inline void check_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond);               \
            check_note("" __VA_ARGS__);                                                            \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#endif
