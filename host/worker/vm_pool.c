/*
 * The pool of worker processes (the host's side; vm.h). A worker is this
 * same program re-executed (`aloft __worker 3`), so that it starts with a
 * clean address space: nothing of the host (the drone's link, the store,
 * keys in memory) is mapped in it, and its only descriptor beyond 0-2 is
 * its end of a socketpair. The pool keeps up to one worker per core (or
 * ALOFT_WORKERS) and places each mission in an idle one, else in a fresh
 * one while there are fewer, else in the least busy one; a worker
 * that dies is dropped from the pool, and the next mission starts a fresh
 * one.
 *
 * One thread at a time reads a worker's socket, whole frames. A mission's
 * thread waiting for its next frame reads the socket itself whenever no
 * other thread does: a skill call then wakes the very thread that serves
 * it, with no hand-off between threads in the host. The frames it reads
 * for other missions go to their mailboxes (bounded: a full one makes the
 * reader wait, so a worker cannot make the host buffer without end). Each
 * worker also has a watcher thread that reads only while no mission's
 * thread does (it polls until a frame comes; a mission's thread that
 * starts waiting takes over from it). When the socket closes or carries
 * what is not a frame (the worker died, was killed, or misbehaved), the
 * watcher reaps the worker and ends every mission it hosted at once: their
 * host-side sandboxes are cancelled, so a skill running for them (a
 * motion) stops at its next poll.
 */
#include "worker/vm_internal.h"
#include "worker/confine.h"

#include "clock.h"
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
/* How often the watcher looks whether nobody reads a worker's socket. It
 * does not wait to be told: that would wake it at every skill call. */
#define VM_POOL_WATCH_MS 2

struct vm_wproc {
    pid_t pid;
    int fd;
    pthread_mutex_t mu;  /* the missions, their mailboxes, dead */
    pthread_mutex_t wmu; /* writes to fd */
    pthread_cond_t space, ended;
    vm *missions;
    int nmissions;
    int refs; /* missions + the watcher */
    bool dead;
    sandbox_status status; /* for the missions, once dead */
    char why[160];         /* what the host saw it do, or "" */
    vm *cutter;            /* the mission whose thread saw it, or NULL */
    int wstatus;
    /* Reading fd (under mu): someone reads it; it is the watcher; which
     * only polls, so that a mission's thread may take over. */
    bool rd_busy, rd_watcher, rd_polling;
    bool broken;     /* a read failed: nobody reads again, the watcher ends it */
    bool reaping;    /* the watcher reaps it: its pid may be another's soon */
    frame_reader rd; /* fd, read by the thread that reads */
    pthread_cond_t watch;
};

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static vm_wproc *pool[VM_POOL_MAX];
static int pool_size;

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
    pool_size = vm_default_workers(VM_POOL_MAX);
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
    pthread_cond_destroy(&w->watch);
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
    pthread_mutex_lock(&w->mu);
    w->reaping = true;
    pthread_mutex_unlock(&w->mu);
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

/* Under w->mu. */
static void set_why_locked(vm_wproc *w, vm *cutter, sandbox_status st, const char *why)
{
    if (!w->why[0] && !w->dead) {
        snprintf(w->why, sizeof w->why, "%s", why);
        w->status = st;
        w->cutter = cutter;
    }
    pthread_cond_broadcast(&w->space); /* a reader waiting for room gives up */
}

/* ---- reading the socket (see the top) ------------------------------------ */

/* Nobody reads again; the worker is killed, so that the watcher, which may
 * be waiting in a poll of its socket, sees it close and ends it. Under
 * w->mu. */
static void cut_locked(vm_wproc *w)
{
    w->broken = true;
    if (!w->reaping) kill(w->pid, SIGKILL);
    pthread_cond_signal(&w->watch);
}

/* A read of fd failed (WHY): the worker closed its end or sent what is not
 * a frame. Nobody reads again; the watcher reaps it and ends its missions.
 * Under w->mu. */
static void broke(vm_wproc *w, const char *why)
{
    if (strcmp(why, "the worker closed its end") != 0) {
        char msg[128];
        snprintf(msg, sizeof msg, "sent %s: cut off", why);
        set_why_locked(w, NULL, SANDBOX_CRASHED, msg);
    }
    cut_locked(w);
}

