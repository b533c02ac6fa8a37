#include "term.h"

#include "utf8.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TERM_CHUNK 4096

typedef struct out_buf {
    char b[TERM_CHUNK];
    size_t n;
    int (*write)(void *ud, const char *, size_t);
    void *ud;
} out_buf;

static int put(out_buf *o, const char *s, size_t n)
{
    if (o->n + n > sizeof o->b) {
        if (o->write(o->ud, o->b, o->n)) return -1;
        o->n = 0;
    }
    memcpy(o->b + o->n, s, n);
    o->n += n;
    return 0;
}

static int put_hex(out_buf *o, const char *prefix, unsigned char c)
{
    char e[8];
    int k = snprintf(e, sizeof e, "%s%02x", prefix, c);
    return put(o, e, (size_t)k);
}

long term_escape(const char *s, size_t n, bool more, int (*write)(void *ud, const char *, size_t),
                 void *ud)
{
    out_buf o = {.n = 0, .write = write, .ud = ud};
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        int k = utf8_decode(p + i, n - i, &cp);
        if (k < 0 && more) break; /* the rest comes with the next write */
        int rc;
        if (k <= 0)
            rc = put_hex(&o, "\\x", p[i]), k = 1; /* not UTF-8 */
        else if (cp == '\n' || cp == '\t')
            rc = put(&o, (const char *)p + i, 1);
        else if (cp < 0x20 || cp == 0x7F)
            rc = put_hex(&o, "\\x", (unsigned char)cp);
        else if (cp >= 0x80 && cp <= 0x9F) /* its two bytes, C2 xx */
            rc = put_hex(&o, "\\x", p[i]) || put_hex(&o, "\\x", p[i + 1]);
        else
            rc = put(&o, (const char *)p + i, (size_t)k);
        if (rc) return -1;
        i += (size_t)k;
    }
    if (o.n && write(ud, o.b, o.n)) return -1;
    return (long)i;
}

/* ---- the stream ----------------------------------------------------------- */

typedef struct term_cookie {
    int fd;
    unsigned char carry[4]; /* the start of a UTF-8 sequence cut by a write */
    size_t ncarry;
} term_cookie;

static int write_fd(void *ud, const char *s, size_t n)
{
    const term_cookie *c = ud;
    while (n) {
        ssize_t w = write(c->fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        s += w, n -= (size_t)w;
    }
    return 0;
}

static ssize_t cookie_write(void *ud, const char *buf, size_t size)
{
    term_cookie *c = ud;
    /* A sequence cut between two writes is joined again before escaping;
     * a carry never holds more than three bytes. */
    char joined[TERM_CHUNK + 4];
    size_t done = 0;
    while (done < size) {
        size_t take = size - done < TERM_CHUNK ? size - done : TERM_CHUNK;
        memcpy(joined, c->carry, c->ncarry);
        memcpy(joined + c->ncarry, buf + done, take);
        size_t n = c->ncarry + take;
        long used = term_escape(joined, n, true, write_fd, c);
        if (used < 0) return -1; /* errno from write(2) */
        c->ncarry = n - (size_t)used;
        memcpy(c->carry, joined + used, c->ncarry);
        done += take;
    }
    return (ssize_t)size;
}

static int cookie_close(void *ud)
{
    term_cookie *c = ud;
    int rc = 0;
    if (c->ncarry && term_escape((const char *)c->carry, c->ncarry, false, write_fd, c) < 0)
        rc = -1;
    free(c);
    return rc;
}

FILE *term_stream(int fd, int mode)
{
    term_cookie *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->fd = fd;
    cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};
    FILE *f = fopencookie(c, "w", io);
    if (!f) {
        free(c);
        return NULL;
    }
    setvbuf(f, NULL, mode, 0);
    return f;
}
