/*
 * Confinement of a worker process: descriptors, resource limits, privileges
 * and the seccomp filter (confine.h states the contract).
 *
 * The policy, in one place: a worker is a Lua VM (and a few threads) that
 * talks to the host over one socket. It may read and write that socket (and
 * write 1 and 2), wait on it, map anonymous memory that is never executable,
 * read clocks and sleep, start and join threads, and end. It may not open,
 * connect, execute, start a process, trace, signal another process or change
 * ids: the filter's default action kills the whole process with SIGSYS.
 *
 * Every allowed call below is one that glibc 2.36 and Lua 5.4 were seen to
 * make in a running VM with threads (strace -f of tests/tools/confined_probe
 * before confinement), with the reason beside its rule.
 */
#include "worker/confine.h"

#include "errmsg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* AddressSanitizer reserves terabytes of address space for its shadow
 * memory before main: under it an address-space limit would refuse every
 * later mapping, so a sanitized build (ALOFT_SANITIZE) leaves RLIMIT_AS
 * alone and keeps only the sandbox's own memory budget. */
#if defined(__SANITIZE_ADDRESS__)
#define CONFINE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CONFINE_ASAN 1
#endif
#endif
#ifndef CONFINE_ASAN
#define CONFINE_ASAN 0
#endif
#if CONFINE_ASAN
#include <sanitizer/lsan_interface.h>
#endif

/* glibc's SIGSETXID (the kernel's real-time signal 33): the first
 * pthread_create installs its handler (nptl late_init). */
#define CONFINE_SIGSETXID 33

/* ---- trapped calls: the host learns which one ---------------------------- */

/* The likely first moves of a compromised worker. They are trapped (SIGSYS
 * to a handler) instead of killed outright only so that the exit status can
 * say which call it was; the call never runs. The index in this table is the
 * exit status's offset from CONFINE_EXIT_TRAPPED: append only. */
static const char *const trapped_names[] = {
    "open",   "openat",   "openat2", "creat", "socket", "connect", "bind",
    "execve", "execveat", "fork",    "vfork", "clone",  "ptrace",  "kill",
};
#define TRAPPED_COUNT (sizeof trapped_names / sizeof trapped_names[0])
_Static_assert(CONFINE_EXIT_TRAPPED + TRAPPED_COUNT <= CONFINE_EXIT_TRAPPED_END,
               "the trapped calls need more reserved exit statuses");

/* Their numbers on this machine (-1: the call does not exist here, e.g. open
 * on arm64), resolved before the filter so that the handler only compares. */
static int trapped_nr[TRAPPED_COUNT];

/* Runs on the SIGSYS of a trapped call: says which on fd 2, then ends the
 * process with the call's status. write and _exit (exit_group) only, both
 * allowed by the filter and async-signal-safe. */
static void on_sigsys(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)uc;
    size_t i = 0;
    while (i < TRAPPED_COUNT && trapped_nr[i] != info->si_syscall)
        i++;
    char msg[96] = "aloft worker: forbidden system call ";
    size_t len = strlen(msg);
    const char *name = i < TRAPPED_COUNT ? trapped_names[i] : "(unknown)";
    size_t nlen = strlen(name);
    memcpy(msg + len, name, nlen);
    msg[len + nlen] = '\n';
    ssize_t w = write(2, msg, len + nlen + 1);
    (void)w;
    _exit(i < TRAPPED_COUNT ? CONFINE_EXIT_TRAPPED + (int)i : 128 + SIGSYS);
}

/* ---- descriptors -------------------------------------------------------- */

/* The fallback when close_range is missing (kernels before 5.9): the list of
 * open descriptors is read from /proc, which only works before the filter. */
static int close_listed(int keep_fd, char *err, size_t errlen)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return errmsg_set(err, errlen, "cannot list /proc/self/fd: %s", strerror(errno));
    int fds[1024], n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < (int)(sizeof fds / sizeof fds[0])) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name || fd == dirfd(d)) continue;
        fds[n++] = (int)fd;
    }
    bool more = e != NULL;
    closedir(d);
    if (more) return errmsg_set(err, errlen, "more open descriptors than can be listed");
    for (int i = 0; i < n; i++)
        if (fds[i] > 2 && fds[i] != keep_fd) close(fds[i]);
    return 0;
}