/* Hands F, read for another mission, to that mission's mailbox, waiting
 * for room; a frame for no mission cuts the worker off. Under w->mu. */
static void deliver(vm_wproc *w, frame *f)
{
    vm *v = find(w, f->h.mission);
    while (v && v->n == VM_MAILBOX && !w->why[0]) {
        pthread_cond_wait(&w->space, &w->mu);
        v = find(w, f->h.mission);
    }
    if (v && !w->why[0]) {
        v->box[(v->head + v->n++) % VM_MAILBOX] = f;
        pthread_cond_signal(&v->cv);
        return;
    }
    frame_free(f), free(f);
    if (!v) set_why_locked(w, NULL, SANDBOX_CRASHED, "sent a frame for no mission of its: cut off");
    cut_locked(w);
}

/* True when the calling thread may start reading. Under w->mu. */
static bool may_read(const vm_wproc *w)
{
    return !w->broken && !w->why[0] && (!w->rd_busy || (w->rd_watcher && w->rd_polling));
}

/* The reading thread is done: a mission's thread waiting takes over, or
 * the watcher at its next look. Frames left in the buffer (no poll sees
 * them) wait for their missions' threads, which read them as they next
 * wait. Under w->mu. */
static void release(vm_wproc *w)
{
    w->rd_busy = w->rd_watcher = w->rd_polling = false;
    for (vm *v = w->missions; v; v = v->next)
        if (v->waiting) {
            pthread_cond_signal(&v->cv);
            return;
        }
    if (frame_reader_buffered(&w->rd)) pthread_cond_signal(&w->watch);
}

/* Waits on CV for at most MS milliseconds. */
static void wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, double ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long ns = (long)(ms * 1e6);
    ts.tv_sec += ns / 1000000000L;
    ts.tv_nsec += ns % 1000000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(cv, mu, &ts);
}

static void *watcher(void *ud)
{
    vm_wproc *w = ud;
    pthread_mutex_lock(&w->mu);
    while (!w->broken && !w->why[0]) {
        if (!may_read(w)) {
            wait_ms(&w->watch, &w->mu, VM_POOL_WATCH_MS);
            continue;
        }
        w->rd_busy = w->rd_watcher = w->rd_polling = true;
        pthread_mutex_unlock(&w->mu);
        struct pollfd pf = {.fd = w->fd, .events = POLLIN};
        if (!frame_reader_buffered(&w->rd)) poll(&pf, 1, -1);
        pthread_mutex_lock(&w->mu);
        if (!w->rd_busy || !w->rd_watcher) continue; /* a mission's thread took over */
        w->rd_polling = false;
        pthread_mutex_unlock(&w->mu);
        frame *f = calloc(1, sizeof *f);
        const char *why = "out of memory";
        int rc = f ? frame_read(&w->rd, f, -1, &why) : -1;
        pthread_mutex_lock(&w->mu);
        if (rc == 1)
            deliver(w, f);
        else {
            if (f) frame_free(f), free(f);
            broke(w, why);
        }
        release(w);
    }
    pthread_mutex_unlock(&w->mu);
    ended(w);
    unref(w);
    return NULL;
}

static vm_wproc *start(char *err, size_t errlen)
{
    vm_wproc *w = calloc(1, sizeof *w);
    if (!w) return errmsg_set(err, errlen, "out of memory"), NULL;
    if (vm_spawn_worker(&w->pid, &w->fd, err, errlen)) {
        free(w);
        return NULL;
    }
    frame_reader_init(&w->rd, w->fd);
    fcntl(w->fd, F_SETFL, fcntl(w->fd, F_GETFL) | O_NONBLOCK);
    pthread_mutex_init(&w->mu, NULL);
    pthread_mutex_init(&w->wmu, NULL);
    pthread_cond_init(&w->space, NULL);
    pthread_cond_init(&w->ended, NULL);
    pthread_cond_init(&w->watch, NULL);
    w->refs = 1;
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &a, watcher, w);
    pthread_attr_destroy(&a);
    if (rc) {
        kill(w->pid, SIGKILL);
        waitpid(w->pid, NULL, 0);
        close(w->fd);
        free(w);
        return errmsg_set(err, errlen, "cannot start a thread: %s", strerror(rc)), NULL;
    }
    return w;
}

