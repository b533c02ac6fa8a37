#include "errmsg.h"

#include <stdio.h>

int errmsg_vset(char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (err && errlen) vsnprintf(err, errlen, fmt, ap);
    return -1;
}

int errmsg_set(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    errmsg_vset(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}