/* Closes every descriptor but 0, 1, 2 and KEEP_FD. */
static int close_others(int keep_fd, char *err, size_t errlen)
{
    int rc = 0;
    if (keep_fd > 3) rc = close_range(3, (unsigned)keep_fd - 1, 0);
    if (rc == 0) rc = close_range(keep_fd < 3 ? 3 : (unsigned)keep_fd + 1, ~0u, 0);
    if (rc == 0) return 0;
    if (errno != ENOSYS)
        return errmsg_set(err, errlen, "cannot close descriptors: %s", strerror(errno));
    return close_listed(keep_fd, err, errlen);
}

/* ---- resource limits ---------------------------------------------------- */

static int set_limit(int resource, const char *name, rlim_t soft, rlim_t hard, char *err,
                     size_t errlen)
{
    struct rlimit r = {.rlim_cur = soft, .rlim_max = hard};
    if (setrlimit(resource, &r) == 0) return 0;
    return errmsg_set(err, errlen, "cannot set %s to %llu: %s", name, (unsigned long long)soft,
                      strerror(errno));
}

/* RLIMIT_NPROC stays: it counts the threads of every process of the user, so
 * 0 would stop the VM's own threads, and the filter already forbids a new
 * process. RLIMIT_FSIZE stays: the only files a worker can write are 1 and 2
 * when the host's output goes to a file, whose size is already past any
 * limit small enough to matter. */
static int set_limits(const struct confine_limits *lim, int keep_fd, char *err, size_t errlen)
{
    /* Descriptors: none above the kept one, so that one sent over the
     * socket (SCM_RIGHTS) finds no number when the socket is 3, as a
     * worker's should be. (Any it did get could only be closed: reads and
     * writes name their descriptors in the filter.) */
    rlim_t nofile = keep_fd > 2 ? (rlim_t)keep_fd + 1 : 3;
    if (set_limit(RLIMIT_NOFILE, "RLIMIT_NOFILE", nofile, nofile, err, errlen)) return -1;
    /* A crashed worker leaves no core file with the mission's memory in it. */
    if (set_limit(RLIMIT_CORE, "RLIMIT_CORE", 0, 0, err, errlen)) return -1;
    /* The hard limit one second past the soft one: at the soft limit the
     * kernel sends SIGXCPU (the host reports "out of CPU time"); were they
     * equal it would send SIGKILL at once and the report would be lost. A
     * worker that ignores SIGXCPU gets SIGKILL a second later. */
    if (lim && lim->cpu_seconds &&
        set_limit(RLIMIT_CPU, "RLIMIT_CPU", lim->cpu_seconds, (rlim_t)lim->cpu_seconds + 1, err,
                  errlen))
        return -1;
    if (lim && lim->address_space_bytes && !CONFINE_ASAN &&
        set_limit(RLIMIT_AS, "RLIMIT_AS", lim->address_space_bytes, lim->address_space_bytes, err,
                  errlen))
        return -1;
    return 0;
}

/* ---- the filter --------------------------------------------------------- */

#define ALLOW SCMP_ACT_ALLOW

static int rule(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n,
                const struct scmp_arg_cmp *cmp, char *err, size_t errlen)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return errmsg_set(err, errlen, "unknown system call %s", name);
    int rc = seccomp_rule_add_array(ctx, action, nr, n, cmp);
    if (rc == 0) return 0;
    return errmsg_set(err, errlen, "cannot add the seccomp rule for %s: %s", name, strerror(-rc));
}

/* NAME allowed with no condition. */
static int allow(scmp_filter_ctx ctx, const char *name, char *err, size_t errlen)
{
    return rule(ctx, ALLOW, name, 0, NULL, err, errlen);
}

