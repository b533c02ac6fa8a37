/*
 * What vm.c (the interface, the in-process VM) and vm_worker.c (the host's
 * side of a worker process) share. Private to host/worker/.
 */
#ifndef ALOFT_WORKER_VM_INTERNAL_H
#define ALOFT_WORKER_VM_INTERNAL_H

#include "minispec/stream_exec.h"
#include "worker/frame.h"
#include "worker/vm.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

/* A worker process of the pool (vm_pool.c). */
typedef struct vm_wproc vm_wproc;

/* Frames a mission's mailbox holds before the reader waits for room. */
#define VM_MAILBOX 64

struct vm {
    skill_ctx *ctx;
    sandbox *sb; /* in process: the VM; worker: the host side */
    bool worker;
    /* in process */
    ms_exec *x;
    /* worker */
    vm_wproc *w;
    vm *next; /* in the worker's list */
    pthread_cond_t cv;
    bool cv_ready;
    frame *box[VM_MAILBOX]; /* frames the reader put here, oldest first */
    int head, n;
    uint32_t id;
    frame in, out;
    frame rx;     /* what V's thread reads from the socket itself */
    bool waiting; /* V's thread waits for a frame while another reads */
    bool finished;
    atomic_bool gone;
    sandbox_status gone_status; /* CRASHED or HUNG once gone */
    char gone_why[512];
    sandbox_usage use;
    double deadline_ms, cancel_ms; /* clock_now_ms: the VM's deadline, when CANCEL went */
    int nesting;                   /* high-level skills the host waits on */
    char passed_on[1024];          /* the last error of a high-level skill's Lua */
    int owed;                      /* answers the worker owes (frames we sent) */
    size_t output, max_output;     /* print's text received, and its budget */
    double window_ms;              /* flood: the current window's start */
    unsigned window_frames;
    size_t window_bytes;
};

/* The pool's side (vm_pool.c), all for V's thread: places V in a worker
 * (0, or -1 with a message); takes it out (telling the worker when it
 * lives); sends V->out (-1: not taken); the next frame for V into V->in
 * (1, 0 after TIMEOUT_MS, -1 once V's worker is gone: V->gone_why says
 * why); kills V's worker for WHY (what it did), which ends all its
 * missions. */
int vm_pool_join(vm *v, char *err, size_t errlen);
void vm_pool_leave(vm *v);
int vm_pool_send(vm *v);
int vm_pool_next(vm *v, int timeout_ms);
void vm_pool_cut(vm *v, sandbox_status st, const char *why);

/* The worker's part of vm.h's calls. */
int vm_worker_open(vm *v, const sandbox_limits *lim, char *err, size_t errlen);
int vm_worker_begin(vm *v, char *err, size_t errlen);
sandbox_status vm_worker_event(vm *v, const ms_event *ev, bool *ran, char *err, size_t errlen);
int vm_worker_result(vm *v, skill_value *out);
sandbox_status vm_worker_script(vm *v, const char *code, size_t len, const char *chunkname,
                                char *err, size_t errlen);
/* Runs a high-level skill's Lua in the worker (skill_ctx's run_high). */
int vm_worker_run_high(void *ud, lua_State *L, const skill *s, int nargs, char *err, size_t errlen);
/* Cuts the worker off: kills it, reaps it, V's calls fail from now on. */
void vm_worker_cut(vm *v, sandbox_status st, const char *why);

/* Values between Lua and frames. */
void vm_push_value(lua_State *L, const frame_value *fv);
void vm_value_at(lua_State *L, int idx, frame_value *fv);
/* FV as a skill value (skills/skill_journal.h): 0, or -1 when out of memory. */
int vm_value_typed(const frame_value *fv, skill_value *out);

#endif
