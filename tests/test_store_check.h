/*
 * What the store tests share beyond CHECK (tests/check.h): their temporary
 * directory is kept for a look when a check failed.
 */
#ifndef ALOFT_TESTS_TEST_STORE_CHECK_H
#define ALOFT_TESTS_TEST_STORE_CHECK_H

#include "check.h"

#include <stdio.h>
#include <stdlib.h>

/* Removes the test's temporary directory if every check passed (else keeps
 * it for a look), reports, and returns the exit status. */
static int check_finish(const char *test, const char *tmpdir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (failures == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    if (failures)
        fprintf(stderr, "%s: %d check(s) failed (files in %s)\n", test, failures, tmpdir);
    else
        printf("%s: all checks passed\n", test);
    return failures ? 1 : 0;
}

#endif
