/*
 * The CHECK of the store tests: a failed check is reported with its place
 * and a message, and counted; the test goes on and exits 1 at the end.
 */
#ifndef ALOFT_TESTS_TEST_STORE_CHECK_H
#define ALOFT_TESTS_TEST_STORE_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#endif
