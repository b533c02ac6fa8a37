/*
 * The VM interface (vm.h): the in-process VM, and the choice between it and
 * a worker process.
 */
#include "worker/vm_internal.h"

#include "errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *worker_program;
static bool in_process_forced;

void vm_set_worker_program(const char *path)
{
    worker_program = path;
}

void vm_use_in_process(void)
{
    in_process_forced = true;
}

/* make coverage: what runs in a confined worker writes no gcov counts (it
 * can open no file), so scripts/coverage.sh runs the sandbox's tests a
 * second time with ALOFT_COVERAGE_IN_PROCESS=1, their VMs in the process.
 * Only in the coverage build. */
static bool coverage_in_process(void)
{
#ifdef ALOFT_COVERAGE
    return getenv("ALOFT_COVERAGE_IN_PROCESS") != NULL;
#else
    return false;
#endif
}

bool vm_workers_enabled(void)
{
    return worker_program && !in_process_forced && !coverage_in_process();
}

int vm_default_workers(int max)
{
    const char *env = getenv("ALOFT_WORKERS");
    long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > max ? max : (int)n;
}

int vm_spawn_worker(pid_t *pid, int *fd, char *err, size_t errlen)
{
    const char *prog = worker_program;
    int sv[2];
    if (!prog) return errmsg_set(err, errlen, "no worker program");
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        return errmsg_set(err, errlen, "cannot make a worker's socket: %s", strerror(errno));
    pid_t child = fork();
    if (child == 0) {
        /* the child: only async-signal-safe calls until exec */
        if (sv[1] == 3)
            fcntl(3, F_SETFD, 0);
        else if (dup2(sv[1], 3) < 0)
            _exit(127);
        close_range(4, ~0u, 0);
        char *args[] = {"aloft", "__worker", "3", NULL};
        execv(prog, args);
        _exit(127);
    }
    close(sv[1]);
    if (child < 0) {
        close(sv[0]);
        return errmsg_set(err, errlen, "cannot start a worker: %s", strerror(errno));
    }
    fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
    *pid = child, *fd = sv[0];
    return 0;
}

vm *vm_open(skill_ctx *ctx, const sandbox_limits *lim, bool in_process, char *err, size_t errlen)
{
    vm *v = calloc(1, sizeof *v);
    if (!v) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    v->ctx = ctx;
    v->sb = ctx->sb;
    v->worker = !in_process && vm_workers_enabled();
    if (v->worker && vm_worker_open(v, lim, err, errlen)) {
        vm_close(v);
        return NULL;
    }
    return v;
}

void vm_close(vm *v)
{
    if (!v) return;
    ms_exec_free(v->x);
    if (v->worker) {
        vm_pool_leave(v);
        v->ctx->run_high = NULL;
    }
    frame_free(&v->in);
    frame_free(&v->out);
    frame_free(&v->rx);
    free(v);
}

sandbox_status vm_lost(const vm *v)
{
    return v->worker && atomic_load(&v->gone) ? v->gone_status : SANDBOX_OK;
}

bool vm_is_worker(const vm *v)
{
    return v->worker;
}

int vm_begin(vm *v, char *err, size_t errlen)
{
    if (v->worker) return vm_worker_begin(v, err, errlen);
    ms_exec_free(v->x);
    v->x = ms_exec_new(v->sb);
    return v->x ? 0 : errmsg_set(err, errlen, "out of memory");
}

sandbox_status vm_event(vm *v, const ms_event *ev, bool *ran, char *err, size_t errlen)
{
    *ran = false;
    if (v->worker) return vm_worker_event(v, ev, ran, err, errlen);
    if (!v->x) {
        errmsg_set(err, errlen, "no plan was begun");
        return SANDBOX_ERROR;
    }
    int before = ms_exec_statements_run(v->x);
    sandbox_status st = ms_exec_event(v->x, ev, err, errlen);
    *ran = ms_exec_statements_run(v->x) > before;
    return st;
}

bool vm_finished(const vm *v)
{
    if (v->worker) return v->finished; /* a worker gone: the next event says so */
    return !v->x || ms_exec_finished(v->x);
}

