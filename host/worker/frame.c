/*
 * Frames: building, parsing and moving them (see frame.h).
 */
#include "worker/frame.h"

#include "clock.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void frame_start(frame *f, frame_type type, uint32_t mission)
{
    f->h = (frame_header){.len = 0, .type = (uint16_t)type, .zero = 0, .mission = mission};
    f->pos = 0;
    f->bad = false;
}

void frame_free(frame *f)
{
    free(f->buf);
    f->buf = NULL;
    f->cap = f->pos = 0;
}

static void put(frame *f, const void *p, size_t n)
{
    if (f->bad) return;
    if (f->pos + n > FRAME_MAX) {
        f->bad = true;
        return;
    }
    if (f->pos + n > f->cap) {
        size_t cap = f->cap ? f->cap : 256;
        while (cap < f->pos + n)
            cap *= 2;
        unsigned char *b = realloc(f->buf, cap);
        if (!b) {
            f->bad = true;
            return;
        }
        f->buf = b, f->cap = cap;
    }
    if (n) memcpy(f->buf + f->pos, p, n);
    f->pos += n;
}

void frame_put_u8(frame *f, uint8_t v)
{
    put(f, &v, 1);
}

void frame_put_u32(frame *f, uint32_t v)
{
    put(f, &v, sizeof v);
}

void frame_put_u64(frame *f, uint64_t v)
{
    put(f, &v, sizeof v);
}

void frame_put_f64(frame *f, double v)
{
    put(f, &v, sizeof v);
}

void frame_put_text(frame *f, const char *s, size_t len)
{
    if (len > FRAME_MAX) len = FRAME_MAX;
    frame_put_u32(f, (uint32_t)len);
    put(f, s, len);
}

void frame_put_str(frame *f, const char *s, size_t len)
{
    frame_put_text(f, s, len > FRAME_MAX_STR ? FRAME_MAX_STR : len);
}

void frame_put_value(frame *f, const frame_value *v)
{
    frame_put_u8(f, (uint8_t)v->tag);
    switch (v->tag) {
    case FV_INT: put(f, &v->i, sizeof v->i); break;
    case FV_NUM: frame_put_f64(f, v->n); break;
    case FV_STR: frame_put_str(f, v->s, v->len); break;
    case FV_OTHER: frame_put_u8(f, (uint8_t)v->lua_type); break;
    default: break;
    }
}

/* ---- reading ------------------------------------------------------------- */

static const void *get(frame *f, size_t n)
{
    if (f->bad || n > f->h.len - f->pos) {
        f->bad = true;
        return NULL;
    }
    const void *p = f->buf + f->pos;
    f->pos += n;
    return p;
}

uint8_t frame_get_u8(frame *f)
{
    const uint8_t *p = get(f, 1);
    return p ? *p : 0;
}

uint32_t frame_get_u32(frame *f)
{
    uint32_t v = 0;
    const void *p = get(f, sizeof v);
    if (p) memcpy(&v, p, sizeof v);
    return v;
}

uint64_t frame_get_u64(frame *f)
{
    uint64_t v = 0;
    const void *p = get(f, sizeof v);
    if (p) memcpy(&v, p, sizeof v);
    return v;
}

double frame_get_f64(frame *f)
{
    double v = 0;
    const void *p = get(f, sizeof v);
    if (p) memcpy(&v, p, sizeof v);
    return v;
}

static const char *get_text(frame *f, size_t *len, size_t max)
{
    uint32_t n = frame_get_u32(f);
    if (n > max) f->bad = true;
    const char *s = get(f, n);
    *len = s ? n : 0;
    return s ? s : "";
}

const char *frame_get_text(frame *f, size_t *len)
{
    return get_text(f, len, FRAME_MAX);
}

const char *frame_get_str(frame *f, size_t *len)
{
    return get_text(f, len, FRAME_MAX_STR);
}

bool frame_get_value(frame *f, frame_value *v)
{
    memset(v, 0, sizeof *v);
    v->tag = (frame_value_tag)frame_get_u8(f);
    switch (v->tag) {
    case FV_NIL:
    case FV_FALSE:
    case FV_TRUE: break;
    case FV_INT: {
        const void *p = get(f, sizeof v->i);
        if (p) memcpy(&v->i, p, sizeof v->i);
        break;
    }
    case FV_NUM: v->n = frame_get_f64(f); break;
    case FV_STR: v->s = frame_get_str(f, &v->len); break;
    case FV_OTHER:
        v->lua_type = frame_get_u8(f);
        /* only the types a value can have that has no plain form */
        if (v->lua_type < 2 || v->lua_type > 8 || v->lua_type == 3 || v->lua_type == 4)
            f->bad = true;
        break;
    default: f->bad = true; break;
    }
    return !f->bad;
}

bool frame_done(const frame *f)
{
    return !f->bad && f->pos == f->h.len;
}

/* ---- moving -------------------------------------------------------------- */

static bool plain_writes;

void frame_plain_writes(void)
{
    plain_writes = true;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t w = plain_writes ? write(fd, c, n) : send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            if (poll(&p, 1, FRAME_REST_MS) <= 0) return -1;
            continue;
        }
        if (w <= 0) return -1;
        c += w, n -= (size_t)w;
    }
    return 0;
}

