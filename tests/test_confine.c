/* The confinement of a worker (host/worker/confine.c, SPEC §6 process
 * boundary): a confined process can talk to its socket, allocate, run
 * threads, read clocks and run Lua; it dies of SIGSYS on every way out (open,
 * socket, execve, a new process, connect, executable memory, a descriptor it
 * was not given); its address space and CPU time are capped; and the host's
 * one-line report of each end is right. Each case runs tests/tools/
 * confined_probe, a real process confined for real, on a socketpair.
 * labels: sandbox confine */
#include "worker/confine.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* The probe's descriptor for its socket: not 3, so that the report of open
 * descriptors tells the kept one from whatever was opened first (one case
 * uses 3, as a worker should: see test_no_descriptor_received). */
static int probe_fd = 5;

static char probe[512];
/* Set for one case: run_probe stops and continues the probe in its sleep. */
static int stop_after_start;
/* Set for one case: the probe runs where close_range fails with ENOSYS, as
 * on kernels before 5.9. */
static int without_close_range;

/* A filter of the test's own, loaded in the probe's process before exec:
 * close_range answers ENOSYS, everything else is left to confine_enter's. */
static int hide_close_range(void)
{
    scmp_filter_ctx c = seccomp_init(SCMP_ACT_ALLOW);
    int ok = c && seccomp_rule_add(c, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(close_range), 0) == 0 &&
             seccomp_load(c) == 0;
    if (c) seccomp_release(c);
    return ok ? 0 : -1;
}

typedef struct run {
    char out[8192]; /* what the probe said on its socket */
    char err[4096]; /* what it wrote on its stderr */
    int status;     /* wait status */
    double cpu_s;   /* CPU time it used */
    char why[160];  /* confine_describe_exit */
} run;

/* Reads FD to its end (or until 120 s pass: no test here should come near;
 * the CPU cases burn 1-2 s of CPU, which a loaded machine may stretch). */
static size_t read_all(int fd, char *buf, size_t cap, pid_t pid)
{
    size_t len = 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, 1000);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 120) {
            kill(pid, SIGKILL);
            CHECK(0, "the probe did not end within 120 s");
            break;
        }
        if (r <= 0) continue;
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n <= 0) break;
        len += (size_t)n;
        if (len == cap - 1) break;
    }
    buf[len] = '\0';
    return len;
}

/* Runs the probe in MODE with the limits given (0 = none). */
static void run_probe(const char *mode, unsigned long long as, unsigned cpu, run *r)
{
    memset(r, 0, sizeof *r);
    int sv[2], errp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) || pipe2(errp, O_CLOEXEC)) {
        CHECK(0, "socketpair/pipe: %s", strerror(errno));
        return;
    }
    char fd_arg[16], as_arg[32], cpu_arg[16];
    snprintf(fd_arg, sizeof fd_arg, "%d", probe_fd);
    snprintf(as_arg, sizeof as_arg, "%llu", as);
    snprintf(cpu_arg, sizeof cpu_arg, "%u", cpu);
    pid_t pid = fork();
    if (pid == 0) {
        /* dup2 clears close-on-exec on the copies, but does nothing when
         * the descriptor already has the number. */
        if (dup2(errp[1], 2) < 0) _exit(120);
        if (sv[1] == probe_fd ? fcntl(probe_fd, F_SETFD, 0) < 0 : dup2(sv[1], probe_fd) < 0)
            _exit(120);
        if (without_close_range && hide_close_range()) _exit(122);
        execl(probe, probe, fd_arg, mode, as_arg, cpu_arg, (char *)NULL);
        _exit(121);
    }
    close(sv[1]);
    close(errp[1]);
    /* The allowed path answers this with "pong"; the others never read it.
     * It carries a descriptor (SCM_RIGHTS) that the probe must not get. */
    int gift = open("/dev/null", O_RDONLY | O_CLOEXEC);
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl = {0};
    struct iovec iov = {"ping\n", 5};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (gift >= 0) {
        mh.msg_control = ctl.buf;
        mh.msg_controllen = sizeof ctl.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &gift, sizeof gift);
    }
    if (sendmsg(sv[0], &mh, 0) != 5) CHECK(0, "sendmsg: %s", strerror(errno));
    if (gift >= 0) close(gift);
    if (stop_after_start) {
        /* Wait for the probe's "sleeping", then stop and continue it inside
         * its sleep (the pause only aims at the middle of the sleep). */
        char first[64] = "";
        size_t got = 0;
        while (!strstr(first, "sleeping") && got < sizeof first - 1) {
            ssize_t n = read(sv[0], first + got, sizeof first - 1 - got);
            if (n <= 0) break;
            got += (size_t)n;
            first[got] = '\0';
        }
        struct timespec pause = {0, 200000000};
        nanosleep(&pause, NULL);
        kill(pid, SIGSTOP);
        nanosleep(&pause, NULL);
        kill(pid, SIGCONT);
    }
    read_all(sv[0], r->out, sizeof r->out, pid);
    struct rusage ru;
    if (wait4(pid, &r->status, 0, &ru) != pid) CHECK(0, "wait4: %s", strerror(errno));
    read_all(errp[0], r->err, sizeof r->err, pid);
    close(sv[0]);
    close(errp[0]);
    r->cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec / 1e6;
    confine_describe_exit(r->status, r->why, sizeof r->why);
}