/* NAME allowed when its first argument (the descriptor) is FD. */
static int allow_fd(scmp_filter_ctx ctx, const char *name, int fd, char *err, size_t errlen)
{
    /* The unused second datum is spelled out: clang warns of it missing. */
    struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fd, 0);
    return rule(ctx, ALLOW, name, 1, &c, err, errlen);
}

/* The socket to the host, and 1 and 2 for writing (diagnostics, and the
 * SIGSYS handler's line). Reads come from the socket only. */
static int allow_io(scmp_filter_ctx ctx, int keep_fd, char *err, size_t errlen)
{
    static const char *const from_host[] = {"read", "readv", "recvmsg", "recvfrom"};
    static const char *const to_host[] = {"write", "writev", "sendmsg", "sendto"};
    for (size_t i = 0; i < 4; i++)
        if (allow_fd(ctx, from_host[i], keep_fd, err, errlen)) return -1;
    for (size_t i = 0; i < 4; i++)
        if (allow_fd(ctx, to_host[i], keep_fd, err, errlen)) return -1;
    for (int fd = 1; fd <= 2; fd++)
        if (fd != keep_fd &&
            (allow_fd(ctx, "write", fd, err, errlen) || allow_fd(ctx, "writev", fd, err, errlen)))
            return -1;
    /* Waiting for the host's next frame. poll's descriptors sit in memory,
     * out of the filter's reach: waiting on a descriptor grants nothing. */
    if (allow(ctx, "poll", err, errlen) || allow(ctx, "ppoll", err, errlen)) return -1;
    /* Closing what it has (its socket at the end) takes nothing new. */
    return allow(ctx, "close", err, errlen);
}

/* The allocator (malloc's brk heap, mmap for big blocks and thread arenas,
 * mremap for Lua's growing tables, madvise when a thread ends), and thread
 * stacks with their guard pages (mmap PROT_NONE then mprotect). No memory is
 * ever executable: a VM bug cannot turn written bytes into code. */
static int allow_memory(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    struct scmp_arg_cmp mmap_ok[2] = {
        SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0),
        /* Anonymous only: a descriptor's file is not mapped. */
        SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, MAP_ANONYMOUS),
    };
    struct scmp_arg_cmp mprotect_ok = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
    if (rule(ctx, ALLOW, "mmap", 2, mmap_ok, err, errlen)) return -1;
    if (rule(ctx, ALLOW, "mprotect", 1, &mprotect_ok, err, errlen)) return -1;
    static const char *const plain[] = {"munmap", "mremap", "brk", "madvise"};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (allow(ctx, plain[i], err, errlen)) return -1;
    return 0;
}

/* Threads: glibc's pthread_create tries clone3 first, then clone. clone3's
 * flags sit in memory the filter cannot read, so it fails with ENOSYS (glibc
 * then uses clone); clone is allowed only with CLONE_THREAD, which makes a
 * thread of this process, never a new process (that one is trapped). */
static int allow_threads(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    struct scmp_arg_cmp thread = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD);
    if (rule(ctx, ALLOW, "clone", 1, &thread, err, errlen)) return -1;
    if (rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, err, errlen)) return -1;
    /* A new thread registers its robust futex list and its rseq area, and
     * joins, waits and wakes through futex. */
    static const char *const plain[] = {"set_robust_list", "rseq",   "futex", "sched_yield", "exit",
                                        "exit_group",      "getpid", "gettid"};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (allow(ctx, plain[i], err, errlen)) return -1;
    return 0;
}

/* Signals within the process: pthread_create blocks and restores signals
 * around clone (rt_sigprocmask); the first one installs glibc's SIGSETXID
 * handler (rt_sigaction of that signal only: no handler for SIGSYS or
 * SIGXCPU can be installed after confinement); handlers return through
 * rt_sigreturn; abort() and raise() signal the process itself (tgkill with
 * its own pid, never another process's). A sleep or wait stopped and
 * continued (Ctrl-Z of the host's process group, SIGSTOP/SIGCONT) goes on
 * through restart_syscall, which only resumes the call that was allowed. */
