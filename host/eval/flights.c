/*
 * A small pool of worker threads, each taking the next flight, spawning it
 * with posix_spawn (safe in a threaded process, unlike fork) and draining
 * its stdout and stderr with poll so that neither pipe can fill and stall
 * the child.
 */
#include "eval/flights.h"

#include "textbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FLIGHTS_MAX_JOBS 64
#define FLIGHTS_ERR_TAIL 4096
#define FLIGHTS_MAX_OUT (64u * 1024u * 1024u)

typedef struct pool {
    evalflight *f;
    int n, next;
    atomic_bool *cancel;
    bool stop;
    evalflight_done_fn done;
    void *ud;
    pthread_mutex_t lock;
} pool;

/* Keeps the last FLIGHTS_ERR_TAIL bytes of stderr. */
static void keep_tail(textbuf *t, const char *s, size_t n)
{
    textbuf_add(t, s, n);
    if (t->len > 2 * FLIGHTS_ERR_TAIL) {
        memmove(t->s, t->s + t->len - FLIGHTS_ERR_TAIL, FLIGHTS_ERR_TAIL + 1);
        t->len = FLIGHTS_ERR_TAIL;
    }
}

static void drain(int out_fd, int err_fd, textbuf *out, textbuf *err)
{
    struct pollfd p[2] = {{.fd = out_fd, .events = POLLIN}, {.fd = err_fd, .events = POLLIN}};
    char buf[8192];
    while (p[0].fd >= 0 || p[1].fd >= 0) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || !p[i].revents) continue;
            ssize_t r = read(p[i].fd, buf, sizeof buf);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                close(p[i].fd);
                p[i].fd = -1;
            } else if (i == 1) {
                keep_tail(err, buf, (size_t)r);
            } else if (out->len + (size_t)r <= FLIGHTS_MAX_OUT) {
                textbuf_add(out, buf, (size_t)r);
            }
        }
    }
}

static void fly(evalflight *f)
{
    int po[2] = {-1, -1}, pe[2] = {-1, -1};
    f->status = -1;
    f->ran = true;
    if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
        f->err = strdup(strerror(errno));
        for (int i = 0; i < 2; i++) {
            if (po[i] >= 0) close(po[i]);
            if (pe[i] >= 0) close(pe[i]);
        }
        return;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    pid_t pid;
    int rc = posix_spawn(&pid, f->argv[0], &fa, NULL, f->argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(po[1]);
    close(pe[1]);
    textbuf out = {0}, err = {0};
    if (rc != 0) {
        close(po[0]);
        close(pe[0]);
        f->err = strdup(strerror(rc));
        return;
    }
    drain(po[0], pe[0], &out, &err);
    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    f->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    f->out = textbuf_take(&out);
    f->err = textbuf_take(&err);
}

static void *worker(void *arg)
{
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        bool cancelled = p->cancel && atomic_load(p->cancel);
        int i = (p->stop || cancelled || p->next >= p->n) ? -1 : p->next++;
        pthread_mutex_unlock(&p->lock);
        if (i < 0) return NULL;
        fly(&p->f[i]);
        pthread_mutex_lock(&p->lock);
        if (p->done && p->done(&p->f[i], i, p->ud)) p->stop = true;
        pthread_mutex_unlock(&p->lock);
    }
}

int evalflights_run(evalflight *f, int n, int jobs, atomic_bool *cancel, evalflight_done_fn done,
                    void *ud)
{
    if (jobs < 1) jobs = 1;
    if (jobs > FLIGHTS_MAX_JOBS) jobs = FLIGHTS_MAX_JOBS;
    if (jobs > n) jobs = n > 0 ? n : 1;
    pool p = {.f = f, .n = n, .cancel = cancel, .done = done, .ud = ud};
    pthread_mutex_init(&p.lock, NULL);
    pthread_t th[FLIGHTS_MAX_JOBS];
    int started = 0;
    while (started < jobs && pthread_create(&th[started], NULL, worker, &p) == 0)
        started++;
    /* Threads that could not start leave their share to the others; with
     * none at all the flights run here, one by one. */
    if (started == 0) worker(&p);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&p.lock);
    return started;
}

void evalflight_clear(evalflight *f)
{
    free(f->out);
    free(f->err);
    f->out = f->err = NULL;
}
