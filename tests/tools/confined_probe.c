/*
 * A test-only worker for tests/test_confine.c: confines itself with
 * confine_enter, keeping the socketpair end FD it was given, then does one
 * thing chosen by MODE, allowed or forbidden:
 *
 *     confined_probe FD MODE [AS_BYTES [CPU_SECONDS]]
 *
 * It reports on its socket in lines ("confined", then what each step saw);
 * the test judges those lines and the wait status. A forbidden step should
 * never report: the process dies first. Before confining it opens a file and
 * a pipe, so that the test can see confine_enter close them.
 */
#include "sandbox/sandbox.h"
#include "worker/confine.h"

#include <errno.h>
#include <fcntl.h>
#include <lua.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static int sock = -1;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n > sizeof line - 2) n = sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(sock, line, (size_t)n);
    (void)w;
}

/* ---- the allowed path ---------------------------------------------------- */

/* A thread that allocates, reads the clock and sleeps, as a VM's helper
 * thread would. */
static void *busy_thread(void *arg)
{
    char *volatile p = malloc(1 << 20);
    if (p) p[0] = 1;
    free(p);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    struct timespec nap = {0, 1000000};
    nanosleep(&nap, NULL);
    *(int *)arg = 1;
    return NULL;
}

/* Twelve threads that allocate at the same time: past eight arenas glibc's
 * malloc asks how many CPUs it may use (sched_getaffinity). */
#define MANY_THREADS 12
static pthread_barrier_t all_started;

static void *arena_thread(void *arg)
{
    (void)arg;
    char *volatile p = malloc(1000);
    if (p) p[0] = 1;
    pthread_barrier_wait(&all_started);
    free(p);
    return NULL;
}

static int many_threads(void)
{
    pthread_t t[MANY_THREADS];
    int started = 0;
    pthread_barrier_init(&all_started, NULL, MANY_THREADS);
    for (int i = 0; i < MANY_THREADS; i++)
        if (pthread_create(&t[i], NULL, arena_thread, NULL) == 0) started++;
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&all_started);
    return started;
}

static int by_value(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* glibc's qsort of more than 1 KiB asks the machine's memory (sysinfo). */
static int sorts(void)
{
    static int v[5000];
    for (int i = 0; i < 5000; i++)
        v[i] = 5000 - i;
    qsort(v, 5000, sizeof v[0], by_value);
    return v[0] == 1 && v[4999] == 5000;
}

/* Lua in the sandbox: tables, strings, coroutines, os.clock and os.time
 * with a date (mktime reads the time zone). */
static const char LUA_SCRIPT[] = "local t = {} for i = 1, 20000 do t[i] = tostring(i) .. 'x' end\n"
                                 "local s = string.rep('ab', 100000)\n"
                                 "local co = coroutine.wrap(function() coroutine.yield(#s) end)\n"
                                 "local _ = os.clock()\n"
                                 "local d = os.time{year = 2020, month = 1, day = 1, hour = 12}\n"
                                 "return co() + #t + (d > 0 and 1 or 0)";

static void run_lua(void)
{
    char err[256];
    sandbox *sb = sandbox_new(NULL, err, sizeof err);
    if (!sb) {
        say("lua failed: %s", err);
        return;
    }
    if (sandbox_load(sb, LUA_SCRIPT, sizeof LUA_SCRIPT - 1, "=probe", err, sizeof err) ||
        sandbox_call(sb, 0, 1, err, sizeof err)) {
        say("lua failed: %s", err);
    } else {
        say("lua %lld", (long long)lua_tointeger(sandbox_lua(sb), -1));
    }
    sandbox_free(sb);
}

/* Which descriptors from 3 up are open: poll says POLLNVAL for a closed
 * one. One at a time: poll refuses more descriptors than RLIMIT_NOFILE. */
static void report_fds(void)
{
    char list[256] = "";
    size_t len = 0;
    for (int fd = 3; fd < 64; fd++) {
        struct pollfd p = {.fd = fd, .events = 0};
        if (poll(&p, 1, 0) >= 0 && !(p.revents & POLLNVAL))
            len += (size_t)snprintf(list + len, sizeof list - len, " %d", fd);
    }
    say("fds%s", list);
}

/* A message exchanged with sendmsg/recvmsg: the host writes "ping", the
 * probe answers "pong". */
static void exchange(void)
{
    char buf[16] = "";
    struct iovec iov = {buf, sizeof buf - 1};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    struct pollfd p = {.fd = sock, .events = POLLIN};
    if (poll(&p, 1, 10000) != 1) {
        say("no ping");
        return;
    }
    ssize_t n = recvmsg(sock, &mh, 0);
    if (n != 5 || memcmp(buf, "ping\n", 5) != 0) {
        say("bad ping");
        return;
    }
    struct iovec out = {"pong\n", 5};
    struct msghdr reply = {.msg_iov = &out, .msg_iovlen = 1};
    if (sendmsg(sock, &reply, 0) != 5) say("sendmsg failed");
}

/* The host's "ping" comes with a descriptor attached: says whether one
 * arrived and whether the kernel cut the control data. */
static int receive(void)
{
    char buf[16] = "";
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct iovec iov = {buf, sizeof buf - 1};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    struct pollfd p = {.fd = sock, .events = POLLIN};
    if (poll(&p, 1, 10000) != 1 || recvmsg(sock, &mh, 0) != 5) {
        say("no ping");
        return 1;
    }
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    int got = c && c->cmsg_type == SCM_RIGHTS;
    say("received ping, %s, control %s", got ? "a descriptor" : "no descriptor",
        mh.msg_flags & MSG_CTRUNC ? "cut" : "whole");
    return 0;
}

static int allowed_path(void)
{
    say("frame");
    char *volatile big = malloc(64u << 20);
    if (big) memset(big, 1, 64u << 20);
    say(big ? "alloc 64 MiB" : "alloc failed");
    free(big);
    int done = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, busy_thread, &done) == 0 && pthread_join(t, NULL) == 0 && done)
        say("thread joined");
    else
        say("thread failed");
    say("%d threads at once", many_threads());
    say(sorts() ? "sorted" : "not sorted");
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) == 0 && ts.tv_sec > 0) say("clock");
    run_lua();
    report_fds();
    /* clone3 answers ENOSYS (glibc falls back to clone): not a kill. */
    long r = syscall(SYS_clone3, NULL, 0);
    say("clone3 %s", r == -1 && errno == ENOSYS ? "ENOSYS" : "allowed");
    exchange();
    return 0;
}