static int allow_signals(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    if (allow(ctx, "restart_syscall", err, errlen)) return -1;
    struct scmp_arg_cmp setxid = SCMP_A0(SCMP_CMP_EQ, CONFINE_SIGSETXID, 0);
    struct scmp_arg_cmp self = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid(), 0);
    if (rule(ctx, ALLOW, "rt_sigaction", 1, &setxid, err, errlen)) return -1;
    if (rule(ctx, ALLOW, "tgkill", 1, &self, err, errlen)) return -1;
    if (allow(ctx, "rt_sigprocmask", err, errlen)) return -1;
    return allow(ctx, "rt_sigreturn", err, errlen);
}

/* Clocks (the sandbox's deadline, os.clock, os.time: clock_gettime of the
 * process's CPU time is a real system call; the others, time included, are
 * vDSO calls that become system calls where the vDSO is off), sleeping,
 * getrandom (malloc's and Lua's seeds), and sysinfo (glibc's qsort asks
 * once how much memory the machine has). */
static int allow_time(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    static const char *const plain[] = {"clock_gettime", "clock_getres", "clock_nanosleep",
                                        "nanosleep",     "gettimeofday", "time",
                                        "getrandom",     "sysinfo"};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (allow(ctx, plain[i], err, errlen)) return -1;
    return 0;
}

/* A sanitized build (ALOFT_SANITIZE) only: AddressSanitizer's runtime asks
 * the kernel for the signal stack (sigaltstack) in its interceptors and
 * signal handlers, and for a new thread's stack bounds (pthread_getattr_np:
 * sched_getaffinity). Neither reaches outside the process. */
static int allow_sanitizer(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    if (!CONFINE_ASAN) return 0;
    static const char *const plain[] = {"sigaltstack", "sched_getaffinity"};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (allow(ctx, plain[i], err, errlen)) return -1;
    return 0;
}

/* The trapped calls (see trapped_names); clone only without CLONE_THREAD
 * (a new process), beside the thread rule. A call this machine does not have
 * is skipped. */
static int trap_likely(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    for (size_t i = 0; i < TRAPPED_COUNT; i++) {
        trapped_nr[i] = seccomp_syscall_resolve_name(trapped_names[i]);
        if (trapped_nr[i] < 0) {
            trapped_nr[i] = -1;
            continue;
        }
        struct scmp_arg_cmp process = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0);
        bool is_clone = strcmp(trapped_names[i], "clone") == 0;
        if (rule(ctx, SCMP_ACT_TRAP, trapped_names[i], is_clone ? 1 : 0, is_clone ? &process : NULL,
                 err, errlen))
            return -1;
    }
    struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSYS, &sa, NULL))
        return errmsg_set(err, errlen, "cannot install the SIGSYS handler: %s", strerror(errno));
    return 0;
}

/* The filter, built but not loaded. */
static scmp_filter_ctx build_filter(int keep_fd, char *err, size_t errlen)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (!ctx) {
        errmsg_set(err, errlen, "cannot start a seccomp filter");
        return NULL;
    }
    /* TSYNC: threads already running are confined as well. A call of another
     * architecture (int 0x80 on x86-64) kills too. */
    if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1) ||
        seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) ||
        allow_io(ctx, keep_fd, err, errlen) || allow_memory(ctx, err, errlen) ||
        allow_threads(ctx, err, errlen) || allow_signals(ctx, err, errlen) ||
        allow_time(ctx, err, errlen) || allow_sanitizer(ctx, err, errlen) ||
        trap_likely(ctx, err, errlen)) {
        if (err && errlen && !*err) errmsg_set(err, errlen, "cannot set the seccomp filter");
        seccomp_release(ctx);
        return NULL;
    }
    return ctx;
}

/* ---- entry --------------------------------------------------------------- */

/* glibc reads the time zone file on first use and, with TZ unset, stats it
 * again on every mktime (os.time{...}): both would be forbidden calls. With
 * TZ naming the same file, loaded once here, later calls touch no file. */
static void load_time_zone(void)
{
    if (!getenv("TZ")) setenv("TZ", ":/etc/localtime", 0);
    tzset();
}

