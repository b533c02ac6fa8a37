/*
 * The host's side of reading a skill file in a worker (skill_meta.h): the
 * read takes a place in the pool like a mission (vm_pool.c), sends the
 * file's text, and waits for the one answer it is owed. The worker is
 * untrusted: it may die (a bug of Lua 5.4.4 in the chunk), be killed by
 * its filter (SIGSYS), never answer, or answer with anything at all. Each
 * ends as an error for this file, and the host goes on; a worker that
 * stalls or answers out of turn is killed.
 */
#include "worker/skill_read.h"
#include "worker/vm_internal.h"

#include "clock.h"
#include "errmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A read that has not answered this long after its own time limit is
 * killed (the watchdog's grace, SPEC §6): the sandbox's clock ends any
 * chunk the hook can stop well before. */
#define SKILL_READ_GRACE_MS 2000.0
/* The chunk name the loader has always used: "@" and the path, cut to fit. */
#define SKILL_READ_PATH_MAX 298

/* Says what happened to the worker, for this file. */
static int lost(vm *v, char *err, size_t errlen)
{
    static const char vm_words[] = "the worker process running the VM ";
    const char *why = v->gone_why;
    if (strncmp(why, vm_words, sizeof vm_words - 1) == 0)
        return errmsg_set(err, errlen, "the worker process reading it %s",
                          why + sizeof vm_words - 1);
    return errmsg_set(err, errlen, "reading it in a worker process failed: %s", why);
}

/* Waits for the answer into V->in. 0, or -1 once the worker is gone. */
static int await_answer(vm *v, double deadline)
{
    for (;;) {
        int rc = vm_pool_next(v, 50);
        if (rc < 0) return -1;
        if (rc == 1) {
            if (v->in.h.mission == v->id && v->in.h.type == FRAME_SKILL_META) return 0;
            vm_pool_cut(v, SANDBOX_CRASHED, "sent a frame out of turn: cut off");
            return -1;
        }
        if (clock_now_ms() > deadline) {
            vm_pool_cut(v, SANDBOX_HUNG, "did not answer in time: killed");
            return -1;
        }
    }
}

/* The answer: a status, a message, the fields when OK. */
static int read_answer(vm *v, skill_meta *m, char *err, size_t errlen)
{
    frame *f = &v->in;
    uint8_t st = frame_get_u8(f);
    size_t len;
    const char *msg = frame_get_str(f, &len);
    bool ok = !f->bad && st <= SANDBOX_CANCELLED;
    if (ok && st != SANDBOX_OK) {
        ok = frame_done(f);
        if (ok) return errmsg_set(err, errlen, "%.*s", (int)len, msg);
    } else if (ok) {
        ok = len == 0 && skill_meta_get(f, m);
    }
    if (ok) return 0;
    skill_meta_free(m);
    vm_pool_cut(v, SANDBOX_CRASHED, "sent a malformed answer: cut off");
    return lost(v, err, errlen);
}

struct skill_reader {
    vm *v; /* joined to the pool, or NULL */
};

skill_reader *skill_reader_new(void)
{
    return calloc(1, sizeof(skill_reader));
}

static void leave(skill_reader *r)
{
    if (!r->v) return;
    vm_pool_leave(r->v);
    frame_free(&r->v->in);
    frame_free(&r->v->out);
    frame_free(&r->v->rx);
    free(r->v);
    r->v = NULL;
}

void skill_reader_free(skill_reader *r)
{
    if (!r) return;
    leave(r);
    free(r);
}

/* R's place in a live worker: the one it has, or a new one. */
static vm *place(skill_reader *r, char *err, size_t errlen)
{
    static atomic_uint next_id = 1;
    if (r->v && atomic_load(&r->v->gone)) leave(r);
    if (r->v) return r->v;
    vm *v = calloc(1, sizeof *v);
    if (!v) return errmsg_set(err, errlen, "out of memory"), NULL;
    v->id = SKILL_READ_ID_BIT | (atomic_fetch_add(&next_id, 1) & ~SKILL_READ_ID_BIT);
    if (vm_pool_join(v, err, errlen)) {
        vm_pool_leave(v);
        free(v);
        return NULL;
    }
    return r->v = v;
}

static int read_in(vm *v, const char *path, const char *src, size_t len, const sandbox_limits *lim,
                   skill_meta *m, char *err, size_t errlen)
{
    size_t plen = strlen(path);
    frame *f = &v->out;
    frame_start(f, FRAME_SKILL_READ, v->id);
    frame_put_u64(f, lim->max_instructions);
    frame_put_u64(f, lim->max_memory);
    frame_put_u64(f, lim->timeout_ms);
    frame_put_str(f, path, plen > SKILL_READ_PATH_MAX ? SKILL_READ_PATH_MAX : plen);
    frame_put_text(f, src, len);
    double deadline = clock_now_ms() + (double)lim->timeout_ms + SKILL_READ_GRACE_MS;
    if (f->bad)
        return errmsg_set(err, errlen, "too large to send to a worker process (over %u bytes)",
                          FRAME_MAX);
    if (vm_pool_send(v) != 0) {
        vm_pool_cut(v, SANDBOX_CRASHED, "stopped reading its socket: cut off");
        return lost(v, err, errlen);
    }
    if (await_answer(v, deadline) != 0) return lost(v, err, errlen);
    return read_answer(v, m, err, errlen);
}

int skill_meta_read_in_worker(skill_reader *r, const char *path, const char *src, size_t len,
                              const sandbox_limits *lim, skill_meta *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    skill_reader once = {0};
    skill_reader *use = r ? r : &once;
    vm *v = place(use, err, errlen);
    int rc = v ? read_in(v, path, src, len, lim, m, err, errlen) : -1;
    if (!r) leave(&once);
    return rc;
}