int vm_pool_prestart(char *err, size_t errlen)
{
    if (!vm_workers_enabled()) return 0;
    pthread_mutex_lock(&pool_mu);
    int n = 0, rc = 0;
    for (int i = 0; i < VM_POOL_MAX; i++)
        n += pool[i] != NULL;
    for (int i = 0; i < VM_POOL_MAX && n < wanted(); i++) {
        if (pool[i]) continue;
        vm_wproc *w = start(err, errlen);
        if (!w) {
            rc = -1;
            break;
        }
        w->refs++; /* the pool's */
        pool[i] = w;
        n++;
    }
    pthread_mutex_unlock(&pool_mu);
    return rc;
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
    /* An idle worker first: one that read the skill files, or ran a mission
     * that ended, serves the next as well as a fresh one would (each job
     * gets a fresh Lua state there: worker.c, skill_meta.c), without one
     * process more. A fresh one only while all are busy and there are
     * fewer than wanted. */
    bool idle = best >= 0 && pool[best]->nmissions == 0;
    if (!idle && (n < wanted() || best < 0)) {
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
    /* A worker that died is the watcher's to report, with how it died; only
     * one that lives and does not read is refused here. */
    struct pollfd pf = {.fd = w->fd, .events = POLLRDHUP};
    if (rc && poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR))) rc = 0;
    return rc;
}

int vm_pool_next(vm *v, int timeout_ms)
{
    vm_wproc *w = v->w;
    double deadline = clock_now_ms() + timeout_ms;
    bool reading = false;
    int rc = 0;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        if (atomic_load(&v->gone)) {
            rc = -1;
            break;
        }
        /* what others read for V first: it came before what is unread */
        if (v->n) {
            frame *f = v->box[v->head];
            v->head = (v->head + 1) % VM_MAILBOX;
            v->n--;
            pthread_cond_signal(&w->space);
            frame_free(&v->in);
            v->in = *f;
            free(f);
            rc = 1;
            break;
        }
        double left = deadline - clock_now_ms();
        if (left <= 0) break;
        if (!reading && may_read(w)) {
            w->rd_busy = true;
            w->rd_watcher = w->rd_polling = false;
            reading = true;
        }
        if (!reading) {
            v->waiting = true;
            wait_ms(&v->cv, &w->mu, left);
            v->waiting = false;
            continue;
        }
        pthread_mutex_unlock(&w->mu);
        const char *why = "";
        int r = frame_read(&w->rd, &v->rx, (int)left + 1, &why);
        pthread_mutex_lock(&w->mu);
        if (r == 1 && v->rx.h.mission == v->id) {
            frame t = v->in; /* the buffers are kept for the next frames */
            v->in = v->rx;
            v->rx = t;
            rc = 1;
            break;
        }
        if (r == 1) {
            frame *f = malloc(sizeof *f);
            if (f) *f = v->rx, v->rx = (frame){0};
            if (f)
                deliver(w, f);
            else
                broke(w, "out of memory");
        } else if (r < 0) {
            broke(w, why);
        }
        if (w->broken) break; /* V is gone once the watcher reaped the worker */
    }
    if (reading) release(w);
    /* the watcher reaps it at once: wait, to report how it ended */
    while (w->broken && !w->dead)
        pthread_cond_wait(&w->ended, &w->mu);
    if (atomic_load(&v->gone)) rc = -1;
    pthread_mutex_unlock(&w->mu);
    return rc;
}

void vm_pool_cut(vm *v, sandbox_status st, const char *why)
{
    vm_wproc *w = v->w;
    if (!w || atomic_load(&v->gone)) return;
    /* the watcher reaps it and ends its missions, this one too */
    pthread_mutex_lock(&w->mu);
    set_why_locked(w, v, st, why);
    if (!w->reaping) kill(w->pid, SIGKILL);
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
        if (v && !w->why[0] && !w->reaping) {
            snprintf(w->why, sizeof w->why, "was killed by the watchdog: %s", why);
            w->status = SANDBOX_HUNG;
            w->cutter = v;
            kill(w->pid, SIGKILL);
        }
        pthread_mutex_unlock(&w->mu);
    }
    pthread_mutex_unlock(&pool_mu);
}
