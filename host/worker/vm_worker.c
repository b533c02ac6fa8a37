/*
 * The host's side of a worker process (vm.h): it starts the worker, sends
 * it the mission's work and serves its skill calls, and reads every frame it
 * sends as untrusted input. Whatever goes wrong with the worker (it dies,
 * stalls past its deadline, floods, sends a frame it may not) ends in
 * vm_worker_cut: the worker is killed and the mission's VM is gone, with
 * the reason; the host's own state is never touched by a frame's content
 * beyond the checked values of a skill call.
 */
#include "worker/vm_internal.h"

#include "clock.h"
#include "errmsg.h"

#include <lauxlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* A frame flood: more than this many frames, or bytes, within one window
 * of FLOOD_WINDOW_MS. A skill call costs a round trip, so a VM that calls
 * skills as fast as it can stays far below; print is capped by the
 * output budget. */
#define FLOOD_WINDOW_MS 100.0
#define FLOOD_MAX_FRAMES 20000u
#define FLOOD_MAX_BYTES (32u * 1024u * 1024u)
/* Arguments a call frame may carry (skills take at most SKILL_MAX_ARGS:
 * more get the dispatch's own "takes N arguments" error). */
#define VM_MAX_CALL_ARGS 64
/* High-level skills calling high-level skills, each a frame the host waits on. */
#define VM_MAX_NESTING 32
/* A VM that does not end is the watchdog's (mission/watchdog.h: 2 s past
 * the deadline, 1 s after a cancel), which lands the drone, records the
 * mission as hung and kills the worker. Without a watchdog (a library
 * user), the host kills it itself, later. */
#define VM_KILL_AFTER_DEADLINE_MS 5000
#define VM_KILL_AFTER_CANCEL_MS 5000

static void send_frame(vm *v)
{
    /* Every frame but CANCEL and CLOSE is owed one answer: a worker that
     * sends more than it owes floods (see await). */
    frame_type t = (frame_type)v->out.h.type;
    if (t != FRAME_CANCEL && t != FRAME_CLOSE) v->owed++;
    /* A worker that died is noticed by the next read; one that stopped
     * reading (its socket full past FRAME_REST_MS) is cut off. */
    if (vm_pool_send(v) && !v->gone)
        vm_worker_cut(v, SANDBOX_CRASHED, "stopped reading its socket: cut off");
}

/* ---- reading what the worker sends -------------------------------------- */

/* A frame the worker may not send: cut it off. Returns -1. */
static int refuse(vm *v, const char *what)
{
    char why[200];
    snprintf(why, sizeof why, "sent %s: cut off", what);
    vm_worker_cut(v, SANDBOX_CRASHED, why);
    return -1;
}

static bool flooding(vm *v)
{
    double now = clock_now_ms();
    if (now - v->window_ms > FLOOD_WINDOW_MS) {
        v->window_ms = now;
        v->window_frames = 0;
        v->window_bytes = 0;
    }
    v->window_frames++;
    v->window_bytes += sizeof v->in.h + v->in.h.len;
    return v->window_frames > FLOOD_MAX_FRAMES || v->window_bytes > FLOOD_MAX_BYTES;
}

/* Cancel, deadline: what the host does while the worker runs. */
static void keep_time(vm *v)
{
    double now = clock_now_ms();
    /* a cancel goes to the worker; its own clock ends it at the deadline */
    if (!v->cancel_ms && !sandbox_alive(v->sb) && sandbox_poison(v->sb) == SANDBOX_CANCELLED) {
        frame_start(&v->out, FRAME_CANCEL, v->id);
        send_frame(v);
        v->cancel_ms = now;
    }
    if (v->cancel_ms && now - v->cancel_ms > VM_KILL_AFTER_CANCEL_MS)
        vm_worker_cut(v, SANDBOX_HUNG, "did not stop when cancelled: killed");
    else if (now > v->deadline_ms + VM_KILL_AFTER_DEADLINE_MS)
        vm_worker_cut(v, SANDBOX_HUNG, "ran past its deadline: killed");
}

static void serve_call(vm *v);

/* Reads frames until one of type A or B arrives (left in V->in), serving
 * skill calls and output meanwhile. 0, or -1 once the worker is gone. */
