/*
 * The worker process (worker.h). A mission's thread runs its VM and,
 * inside a skill stub, waits for the host's answer. One thread at a time
 * reads the host's frames: a mission's thread waiting for its next frame
 * reads the socket itself whenever no other thread does, so that the
 * answer to a skill call wakes the very thread that waits for it; frames
 * it reads for other missions go to their mailboxes, and a new mission or
 * a cancel (which it applies itself, so that a VM busy in a loop stops) is
 * handled on the spot. The main thread reads only while no mission's
 * thread does: it polls until a frame comes, and a mission's thread that
 * starts waiting takes over from it.
 */
#include "worker/worker.h"

#include "minispec/stream_exec.h"
#include "worker/frame.h"
#include "worker/confine.h"
#include "worker/skill_read.h"
#include "worker/vm_internal.h"

#include <fcntl.h>
#include <lauxlib.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAILBOX_MAX 64
/* How often the main thread looks whether nobody reads the socket. It does
 * not wait to be told: that would wake it at every skill call. */
#define WORKER_WATCH_MS 2
#define WORKER_ADDRESS_SPACE (8ULL << 30)

typedef struct wmission wmission;

typedef struct wskill {
    skill s; /* name, alias, level and, when high-level, its code */
    int run_ref;
    uint32_t idx;
    wmission *m;
} wskill;

struct wmission {
    uint32_t id;
    sandbox *_Atomic sb;
    ms_exec *x;
    wskill *skills;
    uint32_t nskills;
    pthread_t thread;
    pthread_cond_t cv;
    frame *box[MAILBOX_MAX]; /* under box_mu */
    int head, n;
    bool waiting; /* for a frame, while another thread reads */
    wmission *next;
};

static int sock = -1;
static pthread_mutex_t write_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t list_mu = PTHREAD_MUTEX_INITIALIZER;
static wmission *missions;
static worker_extra_fn extra;

void worker_set_extra(worker_extra_fn fn)
{
    extra = fn;
}

/* The mailboxes and who reads the socket: someone reads it; the main
 * thread, which only polls, so that a mission's thread may take over. */
static pthread_mutex_t box_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t main_cv = PTHREAD_COND_INITIALIZER;
static bool rd_busy, rd_main, rd_polling;
static frame_reader rd; /* the socket, read by the thread that reads */
static const char *test_mode;

static void send_locked(frame *f)
{
    pthread_mutex_lock(&write_mu);
    int rc = frame_send(sock, f);
    pthread_mutex_unlock(&write_mu);
    if (rc) _exit(0); /* the host is gone: nothing left to do */
}

void worker_send(frame *f)
{
    send_locked(f);
}

/* ---- mailboxes and reading ------------------------------------------------ */

static void post(wmission *m, frame *f)
{
    pthread_mutex_lock(&box_mu);
    if (m->n == MAILBOX_MAX) _exit(3); /* the host never sends that many */
    m->box[(m->head + m->n++) % MAILBOX_MAX] = f;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&box_mu);
}

/* True when the calling thread may start reading. Under box_mu. */
static bool may_read(void)
{
    return !rd_busy || (rd_main && rd_polling);
}

/* The reading thread is done: a mission's thread waiting takes over, or
 * the main thread (at its next look, unless frames are left in the buffer,
 * which no poll sees). Under box_mu; list_mu comes after it. */
static void release(void)
{
    rd_busy = rd_main = rd_polling = false;
    bool taken = false;
    pthread_mutex_lock(&list_mu);
    for (wmission *m = missions; m && !taken; m = m->next)
        if (m->waiting) {
            pthread_cond_signal(&m->cv);
            taken = true;
        }
    pthread_mutex_unlock(&list_mu);
    if (!taken && frame_reader_buffered(&rd)) pthread_cond_signal(&main_cv);
}

static frame *read_frame(void)
{
    frame *f = calloc(1, sizeof *f);
    const char *why;
    if (!f || frame_read(&rd, f, -1, &why) != 1) _exit(0); /* the host is gone */
    return f;
}

static void dispatch(frame *f);

/* M's next frame: from its mailbox, or read from the socket when nobody
 * else reads it. */
