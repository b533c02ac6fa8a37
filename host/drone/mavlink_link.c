/*
 * MAVLink links (see mavlink_link.h): URL parsing, the sockets and the
 * serial port, the process's table of open links and each link's reader
 * thread, which routes frames by system id.
 */
#include "drone/mavlink_link.h"

#include "errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#define MAX_SUBS 16
#define MAX_PEERS 16
#define READ_SLICE_MS 100
#define CONNECT_TIMEOUT_S 5
#define MAV_AUTOPILOT_INVALID 8 /* a ground station or a companion, not a vehicle */

static const char forms[] =
    "expected udpin:HOST:PORT, udpout:HOST:PORT, tcp:HOST:PORT or serial:DEVICE:BAUD "
    "(e.g. " MAVLINK_DEFAULT_URL ", udpout:127.0.0.1:14550, tcp:127.0.0.1:5760, "
    "serial:/dev/ttyACM0:115200)";

/* ---- URLs ------------------------------------------------------------------- */

static const struct {
    const char *prefix;
    mavlink_url_kind kind;
} kinds[] = {
    {"udpin:", MAVLINK_UDPIN},
    {"udpout:", MAVLINK_UDPOUT},
    {"tcp:", MAVLINK_TCP},
    {"serial:", MAVLINK_SERIAL},
};

/* Baud rates termios can set. */
static const struct {
    int baud;
    speed_t speed;
} bauds[] = {
    {9600, B9600},     {19200, B19200},     {38400, B38400},     {57600, B57600},
    {115200, B115200}, {230400, B230400},   {460800, B460800},   {500000, B500000},
    {921600, B921600}, {1000000, B1000000}, {1500000, B1500000}, {2000000, B2000000},
};

static int parse_number(const char *s, long lo, long hi, int *out)
{
    if (!*s) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi || *s == '+' || *s == '-' || *s == ' ') return -1;
    *out = (int)v;
    return 0;
}

static bool baud_known(int baud, speed_t *speed)
{
    for (size_t i = 0; i < sizeof bauds / sizeof bauds[0]; i++)
        if (bauds[i].baud == baud) {
            if (speed) *speed = bauds[i].speed;
            return true;
        }
    return false;
}

int mavlink_url_parse(const char *text, mavlink_url *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!text) return errmsg_set(err, errlen, "no MAVLink URL: %s", forms);
    const char *rest = NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strncmp(text, kinds[i].prefix, strlen(kinds[i].prefix)) == 0) {
            out->kind = kinds[i].kind;
            rest = text + strlen(kinds[i].prefix);
        }
    /* the last ':' parts the port (or baud rate) from the host (or device) */
    const char *colon = rest ? strrchr(rest, ':') : NULL;
    if (!colon || colon == rest || (size_t)(colon - rest) >= sizeof out->host)
        return errmsg_set(err, errlen, "MAVLink URL '%s': %s", text, forms);
    memcpy(out->host, rest, (size_t)(colon - rest));
    if (strpbrk(out->host, " \t\r\n") || (out->kind != MAVLINK_SERIAL && strpbrk(out->host, ":/")))
        return errmsg_set(err, errlen, "MAVLink URL '%s': '%s' is not a host; %s", text, out->host,
                          forms);
    if (out->kind == MAVLINK_SERIAL) {
        if (parse_number(colon + 1, 1, 100000000, &out->port) || !baud_known(out->port, NULL))
            return errmsg_set(err, errlen,
                              "MAVLink URL '%s': '%s' is not a baud rate this system can set "
                              "(e.g. 57600, 115200, 921600); %s",
                              text, colon + 1, forms);
    } else if (parse_number(colon + 1, 1, 65535, &out->port)) {
        return errmsg_set(err, errlen, "MAVLink URL '%s': '%s' is not a port (1-65535); %s", text,
                          colon + 1, forms);
    }
    return 0;
}

const char *mavlink_url_format(const mavlink_url *u, char *buf, size_t len)
{
    const char *prefix = "udpin:";
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].kind == u->kind) prefix = kinds[i].prefix;
    snprintf(buf, len, "%s%s:%d", prefix, u->host, u->port);
    return buf;
}