int frame_send(int fd, frame *f)
{
    if (f->bad) return -1;
    f->h.len = (uint32_t)f->pos;
    /* one write when it is small: the header and payload arrive together */
    unsigned char small[512];
    if (sizeof f->h + f->pos <= sizeof small) {
        memcpy(small, &f->h, sizeof f->h);
        if (f->pos) memcpy(small + sizeof f->h, f->buf, f->pos);
        return write_all(fd, small, sizeof f->h + f->pos);
    }
    if (write_all(fd, &f->h, sizeof f->h)) return -1;
    return write_all(fd, f->buf, f->pos);
}

/* Reads N bytes by DEADLINE (clock_now_ms; <0: none). 1, 0 at the deadline
 * before the first byte when FIRST, -1 on EOF, error or a stall. */
static int read_all(int fd, void *p, size_t n, double deadline, bool first)
{
    char *c = p;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, c + got, n - got);
        if (r > 0) {
            got += (size_t)r;
            continue;
        }
        if (r == 0) return -1;
        if (errno == EINTR) continue;
        if (errno != EAGAIN) return -1;
        int wait = -1;
        if (deadline >= 0) {
            double left = deadline - clock_now_ms();
            if (left <= 0) return first && got == 0 ? 0 : -1;
            wait = (int)left + 1;
        }
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int rc = poll(&pf, 1, wait);
        if (rc < 0 && errno != EINTR) return -1;
    }
    return 1;
}

int frame_recv(int fd, frame *f, int timeout_ms, const char **why)
{
    *why = "";
    double deadline = timeout_ms < 0 ? -1 : clock_now_ms() + timeout_ms;
    int rc = read_all(fd, &f->h, sizeof f->h, deadline, true);
    if (rc <= 0) {
        *why = "the worker closed its end";
        return rc;
    }
    if (f->h.len > FRAME_MAX || f->h.zero != 0) {
        *why = "a frame header that is not one";
        return -1;
    }
    if (f->h.len > f->cap) {
        unsigned char *b = realloc(f->buf, f->h.len);
        if (!b) {
            *why = "out of memory";
            return -1;
        }
        f->buf = b, f->cap = f->h.len;
    }
    f->pos = 0;
    f->bad = false;
    if (f->h.len && read_all(fd, f->buf, f->h.len, clock_now_ms() + FRAME_REST_MS, false) != 1) {
        *why = "a frame cut short";
        return -1;
    }
    return 1;
}

/* ---- reading through a buffer ------------------------------------------- */

void frame_reader_init(frame_reader *r, int fd)
{
    r->fd = fd;
    r->start = r->end = 0;
}

bool frame_reader_buffered(const frame_reader *r)
{
    return r->end > r->start;
}

bool frame_reader_whole(const frame_reader *r)
{
    frame_header h;
    if (r->end - r->start < sizeof h) return false;
    memcpy(&h, r->buf + r->start, sizeof h);
    return h.len > FRAME_MAX || h.zero != 0 || r->end - r->start - sizeof h >= h.len;
}

/* Reads what the socket has (at least a byte) into R's buffer by DEADLINE
 * (clock_now_ms; <0: none). 1, 0 at the deadline when FIRST, -1 on EOF,
 * an error or a stall. */
static int fill(frame_reader *r, double deadline, bool first)
{
    if (r->start == r->end) {
        r->start = r->end = 0;
    } else if (r->end == sizeof r->buf) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    /* a timed wait usually waits: poll first, then one read */
    bool ready = !(first && deadline >= 0);
    for (;;) {
        if (ready) {
            ssize_t n = read(r->fd, r->buf + r->end, sizeof r->buf - r->end);
            if (n > 0) {
                r->end += (size_t)n;
                return 1;
            }
            if (n == 0) return -1;
            if (errno == EINTR) continue;
            if (errno != EAGAIN) return -1;
        }
        int wait = -1;
        if (deadline >= 0) {
            double left = deadline - clock_now_ms();
            if (left <= 0) return first ? 0 : -1;
            wait = (int)left + 1;
        }
        struct pollfd pf = {.fd = r->fd, .events = POLLIN};
        int rc = poll(&pf, 1, wait);
        if (rc < 0 && errno != EINTR) return -1;
        ready = rc != 0 || deadline < 0;
    }
}

int frame_read(frame_reader *r, frame *f, int timeout_ms, const char **why)
{
    *why = "";
    double deadline = timeout_ms < 0 ? -1 : clock_now_ms() + timeout_ms;
    while (r->end - r->start < sizeof f->h) {
        bool first = r->end == r->start;
        int rc = fill(r, first ? deadline : clock_now_ms() + FRAME_REST_MS, first);
        if (rc == 0) return 0;
        if (rc < 0) {
            *why = first ? "the worker closed its end" : "a frame cut short";
            return -1;
        }
    }
    memcpy(&f->h, r->buf + r->start, sizeof f->h);
    if (f->h.len > FRAME_MAX || f->h.zero != 0) {
        *why = "a frame header that is not one";
        return -1;
    }
    r->start += sizeof f->h;
    if (f->h.len > f->cap) {
        unsigned char *b = realloc(f->buf, f->h.len);
        if (!b) {
            *why = "out of memory";
            return -1;
        }
        f->buf = b, f->cap = f->h.len;
    }
    size_t have = r->end - r->start < f->h.len ? r->end - r->start : f->h.len;
    if (have) memcpy(f->buf, r->buf + r->start, have);
    r->start += have;
    f->pos = 0;
    f->bad = false;
    if (have < f->h.len && read_all(r->fd, f->buf + have, f->h.len - have,
                                    clock_now_ms() + FRAME_REST_MS, false) != 1) {
        *why = "a frame cut short";
        return -1;
    }
    return 1;
}