/* ---- limits -------------------------------------------------------------- */

/* The address space in use before confinement, from /proc (read while it
 * still can be). */
static unsigned long long vm_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    unsigned long long kb = 0;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %llu kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb * 1024;
}

/* Just inside the address-space limit (what was free at start, less 4 MiB
 * for what confinement itself allocated) a mapping succeeds; one page past
 * what was free it fails; malloc of the whole limit returns NULL. */
static int as_limit(unsigned long long limit, unsigned long long used)
{
    size_t inside = (size_t)(limit - used - (4u << 20));
    void *p = mmap(NULL, inside, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    say("inside %s", p == MAP_FAILED ? "refused" : "mapped");
    if (p != MAP_FAILED) munmap(p, inside);
    size_t outside = (size_t)(limit - used + 4096);
    p = mmap(NULL, outside, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    say("outside %s", p == MAP_FAILED ? (errno == ENOMEM ? "ENOMEM" : "refused") : "mapped");
    if (p != MAP_FAILED) munmap(p, outside);
    void *m = malloc((size_t)limit);
    say("malloc %s", m ? "succeeded" : "NULL");
    free(m);
    return 0;
}

/* Sleeps a second (the test stops and continues it meanwhile), then says
 * so. */
static int sleep_once(void)
{
    say("sleeping");
    struct timespec nap = {1, 0};
    while (nanosleep(&nap, &nap) != 0 && errno == EINTR)
        ;
    say("slept");
    return 0;
}

static _Noreturn int burn_cpu(void)
{
    say("burning");
    volatile unsigned long x = 0;
    for (;;)
        x++;
}

/* ---- forbidden moves ----------------------------------------------------- */

static _Atomic int go_thread;
static void *early_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&go_thread)) {
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
    }
    int fd = openat(AT_FDCWD, "/etc/passwd", O_RDONLY);
    say("early thread opened %d", fd);
    return NULL;
}

/* A forbidden call from a thread other than the first: the whole process
 * must die, not the thread alone. */
static void *setuid_thread(void *arg)
{
    (void)arg;
    syscall(SYS_setuid, 0);
    return NULL;
}

/* open through the 32-bit entry (int 0x80, where 5 is open): a filter that
 * knew only the 64-bit numbers would let it through. */
static long open_int80(void)
{
#if defined(__x86_64__)
    static const char path[] = "/etc/passwd";
    long r;
    __asm__ volatile("int $0x80"
                     : "=a"(r)
                     : "0"(5L), "b"((long)(unsigned)(uintptr_t)path), "c"(0L)
                     : "memory");
    return r;
#else
    return syscall(SYS_setuid, 0); /* no second entry here: any forbidden call */
#endif
}

