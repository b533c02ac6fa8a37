/*
 * Error messages the host's way: a function that fails writes what happened
 * into the caller's ERR buffer (ERRLEN bytes, cut if need be) and returns
 * -1. One helper for the modules that format such messages.
 */
#ifndef ALOFT_ERRMSG_H
#define ALOFT_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>

/* Writes the message into ERR (nothing when ERR is NULL or ERRLEN is 0);
 * returns -1. */
int errmsg_set(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int errmsg_vset(char *err, size_t errlen, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
