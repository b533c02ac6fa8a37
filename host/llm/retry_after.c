/*
 * Retry-After values into a bounded wait. See retry_after.h.
 */
#include "llm/retry_after.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <string.h>

#define CAP_S (LLM_RETRY_AFTER_CAP_MS / 1000L)

/* delta-seconds: one or more digits and nothing else. Accumulates only up
 * to the cap, so the value cannot overflow however long it is. */
static long delta_seconds(const char *v, size_t len)
{
    long s = 0;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9') return -1;
        if (s < CAP_S) s = s * 10 + (v[i] - '0');
    }
    return s < CAP_S ? s : CAP_S;
}

long llm_retry_after_ms(const char *v, size_t len, time_t now)
{
    while (len && (*v == ' ' || *v == '\t'))
        v++, len--;
    while (len &&
           (v[len - 1] == ' ' || v[len - 1] == '\t' || v[len - 1] == '\r' || v[len - 1] == '\n'))
        len--;
    if (len == 0) return -1;
    if (v[0] >= '0' && v[0] <= '9') {
        long s = delta_seconds(v, len);
        return s < 0 ? -1 : s * 1000L;
    }
    /* An HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT"): at most a short line. */
    char date[64];
    if (len >= sizeof date) return -1;
    memcpy(date, v, len);
    date[len] = '\0';
    time_t t = curl_getdate(date, &now);
    if (t == (time_t)-1) return -1;
    if (t <= now) return 0;
    /* Compared before subtracting into a long: time_t may be far off. */
    if (t - now >= (time_t)CAP_S) return LLM_RETRY_AFTER_CAP_MS;
    return (long)(t - now) * 1000L;
}