static frame *take(wmission *m)
{
    bool reading = false;
    pthread_mutex_lock(&box_mu);
    for (;;) {
        if (m->n) {
            frame *f = m->box[m->head];
            m->head = (m->head + 1) % MAILBOX_MAX;
            m->n--;
            if (reading) release();
            pthread_mutex_unlock(&box_mu);
            return f;
        }
        if (!reading && may_read()) {
            rd_busy = true;
            rd_main = rd_polling = false;
            reading = true;
        }
        if (!reading) {
            m->waiting = true;
            pthread_cond_wait(&m->cv, &box_mu);
            m->waiting = false;
            continue;
        }
        pthread_mutex_unlock(&box_mu);
        frame *f = read_frame();
        if (f->h.mission == m->id && f->h.type != FRAME_OPEN && f->h.type != FRAME_CANCEL &&
            !test_mode) {
            /* whole frames left in the buffer go out before another
             * thread may read: no poll would see them */
            while (frame_reader_whole(&rd))
                dispatch(read_frame());
            pthread_mutex_lock(&box_mu);
            release();
            pthread_mutex_unlock(&box_mu);
            return f;
        }
        dispatch(f);
        pthread_mutex_lock(&box_mu);
    }
}

static void drop(frame *f)
{
    frame_free(f);
    free(f);
}

/* ---- answers ------------------------------------------------------------------ */

static void send_done(wmission *m, sandbox_status st, bool ran, const char *msg)
{
    frame out = {0};
    sandbox_usage u = sandbox_get_usage(m->sb);
    frame_start(&out, FRAME_DONE, m->id);
    frame_put_u8(&out, (uint8_t)st);
    frame_put_u8(&out, ran);
    frame_put_u8(&out, m->x && ms_exec_finished(m->x));
    frame_put_u8(&out, sandbox_output_truncated(m->sb));
    frame_put_u64(&out, u.instructions);
    frame_put_u64(&out, u.memory_now);
    frame_put_u64(&out, u.memory_peak);
    frame_put_str(&out, msg, strlen(msg));
    send_locked(&out);
    frame_free(&out);
}

static void send_value(wmission *m, lua_State *L, int idx)
{
    frame out = {0};
    frame_value fv;
    vm_value_at(L, idx, &fv);
    frame_start(&out, FRAME_VALUE, m->id);
    frame_put_value(&out, &fv);
    send_locked(&out);
    frame_free(&out);
}

static void on_output(void *ud, const char *text, size_t len)
{
    wmission *m = ud;
    frame out = {0};
    while (len) {
        size_t n = len > FRAME_MAX_STR ? FRAME_MAX_STR : len;
        frame_start(&out, FRAME_OUTPUT, m->id);
        frame_put_str(&out, text, n);
        send_locked(&out);
        text += n, len -= n;
    }
    frame_free(&out);
}

/* ---- skill stubs ------------------------------------------------------------ */

/* RUN: the host checked and recorded a call of high-level skill K and asks
 * for its Lua to run here, with the converted arguments; a value that has
 * no plain form (a table) is the caller's own, still at its place on L. */
static void run_high(wskill *k, lua_State *L, frame *f)
{
    wmission *m = k->m;
    uint32_t idx = frame_get_u32(f);
    uint8_t n = frame_get_u8(f);
    char msg[1024] = "";
    if (idx != k->idx || n > lua_gettop(L) || !lua_checkstack(L, n + 4)) {
        send_done(m, SANDBOX_ERROR, false, "the host asked to run another skill");
        return;
    }
    if (k->run_ref == LUA_NOREF) {
        if (skills_load_run(m->sb, &k->s, msg, sizeof msg)) {
            sandbox_status st = sandbox_poison(m->sb);
            send_done(m, st ? st : SANDBOX_ERROR, false, msg);
            return;
        }
        k->run_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, k->run_ref);
    for (int i = 1; i <= n; i++) {
        frame_value fv;
        frame_get_value(f, &fv);
        if (fv.tag == FV_OTHER)
            lua_pushvalue(L, i);
        else
            vm_push_value(L, &fv);
    }
    int rc = lua_pcall(L, n, 1, 0);
    sandbox_status poison = sandbox_poison(m->sb);
    if (rc == LUA_OK && poison == SANDBOX_OK) {
        send_value(m, L, -1);
    } else {
        if (rc != LUA_OK && lua_type(L, -1) == LUA_TSTRING)
            snprintf(msg, sizeof msg, "%s", lua_tostring(L, -1));
        else if (rc != LUA_OK)
            snprintf(msg, sizeof msg, "(error object is a %s value)", luaL_typename(L, -1));
        send_done(m, poison != SANDBOX_OK ? poison : SANDBOX_ERROR, false, msg);
    }
    lua_pop(L, 1);
}

