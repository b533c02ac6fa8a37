/*
 * Shared by the Tello tests: starts tests/tools/tello_emu on loopback, reads
 * its log, and builds a driver pointed at it.
 */
#ifndef ALOFT_TESTS_TELLO_HARNESS_H
#define ALOFT_TESTS_TELLO_HARNESS_H

#include "drone/tello.h"

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int harness_failures;
static char harness_logs[64][256]; /* removed when every check passed */
static int harness_n_logs;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            harness_failures++;                                                                    \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

typedef struct emu_proc {
    pid_t pid;
    int port;       /* the emulator's command port */
    int state_port; /* where it sends state: the driver listens there */
    char log[256];
} emu_proc;

static inline double harness_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline void harness_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A UDP port free right now on 127.0.0.1 (the kernel's choice). */
static inline int harness_free_port(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
        perror("free port");
        exit(1);
    }
    close(fd);
    return ntohs(a.sin_port);
}

/* Starts the emulator with ARGS (NULL-terminated); exits the test on failure. */
static inline void emu_start(emu_proc *p, const char *name, const char *const *args)
{
    const char *build = getenv("BUILD");
    char exe[512];
    snprintf(exe, sizeof exe, "%s/tello_emu", build ? build : ".");
    snprintf(p->log, sizeof p->log, "%s/tello_%s_%d.log", build ? build : ".", name, (int)getpid());
    if (harness_n_logs < 64) snprintf(harness_logs[harness_n_logs++], 256, "%s", p->log);
    p->state_port = harness_free_port();
    char sport[16];
    snprintf(sport, sizeof sport, "%d", p->state_port);
    const char *argv[64] = {exe,    "--port",          "0",  "--state-port", sport, "--log",
                            p->log, "--max-runtime-s", "120"};
    int n = 9;
    for (int i = 0; args && args[i] && n < 62; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    int fds[2];
    if (pipe(fds) < 0) exit(1);
    p->pid = fork();
    if (p->pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execv(exe, (char *const *)argv);
        perror(exe);
        _exit(127);
    }
    close(fds[1]);
    char line[64] = "";
    size_t got = 0;
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    while (got < sizeof line - 1 && !strchr(line, '\n') && poll(&pfd, 1, 10000) > 0) {
        ssize_t r = read(fds[0], line + got, sizeof line - 1 - got);
        if (r <= 0) break;
        got += (size_t)r;
        line[got] = '\0';
    }
    close(fds[0]);
    if (sscanf(line, "port %d", &p->port) != 1) {
        fprintf(stderr, "tello_emu did not start (%s)\n", exe);
        exit(1);
    }
}

static inline void emu_stop(emu_proc *p)
{
    if (p->pid <= 0) return;
    kill(p->pid, SIGTERM);
    waitpid(p->pid, NULL, 0);
    p->pid = 0;
}

/* The lines of the emulator's log that start with PREFIX (the prefix and
 * the space after it removed), joined with '|'. */
static inline char *emu_lines(const emu_proc *p, const char *prefix)
{
    FILE *f = fopen(p->log, "r");
    size_t cap = 1 << 16, len = 0;
    char *out = calloc(1, cap), line[512];
    size_t plen = strlen(prefix);
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, prefix, plen) != 0 || line[plen] != ' ') continue;
        const char *rest = line + plen + 1;
        if (len + strlen(rest) + 2 >= cap) break;
        len += (size_t)sprintf(out + len, "%s%s", len ? "|" : "", rest);
    }
    if (f) fclose(f);
    return out;
}

/* How many log lines equal TEXT exactly. */
static inline int emu_count(const emu_proc *p, const char *text)
{
    FILE *f = fopen(p->log, "r");
    char line[512];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        n += strcmp(line, text) == 0;
    }
    if (f) fclose(f);
    return n;
}

/* The last "pose X Y Z YAW" line of the log. */
static inline int emu_last_pose(const emu_proc *p, double *x, double *y, double *z, double *yaw)
{
    FILE *f = fopen(p->log, "r");
    char line[512];
    int found = 0;
    while (f && fgets(line, sizeof line, f))
        found |= sscanf(line, "pose %lf %lf %lf %lf", x, y, z, yaw) == 4;
    if (f) fclose(f);
    return found ? 0 : -1;
}

/* A configuration for the emulator P with short timeouts. */
static inline tello_config harness_config(const emu_proc *p, int timeout_ms)
{
    tello_config cfg;
    tello_config_init(&cfg);
    snprintf(cfg.host, sizeof cfg.host, "127.0.0.1");
    cfg.port = p->port;
    cfg.state_port = p->state_port;
    cfg.timeout_ms = timeout_ms;
    cfg.takeoff_timeout_ms = timeout_ms * 2;
    return cfg;
}

static inline drone *harness_drone(const tello_config *cfg)
{
    char err[256];
    drone *d = tello_new(cfg, err, sizeof err);
    if (!d) {
        fprintf(stderr, "tello_new: %s\n", err);
        exit(1);
    }
    return d;
}

/* Polls the driver's state until FN says yes or MS pass. */
static inline int harness_wait_state(drone *d, int ms, int (*fn)(const drone_state *, void *),
                                     void *ud)
{
    double end = harness_now_ms() + ms;
    drone_state s;
    while (harness_now_ms() < end) {
        d->ops->get_state(d, &s);
        if (fn(&s, ud)) return 0;
        harness_sleep_ms(20);
    }
    return -1;
}

static inline int harness_report(const char *name)
{
    if (harness_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, harness_failures);
        return 1;
    }
    for (int i = 0; i < harness_n_logs; i++)
        unlink(harness_logs[i]);
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif
