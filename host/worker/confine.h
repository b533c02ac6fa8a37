/*
 * Confinement of a worker process (SPEC §6, process boundary): after its
 * start-up a worker that runs untrusted Lua has no way out but its socket.
 *
 * confine_enter, in this order: closes every descriptor but 0, 1, 2 and the
 * kept one; settles what libc would otherwise read from files later (the
 * time zone, malloc's arena limit); sets the resource limits (address
 * space, CPU time, descriptors, no core files); sets no_new_privs and makes
 * the process undumpable; then loads a seccomp filter that allows only what
 * a running Lua VM with a few threads needs (confine.c lists each call and
 * why). Any other system call kills the process with SIGSYS; a few likely
 * ones (open, socket, connect, execve, a new process, ptrace) are trapped
 * first so that the worker ends with an exit status naming the call
 * (CONFINE_EXIT_TRAPPED): the call itself never runs either way.
 *
 * Before the call a worker does whatever opens files (loading Lua code and
 * skills) and moves its socket to descriptor 3, so that no descriptor sent
 * over it can arrive. After it, no stdio output on stdout: its first use
 * stats fd 1, a forbidden call.
 *
 * What the host records comes from confine_describe_exit on the worker's
 * wait status.
 */
#ifndef ALOFT_WORKER_CONFINE_H
#define ALOFT_WORKER_CONFINE_H

#include <stddef.h>

struct confine_limits {
    /* RLIMIT_AS, soft and hard. It counts reservations, not use: each thread
     * costs its stack (8 MiB by default) and each malloc arena of a new
     * thread reserves 64 MiB. 0 = leave the limit alone. */
    unsigned long long address_space_bytes;
    /* RLIMIT_CPU: the process's CPU time in all its threads, counted since it
     * started (not since confine_enter). At the limit the kernel sends
     * SIGXCPU, one second later SIGKILL. 0 = leave the limit alone. */
    unsigned cpu_seconds;
};

/* A worker that dies in the SIGSYS handler of a trapped call exits with
 * CONFINE_EXIT_TRAPPED + the call's index (below CONFINE_EXIT_TRAPPED_END);
 * these statuses are reserved for it. Above 128 + every signal number, so
 * that no shell's "killed by signal" status is mistaken for one. */
#define CONFINE_EXIT_TRAPPED 224
#define CONFINE_EXIT_TRAPPED_END 240

/* Confines the calling process for the rest of its life; KEEP_FD (>= 0, open)
 * is the only descriptor besides 0, 1 and 2 it keeps, and the only one it can
 * read from (writes also go to 1 and 2). Threads started before the call are
 * confined too. Returns 0, or -1 with a message in ERR (ERRLEN bytes) when a
 * step fails; the process may then be partly confined and should exit. Call
 * it once: a second call is itself a forbidden system call. */
int confine_enter(const struct confine_limits *lim, int keep_fd, char *err, size_t errlen);

/* A one-line reason for a worker's end, from its wait status (waitpid):
 * "killed by SIGSYS: a forbidden system call (openat)", "out of CPU time
 * (SIGXCPU)", "killed by signal 11 (SIGSEGV)", "exited with status 3".
 * Writes it into BUF (N bytes) and returns BUF. */
const char *confine_describe_exit(int wstatus, char *buf, size_t n);

#endif