/* Every skill in the worker: one call frame to the host, then its answer. */
static int stub(lua_State *L)
{
    wskill *k = lua_touserdata(L, lua_upvalueindex(1));
    wmission *m = k->m;
    sandbox_check(L);
    int n = lua_gettop(L);
    if (n > 64) n = 64;
    frame out = {0};
    frame_start(&out, FRAME_CALL, m->id);
    frame_put_u32(&out, k->idx);
    frame_put_u8(&out, (uint8_t)n);
    for (int i = 1; i <= n; i++) {
        frame_value fv;
        vm_value_at(L, i, &fv);
        frame_put_value(&out, &fv);
    }
    send_locked(&out);
    frame_free(&out);
    for (;;) {
        frame *f = take(m);
        if (f->h.type == FRAME_RUN) {
            run_high(k, L, f);
            drop(f);
            continue;
        }
        if (f->h.type == FRAME_RET) {
            frame_value fv;
            frame_get_value(f, &fv);
            vm_push_value(L, &fv);
            drop(f);
            return 1;
        }
        if (f->h.type == FRAME_ERR) {
            sandbox_status st = (sandbox_status)frame_get_u8(f);
            bool where = frame_get_u8(f);
            size_t len;
            const char *msg = frame_get_str(f, &len);
            if (where) luaL_where(L, 1);
            lua_pushlstring(L, msg, len);
            if (where) lua_concat(L, 2);
            drop(f);
            if (st != SANDBOX_ERROR) {
                sandbox_poison_with(m->sb, st);
                sandbox_check(L);
            }
            return lua_error(L);
        }
        drop(f); /* nothing else is an answer */
    }
}

/* ---- a mission ---------------------------------------------------------------- */

