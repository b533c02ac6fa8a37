/*
 * Whole numbers typed by a user (see number.h).
 */
#include "number.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

int number_parse_int(const char *s, long lo, long hi, int *out)
{
    if (!s || !*s || *s == '+' || isspace((unsigned char)*s)) return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}