static int await(vm *v, frame_type a, frame_type b)
{
    for (;;) {
        if (v->gone) return -1;
        keep_time(v);
        if (v->gone) return -1;
        int rc = vm_pool_next(v, 50);
        if (rc == 0) continue;
        if (rc < 0) return -1;
        if (flooding(v)) return refuse(v, "a flood of frames");
        if (v->in.h.mission != v->id) return refuse(v, "a frame for another mission");
        frame_type t = (frame_type)v->in.h.type;
        /* Output is bounded by its budget, every other frame answers one of ours. */
        if (t != FRAME_OUTPUT && v->owed-- <= 0) return refuse(v, "a flood of frames");
        if (t == a || t == b) return 0;
        if (t == FRAME_CALL) {
            serve_call(v);
        } else if (t == FRAME_OUTPUT) {
            size_t len;
            const char *text = frame_get_str(&v->in, &len);
            if (!frame_done(&v->in) || len == 0) return refuse(v, "a malformed output frame");
            /* the worker keeps print's text to the same budget */
            v->output += len;
            if (v->output > v->max_output) return refuse(v, "a flood of output");
            sandbox_write(v->sb, text, len);
        } else {
            char what[64];
            snprintf(what, sizeof what, "a frame of type %u out of turn", (unsigned)t);
            return refuse(v, what);
        }
    }
}

/* DONE's fields: status, whether a statement ran, whether the plan
 * finished, usage, message. */
static sandbox_status read_done(vm *v, bool *ran, char *err, size_t errlen)
{
    frame *f = &v->in;
    uint8_t st = frame_get_u8(f);
    uint8_t did = frame_get_u8(f), fin = frame_get_u8(f), cut = frame_get_u8(f);
    v->use.instructions = frame_get_u64(f);
    v->use.memory_now = (size_t)frame_get_u64(f);
    v->use.memory_peak = (size_t)frame_get_u64(f);
    size_t len;
    const char *msg = frame_get_str(f, &len);
    if (!frame_done(f) || st > SANDBOX_CANCELLED || did > 1 || fin > 1 || cut > 1) {
        refuse(v, "a malformed end of a run");
        errmsg_set(err, errlen, "%s", v->gone_why);
        return v->gone_status;
    }
    if (ran) *ran = did;
    if (fin) v->finished = true;
    /* The worker kept print's text to the cap: the host's copy, at the cap
     * too, says it was cut once a byte more is refused. */
    if (cut && !sandbox_output_truncated(v->sb)) sandbox_write(v->sb, "\n", 1);
    if (st != SANDBOX_OK) errmsg_set(err, errlen, "%.*s", (int)len, msg);
    return (sandbox_status)st;
}

static sandbox_status gone(vm *v, char *err, size_t errlen)
{
    errmsg_set(err, errlen, "%s", v->gone_why);
    return v->gone_status;
}

/* ---- serving a skill call -------------------------------------------------- */

static void serve_call(vm *v)
{
    frame *f = &v->in;
    const skill_registry *reg = v->ctx->reg;
    uint32_t idx = frame_get_u32(f);
    uint8_t n = frame_get_u8(f);
    if (f->bad || idx >= registry_count(reg) || n > VM_MAX_CALL_ARGS) {
        refuse(v, "a malformed skill call");
        return;
    }
    frame_value vals[VM_MAX_CALL_ARGS];
    for (int i = 0; i < n; i++)
        frame_get_value(f, &vals[i]);
    if (!frame_done(f)) {
        refuse(v, "a malformed skill call");
        return;
    }
    lua_State *L = sandbox_lua(v->sb);
    if (!lua_checkstack(L, n + 4)) {
        refuse(v, "a skill call the host has no room for");
        return;
    }
    /* The skill's global: the dispatch of skills.c, bound in the host's
     * sandbox. The values are copied into Lua before anything runs, since
     * nested frames reuse V->in. */
    sandbox_push_base(v->sb);
    lua_getfield(L, -1, registry_at(reg, idx)->name);
    lua_remove(L, -2);
    for (int i = 0; i < n; i++)
        vm_push_value(L, &vals[i]);
    char msg[1024];
    sandbox_status st = sandbox_call(v->sb, n, 1, msg, sizeof msg);
    if (v->gone) {
        if (st == SANDBOX_OK) lua_pop(L, 1);
        return;
    }
    if (st == SANDBOX_OK) {
        frame_value r;
        vm_value_at(L, -1, &r);
        frame_start(&v->out, FRAME_RET, v->id);
        frame_put_value(&v->out, &r);
        lua_pop(L, 1);
    } else {
        /* The worker adds its caller's position to an error a skill raised
         * here (as luaL_error does in process), not to one its own Lua
         * raised in a high-level skill, which has its position already. */
        bool own = v->passed_on[0] && strcmp(msg, v->passed_on) == 0;
        frame_start(&v->out, FRAME_ERR, v->id);
        frame_put_u8(&v->out, (uint8_t)st);
        frame_put_u8(&v->out, own ? 0 : 1);
        frame_put_str(&v->out, msg, strlen(msg));
    }
    v->passed_on[0] = '\0';
    send_frame(v);
}

