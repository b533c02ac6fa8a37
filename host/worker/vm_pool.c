/*
 * The pool of worker processes (the host's side; vm.h). A worker is this
 * same program re-executed (`aloft __worker 3`), so that it starts with a
 * clean address space: nothing of the host (the drone's link, the store,
 * keys in memory) is mapped in it, and its only descriptor beyond 0-2 is
 * its end of a socketpair. The pool keeps up to one worker per core (or
 * ALOFT_WORKERS) and places each mission in the least busy one; a worker
 * that dies is dropped from the pool, and the next mission starts a fresh
 * one.
 *
 * Each worker has a reader thread that reads every frame it sends and
 * hands it to its mission's mailbox (bounded: a full one makes the reader
 * wait, so a worker cannot make the host buffer without end). When the
 * worker's socket closes (it died, or was killed), the reader reaps it and
 * ends every mission it hosted at once: their host-side sandboxes are
 * cancelled, so a skill running for them (a motion) stops at its next poll.
 */
#include "worker/vm_internal.h"
#include "worker/confine.h"

#include "errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define VM_POOL_MAX 64

struct vm_wproc {
    pid_t pid;
    int fd;
    pthread_mutex_t mu;  /* the missions, their mailboxes, dead */
    pthread_mutex_t wmu; /* writes to fd */
    pthread_cond_t space, ended;
    vm *missions;
    int nmissions;
    int refs; /* missions + the reader */
    bool dead;
    sandbox_status status; /* for the missions, once dead */
    char why[160];         /* what the host saw it do, or "" */
    vm *cutter;            /* the mission whose thread saw it, or NULL */
    int wstatus;
};

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static vm_wproc *pool[VM_POOL_MAX];
static int pool_size;

const char *vm_worker_program(void);

void vm_set_pool_size(int n)
{
    pthread_mutex_lock(&pool_mu);
    pool_size = n < 1 ? 1 : n > VM_POOL_MAX ? VM_POOL_MAX : n;
    pthread_mutex_unlock(&pool_mu);
}

/* One per core, unless ALOFT_WORKERS says otherwise. Under pool_mu. */
static int wanted(void)
{
    if (pool_size > 0) return pool_size;
    const char *env = getenv("ALOFT_WORKERS");
    long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    pool_size = n < 1 ? 1 : n > VM_POOL_MAX ? VM_POOL_MAX : (int)n;
    return pool_size;
}

static void unref(vm_wproc *w)
{
    pthread_mutex_lock(&w->mu);
    bool last = --w->refs == 0;
    pthread_mutex_unlock(&w->mu);
    if (!last) return;
    close(w->fd);
    pthread_mutex_destroy(&w->mu);
    pthread_mutex_destroy(&w->wmu);
    pthread_cond_destroy(&w->space);
    pthread_cond_destroy(&w->ended);
    free(w);
}

static vm *find(vm_wproc *w, uint32_t id)
{
    vm *v = w->missions;
    while (v && v->id != id)
        v = v->next;
    return v;
}

/* The worker is gone: reap it and end its missions. */
static void ended(vm_wproc *w)
{
    kill(w->pid, SIGKILL); /* one that only closed its socket may still run */
    while (waitpid(w->pid, &w->wstatus, 0) < 0 && errno == EINTR)
        ;
    char how[96];
    confine_describe_exit(w->wstatus, how, sizeof how);
    pthread_mutex_lock(&w->mu);
    w->dead = true;
    for (vm *v = w->missions; v; v = v->next) {
        /* the mission that overran gets its own reason; the others, killed
         * with it, crashed */
        bool other = w->cutter && w->cutter != v;
        v->gone_status = w->why[0] && !other ? w->status : SANDBOX_CRASHED;
        snprintf(v->gone_why, sizeof v->gone_why, "the worker process running the VM %s%s (%s)",
                 other ? "was killed with another mission it ran, which " : "",
                 w->why[0] ? w->why : "died", how);
        atomic_store(&v->gone, true);
        if (v->sb) sandbox_cancel(v->sb); /* a skill read has none */
        pthread_cond_broadcast(&v->cv);
    }
    pthread_cond_broadcast(&w->space);
    pthread_cond_broadcast(&w->ended);
    pthread_mutex_unlock(&w->mu);
}