/* ---- links ------------------------------------------------------------------ */

typedef struct peer {
    uint8_t sysid;
    struct sockaddr_storage addr;
    socklen_t len;
} peer;

struct mavlink_sub {
    mavlink_link *link;
    /* 0: not bound yet. Atomic: the driver reads it under its own lock,
     * which the reader thread takes under the link's (no lock order to
     * keep). */
    atomic_int sysid;
    mavlink_on_frame on_frame;
    void *ud;
};

struct mavlink_link {
    mavlink_url url;
    int our_sysid, our_compid;
    int fd;
    bool datagrams; /* UDP: each read is one datagram */
    /* udpout: where we send; udpin: filled per vehicle in PEERS */
    struct sockaddr_storage dest;
    socklen_t destlen;
    pthread_mutex_t lock; /* subs, peers, parser stats */
    peer peers[MAX_PEERS];
    int npeers;
    mavlink_sub *subs[MAX_SUBS];
    int nsubs;
    pthread_mutex_t send_lock; /* seq and the write of one whole frame */
    uint8_t seq;
    mav_parser parser; /* the reader thread's */
    /* The reader thread's receive buffer: here, not in thread-local
     * storage, which every thread of the process would then zero (and
     * fault in) when it starts. */
    uint8_t rx[65536];
    mav_parser_stats stats;
    pthread_t reader;
    volatile int stop;
    mavlink_link *next; /* in the process's table */
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static mavlink_link *table;

static int resolve(const mavlink_url *u, int socktype, struct sockaddr_storage *out,
                   socklen_t *outlen, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = socktype}, *res;
    char service[16];
    snprintf(service, sizeof service, "%d", u->port);
    int rc = getaddrinfo(u->host, service, &hints, &res);
    if (rc != 0)
        return errmsg_set(err, errlen, "cannot resolve '%s': %s", u->host, gai_strerror(rc));
    memcpy(out, res->ai_addr, res->ai_addrlen);
    *outlen = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

static int open_udp(mavlink_link *l, char *err, size_t errlen)
{
    struct sockaddr_storage a;
    socklen_t alen;
    if (resolve(&l->url, SOCK_DGRAM, &a, &alen, err, errlen)) return -1;
    l->fd = socket(a.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (l->fd < 0) return errmsg_set(err, errlen, "cannot open a UDP socket: %s", strerror(errno));
    l->datagrams = true;
    if (l->url.kind == MAVLINK_UDPOUT) {
        l->dest = a;
        l->destlen = alen;
        return 0;
    }
    /* No SO_REUSEADDR: another program on the port must fail loudly rather
     * than silently take the vehicle's packets. */
    if (bind(l->fd, (struct sockaddr *)&a, alen) < 0)
        return errmsg_set(err, errlen, "cannot listen on UDP %s:%d: %s", l->url.host, l->url.port,
                          strerror(errno));
    return 0;
}

/* A connected TCP socket to the link's URL, or -1 with a message; connect
 * waits at most TIMEOUT_S. */
static int tcp_connect(const mavlink_url *u, int timeout_s, char *err, size_t errlen)
{
    struct sockaddr_storage a;
    socklen_t alen;
    if (resolve(u, SOCK_STREAM, &a, &alen, err, errlen)) return -1;
    int fd = socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errmsg_set(err, errlen, "cannot open a TCP socket: %s", strerror(errno));
    /* Linux bounds connect() by the send timeout. */
    struct timeval tv = {timeout_s, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, alen) < 0) {
        errmsg_set(err, errlen, "cannot connect to TCP %s:%d: %s", u->host, u->port,
                   strerror(errno));
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static int open_tcp(mavlink_link *l, char *err, size_t errlen)
{
    l->fd = tcp_connect(&l->url, CONNECT_TIMEOUT_S, err, errlen);
    return l->fd < 0 ? -1 : 0;
}

/* The TCP peer closed (SITL or a router restarted, a cable): connect again
 * and put the new connection in place of the old under the same
 * descriptor number (dup2), so that a sender never writes to a closed or
 * reused descriptor. Tried every READ_SLICE_MS; while it fails the link is
 * silent, and the driver ends the mission after its silence limit. */
static void tcp_reconnect(mavlink_link *l)
{
    char err[256];
    int fd = tcp_connect(&l->url, 1, err, sizeof err);
    if (fd < 0) return;
    pthread_mutex_lock(&l->send_lock);
    dup2(fd, l->fd);
    pthread_mutex_unlock(&l->send_lock);
    close(fd);
    l->parser.have = 0; /* a frame cut by the drop is not continued */
}

static int open_serial(mavlink_link *l, char *err, size_t errlen)
{
    speed_t speed = B57600;
    baud_known(l->url.port, &speed);
    l->fd = open(l->url.host, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (l->fd < 0)
        return errmsg_set(err, errlen, "cannot open %s: %s", l->url.host, strerror(errno));
    struct termios t;
    if (tcgetattr(l->fd, &t) < 0)
        return errmsg_set(err, errlen, "%s is not a serial port: %s", l->url.host, strerror(errno));
    cfmakeraw(&t);
    t.c_cflag |= CLOCAL | CREAD;
    t.c_cflag &= ~(tcflag_t)(CSTOPB | CRTSCTS);
    cfsetispeed(&t, speed);
    cfsetospeed(&t, speed);
    if (tcsetattr(l->fd, TCSANOW, &t) < 0)
        return errmsg_set(err, errlen, "cannot set %s to %d baud: %s", l->url.host, l->url.port,
                          strerror(errno));
    return 0;
}

/* ---- the reader thread ------------------------------------------------------ */

static void remember_peer(mavlink_link *l, uint8_t sysid, const struct sockaddr_storage *from,
                          socklen_t len)
{
    int i = 0;
    while (i < l->npeers && l->peers[i].sysid != sysid)
        i++;
    if (i == l->npeers) {
        if (l->npeers == MAX_PEERS) return;
        l->npeers++;
    }
    l->peers[i] = (peer){sysid, *from, len};
}

/* The subscription that takes a frame of SYSID: the one bound to it, else
 * (for a vehicle's HEARTBEAT) the first unbound one, which binds to it. */
static mavlink_sub *route(mavlink_link *l, const mav_frame *f)
{
    for (int i = 0; i < l->nsubs; i++)
        if (atomic_load(&l->subs[i]->sysid) == f->sysid) return l->subs[i];
    mav_heartbeat hb;
    if (mav_heartbeat_unpack(f, &hb) < 0 || hb.autopilot == MAV_AUTOPILOT_INVALID) return NULL;
    if (f->sysid == l->our_sysid || f->sysid == 0) return NULL;
    for (int i = 0; i < l->nsubs; i++)
        if (atomic_load(&l->subs[i]->sysid) == 0) {
            atomic_store(&l->subs[i]->sysid, f->sysid);
            return l->subs[i];
        }
    return NULL;
}

static void dispatch(mavlink_link *l, const struct sockaddr_storage *from, socklen_t fromlen)
{
    mav_frame f;
    pthread_mutex_lock(&l->lock);
    while (mav_parser_next(&l->parser, &f) == 1) {
        if (from && l->url.kind == MAVLINK_UDPIN) remember_peer(l, f.sysid, from, fromlen);
        mavlink_sub *s = route(l, &f);
        if (s) s->on_frame(s->ud, &f);
    }
    l->stats = l->parser.stats;
    pthread_mutex_unlock(&l->lock);
}

static void feed(mavlink_link *l, const uint8_t *data, size_t n,
                 const struct sockaddr_storage *from, socklen_t fromlen)
{
    while (n > 0) {
        size_t took = mav_parser_push(&l->parser, data, n);
        data += took, n -= took;
        dispatch(l, from, fromlen);
    }
}

static void *reader_main(void *arg)
{
    mavlink_link *l = arg;
    uint8_t *buf = l->rx;
    while (!l->stop) {
        struct pollfd pfd = {l->fd, POLLIN, 0};
        int r = poll(&pfd, 1, READ_SLICE_MS);
        if (r <= 0) continue;
        struct sockaddr_storage from;
        socklen_t fromlen = sizeof from;
        ssize_t n;
        if (l->datagrams) {
            n = recvfrom(l->fd, buf, sizeof l->rx, 0, (struct sockaddr *)&from, &fromlen);
            /* A frame never spans datagrams: what the last one left is
             * dropped, so a datagram is judged on its own. */
            l->parser.have = 0;
        } else {
            n = read(l->fd, buf, sizeof l->rx);
        }
        if (n > 0) {
            feed(l, buf, (size_t)n, l->datagrams ? &from : NULL, fromlen);
            if (l->datagrams) {
                /* an unknown message at the datagram's end waits for a
                 * following start: give it one */
                static const uint8_t magic = MAV_MAGIC_V2;
                feed(l, &magic, 1, &from, fromlen);
            }
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
            /* the TCP peer or the device went away: silence, which the
             * driver notices, unless a TCP link connects again */
            struct timespec ts = {0, READ_SLICE_MS * 1000000L};
            nanosleep(&ts, NULL);
            if (l->url.kind == MAVLINK_TCP && !l->stop) tcp_reconnect(l);
        }
    }
    return NULL;
}

static void link_free(mavlink_link *l)
{
    if (l->fd >= 0) close(l->fd);
    pthread_mutex_destroy(&l->lock);
    pthread_mutex_destroy(&l->send_lock);
    free(l);
}

static mavlink_link *link_open(const mavlink_url *u, int our_sysid, int our_compid, char *err,
                               size_t errlen)
{
    mavlink_link *l = calloc(1, sizeof *l);
    if (!l) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    l->url = *u;
    l->our_sysid = our_sysid, l->our_compid = our_compid;
    l->fd = -1;
    pthread_mutex_init(&l->lock, NULL);
    pthread_mutex_init(&l->send_lock, NULL);
    mav_parser_init(&l->parser);
    int rc = u->kind == MAVLINK_TCP      ? open_tcp(l, err, errlen)
             : u->kind == MAVLINK_SERIAL ? open_serial(l, err, errlen)
                                         : open_udp(l, err, errlen);
    if (rc == 0 && pthread_create(&l->reader, NULL, reader_main, l) != 0)
        rc = errmsg_set(err, errlen, "cannot start the MAVLink reader thread");
    if (rc) {
        link_free(l);
        return NULL;
    }
    return l;
}

static bool same_url(const mavlink_url *a, const mavlink_url *b)
{
    return a->kind == b->kind && a->port == b->port && strcmp(a->host, b->host) == 0;
}

mavlink_sub *mavlink_subscribe(const mavlink_url *url, int sysid, int our_sysid, int our_compid,
                               mavlink_on_frame on_frame, void *ud, char *err, size_t errlen)
{
    char where[300];
    mavlink_url_format(url, where, sizeof where);
    mavlink_sub *s = calloc(1, sizeof *s);
    if (!s) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    s->on_frame = on_frame, s->ud = ud;
    atomic_init(&s->sysid, sysid);
    pthread_mutex_lock(&table_lock);
    mavlink_link *l = table;
    while (l && !same_url(&l->url, url))
        l = l->next;
    const char *why = NULL;
    if (l && (l->our_sysid != our_sysid || l->our_compid != our_compid))
        why = "is open with another system or component id of ours";
    if (!l && !why) {
        l = link_open(url, our_sysid, our_compid, err, errlen);
        if (l) l->next = table, table = l;
    }
    if (l && !why) {
        pthread_mutex_lock(&l->lock);
        for (int i = 0; i < l->nsubs && !why; i++)
            if (sysid && atomic_load(&l->subs[i]->sysid) == sysid)
                why = "already flies that system id";
        if (!why && l->nsubs == MAX_SUBS) why = "has as many vehicles as it can take";
        if (!why) l->subs[l->nsubs++] = s, s->link = l;
        pthread_mutex_unlock(&l->lock);
    }
    pthread_mutex_unlock(&table_lock);
    if (why) errmsg_set(err, errlen, "MAVLink link %s %s", where, why);
    if (!s->link) {
        free(s);
        return NULL;
    }
    return s;
}

void mavlink_unsubscribe(mavlink_sub *s)
{
    if (!s) return;
    mavlink_link *l = s->link;
    pthread_mutex_lock(&table_lock);
    pthread_mutex_lock(&l->lock);
    for (int i = 0; i < l->nsubs; i++)
        if (l->subs[i] == s) l->subs[i] = l->subs[--l->nsubs];
    bool last = l->nsubs == 0;
    pthread_mutex_unlock(&l->lock);
    if (last) {
        mavlink_link **pp = &table;
        while (*pp != l)
            pp = &(*pp)->next;
        *pp = l->next;
    }
    pthread_mutex_unlock(&table_lock);
    free(s);
    if (!last) return;
    l->stop = 1;
    pthread_join(l->reader, NULL);
    link_free(l);
}

int mavlink_sub_sysid(const mavlink_sub *s)
{
    return atomic_load(&((mavlink_sub *)s)->sysid);
}

mav_parser_stats mavlink_sub_stats(const mavlink_sub *s)
{
    pthread_mutex_lock(&s->link->lock);
    mav_parser_stats st = s->link->stats;
    pthread_mutex_unlock(&s->link->lock);
    return st;
}

/* Where frames for S go: the vehicle's last address on udpin. */
static int destination(mavlink_sub *s, struct sockaddr_storage *to, socklen_t *tolen, char *err,
                       size_t errlen)
{
    mavlink_link *l = s->link;
    if (l->url.kind != MAVLINK_UDPIN) {
        *to = l->dest, *tolen = l->destlen;
        return 0;
    }
    int sysid = mavlink_sub_sysid(s);
    pthread_mutex_lock(&l->lock);
    int rc = -1;
    for (int i = 0; i < l->npeers && sysid; i++)
        if (l->peers[i].sysid == sysid) *to = l->peers[i].addr, *tolen = l->peers[i].len, rc = 0;
    pthread_mutex_unlock(&l->lock);
    if (rc) errmsg_set(err, errlen, "no vehicle heard yet on %s:%d", l->url.host, l->url.port);
    return rc;
}

/* Writes all N bytes; on a socket with send(MSG_NOSIGNAL): a TCP peer that
 * closed must be an error here, not a SIGPIPE that ends the process
 * before it could land the vehicle. */
static int write_all(int fd, bool socket, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = socket ? send(fd, p, n, MSG_NOSIGNAL) : write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) {
            struct pollfd pfd = {fd, POLLOUT, 0};
            if (poll(&pfd, 1, 1000) <= 0) return -1;
            continue;
        }
        if (w <= 0) return -1;
        p += w, n -= (size_t)w;
    }
    return 0;
}

int mavlink_sub_send(mavlink_sub *s, uint32_t msgid, const uint8_t *payload, size_t len, char *err,
                     size_t errlen)
{
    mavlink_link *l = s->link;
    struct sockaddr_storage to;
    socklen_t tolen = 0;
    if (l->datagrams && destination(s, &to, &tolen, err, errlen)) return -1;
    uint8_t frame[MAV_MAX_FRAME];
    pthread_mutex_lock(&l->send_lock);
    mav_sender who = {(uint8_t)l->our_sysid, (uint8_t)l->our_compid, l->seq++};
    size_t n = mav_frame_encode(frame, &who, msgid, payload, len);
    int rc = -1;
    if (n == 0)
        errmsg_set(err, errlen, "message %u has no definition here", (unsigned)msgid);
    else if (l->datagrams)
        rc = sendto(l->fd, frame, n, MSG_NOSIGNAL, (struct sockaddr *)&to, tolen) == (ssize_t)n
                 ? 0
                 : errmsg_set(err, errlen, "cannot send to the vehicle: %s", strerror(errno));
    else
        rc = write_all(l->fd, l->url.kind == MAVLINK_TCP, frame, n) == 0
                 ? 0
                 : errmsg_set(err, errlen, "cannot send to the vehicle: %s", strerror(errno));
    pthread_mutex_unlock(&l->send_lock);
    return rc;
}
