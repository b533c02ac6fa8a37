/*
 * The Tello's video feed (vision/h264_feed.h) over real UDP on loopback:
 * nothing reaches the decoder before a sequence parameter set, which
 * starts it at its start code; later datagrams pass; what arrives before
 * the decoder opens waits in the first pipe; a new pipe ends the old one
 * and waits for parameter sets again; a full pipe drops (and resyncs), a
 * reader gone away neither kills the process nor stalls the feed; the end
 * closes the stream and refuses new pipes; ports taken or out of range are
 * clear errors.
 */
#include "vision/h264_feed.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static const unsigned char SPS[] = {0, 0, 0, 1, 0x67, 0x42, 0, 0x1f};
static const unsigned char SLICE[] = {0, 0, 1, 0x41, 0x9a, 0x02};

static int sender, port;

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

static void send_bytes(const void *b, size_t len)
{
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sendto(sender, b, len, 0, (struct sockaddr *)&to, sizeof to);
}

/* PREFIX bytes of junk, then BODY. */
static void send_after(size_t prefix, const unsigned char *body, size_t len)
{
    unsigned char buf[1500];
    memset(buf, 0x55, prefix);
    memcpy(buf + prefix, body, len);
    send_bytes(buf, prefix + len);
}

/* Waits until the feed has seen N datagrams in all (1 s at most). */
static void wait_datagrams(h264_feed *f, long n)
{
    for (int i = 0; i < 200; i++) {
        h264_feed_stats st;
        h264_feed_stats_get(f, &st);
        if (st.datagrams >= n) return;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
}

/* Waits until the feed's count of datagrams stays still for 200 ms (2 s at
 * most): a burst still in the socket's buffer has been read. Returns it. */
static long wait_quiet(h264_feed *f)
{
    h264_feed_stats st;
    h264_feed_stats_get(f, &st);
    long last = st.datagrams;
    for (int i = 0, still = 0; i < 400 && still < 40; i++) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
        h264_feed_stats_get(f, &st);
        still = st.datagrams == last ? still + 1 : 0;
        last = st.datagrams;
    }
    return last;
}

/* What FD holds now (up to MAX bytes, without blocking). */
static size_t drain(int fd, unsigned char *buf, size_t max)
{
    size_t n = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (n < max && poll(&p, 1, 50) > 0) {
        ssize_t r = read(fd, buf + n, max - n);
        if (r <= 0) break;
        n += (size_t)r;
    }
    return n;
}

/* Whether FD reads as ended (EOF) once drained. */
static bool ended(int fd)
{
    unsigned char buf[4096];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    for (int i = 0; i < 100; i++) {
        if (poll(&p, 1, 100) <= 0) return false;
        ssize_t r = read(fd, buf, sizeof buf);
        if (r == 0) return true;
        if (r < 0) return false;
    }
    return false;
}

static void test_sync(void)
{
    char err[256];
    h264_feed *f = NULL;
    /* A port found free can be taken by a test running beside this one
     * before the feed binds it: then another. */
    for (int i = 0; i < 5 && !f; i++) {
        port = free_port();
        f = h264_feed_open(port, err, sizeof err);
    }
    CHECK(f != NULL, "%s", err);
    if (!f) return;
    /* Before the decoder opens: a slice (skipped), then parameter sets
     * after 10 bytes of junk, then a slice: both wait in the first pipe. */
    send_after(0, SLICE, sizeof SLICE);
    send_after(10, SPS, sizeof SPS);
    send_after(0, SLICE, sizeof SLICE);
    wait_datagrams(f, 3);
    int fd = h264_feed_attach(f, err, sizeof err);
    CHECK(fd >= 0, "%s", err);
    unsigned char buf[64];
    size_t n = drain(fd, buf, sizeof buf);
    CHECK(n == sizeof SPS + sizeof SLICE && memcmp(buf, SPS, sizeof SPS) == 0 &&
              memcmp(buf + sizeof SPS, SLICE, sizeof SLICE) == 0,
          "from the parameter sets' start code on: %zu bytes", n);
    h264_feed_stats st;
    h264_feed_stats_get(f, &st);
    CHECK(st.datagrams == 3 && st.skipped == 1 && st.passed == 2 && st.dropped == 0,
          "%ld %ld %ld %ld", st.datagrams, st.skipped, st.passed, st.dropped);
    CHECK(st.first_ms > 0 && st.first_sps_ms >= st.first_ms && st.last_ms >= st.first_sps_ms,
          "times");

    /* A new pipe: the old one ends, the new one waits for parameter sets. */
    int fd2 = h264_feed_attach(f, err, sizeof err);
    CHECK(fd2 >= 0 && fd2 != fd, "%s", err);
    CHECK(ended(fd), "the first pipe ended");
    close(fd);
    send_after(0, SLICE, sizeof SLICE);
    send_after(0, SPS, sizeof SPS);
    wait_datagrams(f, 5);
    n = drain(fd2, buf, sizeof buf);
    CHECK(n == sizeof SPS && memcmp(buf, SPS, sizeof SPS) == 0, "resynced: %zu bytes", n);

    /* A reader that falls behind: datagrams dropped once the pipe is full. */
    unsigned char big[1400];
    memset(big, 0x11, sizeof big);
    memcpy(big, SPS, sizeof SPS);
    for (int i = 0; i < 1200; i++) {
        send_bytes(big, sizeof big);
        if (i % 100 == 99) wait_datagrams(f, 5 + i);
    }
    wait_datagrams(f, 5 + 1100);
    h264_feed_stats_get(f, &st);
    CHECK(st.dropped > 0, "a full pipe drops: %ld passed, %ld dropped", st.passed, st.dropped);

    /* The reader goes away: the feed goes on (no SIGPIPE). Counted from
     * when the burst above has been read (on a loaded machine the feed may
     * still be reading it, or the kernel may have dropped some of it). */
    close(fd2);
    long before = wait_quiet(f);
    send_after(0, SPS, sizeof SPS);
    send_after(0, SPS, sizeof SPS);
    wait_datagrams(f, before + 2);
    h264_feed_stats_get(f, &st);
    CHECK(st.datagrams == before + 2, "still receiving: %ld, %ld before", st.datagrams, before);

    /* The end: the stream of the current pipe ends, no new pipe. */
    int fd3 = h264_feed_attach(f, err, sizeof err);
    CHECK(fd3 >= 0, "%s", err);
    h264_feed_end(f);
    CHECK(ended(fd3), "the end ends the decoder's stream");
    close(fd3);
    CHECK(h264_feed_attach(f, err, sizeof err) == -1 && strstr(err, "ended"), "%s", err);
    h264_feed_close(f);
}

static void test_ports(void)
{
    char err[256];
    CHECK(h264_feed_open(0, err, sizeof err) == NULL && strstr(err, "1..65535"), "%s", err);
    CHECK(h264_feed_open(65536, err, sizeof err) == NULL, "%s", err);
    h264_feed *f = h264_feed_open(65535, err, sizeof err);
    h264_feed_close(f); /* the highest port, if free */
    int taken = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof a;
    bind(taken, (struct sockaddr *)&a, sizeof a);
    getsockname(taken, (struct sockaddr *)&a, &len);
    int p = ntohs(a.sin_port);
    CHECK(h264_feed_open(p, err, sizeof err) == NULL && strstr(err, "cannot receive video"),
          "a taken port: %s", err);
    close(taken);
    h264_feed_close(NULL);
}

int main(void)
{
    sender = socket(AF_INET, SOCK_DGRAM, 0);
    test_sync();
    test_ports();
    close(sender);
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