static void set_why(vm_wproc *w, vm *cutter, sandbox_status st, const char *why)
{
    pthread_mutex_lock(&w->mu);
    if (!w->why[0] && !w->dead) {
        snprintf(w->why, sizeof w->why, "%s", why);
        w->status = st;
        w->cutter = cutter;
    }
    pthread_cond_broadcast(&w->space); /* a reader waiting for room gives up */
    pthread_mutex_unlock(&w->mu);
}

static void *reader(void *ud)
{
    vm_wproc *w = ud;
    for (;;) {
        frame *f = calloc(1, sizeof *f);
        const char *why = "out of memory";
        int rc = f ? frame_recv(w->fd, f, -1, &why) : -1;
        if (rc != 1) {
            if (strcmp(why, "the worker closed its end") != 0) {
                char msg[128];
                snprintf(msg, sizeof msg, "sent %s: cut off", why);
                set_why(w, NULL, SANDBOX_CRASHED, msg);
            }
            if (f) frame_free(f), free(f);
            break;
        }
        pthread_mutex_lock(&w->mu);
        vm *v = find(w, f->h.mission);
        while (v && v->n == VM_MAILBOX && !w->why[0]) {
            pthread_cond_wait(&w->space, &w->mu);
            v = find(w, f->h.mission);
        }
        if (v && !w->why[0]) {
            v->box[(v->head + v->n++) % VM_MAILBOX] = f;
            pthread_cond_signal(&v->cv);
            f = NULL;
        }
        bool stray = !v && !w->why[0];
        pthread_mutex_unlock(&w->mu);
        if (f) frame_free(f), free(f);
        if (stray) set_why(w, NULL, SANDBOX_CRASHED, "sent a frame for no mission of its: cut off");
        if (w->why[0]) break;
    }
    ended(w);
    unref(w);
    return NULL;
}

static vm_wproc *start(char *err, size_t errlen)
{
    const char *prog = vm_worker_program();
    if (!prog) return errmsg_set(err, errlen, "no worker program"), NULL;
    vm_wproc *w = calloc(1, sizeof *w);
    int sv[2];
    if (!w) return errmsg_set(err, errlen, "out of memory"), NULL;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
        free(w);
        return errmsg_set(err, errlen, "cannot make a worker's socket: %s", strerror(errno)), NULL;
    }
    pid_t pid = fork();
    if (pid == 0) {
        /* the child: only async-signal-safe calls until exec */
        if (sv[1] == 3)
            fcntl(3, F_SETFD, 0);
        else if (dup2(sv[1], 3) < 0)
            _exit(127);
        close_range(4, ~0u, 0);
        char *args[] = {"aloft", "__worker", "3", NULL};
        execv(prog, args);
        _exit(127);
    }
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        free(w);
        return errmsg_set(err, errlen, "cannot start a worker: %s", strerror(errno)), NULL;
    }
    w->pid = pid;
    w->fd = sv[0];
    fcntl(w->fd, F_SETFL, fcntl(w->fd, F_GETFL) | O_NONBLOCK);
    pthread_mutex_init(&w->mu, NULL);
    pthread_mutex_init(&w->wmu, NULL);
    pthread_cond_init(&w->space, NULL);
    pthread_cond_init(&w->ended, NULL);
    w->refs = 1;
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &a, reader, w);
    pthread_attr_destroy(&a);
    if (rc) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(w->fd);
        free(w);
        return errmsg_set(err, errlen, "cannot start a thread: %s", strerror(rc)), NULL;
    }
    return w;
}