int vm_result(vm *v, skill_value *out)
{
    memset(out, 0, sizeof *out);
    if (v->worker) return vm_worker_result(v, out);
    if (!v->x) return 0;
    lua_State *L = sandbox_lua(v->sb);
    ms_exec_push_result(v->x);
    frame_value fv;
    vm_value_at(L, -1, &fv);
    int rc = vm_value_typed(&fv, out);
    lua_pop(L, 1);
    return rc;
}

sandbox_status vm_run_script(vm *v, const char *code, size_t len, const char *chunkname, char *err,
                             size_t errlen)
{
    if (v->worker) return vm_worker_script(v, code, len, chunkname, err, errlen);
    return sandbox_run(v->sb, code, len, chunkname, err, errlen);
}

sandbox_usage vm_usage(vm *v)
{
    return v->worker ? v->use : sandbox_get_usage(v->sb);
}

/* ---- values ---------------------------------------------------------------- */

static int stand_in(lua_State *L)
{
    (void)L;
    return 0;
}

static const char *type_name(int t)
{
    static const char *names[] = {"nil",   "boolean",  "userdata", "number", "string",
                                  "table", "function", "userdata", "thread"};
    return t >= 0 && t <= 8 ? names[t] : "?";
}

void vm_push_value(lua_State *L, const frame_value *fv)
{
    switch (fv->tag) {
    case FV_FALSE:
    case FV_TRUE: lua_pushboolean(L, fv->tag == FV_TRUE); break;
    case FV_INT: lua_pushinteger(L, (lua_Integer)fv->i); break;
    case FV_NUM: lua_pushnumber(L, fv->n); break;
    case FV_STR: lua_pushlstring(L, fv->s, fv->len); break;
    case FV_OTHER:
        /* a stand-in of the same type, so that checks and messages agree */
        if (fv->lua_type == LUA_TTABLE)
            lua_newtable(L);
        else if (fv->lua_type == LUA_TTHREAD)
            lua_pushthread(L);
        else if (fv->lua_type == LUA_TFUNCTION)
            lua_pushcfunction(L, stand_in);
        else
            lua_pushlightuserdata(L, (void *)fv);
        break;
    default: lua_pushnil(L); break;
    }
}

void vm_value_at(lua_State *L, int idx, frame_value *fv)
{
    memset(fv, 0, sizeof *fv);
    switch (lua_type(L, idx)) {
    case LUA_TNIL:
    case LUA_TNONE: fv->tag = FV_NIL; break;
    case LUA_TBOOLEAN: fv->tag = lua_toboolean(L, idx) ? FV_TRUE : FV_FALSE; break;
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) {
            fv->tag = FV_INT;
            fv->i = (int64_t)lua_tointeger(L, idx);
        } else {
            fv->tag = FV_NUM;
            fv->n = lua_tonumber(L, idx);
        }
        break;
    case LUA_TSTRING:
        fv->tag = FV_STR;
        fv->s = lua_tolstring(L, idx, &fv->len);
        break;
    default:
        fv->tag = FV_OTHER;
        fv->lua_type = lua_type(L, idx);
        break;
    }
}

int vm_value_typed(const frame_value *fv, skill_value *out)
{
    memset(out, 0, sizeof *out);
    switch (fv->tag) {
    case FV_FALSE:
    case FV_TRUE:
        out->kind = SKILL_VALUE_BOOL;
        out->b = fv->tag == FV_TRUE;
        return 0;
    case FV_INT:
        out->kind = SKILL_VALUE_INT;
        out->i = (long long)fv->i;
        return 0;
    case FV_NUM:
        out->kind = SKILL_VALUE_NUM;
        out->n = fv->n;
        return 0;
    case FV_STR: {
        /* a frame's string is not NUL-terminated; the value ends at a NUL */
        char *s = strndup(fv->s, fv->len);
        if (!s) return -1;
        out->kind = SKILL_VALUE_STR;
        out->s = s;
        return 0;
    }
    case FV_OTHER: return skill_value_set_str(out, SKILL_VALUE_OTHER, type_name(fv->lua_type));
    default: return 0;
    }
}