static int forbidden(const char *mode)
{
    say("trying %s", mode);
    long r = -2;
    if (!strcmp(mode, "open"))
        r = syscall(SYS_open, "/etc/passwd", O_RDONLY);
    else if (!strcmp(mode, "openat"))
        r = openat(AT_FDCWD, "/etc/passwd", O_RDONLY);
    else if (!strcmp(mode, "socket"))
        r = socket(AF_INET, SOCK_DGRAM, 0);
    else if (!strcmp(mode, "execve")) {
        char *argv[] = {"/bin/true", NULL};
        r = execve("/bin/true", argv, argv + 1);
    } else if (!strcmp(mode, "fork"))
        r = fork();
    else if (!strcmp(mode, "connect")) {
        struct sockaddr sa = {.sa_family = AF_UNIX};
        r = connect(sock, &sa, sizeof sa);
    } else if (!strcmp(mode, "ptrace"))
        r = ptrace(PTRACE_TRACEME, 0, NULL, NULL);
    else if (!strcmp(mode, "kill"))
        r = kill(1, 0);
    else if (!strcmp(mode, "mmap_exec")) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        r = p == MAP_FAILED ? -1 : 0;
    } else if (!strcmp(mode, "mprotect_exec")) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        r = p == MAP_FAILED ? -3 : mprotect(p, 4096, PROT_READ | PROT_EXEC);
    } else if (!strcmp(mode, "mmap_fd")) {
        void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, sock, 0);
        r = p == MAP_FAILED ? -1 : 0;
    } else if (!strcmp(mode, "write_other"))
        r = write(7, "x", 1);
    else if (!strcmp(mode, "read_stdin")) {
        char c;
        r = read(0, &c, 1);
    } else if (!strcmp(mode, "sigaction")) {
        struct sigaction sa = {.sa_handler = SIG_IGN};
        r = sigaction(SIGXCPU, &sa, NULL);
    } else if (!strcmp(mode, "setuid"))
        r = syscall(SYS_setuid, 0);
    else if (!strcmp(mode, "tgkill_other"))
        r = syscall(SYS_tgkill, 1, 1, 0);
    else if (!strcmp(mode, "int80"))
        r = open_int80();
    else if (!strcmp(mode, "thread_setuid")) {
        pthread_t t;
        r = pthread_create(&t, NULL, setuid_thread, NULL);
        if (r == 0) r = pthread_join(t, NULL);
    } else if (!strcmp(mode, "abort"))
        abort();
    else {
        say("unknown mode %s", mode);
        return 2;
    }
    /* Reached only when the call was let through. */
    say("survived %s: %ld", mode, r);
    return 0;
}

/* ---- main ---------------------------------------------------------------- */

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: confined_probe FD MODE [AS_BYTES [CPU_SECONDS]]\n");
        return 2;
    }
    sock = atoi(argv[1]);
    const char *mode = argv[2];
    struct confine_limits lim = {0, 0};
    if (argc > 3) lim.address_space_bytes = strtoull(argv[3], NULL, 10);
    if (argc > 4) lim.cpu_seconds = (unsigned)strtoul(argv[4], NULL, 10);

    /* Left open on purpose: confine_enter must close them. */
    int stray = open("/dev/null", O_RDONLY);
    int pipe_fds[2];
    if (stray < 0 || pipe(pipe_fds)) return 3;
    pthread_t early;
    if (!strcmp(mode, "early_thread") && pthread_create(&early, NULL, early_thread, NULL)) return 3;
    if (!strcmp(mode, "cpu_ignored")) signal(SIGXCPU, SIG_IGN);
    unsigned long long used = vm_size();

    char err[256];
    if (confine_enter(&lim, sock, err, sizeof err)) {
        say("confine failed: %s", err);
        return 4;
    }
    say("confined");
    if (!strcmp(mode, "allowed")) return allowed_path();
    if (!strcmp(mode, "receive")) return receive();
    if (!strcmp(mode, "sleep")) return sleep_once();
    if (!strcmp(mode, "as")) return as_limit(lim.address_space_bytes, used);
    if (!strcmp(mode, "cpu") || !strcmp(mode, "cpu_ignored")) return burn_cpu();
    if (!strcmp(mode, "early_thread")) {
        atomic_store(&go_thread, 1);
        pthread_join(early, NULL);
        say("early thread ended");
        return 0;
    }
    return forbidden(mode);
}