/* glibc's malloc gives each new thread an arena of its own up to a limit it
 * works out, the first time more than eight exist, by counting CPUs in
 * /sys: a forbidden open. The same limit (8 arenas per CPU on 64-bit, 2 on
 * 32-bit) is set here, while /sys can be read. */
static void fix_arena_limit(void)
{
    int per_cpu = sizeof(long) == 4 ? 2 : 8;
    mallopt(M_ARENA_MAX, per_cpu * get_nprocs());
}

/* When a thread's arena gives memory back, glibc's malloc first reads
 * /proc/sys/vm/overcommit_memory (once, the first time it shrinks such a
 * heap): a forbidden open in the middle of a free. A trim threshold no heap
 * reaches means no heap is shrunk, so that file is never read; the price is
 * that a worker keeps the memory its busiest moment took, which the
 * sandbox's cap per mission bounds. */
static void fix_trim(void)
{
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

/* A coverage build (make coverage) writes its gcov counts here, before the
 * limits and the filter: once confined, the process could open no file to write them at its
 * exit, and would die of SIGSYS trying (after __gcov_dump the exit writes
 * nothing). What the process runs from here on is not counted. */
#ifdef ALOFT_COVERAGE
void __gcov_dump(void);
#endif
static void write_coverage_now(void)
{
#ifdef ALOFT_COVERAGE
    __gcov_dump();
#endif
}

/* LeakSanitizer's check at exit stops the process's threads with ptrace
 * from a helper it clones: forbidden once confined. A sanitized build checks
 * for leaks here instead, before the filter (this also turns off the check
 * at exit); leaks of the confined part of a worker's life go unreported. */
static void check_leaks_now(void)
{
#if CONFINE_ASAN
    __lsan_do_leak_check();
#endif
}

int confine_enter(const struct confine_limits *lim, int keep_fd, char *err, size_t errlen)
{
    if (err && errlen) *err = '\0';
    if (keep_fd < 0 || fcntl(keep_fd, F_GETFD) < 0)
        return errmsg_set(err, errlen, "descriptor %d to keep is not open", keep_fd);
    if (close_others(keep_fd, err, errlen)) return -1;
    load_time_zone();
    fix_arena_limit();
    fix_trim();
    check_leaks_now();
    scmp_filter_ctx ctx = build_filter(keep_fd, err, errlen);
    if (!ctx) return -1;
    write_coverage_now(); /* before the limits on descriptors and the filter */
    int rc = -1;
    if (set_limits(lim, keep_fd, err, errlen)) goto out;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
        errmsg_set(err, errlen, "cannot drop privileges: %s", strerror(errno));
        goto out;
    }
    int lrc = seccomp_load(ctx);
    if (lrc) {
        errmsg_set(err, errlen, "cannot load the seccomp filter: %s", strerror(-lrc));
        goto out;
    }
    rc = 0;
out:
    seccomp_release(ctx);
    return rc;
}

/* ---- the report ---------------------------------------------------------- */

const char *confine_describe_exit(int wstatus, char *buf, size_t n)
{
    if (!buf || !n) return buf;
    if (WIFEXITED(wstatus)) {
        int code = WEXITSTATUS(wstatus);
        if (code >= CONFINE_EXIT_TRAPPED && code < CONFINE_EXIT_TRAPPED + (int)TRAPPED_COUNT)
            snprintf(buf, n, "killed by SIGSYS: a forbidden system call (%s)",
                     trapped_names[code - CONFINE_EXIT_TRAPPED]);
        else
            snprintf(buf, n, "exited with status %d", code);
    } else if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        const char *abbrev = sigabbrev_np(sig);
        if (sig == SIGSYS)
            snprintf(buf, n, "killed by SIGSYS: a forbidden system call");
        else if (sig == SIGXCPU)
            snprintf(buf, n, "out of CPU time (SIGXCPU)");
        else if (abbrev)
            snprintf(buf, n, "killed by signal %d (SIG%s)", sig, abbrev);
        else
            snprintf(buf, n, "killed by signal %d", sig);
    } else {
        snprintf(buf, n, "unknown wait status 0x%x", (unsigned)wstatus);
    }
    return buf;
}