int vm_worker_run_high(void *ud, lua_State *L, const skill *s, int nargs, char *err, size_t errlen)
{
    vm *v = ud;
    if (v->gone) return errmsg_set(err, errlen, "%s", v->gone_why);
    if (v->nesting >= VM_MAX_NESTING)
        return errmsg_set(err, errlen, "%s: high-level skills nested more than %d deep", s->name,
                          VM_MAX_NESTING);
    size_t idx = 0, n = registry_count(v->ctx->reg);
    while (idx < n && registry_at(v->ctx->reg, idx) != s)
        idx++;
    frame_start(&v->out, FRAME_RUN, v->id);
    frame_put_u32(&v->out, (uint32_t)idx);
    frame_put_u8(&v->out, (uint8_t)nargs);
    for (int i = 1; i <= nargs; i++) {
        frame_value fv;
        vm_value_at(L, i, &fv);
        frame_put_value(&v->out, &fv);
    }
    send_frame(v);
    v->nesting++;
    int rc = await(v, FRAME_VALUE, FRAME_DONE);
    v->nesting--;
    if (rc) return errmsg_set(err, errlen, "%s", v->gone_why);
    if (v->in.h.type == FRAME_DONE) {
        sandbox_status st = read_done(v, NULL, err, errlen);
        if (st != SANDBOX_ERROR && st != SANDBOX_OK) sandbox_poison_with(v->sb, st);
        snprintf(v->passed_on, sizeof v->passed_on, "%s", err);
        return -1;
    }
    frame_value fv;
    frame_get_value(&v->in, &fv);
    if (!frame_done(&v->in)) {
        refuse(v, "a malformed value");
        return errmsg_set(err, errlen, "%s", v->gone_why);
    }
    vm_push_value(L, &fv);
    return 0;
}

void vm_worker_cut(vm *v, sandbox_status st, const char *why)
{
    vm_pool_cut(v, st, why);
}

/* ---- the calls of vm.h ------------------------------------------------------ */

static void put_skill(frame *f, const skill *s)
{
    frame_put_str(f, s->name, strlen(s->name));
    frame_put_str(f, s->alias, strlen(s->alias));
    frame_put_u8(f, (uint8_t)s->level);
    if (s->level != SKILL_HIGH) return;
    const char *chunk = s->path ? s->path : s->name;
    frame_put_str(f, chunk, strlen(chunk));
    frame_put_u8(f, s->lua_code ? 1 : 0);
    const char *code = s->lua_code ? s->lua_code : s->source ? s->source : "";
    frame_put_text(f, code, strlen(code));
}

