/*
 * The VM of one mission, behind one interface (SPEC §6, process boundary):
 *
 *  - in a worker process (the default of the aloft program): the Lua state
 *    lives in another process, this same binary re-executed as
 *    `aloft __worker FD` (worker.h); every skill there is a stub that sends
 *    a call frame (frame.h) and waits for the answer, which the host makes
 *    by running the call through the one dispatch path of skills.c on the
 *    mission's host-side sandbox (argument checks, recording, the
 *    constraint check, the driver). A worker that dies, stalls past its
 *    deadline or sends what it should not ends the mission's VM as
 *    SANDBOX_CRASHED or SANDBOX_HUNG; the host goes on.
 *  - in this process (`--in-process`, for debugging; the library's default
 *    when no worker program was set): the state is CTX's own sandbox.
 *
 * A vm belongs to the thread of its mission; vm_cancel may be called from
 * any thread.
 */
#ifndef ALOFT_WORKER_VM_H
#define ALOFT_WORKER_VM_H

#include "minispec/stream.h"
#include "sandbox/sandbox.h"
#include "skills/skills.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The program a worker is (the aloft binary: "/proc/self/exe"); NULL (the
 * default) runs every VM in this process. Call before any vm_open. */
void vm_set_worker_program(const char *path);

/* `--in-process`: every VM of this process runs in it from now on. */
void vm_use_in_process(void);

/* The pool's size: up to N workers (default one per core, or the
 * environment's ALOFT_WORKERS) before new missions share them. */
void vm_set_pool_size(int n);

/* How many workers to keep, at most MAX: one per core, or the
 * environment's ALOFT_WORKERS. */
int vm_default_workers(int max);

/* Starts a worker process (`aloft __worker 3`) on one end of a new
 * socketpair: its pid in *PID, the host's end (close-on-exec, non-blocking)
 * in *FD. 0, or -1 with a message. */
int vm_spawn_worker(pid_t *pid, int *fd, char *err, size_t errlen);

/* True when vm_open without IN_PROCESS would start a worker. */
bool vm_workers_enabled(void);

/* Starts the pool's workers now (as many as it keeps), so that the first
 * missions find them running instead of each paying a process start while
 * others start too (a server, before it takes missions). Nothing in
 * process mode. 0, or -1 with a message (the pool then starts them as
 * missions come, as without this call). */
int vm_pool_prestart(char *err, size_t errlen);

typedef struct vm vm;

/* Opens the VM of a mission whose skills are bound in CTX (skills_bind on
 * CTX->sb, which in worker mode becomes the host-side sandbox: its cancel
 * flag and deadline rule the skills the host runs). LIM are the VM's
 * budgets. IN_PROCESS forces this process (verification). NULL with a
 * message. */
vm *vm_open(skill_ctx *ctx, const sandbox_limits *lim, bool in_process, char *err, size_t errlen);

/* Frees the VM (and ends its worker's part). */
void vm_close(vm *v);

/* A new plan: a fresh variable table. 0, or -1 with a message. */
int vm_begin(vm *v, char *err, size_t errlen);

/* Runs one stream event (as ms_exec_event); *RAN tells whether it ran a
 * statement or condition. */
sandbox_status vm_event(vm *v, const ms_event *ev, bool *ran, char *err, size_t errlen);

/* True once the current plan ended (`->`, rp or a failure). */
bool vm_finished(const vm *v);

/* The current plan's result into OUT (NIL when none). 0, or -1 when out of
 * memory (OUT is then NIL). */
int vm_result(vm *v, skill_value *out);

/* Runs a whole script (aloft lua) under CHUNKNAME. */
sandbox_status vm_run_script(vm *v, const char *code, size_t len, const char *chunkname, char *err,
                             size_t errlen);

/* The VM's instructions and memory so far. */
sandbox_usage vm_usage(vm *v);

/* SANDBOX_CRASHED or SANDBOX_HUNG once the VM's worker is gone (dead, cut
 * off or killed); SANDBOX_OK while it works, and always in process. */
sandbox_status vm_lost(const vm *v);

/* True when the VM runs in a worker process. */
bool vm_is_worker(const vm *v);

/* Kills the worker process running the VM whose host-side sandbox is SB
 * (the watchdog: a VM that did not end), which ends it as SANDBOX_HUNG
 * with WHY; nothing for a VM in process. Any thread. */
void vm_kill_sandbox(sandbox *sb, const char *why);

#endif
