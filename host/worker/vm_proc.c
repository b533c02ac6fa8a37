/*
 * Starting, watching and ending worker processes (the host's side).
 *
 * A worker is this same program re-executed (`aloft __worker 3`), so that
 * it starts with a clean address space: nothing of the host (the drone's
 * link, the store, keys in the environment's memory) is mapped in it. Its
 * only descriptor beyond 0-2 is its end of the socketpair.
 */
#include "worker/vm_internal.h"

#include "errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

const char *vm_worker_program(void);

#ifdef ALOFT_HAVE_CONFINE
#include "worker/confine.h"
#endif

/* "killed by signal 11 (SIGSEGV)", "exited with status 3". */
static const char *describe_exit(int ws, char *buf, size_t n)
{
#ifdef ALOFT_HAVE_CONFINE
    return confine_describe_exit(ws, buf, n);
#else
    if (WIFSIGNALED(ws)) {
        const char *abbr = sigabbrev_np(WTERMSIG(ws));
        snprintf(buf, n, "killed by signal %d (SIG%s)", WTERMSIG(ws), abbr ? abbr : "?");
    } else if (WIFEXITED(ws)) {
        snprintf(buf, n, "exited with status %d", WEXITSTATUS(ws));
    } else {
        snprintf(buf, n, "ended (status %#x)", (unsigned)ws);
    }
    return buf;
#endif
}

/* Wakes when the worker's end closes (it died, or hung up), and cancels
 * the host side at once: a skill the host is running for it (a motion)
 * stops at its next poll, and the drone hovers, instead of finishing a
 * plan nobody runs any more. */
static void *monitor(void *ud)
{
    vm_proc *p = ud;
    struct pollfd pf[2] = {{.fd = p->fd, .events = POLLRDHUP},
                           {.fd = p->stop[0], .events = POLLIN}};
    for (;;) {
        int rc = poll(pf, 2, -1);
        if (rc < 0 && errno == EINTR) continue;
        if (rc < 0 || pf[1].revents) return NULL;
        if (pf[0].revents) break;
    }
    atomic_store(&p->dead, true);
    sandbox_cancel(p->hostside);
    return NULL;
}

int vm_proc_start(vm *v, char *err, size_t errlen)
{
    vm_proc *p = &v->proc;
    p->fd = p->stop[0] = p->stop[1] = -1;
    p->hostside = v->sb;
    const char *prog = vm_worker_program();
    int sv[2];
    if (!prog) return errmsg_set(err, errlen, "no worker program");
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        return errmsg_set(err, errlen, "cannot make the worker's socket: %s", strerror(errno));
    if (pipe2(p->stop, O_CLOEXEC)) {
        close(sv[0]), close(sv[1]);
        return errmsg_set(err, errlen, "cannot make a pipe: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]), close(sv[1]);
        return errmsg_set(err, errlen, "cannot start a worker: %s", strerror(errno));
    }
    if (pid == 0) {
        /* the child: only async-signal-safe calls until exec */
        if (sv[1] == 3) {
            fcntl(3, F_SETFD, 0);
        } else if (dup2(sv[1], 3) < 0) {
            _exit(127);
        }
        close_range(4, ~0u, 0);
        char *args[] = {"aloft", "__worker", "3", NULL};
        execv(prog, args);
        _exit(127);
    }
    close(sv[1]);
    p->pid = pid;
    p->fd = sv[0];
    fcntl(p->fd, F_SETFL, fcntl(p->fd, F_GETFL) | O_NONBLOCK);
    atomic_init(&p->dead, false);
    if (pthread_create(&p->monitor, NULL, monitor, p) == 0) p->monitoring = true;
    return 0;
}

static void reap(vm_proc *p, bool wait_first)
{
    if (p->reaped || p->pid <= 0) return;
    /* a worker whose socket closed exits at once; give it a moment */
    for (int i = 0; wait_first && i < 100; i++) {
        pid_t r = waitpid(p->pid, &p->wstatus, WNOHANG);
        if (r == p->pid || (r < 0 && errno != EINTR)) {
            p->reaped = true;
            return;
        }
        usleep(1000);
    }
    kill(p->pid, SIGKILL);
    while (waitpid(p->pid, &p->wstatus, 0) < 0 && errno == EINTR)
        ;
    p->reaped = true;
}

static void stop_monitor(vm_proc *p)
{
    if (p->monitoring) {
        char c = 0;
        if (write(p->stop[1], &c, 1) < 0) { /* the thread ends anyway on close below */
        }
        pthread_join(p->monitor, NULL);
        p->monitoring = false;
    }
}

void vm_proc_stop(vm *v)
{
    vm_proc *p = &v->proc;
    if (p->pid <= 0 && p->fd < 0) return;
    if (p->fd >= 0 && !v->gone) {
        frame_start(&v->out, FRAME_CLOSE, v->id);
        (void)frame_send(p->fd, &v->out);
    }
    stop_monitor(p);
    if (p->fd >= 0) close(p->fd);
    reap(p, true);
    if (p->stop[0] >= 0) close(p->stop[0]), close(p->stop[1]);
    p->fd = p->stop[0] = p->stop[1] = -1;
    p->pid = 0;
}

void vm_worker_cut(vm *v, sandbox_status st, const char *why)
{
    if (v->gone) return;
    vm_proc *p = &v->proc;
    v->gone = true;
    v->gone_status = st;
    /* kill first: a worker that hung up may still be running */
    if (p->pid > 0 && !p->reaped) kill(p->pid, SIGKILL);
    reap(p, false);
    char how[128];
    describe_exit(p->wstatus, how, sizeof how);
    snprintf(v->gone_why, sizeof v->gone_why, "the worker process running the VM %s (%s)", why,
             how);
    sandbox_cancel(v->sb);
}
