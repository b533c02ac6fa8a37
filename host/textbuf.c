#include "textbuf.h"

#include <stdlib.h>
#include <string.h>

int textbuf_add(textbuf *t, const char *s, size_t n)
{
    if (t->oom) return -1;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = realloc(t->s, cap);
        if (!p) {
            t->oom = true;
            return -1;
        }
        t->s = p;
        t->cap = cap;
    }
    if (n) memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
    return 0;
}

int textbuf_adds(textbuf *t, const char *s)
{
    return textbuf_add(t, s, strlen(s));
}

const char *textbuf_str(const textbuf *t)
{
    return t->s ? t->s : "";
}

void textbuf_clear(textbuf *t)
{
    t->len = 0;
    if (t->s) t->s[0] = '\0';
}

char *textbuf_take(textbuf *t)
{
    char *s = t->oom ? NULL : t->s ? t->s : strdup("");
    if (t->oom) free(t->s);
    t->s = NULL;
    t->len = t->cap = 0;
    t->oom = false;
    return s;
}

void textbuf_free(textbuf *t)
{
    free(t->s);
    t->s = NULL;
    t->len = t->cap = 0;
    t->oom = false;
}