static int has_line(const run *r, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = r->out; (p = strstr(p, line)) != NULL; p += n)
        if ((p == r->out || p[-1] == '\n') && p[n] == '\n') return 1;
    return 0;
}

#define CHECK_LINE(r, line)                                                                        \
    CHECK(has_line(r, line), "no line '%s' in:\n%s%s", line, (r)->out, (r)->err)
#define CHECK_WHY(r, want)                                                                         \
    CHECK(strcmp((r)->why, want) == 0, "ended '%s', want '%s'; it said:\n%s%s", (r)->why, want,    \
          (r)->out, (r)->err)

/* Below the cap everything a VM does works, and only the kept socket is
 * open. Under ASan the address-space cap is not set (confine.c says why). */
static void test_allowed_path_works(void)
{
    run r;
    run_probe("allowed", 1ull << 30, 60, &r);
    CHECK_WHY(&r, "exited with status 0");
    CHECK_LINE(&r, "confined");
    CHECK_LINE(&r, "frame");
    CHECK_LINE(&r, "alloc 64 MiB");
    CHECK_LINE(&r, "thread joined");
    CHECK_LINE(&r, "12 threads at once");
    CHECK_LINE(&r, "sorted");
    CHECK_LINE(&r, "clock");
    /* #s + #t + 1: the script ran to its end, os.time with a date included. */
    CHECK_LINE(&r, "lua 220001");
    CHECK_LINE(&r, "fds 5");
    CHECK_LINE(&r, "clone3 ENOSYS");
    CHECK(strstr(r.out, "pong\n") != NULL, "no answer to ping:\n%s%s", r.out, r.err);
}

/* Without close_range the descriptors are closed from the list in
 * /proc/self/fd, read before the filter. */
static void test_closing_without_close_range(void)
{
    run r;
    without_close_range = 1;
    run_probe("allowed", 0, 0, &r);
    without_close_range = 0;
    CHECK_WHY(&r, "exited with status 0");
    CHECK_LINE(&r, "fds 5");
}

/* A descriptor sent over the socket never arrives: with the socket at 3 the
 * descriptor limit (what is open) leaves no number for it. */
static void test_no_descriptor_received(void)
{
    run r;
    probe_fd = 3;
    run_probe("receive", 0, 0, &r);
    probe_fd = 5;
    CHECK_WHY(&r, "exited with status 0");
    CHECK_LINE(&r, "received ping, no descriptor, control cut");
}

/* A worker stopped and continued in a sleep (Ctrl-Z of the host's process
 * group) resumes it through restart_syscall and goes on. */
static void test_stopped_and_continued(void)
{
    run r;
    stop_after_start = 1;
    run_probe("sleep", 0, 0, &r);
    stop_after_start = 0;
    CHECK_WHY(&r, "exited with status 0");
    CHECK_LINE(&r, "slept");
}

/* Each likely way out is trapped: the call does not run, the process ends
 * and the report names the call. */
static void test_ways_out_are_trapped(void)
{
    static const struct {
        const char *mode, *call;
    } cases[] = {
        {"open", "open"},     {"openat", "openat"}, {"socket", "socket"},
        {"execve", "execve"}, {"fork", "clone"},    {"connect", "connect"},
        {"ptrace", "ptrace"}, {"kill", "kill"},     {"early_thread", "openat"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run r;
        run_probe(cases[i].mode, 0, 0, &r);
        char want[128], said[128];
        snprintf(want, sizeof want, "killed by SIGSYS: a forbidden system call (%s)",
                 cases[i].call);
        CHECK_WHY(&r, want);
        CHECK_LINE(&r, "confined");
        CHECK(strstr(r.out, "survived") == NULL && strstr(r.out, "opened") == NULL,
              "%s: the call ran:\n%s", cases[i].mode, r.out);
        snprintf(said, sizeof said, "aloft worker: forbidden system call %s\n", cases[i].call);
        CHECK(strstr(r.err, said) != NULL, "%s: stderr '%s', want '%s'", cases[i].mode, r.err,
              said);
    }
}

/* Whatever the filter does not name kills the process at once. */
static void test_everything_else_kills(void)
{
    static const char *const modes[] = {"mmap_exec",  "mprotect_exec", "mmap_fd", "write_other",
                                        "read_stdin", "sigaction",     "setuid",  "tgkill_other",
                                        "int80",      "thread_setuid"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        run r;
        run_probe(modes[i], 0, 0, &r);
        CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGSYS, "%s: status 0x%x", modes[i],
              (unsigned)r.status);
        CHECK_WHY(&r, "killed by SIGSYS: a forbidden system call");
        CHECK_LINE(&r, "confined");
        CHECK(strstr(r.out, "survived") == NULL, "%s: the call ran:\n%s", modes[i], r.out);
    }
}

