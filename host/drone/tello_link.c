/*
 * The Tello's command channel (see tello_link.h).
 */
#include "drone/tello_link.h"

#include "clock.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POLL_SLICE_MS 50

int tello_link_open(tello_link *l, const char *host, int port, char *err, size_t errlen)
{
    memset(l, 0, sizeof *l);
    l->fd = -1;
    snprintf(l->where, sizeof l->where, "%s:%d", host, port);
    const char *trace = getenv("ALOFT_TELLO_TRACE");
    l->trace = trace && *trace && strcmp(trace, "0") != 0;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res;
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    int rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "cannot resolve the Tello's address '%s': %s", host,
                 gai_strerror(rc));
        return -1;
    }
    memcpy(&l->addr, res->ai_addr, res->ai_addrlen);
    l->addrlen = res->ai_addrlen;
    freeaddrinfo(res);
    l->fd = tello_link_bind(l, 0, "replies", err, errlen);
    return l->fd < 0 ? -1 : 0;
}

void tello_link_close(tello_link *l)
{
    if (l->fd >= 0) close(l->fd);
    l->fd = -1;
}

int tello_link_bind(const tello_link *l, int port, const char *what, char *err, size_t errlen)
{
    int family = l->addr.ss_family;
    int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open a UDP socket: %s", strerror(errno));
        return -1;
    }
    struct sockaddr_storage local;
    memset(&local, 0, sizeof local);
    socklen_t len;
    if (family == AF_INET) {
        struct sockaddr_in *a = (void *)&local;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_ANY);
        a->sin_port = htons((uint16_t)port);
        len = sizeof *a;
    } else {
        struct sockaddr_in6 *a = (void *)&local;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_any;
        a->sin6_port = htons((uint16_t)port);
        len = sizeof *a;
    }
    /* No SO_REUSEADDR: a second program on the state port must fail loudly
     * rather than silently share the drone's packets. */
    if (bind(fd, (struct sockaddr *)&local, len) < 0) {
        snprintf(err, errlen, "cannot listen for the Tello's %s on UDP port %d: %s", what, port,
                 strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

bool tello_link_from_drone(const tello_link *l, const struct sockaddr_storage *src, bool check_port)
{
    if (src->ss_family != l->addr.ss_family) return false;
    if (src->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)src, *b = (const void *)&l->addr;
        return a->sin_addr.s_addr == b->sin_addr.s_addr &&
               (!check_port || a->sin_port == b->sin_port);
    }
    const struct sockaddr_in6 *a = (const void *)src, *b = (const void *)&l->addr;
    return memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0 &&
           (!check_port || a->sin6_port == b->sin6_port);
}

bool tello_reply_is_query(const char *r)
{
    return (*r >= '0' && *r <= '9') || *r == '-';
}

/* A query may also be refused ("error", "unknown command: x"); a control
 * command is never answered with a number. */
static bool reply_fits(tello_reply_kind kind, const char *r)
{
    if (kind == TELLO_REPLY_CONTROL) return !tello_reply_is_query(r);
    return tello_reply_is_query(r) || strncmp(r, "error", 5) == 0 || strncmp(r, "unknown", 7) == 0;
}

/* Reads one waiting datagram into OUT, trimmed: 1 if it came from the
 * drone, -1 if from someone else, 0 if nothing is waiting. */
static int read_reply(tello_link *l, char *out, size_t outlen)
{
    char buf[512];
    struct sockaddr_storage src;
    socklen_t srclen = sizeof src;
    ssize_t n =
        recvfrom(l->fd, buf, sizeof buf - 1, MSG_DONTWAIT, (struct sockaddr *)&src, &srclen);
    if (n < 0) return 0;
    if (!tello_link_from_drone(l, &src, true)) return -1;
    while (n > 0 && (buf[n - 1] == '\0' || isspace((unsigned char)buf[n - 1])))
        n--;
    buf[n] = '\0';
    /* The SDK answers in ASCII; anything else (control bytes, invalid
     * UTF-8) would reach error messages and JSON reports as it came. */
    for (ssize_t i = 0; i < n; i++)
        if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] > 0x7e) buf[i] = '?';
    snprintf(out, outlen, "%s", buf);
    return 1;
}

void tello_link_drain(tello_link *l)
{
    char r[512];
    int got;
    while ((got = read_reply(l, r, sizeof r)) != 0)
        if (got > 0 && l->trace)
            fprintf(stderr, "tello %.0f: late reply '%s' dropped\n", clock_now_ms(), r);
}

int tello_link_send(tello_link *l, const char *cmd, char *err, size_t errlen)
{
    if (l->trace) fprintf(stderr, "tello %.0f: > %s\n", clock_now_ms(), cmd);
    if (sendto(l->fd, cmd, strlen(cmd), 0, (struct sockaddr *)&l->addr, l->addrlen) < 0) {
        snprintf(err, errlen, "cannot send '%s' to the Tello at %s: %s", cmd, l->where,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int tello_link_await(tello_link *l, tello_reply_kind kind, double deadline_ms,
                     const drone *abort_from, char *reply, size_t replylen)
{
    for (;;) {
        if (abort_from && abort_from->abort && abort_from->abort(abort_from->abort_ud))
            return TELLO_LINK_CANCEL;
        double left = deadline_ms - clock_now_ms();
        if (left <= 0) return TELLO_LINK_TIMEOUT;
        struct pollfd pfd = {.fd = l->fd, .events = POLLIN};
        if (poll(&pfd, 1, (int)fmin(left, POLL_SLICE_MS) + 1) <= 0) continue;
        if (read_reply(l, reply, replylen) <= 0) continue;
        if (reply_fits(kind, reply)) {
            if (l->trace) fprintf(stderr, "tello %.0f: < %s\n", clock_now_ms(), reply);
            return TELLO_LINK_REPLY;
        }
        if (l->trace)
            fprintf(stderr, "tello %.0f: reply '%s' is not for this command, dropped\n",
                    clock_now_ms(), reply);
    }
}