int vm_pool_join(vm *v, char *err, size_t errlen)
{
    pthread_cond_init(&v->cv, NULL);
    v->cv_ready = true;
    pthread_mutex_lock(&pool_mu);
    int n = 0, best = -1;
    for (int i = 0; i < VM_POOL_MAX; i++) {
        if (pool[i] && pool[i]->dead) { /* its missions hold it until they end */
            unref(pool[i]);
            pool[i] = NULL;
        }
        if (!pool[i]) continue;
        n++;
        if (best < 0 || pool[i]->nmissions < pool[best]->nmissions) best = i;
    }
    /* a fresh worker while there are fewer than wanted, or all are busy */
    if (n < wanted() || best < 0) {
        vm_wproc *w = start(err, errlen);
        if (!w) {
            pthread_mutex_unlock(&pool_mu);
            return -1;
        }
        for (best = 0; pool[best]; best++)
            ;
        pool[best] = w;
        w->refs++; /* the pool's */
    }
    vm_wproc *w = pool[best];
    pthread_mutex_lock(&w->mu);
    w->refs++;
    w->nmissions++;
    v->next = w->missions;
    w->missions = v;
    v->w = w;
    pthread_mutex_unlock(&w->mu);
    pthread_mutex_unlock(&pool_mu);
    return 0;
}

void vm_pool_leave(vm *v)
{
    vm_wproc *w = v->w;
    if (w) {
        if (!atomic_load(&v->gone)) {
            frame_start(&v->out, FRAME_CLOSE, v->id);
            vm_pool_send(v);
        }
        pthread_mutex_lock(&w->mu);
        for (vm **p = &w->missions; *p; p = &(*p)->next)
            if (*p == v) {
                *p = v->next;
                break;
            }
        w->nmissions--;
        while (v->n) {
            frame *f = v->box[v->head];
            v->head = (v->head + 1) % VM_MAILBOX;
            v->n--;
            frame_free(f);
            free(f);
        }
        pthread_cond_broadcast(&w->space);
        pthread_mutex_unlock(&w->mu);
        unref(w);
        v->w = NULL;
    }
    if (v->cv_ready) pthread_cond_destroy(&v->cv);
    v->cv_ready = false;
}

int vm_pool_send(vm *v)
{
    vm_wproc *w = v->w;
    pthread_mutex_lock(&w->wmu);
    int rc = frame_send(w->fd, &v->out);
    pthread_mutex_unlock(&w->wmu);
    /* A worker that died is the reader's to report, with how it died; only
     * one that lives and does not read is refused here. */
    struct pollfd pf = {.fd = w->fd, .events = POLLRDHUP};
    if (rc && poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR))) rc = 0;
    return rc;
}

int vm_pool_next(vm *v, int timeout_ms)
{
    vm_wproc *w = v->w;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (long)timeout_ms * 1000000L;
    ts.tv_sec += ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&w->mu);
    while (v->n == 0 && !atomic_load(&v->gone))
        if (pthread_cond_timedwait(&v->cv, &w->mu, &ts) == ETIMEDOUT) break;
    int rc = atomic_load(&v->gone) ? -1 : v->n ? 1 : 0;
    if (rc == 1) {
        frame *f = v->box[v->head];
        v->head = (v->head + 1) % VM_MAILBOX;
        v->n--;
        pthread_cond_signal(&w->space);
        frame_free(&v->in);
        v->in = *f;
        free(f);
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

void vm_pool_cut(vm *v, sandbox_status st, const char *why)
{
    vm_wproc *w = v->w;
    if (!w || atomic_load(&v->gone)) return;
    set_why(w, v, st, why);
    kill(w->pid, SIGKILL);
    /* the reader reaps it and ends its missions, this one too */
    pthread_mutex_lock(&w->mu);
    while (!w->dead)
        pthread_cond_wait(&w->ended, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

void vm_kill_sandbox(sandbox *sb, const char *why)
{
    pthread_mutex_lock(&pool_mu);
    for (int i = 0; i < VM_POOL_MAX; i++) {
        vm_wproc *w = pool[i];
        if (!w) continue;
        pthread_mutex_lock(&w->mu);
        vm *v = w->missions;
        while (v && v->sb != sb)
            v = v->next;
        if (v && !w->why[0] && !w->dead) {
            snprintf(w->why, sizeof w->why, "was killed by the watchdog: %s", why);
            w->status = SANDBOX_HUNG;
            w->cutter = v;
            kill(w->pid, SIGKILL);
        }
        pthread_mutex_unlock(&w->mu);
    }
    pthread_mutex_unlock(&pool_mu);
}