/* abort() still reports as SIGABRT: a process may signal itself. */
static void test_abort_reports_sigabrt(void)
{
    run r;
    run_probe("abort", 0, 0, &r);
    CHECK_WHY(&r, "killed by signal 6 (SIGABRT)");
}

/* At the address-space cap: just inside maps, just outside is refused, a
 * malloc past it returns NULL and the process goes on. */
static void test_address_space_cap(void)
{
    if (UNDER_ASAN) {
        fprintf(stderr, "test_address_space_cap: skipped under ASan (its shadow memory is "
                        "terabytes of address space)\n");
        return;
    }
    run r;
    run_probe("as", 512ull << 20, 0, &r);
    CHECK_WHY(&r, "exited with status 0");
    CHECK_LINE(&r, "inside mapped");
    CHECK_LINE(&r, "outside ENOMEM");
    CHECK_LINE(&r, "malloc NULL");
}

/* A busy loop dies of SIGXCPU at its CPU limit (1 s) and one that ignores
 * SIGXCPU of SIGKILL at the hard limit (2 s), judged by the CPU time they
 * used, not the wall clock. The kernel checks the limit on its tick and
 * wait4's figure is sampled (0.85 s and 1.85 s were seen), so the bounds
 * are wide: enough to tell the soft limit from the hard one, and both from
 * an end before any work. */
static void test_cpu_cap(void)
{
    run r;
    run_probe("cpu", 0, 1, &r);
    CHECK_WHY(&r, "out of CPU time (SIGXCPU)");
    CHECK_LINE(&r, "burning");
    CHECK(r.cpu_s >= 0.5 && r.cpu_s < 2.0, "used %.2f s of CPU, limit 1 s", r.cpu_s);

    run_probe("cpu_ignored", 0, 1, &r);
    CHECK_WHY(&r, "killed by signal 9 (SIGKILL)");
    CHECK(r.cpu_s >= 1.2 && r.cpu_s < 3.0, "ignoring SIGXCPU, used %.2f s of CPU, hard limit 2 s",
          r.cpu_s);
}

/* The report of each kind of end, from wait statuses made by hand. */
static void test_describe_exit(void)
{
    char buf[160];
    CHECK(!strcmp(confine_describe_exit(0, buf, sizeof buf), "exited with status 0"));
    CHECK(!strcmp(confine_describe_exit(3 << 8, buf, sizeof buf), "exited with status 3"));
    CHECK(!strcmp(confine_describe_exit(CONFINE_EXIT_TRAPPED << 8, buf, sizeof buf),
                  "killed by SIGSYS: a forbidden system call (open)"),
          "%s", buf);
    /* The last trapped call (the table is append-only), and past it a
     * reserved status no call uses yet: an ordinary exit. */
    CHECK(!strcmp(confine_describe_exit((CONFINE_EXIT_TRAPPED + 13) << 8, buf, sizeof buf),
                  "killed by SIGSYS: a forbidden system call (kill)"),
          "%s", buf);
    CHECK(!strcmp(confine_describe_exit((CONFINE_EXIT_TRAPPED + 14) << 8, buf, sizeof buf),
                  "exited with status 238"),
          "%s", buf);
    CHECK(!strcmp(confine_describe_exit(SIGSEGV, buf, sizeof buf), "killed by signal 11 (SIGSEGV)"),
          "%s", buf);
    CHECK(!strcmp(confine_describe_exit(SIGXCPU, buf, sizeof buf), "out of CPU time (SIGXCPU)"));
    CHECK(!strcmp(confine_describe_exit(SIGSYS, buf, sizeof buf),
                  "killed by SIGSYS: a forbidden system call"));
    /* A short buffer is cut, never overrun. */
    char small[9];
    memset(small, 'x', sizeof small);
    confine_describe_exit(SIGSEGV, small, 8);
    CHECK(!strcmp(small, "killed ") && small[8] == 'x', "'%.8s'", small);
}

/* A descriptor that is not open is refused before anything changes. */
static void test_bad_descriptor_refused(void)
{
    char err[128] = "";
    CHECK(confine_enter(NULL, 1000, err, sizeof err) == -1);
    CHECK(strstr(err, "descriptor 1000 to keep is not open") != NULL, "'%s'", err);
    CHECK(confine_enter(NULL, -1, err, sizeof err) == -1);
    /* Still unconfined: this process can open files. */
    int fd = open("/dev/null", O_RDONLY);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
}

int main(void)
{
    const char *build = getenv("BUILD");
    snprintf(probe, sizeof probe, "%s/confined_probe", build ? build : ".");
    if (access(probe, X_OK) != 0) {
        fprintf(stderr, "%s not found (set BUILD to the build directory)\n", probe);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    test_describe_exit();
    test_bad_descriptor_refused();
    test_allowed_path_works();
    test_closing_without_close_range();
    test_no_descriptor_received();
    test_stopped_and_continued();
    test_ways_out_are_trapped();
    test_everything_else_kills();
    test_abort_reports_sigabrt();
    test_address_space_cap();
    test_cpu_cap();
    if (failures) fprintf(stderr, "test_confine: %d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
