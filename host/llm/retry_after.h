/*
 * The HTTP Retry-After header (RFC 9110 §10.2.3): delta-seconds or an HTTP
 * date. The value comes from the server, so it is read as untrusted text:
 * any number of digits (2^63, 2^64, a hundred digits) saturates instead of
 * overflowing, and anything else (a sign, a fraction, garbage) is ignored.
 */
#ifndef ALOFT_LLM_RETRY_AFTER_H
#define ALOFT_LLM_RETRY_AFTER_H

#include <stddef.h>
#include <time.h>

/* The longest wait a Retry-After can ask for here; longer values saturate
 * to it (it is far beyond any limit a caller accepts, so such a wait is
 * refused, never taken). */
#define LLM_RETRY_AFTER_CAP_MS (86400L * 1000L)

/* The wait the header value V (LEN bytes, not NUL-terminated, without the
 * header name) asks for, in ms between 0 and LLM_RETRY_AFTER_CAP_MS; NOW is
 * the current time for the date form. -1 when V is neither form. */
long llm_retry_after_ms(const char *v, size_t len, time_t now);

#endif