int vm_worker_open(vm *v, const sandbox_limits *lim, char *err, size_t errlen)
{
    static atomic_uint next_id = 1;
    v->id = atomic_fetch_add(&next_id, 1);
    v->deadline_ms = clock_now_ms() + (double)sandbox_remaining_ms(v->sb);
    v->max_output = lim->max_output ? lim->max_output : SANDBOX_DEFAULT_OUTPUT;
    if (vm_pool_join(v, err, errlen)) return -1;
    frame *f = &v->out;
    frame_start(f, FRAME_OPEN, v->id);
    frame_put_u64(f, lim->max_instructions);
    frame_put_u64(f, lim->max_memory);
    frame_put_u64(f, sandbox_remaining_ms(v->sb));
    frame_put_u64(f, lim->max_output);
    size_t n = registry_count(v->ctx->reg);
    frame_put_u32(f, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        put_skill(f, registry_at(v->ctx->reg, i));
    if (f->bad) return errmsg_set(err, errlen, "the skills do not fit in one frame to the worker");
    send_frame(v);
    if (await(v, FRAME_OPENED, FRAME_OPENED)) return errmsg_set(err, errlen, "%s", v->gone_why);
    uint8_t ok = frame_get_u8(&v->in);
    size_t len;
    const char *msg = frame_get_str(&v->in, &len);
    if (!frame_done(&v->in)) {
        refuse(v, "a malformed answer to its start");
        return errmsg_set(err, errlen, "%s", v->gone_why);
    }
    if (!ok) return errmsg_set(err, errlen, "%.*s", (int)len, msg);
    v->ctx->run_high = vm_worker_run_high;
    v->ctx->run_high_ud = v;
    return 0;
}

int vm_worker_begin(vm *v, char *err, size_t errlen)
{
    v->finished = false;
    if (v->gone) return errmsg_set(err, errlen, "%s", v->gone_why);
    frame_start(&v->out, FRAME_BEGIN, v->id);
    send_frame(v);
    if (await(v, FRAME_DONE, FRAME_DONE)) return errmsg_set(err, errlen, "%s", v->gone_why);
    return read_done(v, NULL, err, errlen) == SANDBOX_OK ? 0 : -1;
}

sandbox_status vm_worker_event(vm *v, const ms_event *ev, bool *ran, char *err, size_t errlen)
{
    if (v->gone) return gone(v, err, errlen);
    if (v->finished) return SANDBOX_OK;
    if (ev->kind == MS_EV_ERROR) {
        v->finished = true;
        errmsg_set(err, errlen, "%d:%d: %s", ev->diag ? ev->diag->line : 0,
                   ev->diag ? ev->diag->col : 0, ev->diag ? ev->diag->message : "invalid plan");
        return SANDBOX_ERROR;
    }
    if (ev->kind != MS_EV_STATEMENT && ev->kind != MS_EV_BLOCK_BEGIN && ev->kind != MS_EV_BLOCK_END)
        return SANDBOX_OK;
    frame *f = &v->out;
    frame_start(f, FRAME_EVENT, v->id);
    frame_put_u8(f, (uint8_t)ev->kind);
    frame_put_u8(f, (uint8_t)ev->block);
    frame_put_u64(f, (uint64_t)ev->count);
    frame_put_u32(f, (uint32_t)ev->line);
    frame_put_u32(f, (uint32_t)ev->col);
    frame_put_text(f, ev->lua ? ev->lua : "", ev->lua ? ev->lua_len : 0);
    if (f->bad) {
        v->finished = true;
        errmsg_set(err, errlen, "%d:%d: statement too long for the worker (over %u bytes)",
                   ev->line, ev->col, FRAME_MAX);
        return SANDBOX_ERROR;
    }
    send_frame(v);
    if (await(v, FRAME_DONE, FRAME_DONE)) return gone(v, err, errlen);
    return read_done(v, ran, err, errlen);
}

int vm_worker_result(vm *v, skill_value *out)
{
    memset(out, 0, sizeof *out);
    if (v->gone) return 0;
    frame_start(&v->out, FRAME_RESULT, v->id);
    send_frame(v);
    if (await(v, FRAME_VALUE, FRAME_VALUE)) return 0;
    frame_value fv;
    frame_get_value(&v->in, &fv);
    if (!frame_done(&v->in)) {
        refuse(v, "a malformed result");
        return 0;
    }
    return vm_value_typed(&fv, out);
}

sandbox_status vm_worker_script(vm *v, const char *code, size_t len, const char *chunkname,
                                char *err, size_t errlen)
{
    if (v->gone) return gone(v, err, errlen);
    frame *f = &v->out;
    frame_start(f, FRAME_SCRIPT, v->id);
    frame_put_str(f, chunkname, strlen(chunkname));
    frame_put_text(f, code, len);
    if (f->bad) {
        errmsg_set(err, errlen, "script too long for the worker (over %u bytes)", FRAME_MAX);
        return SANDBOX_ERROR;
    }
    send_frame(v);
    if (await(v, FRAME_DONE, FRAME_DONE)) return gone(v, err, errlen);
    return read_done(v, NULL, err, errlen);
}
