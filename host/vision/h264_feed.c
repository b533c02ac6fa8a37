/* The Tello's H.264 over UDP into a decoder's pipe (see h264_feed.h). */
#include "vision/h264_feed.h"

#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DATAGRAM_MAX 65536
#define PIPE_BYTES (1 << 20) /* a second of the Tello's video and more */
#define SOCKET_BYTES (4 << 20)
#define POLL_MS 100 /* how soon the thread sees that it must stop */

struct h264_feed {
    int sock;
    pthread_t thread;
    bool started;
    atomic_bool stop;

    pthread_mutex_t mu; /* guards what follows */
    int pipe_w;         /* the decoder's pipe, or -1 */
    int pipe_r;         /* its read end until a decoder takes it, or -1 */
    bool ended;         /* h264_feed_end: no more pipes */
    bool synced;        /* passing data on since a parameter set */
    h264_feed_stats stats;
};

/* The offset of the first sequence parameter set (NAL type 7 after an
 * Annex-B start code) in B, or -1. */
static long sps_at(const unsigned char *b, size_t len)
{
    for (size_t i = 0; i + 3 < len; i++)
        if (b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 1 && (b[i + 3] & 0x1f) == 7)
            return i > 0 && b[i - 1] == 0 ? (long)i - 1 : (long)i;
    return -1;
}

/* Passes one datagram on (lock held). */
static void pass(h264_feed *f, const unsigned char *b, size_t len, double now)
{
    long sps = sps_at(b, len);
    if (sps >= 0 && f->stats.first_sps_ms < 0) f->stats.first_sps_ms = now;
    if (f->pipe_w < 0) return;
    if (!f->synced) {
        if (sps < 0) {
            f->stats.skipped++;
            return;
        }
        f->synced = true;
        b += sps;
        len -= (size_t)sps;
    }
    /* At most PIPE_BUF bytes are written whole or not at all; a larger
     * datagram (not the Tello's) may be cut, which resyncing covers. */
    ssize_t w = write(f->pipe_w, b, len);
    if (w == (ssize_t)len) {
        f->stats.passed++;
        return;
    }
    f->stats.dropped++;
    /* A frame with a hole decodes to garbage until the next keyframe:
     * wait for it. A reader that went away (EPIPE) gets nothing more. */
    f->synced = false;
    if (w < 0 && errno == EPIPE) {
        close(f->pipe_w);
        f->pipe_w = -1;
    }
}

static void *receive_main(void *arg)
{
    h264_feed *f = arg;
    /* A write to a pipe whose reader went away must fail with EPIPE, not
     * end the process: SIGPIPE is directed at the writing thread. */
    sigset_t pipe_sig;
    sigemptyset(&pipe_sig);
    sigaddset(&pipe_sig, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_sig, NULL);
    unsigned char *buf = malloc(DATAGRAM_MAX);
    if (!buf) return NULL;
    while (!atomic_load(&f->stop)) {
        struct pollfd pfd = {.fd = f->sock, .events = POLLIN};
        int r = poll(&pfd, 1, POLL_MS);
        if (r <= 0) continue;
        ssize_t n = recv(f->sock, buf, DATAGRAM_MAX, 0);
        if (n <= 0) continue;
        double now = clock_now_ms();
        pthread_mutex_lock(&f->mu);
        f->stats.datagrams++;
        f->stats.bytes += n;
        if (f->stats.first_ms < 0) f->stats.first_ms = now;
        f->stats.last_ms = now;
        pass(f, buf, (size_t)n, now);
        pthread_mutex_unlock(&f->mu);
    }
    free(buf);
    return NULL;
}

/* A new pipe for the decoder, its write end non-blocking (FDS as pipe's). */
static int make_pipe(int fds[2], char *err, size_t errlen)
{
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "cannot make the video pipe: %s", strerror(errno));
        return -1;
    }
    /* Larger than the default 64 KiB: a keyframe of the Tello's is ~40 KiB. */
    fcntl(fds[1], F_SETPIPE_SZ, PIPE_BYTES);
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    return 0;
}

h264_feed *h264_feed_open(int port, char *err, size_t errlen)
{
    if (port < 1 || port > 65535) {
        snprintf(err, errlen, "video port %d is not in 1..65535", port);
        return NULL;
    }
    h264_feed *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    f->pipe_w = f->pipe_r = -1;
    f->stats.first_ms = f->stats.first_sps_ms = f->stats.last_ms = -1;
    pthread_mutex_init(&f->mu, NULL);
    atomic_init(&f->stop, false);
    f->sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    int size = SOCKET_BYTES;
    if (f->sock >= 0) setsockopt(f->sock, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    if (f->sock < 0 || bind(f->sock, (struct sockaddr *)&a, sizeof a) != 0) {
        snprintf(err, errlen, "cannot receive video on UDP port %d: %s", port, strerror(errno));
        h264_feed_close(f);
        return NULL;
    }
    int fds[2];
    if (make_pipe(fds, err, errlen)) {
        h264_feed_close(f);
        return NULL;
    }
    f->pipe_r = fds[0];
    f->pipe_w = fds[1];
    if (pthread_create(&f->thread, NULL, receive_main, f) != 0) {
        snprintf(err, errlen, "cannot start the video thread: %s", strerror(errno));
        h264_feed_close(f);
        return NULL;
    }
    f->started = true;
    return f;
}

int h264_feed_attach(h264_feed *f, char *err, size_t errlen)
{
    pthread_mutex_lock(&f->mu);
    /* The first pipe was made with the feed: what came before the decoder
     * opened waits in it. */
    if (f->pipe_r >= 0 && !f->ended) {
        int fd = f->pipe_r;
        f->pipe_r = -1;
        pthread_mutex_unlock(&f->mu);
        return fd;
    }
    pthread_mutex_unlock(&f->mu);
    int fds[2];
    if (make_pipe(fds, err, errlen)) return -1;
    pthread_mutex_lock(&f->mu);
    if (f->ended) {
        pthread_mutex_unlock(&f->mu);
        close(fds[0]);
        close(fds[1]);
        snprintf(err, errlen, "the video feed has ended");
        return -1;
    }
    if (f->pipe_w >= 0) close(f->pipe_w);
    f->pipe_w = fds[1];
    f->synced = false;
    pthread_mutex_unlock(&f->mu);
    return fds[0];
}

void h264_feed_stats_get(h264_feed *f, h264_feed_stats *out)
{
    pthread_mutex_lock(&f->mu);
    *out = f->stats;
    pthread_mutex_unlock(&f->mu);
}

void h264_feed_end(h264_feed *f)
{
    pthread_mutex_lock(&f->mu);
    f->ended = true;
    if (f->pipe_w >= 0) close(f->pipe_w);
    f->pipe_w = -1;
    pthread_mutex_unlock(&f->mu);
}

void h264_feed_close(h264_feed *f)
{
    if (!f) return;
    atomic_store(&f->stop, true);
    if (f->started) pthread_join(f->thread, NULL);
    if (f->sock >= 0) close(f->sock);
    if (f->pipe_w >= 0) close(f->pipe_w);
    if (f->pipe_r >= 0) close(f->pipe_r);
    pthread_mutex_destroy(&f->mu);
    free(f);
}
