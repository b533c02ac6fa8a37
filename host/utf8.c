#include "utf8.h"

#include <stdlib.h>
#include <string.h>

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

int utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (n == 0) return -1;
    unsigned char c = s[0];
    int len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0; /* a continuation byte, C0/C1 (overlong) or F5..FF */
    }
    for (int i = 1; i < len; i++) {
        if ((size_t)i >= n) return -1;
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
        /* Reject as early as the second byte allows, so that a cut-off
         * sequence that can never be valid is not reported as incomplete. */
        if (i == 1) {
            if (len == 3 && c == 0xE0 && s[1] < 0xA0) return 0;  /* overlong */
            if (len == 3 && c == 0xED && s[1] >= 0xA0) return 0; /* surrogate */
            if (len == 4 && c == 0xF0 && s[1] < 0x90) return 0;  /* overlong */
            if (len == 4 && c == 0xF4 && s[1] >= 0x90) return 0; /* > U+10FFFF */
        }
    }
    if (v < min) return 0;
    *cp = v;
    return len;
}

bool utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        int k = utf8_decode(p + i, n - i, &cp);
        if (k <= 0 || cp == 0) return false;
        i += (size_t)k;
    }
    return true;
}

char *utf8_repair(const char *s, size_t n, void *(*alloc)(size_t), size_t *outlen)
{
    /* At worst every byte becomes three. */
    if (n > (SIZE_MAX - 1) / 3) return NULL;
    char *out = (alloc ? alloc : malloc)(3 * n + 1);
    if (!out) return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    uint32_t cp;
    for (size_t i = 0; i < n;) {
        int k = utf8_decode(p + i, n - i, &cp);
        if (k <= 0 || cp == 0) {
            memcpy(out + o, replacement, 3);
            o += 3, i++;
        } else {
            memcpy(out + o, p + i, (size_t)k);
            o += (size_t)k, i += (size_t)k;
        }
    }
    out[o] = '\0';
    if (outlen) *outlen = o;
    return out;
}