static char *dup_text(const char *s, size_t len)
{
    char *d = malloc(len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

static void copy_name(char *dst, const char *s, size_t len)
{
    if (len >= SKILL_NAME_MAX) len = SKILL_NAME_MAX - 1;
    memcpy(dst, s, len);
    dst[len] = '\0';
}

/* OPEN: the limits, then the skills (see put_skill in vm_worker.c). */
static int open_mission(wmission *m, frame *f, char *err, size_t errlen)
{
    sandbox_limits lim = {.max_instructions = frame_get_u64(f),
                          .max_memory = (size_t)frame_get_u64(f),
                          .timeout_ms = frame_get_u64(f),
                          .max_output = (size_t)frame_get_u64(f)};
    if (lim.timeout_ms == 0) lim.timeout_ms = 1; /* what was left of it: nothing */
    uint32_t n = frame_get_u32(f);
    if (f->bad || n > 4096) return snprintf(err, errlen, "a malformed start"), -1;
    m->skills = calloc(n ? n : 1, sizeof *m->skills);
    m->nskills = n;
    for (uint32_t i = 0; i < n && !f->bad; i++) {
        wskill *k = &m->skills[i];
        size_t len;
        const char *s = frame_get_str(f, &len);
        copy_name(k->s.name, s, len);
        s = frame_get_str(f, &len);
        copy_name(k->s.alias, s, len);
        k->s.level = frame_get_u8(f) ? SKILL_HIGH : SKILL_LOW;
        k->idx = i, k->m = m, k->run_ref = LUA_NOREF;
        if (k->s.level != SKILL_HIGH) continue;
        s = frame_get_str(f, &len);
        k->s.path = dup_text(s, len);
        bool compiled = frame_get_u8(f);
        s = frame_get_text(f, &len);
        if (compiled)
            k->s.lua_code = dup_text(s, len);
        else
            k->s.source = dup_text(s, len);
    }
    if (!frame_done(f)) return snprintf(err, errlen, "a malformed start"), -1;
    sandbox *sb = sandbox_new(&lim, err, errlen);
    if (!sb) return -1;
    sandbox_set_output_hook(sb, on_output, m);
    for (uint32_t i = 0; i < n; i++) {
        wskill *k = &m->skills[i];
        sandbox_set_global(sb, k->s.name, stub, k);
        if (k->s.alias[0]) sandbox_set_global(sb, k->s.alias, stub, k);
    }
    m->sb = sb;
    return skills_load_runtime(sb, err, errlen);
}

static void free_mission(wmission *m)
{
    pthread_mutex_lock(&list_mu);
    for (wmission **p = &missions; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            break;
        }
    pthread_mutex_unlock(&list_mu);
    ms_exec_free(m->x);
    if (m->sb) sandbox_free(m->sb);
    for (uint32_t i = 0; m->skills && i < m->nskills; i++) {
        free(m->skills[i].s.path);
        free(m->skills[i].s.lua_code);
        free(m->skills[i].s.source);
    }
    free(m->skills);
    pthread_mutex_lock(&box_mu);
    for (; m->n; m->n--, m->head = (m->head + 1) % MAILBOX_MAX)
        drop(m->box[m->head]);
    pthread_mutex_unlock(&box_mu);
    pthread_cond_destroy(&m->cv);
    free(m);
}

/* EVENT: a stream event as the host's parser made it. */
static sandbox_status run_event(wmission *m, frame *f, bool *ran, char *err, size_t errlen)
{
    ms_event ev = {0};
    ev.kind = (ms_event_kind)frame_get_u8(f);
    ev.block = (ms_block_kind)frame_get_u8(f);
    ev.count = (long)frame_get_u64(f);
    ev.line = (int)frame_get_u32(f);
    ev.col = (int)frame_get_u32(f);
    size_t len;
    const char *lua = frame_get_text(f, &len);
    if (!frame_done(f) || !m->x) return snprintf(err, errlen, "a malformed event"), SANDBOX_ERROR;
    char *code = dup_text(lua, len);
    ev.lua = code ? code : "";
    ev.lua_len = code ? len : 0;
    int before = ms_exec_statements_run(m->x);
    sandbox_status st = ms_exec_event(m->x, &ev, err, errlen);
    *ran = ms_exec_statements_run(m->x) > before;
    free(code);
    return st;
}

static void serve(wmission *m, frame *f)
{
    char err[1024] = "";
    bool ran = false;
    sandbox_status st = SANDBOX_OK;
    lua_State *L = sandbox_lua(m->sb);
    switch (f->h.type) {
    case FRAME_BEGIN:
        ms_exec_free(m->x);
        m->x = ms_exec_new(m->sb);
        if (!m->x) st = SANDBOX_ERROR, snprintf(err, sizeof err, "out of memory");
        send_done(m, st, false, err);
        break;
    case FRAME_EVENT:
        st = run_event(m, f, &ran, err, sizeof err);
        send_done(m, st, ran, err);
        break;
    case FRAME_SCRIPT: {
        size_t nlen, clen;
        const char *name = frame_get_str(f, &nlen);
        const char *code = frame_get_text(f, &clen);
        char *chunk = dup_text(name, nlen);
        st = sandbox_run(m->sb, code, clen, chunk ? chunk : "=script", err, sizeof err);
        free(chunk);
        send_done(m, st, false, err);
        break;
    }
    case FRAME_RESULT:
        if (m->x)
            ms_exec_push_result(m->x);
        else
            lua_pushnil(L);
        send_value(m, L, -1);
        lua_pop(L, 1);
        break;
    default: break;
    }
}

static void *mission_thread(void *ud)
{
    wmission *m = ud;
    frame *f = take(m);
    char err[512] = "";
    int rc = f->h.type == FRAME_OPEN ? open_mission(m, f, err, sizeof err)
                                     : (snprintf(err, sizeof err, "not started"), -1);
    drop(f);
    frame out = {0};
    frame_start(&out, FRAME_OPENED, m->id);
    frame_put_u8(&out, rc == 0);
    frame_put_str(&out, err, strlen(err));
    send_locked(&out);
    frame_free(&out);
    for (;;) {
        f = take(m);
        if (f->h.type == FRAME_CLOSE) {
            drop(f);
            break;
        }
        if (m->sb) serve(m, f);
        drop(f);
    }
    free_mission(m);
    return NULL;
}

static wmission *find(uint32_t id)
{
    pthread_mutex_lock(&list_mu);
    wmission *m = missions;
    while (m && m->id != id)
        m = m->next;
    pthread_mutex_unlock(&list_mu);
    return m;
}

static void start_mission(frame *f)
{
    wmission *m = calloc(1, sizeof *m);
    if (!m) _exit(4);
    m->id = f->h.mission;
    pthread_cond_init(&m->cv, NULL);
    post(m, f);
    pthread_mutex_lock(&list_mu);
    m->next = missions;
    missions = m;
    pthread_mutex_unlock(&list_mu);
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    /* the VM's C stack: sandbox_check_cstack allows 1 MiB of nesting */
    pthread_attr_setstacksize(&a, 8u * 1024u * 1024u);
    if (pthread_create(&m->thread, &a, mission_thread, m)) _exit(5);
    pthread_attr_destroy(&a);
}

/* ---- test-only misbehaviour (worker.h) ------------------------------------------ */

static void misbehave(const char *how, uint32_t id)
{
    frame out = {0};
    /* A worker taken over by a bug, reaching for the world: confinement
     * must stop each of these before it happens. Should one pass, the
     * worker ends plainly and the host reports that status instead. */
    if (strcmp(how, "open") == 0) _exit(open("/etc/hostname", O_RDONLY) >= 0 ? 0 : 9);
    if (strcmp(how, "socket") == 0) _exit(socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 9);
    if (strcmp(how, "execve") == 0) {
        char *const args[] = {"true", NULL};
        execv("/bin/true", args);
        _exit(9);
    }
    if (strcmp(how, "malformed") == 0 || strcmp(how, "stray") == 0) {
        /* a header that is not one, or a well-formed frame for a mission
         * this worker does not run */
        frame_header h = {.len = FRAME_MAX + 1, .type = FRAME_DONE, .zero = 0, .mission = id};
        if (strcmp(how, "stray") == 0) h = (frame_header){.type = FRAME_DONE, .mission = id + 1000};
        if (write(sock, &h, sizeof h) < 0) _exit(0);
        for (;;) { /* silent from here on (confined: nanosleep, not pause) */
            struct timespec t = {1, 0};
            nanosleep(&t, NULL);
        }
    }
    for (;;) { /* flood: output without end */
        frame_start(&out, FRAME_OUTPUT, id);
        frame_put_str(&out, "x", 1);
        send_locked(&out);
    }
}

/* A frame read by any thread: a new mission, a cancel, or work for a
 * mission's thread. */
static void dispatch(frame *f)
{
    if (extra && extra(f, send_locked)) return; /* worker_set_extra */
    wmission *m = f->h.type == FRAME_OPEN ? NULL : find(f->h.mission);
    /* test-only: the first work after a mission opened, or a skill file
     * to read, gets the misbehaviour; "hang" drops it and never answers,
     * while this thread still reads (the host's end closing ends the
     * worker) */
    bool work = (m && (f->h.type == FRAME_BEGIN || f->h.type == FRAME_SCRIPT)) ||
                f->h.type == FRAME_SKILL_READ;
    bool hang = test_mode && strcmp(test_mode, "hang") == 0;
    if (test_mode && *test_mode && work && !hang) misbehave(test_mode, f->h.mission);
    if (hang && work) {
        drop(f);
        return;
    }
    if (f->h.type == FRAME_SKILL_READ) {
        worker_skill_read(f);
    } else if (f->h.type == FRAME_OPEN) {
        if (find(f->h.mission)) _exit(6);
        start_mission(f);
    } else if (f->h.type == FRAME_CANCEL) {
        sandbox *sb = m ? m->sb : NULL;
        if (sb) sandbox_cancel(sb);
        drop(f);
    } else if (m) {
        post(m, f);
    } else {
        drop(f);
    }
}

int worker_main(int argc, char **argv)
{
    if (argc != 2 || strcmp(argv[1], "3") != 0) {
        fprintf(stderr, "aloft __worker is started by aloft itself\n");
        return 2;
    }
    sock = 3;
    frame_reader_init(&rd, sock);
    frame_plain_writes();
    signal(SIGPIPE, SIG_DFL);
    test_mode = getenv("ALOFT_TEST_WORKER");
    if (test_mode && !*test_mode) test_mode = NULL;
    /* Confinement: from here on, the worker's only way out is its socket.
     * The address-space limit is a fence behind the sandbox's allocator cap
     * (SPEC §6) for memory taken around it; it leaves room for the threads
     * (8 MiB of stack each) and malloc's arenas (64 MiB each) of many
     * missions. No CPU limit: a worker of the pool serves mission after
     * mission, and the watchdog kills one whose VM outlives its deadline. */
    struct confine_limits lim = {.address_space_bytes = WORKER_ADDRESS_SPACE};
    char cerr[256];
    if (confine_enter(&lim, sock, cerr, sizeof cerr)) {
        fprintf(stderr, "aloft worker: %s\n", cerr);
        return 1;
    }
    pthread_mutex_lock(&box_mu);
    for (;;) {
        if (!may_read()) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += WORKER_WATCH_MS * 1000000L;
            if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&main_cv, &box_mu, &ts);
            continue;
        }
        rd_busy = rd_main = rd_polling = true;
        pthread_mutex_unlock(&box_mu);
        struct pollfd pf = {.fd = sock, .events = POLLIN};
        if (!frame_reader_buffered(&rd)) poll(&pf, 1, -1);
        pthread_mutex_lock(&box_mu);
        if (!rd_busy || !rd_main) continue; /* a mission's thread took over */
        rd_polling = false;
        pthread_mutex_unlock(&box_mu);
        dispatch(read_frame());
        pthread_mutex_lock(&box_mu);
        release();
    }
}
