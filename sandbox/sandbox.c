/*
 * Limits and running (SPEC §6). The policy of what a script may see is in
 * env.c; this file makes sure that whatever it does, it ends:
 *
 *  - The allocator refuses to grow past max_memory. Lua answers a refusal
 *    with an emergency collection and one more try; only when that retry is
 *    refused too is the cap really reached, and the state is poisoned.
 *  - The count hook runs every SANDBOX_HOOK_STEP instructions on every thread
 *    (coroutines inherit it from the thread that creates them). It charges the
 *    budget and checks the deadline and the cancel flag.
 *  - Poisoned: the hook is re-armed to fire on every instruction and raises
 *    the limit error each time. A script that catches it (pcall, xpcall, a
 *    coroutine, a __close handler) gets at most one more instruction before
 *    it is raised again, so the error always reaches the host.
 *  - The limit error is a light userdata whose address only this file knows;
 *    the host trusts sandbox->poison, never an error message.
 */
#include "sandbox/sandbox_internal.h"

#include "sandbox/arena.h"

#include "clock.h"

#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct sandbox {
    lua_State *L;
    sandbox_limits lim;

    size_t mem_used, mem_peak;
    /* The last refused request; refused again right after the emergency
     * collection means the cap is really reached. */
    const void *refused_ptr;
    size_t refused_osize, refused_nsize;
    bool refused_pending; /* a refusal not yet judged by settle_refusal */
    size_t refused_want;  /* how much more that refusal asked for */

    uint64_t instructions;
    uint64_t deadline_ns;
    atomic_int cancel;
    sandbox_status poison;

    int base_ref; /* registry reference of the base environment */

    /* The C stack where the host entered the VM (outermost sandbox_call),
     * for sandbox_check_cstack; 0 outside any call. */
    uintptr_t cstack_base;
    int call_depth;

    char *out;
    size_t out_len;
    bool out_truncated;
    void (*out_hook)(void *ud, const char *line, size_t len);
    void *out_hook_ud;

    sandbox_arena arena; /* the state's small blocks (arena.h) */
    /* The state just built, as the arena's image keeps it (see below). */
    size_t image_mem_used, image_mem_peak, image_max_memory;
};

static const char limit_key = 'L'; /* its address is the limit error */

sandbox *sandbox_from_lua(lua_State *L)
{
    void *ud;
    lua_getallocf(L, &ud);
    return ud;
}

/* ---- memory ------------------------------------------------------------- */

static void *sandbox_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    sandbox *sb = ud;
    if (!ptr) osize = 0; /* osize encodes the object type for new blocks */
    if (nsize == 0) {
        sandbox_arena_realloc(&sb->arena, ptr, osize, 0);
        sb->mem_used -= osize;
        return NULL;
    }
    if (nsize > osize && sb->mem_used + (nsize - osize) > sb->lim.max_memory) {
        bool retried = sb->refused_nsize && sb->refused_ptr == ptr && sb->refused_osize == osize &&
                       sb->refused_nsize == nsize;
        /* Bigger than the whole cap, or refused again after the emergency
         * collection Lua runs between the two tries: the cap is reached. */
        if ((nsize - osize > sb->lim.max_memory || retried) && sb->poison == SANDBOX_OK)
            sb->poison = SANDBOX_MEMORY;
        sb->refused_ptr = ptr;
        sb->refused_osize = osize;
        sb->refused_nsize = nsize;
        sb->refused_pending = true;
        sb->refused_want = nsize - osize;
        return NULL;
    }
    void *p = sandbox_arena_realloc(&sb->arena, ptr, osize, nsize);
    if (!p) return NULL;
    /* the retry after an emergency collection fitted: nothing to judge */
    if (sb->refused_nsize == nsize && sb->refused_ptr == ptr && sb->refused_osize == osize)
        sb->refused_pending = false;
    sb->refused_nsize = 0;
    sb->mem_used = sb->mem_used - osize + nsize;
    if (sb->mem_used > sb->mem_peak) sb->mem_peak = sb->mem_used;
    return p;
}

/*
 * Some refusals are not retried by Lua (lauxlib's string buffers raise "not
 * enough memory" at once), and a script may catch that and try again. So
 * after any refusal, the next hook collects garbage and poisons the state if
 * the refused request still does not fit.
 */
static void settle_refusal(lua_State *L, sandbox *sb)
{
    if (!sb->refused_pending) return; /* callers call it on a state not yet poisoned */
    sb->refused_pending = false;
    lua_gc(L, LUA_GCCOLLECT);
    if (sb->mem_used + sb->refused_want > sb->lim.max_memory) sb->poison = SANDBOX_MEMORY;
}

/* ---- the hook ----------------------------------------------------------- */

static void sandbox_hook(lua_State *L, lua_Debug *ar);

/* Makes the current thread fail on its next instruction, then raises. */
static int raise_limit(lua_State *L)
{
    lua_sethook(L, sandbox_hook, LUA_MASKCOUNT, 1);
    lua_pushlightuserdata(L, (void *)&limit_key);
    return lua_error(L);
}

/* Sets the poison if a limit other than memory has tripped. */
static void check_limits(sandbox *sb)
{
    if (sb->poison != SANDBOX_OK) return;
    if (sb->instructions > sb->lim.max_instructions)
        sb->poison = SANDBOX_INSTRUCTIONS;
    else if (atomic_load_explicit(&sb->cancel, memory_order_relaxed))
        sb->poison = SANDBOX_CANCELLED;
    else if (clock_now_ns() >= sb->deadline_ns)
        sb->poison = SANDBOX_TIMEOUT;
}

static void sandbox_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    sandbox *sb = sandbox_from_lua(L);
    if (sb->poison == SANDBOX_OK) {
        sb->instructions += SANDBOX_HOOK_STEP;
        settle_refusal(L, sb);
        check_limits(sb);
        if (sb->poison == SANDBOX_OK) return;
    }
    raise_limit(L);
}

void sandbox_charge(lua_State *L, uint64_t n)
{
    sandbox *sb = sandbox_from_lua(L);
    sb->instructions += n;
    check_limits(sb);
    if (sb->poison != SANDBOX_OK) raise_limit(L);
}

void sandbox_make_room(lua_State *L, size_t n)
{
    sandbox *sb = sandbox_from_lua(L);
    if (sb->mem_used + n > sb->lim.max_memory) lua_gc(L, LUA_GCCOLLECT);
}

/*
 * Lua counts nested C calls per thread and stops at 200, but Lua 5.4.4
 * restarts the count of a coroutine that is being closed (fixed upstream in
 * 1e64c139): a __close handler that closes another coroutine, whose handler
 * closes another, recurses in C without bound and overflows the stack. So
 * the functions that close coroutines (and resume them, which can lead to a
 * close) measure the C stack itself.
 */
void sandbox_check_cstack(lua_State *L)
{
    sandbox *sb = sandbox_from_lua(L);
    char here;
    if (sb->cstack_base && sb->cstack_base - (uintptr_t)&here > SANDBOX_MAX_CSTACK)
        luaL_error(L,
                   "C stack overflow: coroutines closed from __close handlers nested too deeply");
}

void sandbox_check(lua_State *L)
{
    sandbox *sb = sandbox_from_lua(L);
    check_limits(sb);
    if (sb->poison != SANDBOX_OK) raise_limit(L);
}

bool sandbox_alive(sandbox *sb)
{
    check_limits(sb);
    return sb->poison == SANDBOX_OK;
}

bool sandbox_is_limit_error(lua_State *L, int idx)
{
    return lua_touserdata(L, idx) == (void *)&limit_key;
}

void sandbox_cancel(sandbox *sb)
{
    atomic_store(&sb->cancel, 1);
}

void sandbox_poison_with(sandbox *sb, sandbox_status st)
{
    if (sb->poison == SANDBOX_OK && st > SANDBOX_ERROR && st <= SANDBOX_CANCELLED) sb->poison = st;
}

sandbox_status sandbox_poison(const sandbox *sb)
{
    return sb->poison;
}

uint64_t sandbox_remaining_ms(const sandbox *sb)
{
    uint64_t now = clock_now_ns();
    return now >= sb->deadline_ns ? 0 : (sb->deadline_ns - now) / 1000000ull;
}

sandbox_usage sandbox_get_usage(const sandbox *sb)
{
    sandbox_usage u = {sb->instructions, sb->mem_used, sb->mem_peak};
    return u;
}

/* ---- life cycle ----------------------------------------------------------- */

/* Globals only a test program adds (tests/tools/aloft_stuck.c: a C
 * function that never returns, for the watchdog's tests); aloft itself
 * defines none, so the reference is NULL. */
extern void sandbox_test_globals(sandbox *sb) __attribute__((weak));

/* Builds the environment; returns the base table. */
static int build_env(lua_State *L)
{
    sandbox_env_build(L);
    return 1;
}

/*
 * Building the environment was a fifth of a verified world's cost, and
 * every state starts from the same one. So a state just built keeps an
 * image of its memory (arena.h), and sandbox_free rewinds a state to that
 * image, byte for byte, and parks it in PARKED for the next sandbox_new
 * (when the slot is free; a second one is closed as before). Nothing of a
 * script survives the rewind: every block the state ever had is either
 * freed or copied back from the image, the sandbox's own counters start
 * again, and the next state sees exactly what a state just built sees.
 * Only a state built under the same memory cap is reused (the cap decides
 * when the collector runs while building).
 */
static _Atomic(sandbox *) parked;

static void apply_limits(sandbox_limits *lim, const sandbox_limits *limits)
{
    if (limits) *lim = *limits;
    if (!lim->max_instructions) lim->max_instructions = SANDBOX_DEFAULT_INSTRUCTIONS;
    if (!lim->max_memory) lim->max_memory = SANDBOX_DEFAULT_MEMORY;
    if (!lim->timeout_ms) lim->timeout_ms = SANDBOX_DEFAULT_TIMEOUT_MS;
    if (!lim->max_output) lim->max_output = SANDBOX_DEFAULT_OUTPUT;
    /* A limit of centuries is "none"; it must not wrap the deadline around. */
    if (lim->timeout_ms > SANDBOX_MAX_TIMEOUT_MS) lim->timeout_ms = SANDBOX_MAX_TIMEOUT_MS;
}

static void destroy(sandbox *sb)
{
    lua_close(sb->L); /* never NULL: sandbox_new frees a state it could not make */
    sandbox_arena_release(&sb->arena);
    free(sb->out);
    free(sb);
}

/* The parked state, if it was built under LIM's memory cap. */
static sandbox *unpark(const sandbox_limits *lim)
{
    sandbox *sb = atomic_exchange(&parked, NULL);
    if (sb && sb->image_max_memory != lim->max_memory) {
        destroy(sb);
        sb = NULL;
    }
    if (sb) {
        sb->lim = *lim;
        /* a cancel that reached the state after it was freed is not this
         * sandbox's */
        atomic_store(&sb->cancel, 0);
    }
    return sb;
}

/* Rewinds SB to the state just built and parks it; false if it cannot be. */
static bool park(sandbox *sb)
{
    if (!sb->arena.image || sb->call_depth != 0) return false;
    sandbox_arena_rewind(&sb->arena);
    sb->mem_used = sb->image_mem_used;
    sb->mem_peak = sb->image_mem_peak;
    sb->refused_ptr = NULL;
    sb->refused_osize = sb->refused_nsize = sb->refused_want = 0;
    sb->refused_pending = false;
    sb->instructions = 0;
    atomic_store(&sb->cancel, 0);
    sb->poison = SANDBOX_OK;
    sb->cstack_base = 0;
    free(sb->out);
    sb->out = NULL;
    sb->out_len = 0;
    sb->out_truncated = false;
    sb->out_hook = NULL;
    sb->out_hook_ud = NULL;
    sandbox *none = NULL;
    return atomic_compare_exchange_strong(&parked, &none, sb);
}

/* Keeps the image of a state just built, unless building it met the cap. */
static void keep_image(sandbox *sb)
{
    if (sb->refused_pending || sb->refused_nsize || sb->poison != SANDBOX_OK) return;
    if (sandbox_arena_keep_image(&sb->arena)) return;
    sb->image_mem_used = sb->mem_used;
    sb->image_mem_peak = sb->mem_peak;
    sb->image_max_memory = sb->lim.max_memory;
}

sandbox *sandbox_new(const sandbox_limits *limits, char *err, size_t errlen)
{
    sandbox_limits lim = {0};
    apply_limits(&lim, limits);
    sandbox *sb = unpark(&lim);
    if (sb) {
        sb->deadline_ns = clock_now_ns() + sb->lim.timeout_ms * 1000000ull;
        lua_sethook(sb->L, sandbox_hook, LUA_MASKCOUNT, SANDBOX_HOOK_STEP);
        return sb;
    }
    sb = calloc(1, sizeof *sb);
    if (!sb) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    sb->lim = lim;
    sb->deadline_ns = clock_now_ns() + sb->lim.timeout_ms * 1000000ull;
    atomic_init(&sb->cancel, 0);

    sb->L = lua_newstate(sandbox_alloc, sb);
    if (!sb->L) {
        snprintf(err, errlen, "cannot create a Lua state within %zu bytes", sb->lim.max_memory);
        sandbox_arena_release(&sb->arena);
        free(sb);
        return NULL;
    }
    lua_State *L = sb->L;
    /* Protected: under a cap too small for the environment, an unprotected
     * memory error would make Lua abort the whole process. */
    lua_pushcfunction(L, build_env);
    if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
        snprintf(err, errlen, "the environment does not fit in %zu bytes", sb->lim.max_memory);
        sandbox_free(sb);
        return NULL;
    }
    sb->base_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    if (sandbox_test_globals) sandbox_test_globals(sb);
    keep_image(sb);
    lua_sethook(L, sandbox_hook, LUA_MASKCOUNT, SANDBOX_HOOK_STEP);
    return sb;
}

void sandbox_free(sandbox *sb)
{
    if (!sb) return;
    if (park(sb)) return;
    /* Closing runs no script code of consequence (no __gc is ever set), and
     * the hook stays armed for whatever does run. */
    destroy(sb);
}

lua_State *sandbox_lua(sandbox *sb)
{
    return sb->L;
}

void sandbox_push_base(sandbox *sb)
{
    lua_rawgeti(sb->L, LUA_REGISTRYINDEX, sb->base_ref);
}

void sandbox_set_global(sandbox *sb, const char *name, lua_CFunction fn, void *upvalue)
{
    lua_State *L = sb->L;
    sandbox_push_base(sb);
    lua_pushlightuserdata(L, upvalue);
    lua_pushcclosure(L, fn, 1);
    sandbox_env_set_base(L, -2, name);
    lua_pop(L, 1);
}

void sandbox_set_global_table(sandbox *sb, const char *name)
{
    lua_State *L = sb->L;
    sandbox_env_make_readonly(L);
    sandbox_push_base(sb);
    lua_insert(L, -2);
    sandbox_env_set_base(L, -2, name);
    lua_pop(L, 1);
}

/* ---- running ------------------------------------------------------------ */

const char *sandbox_status_name(sandbox_status st)
{
    switch (st) {
    case SANDBOX_OK: return "ok";
    case SANDBOX_ERROR: return "error";
    case SANDBOX_INSTRUCTIONS: return "instructions";
    case SANDBOX_MEMORY: return "memory";
    case SANDBOX_TIMEOUT: return "timeout";
    case SANDBOX_CANCELLED: return "cancelled";
    case SANDBOX_CRASHED: return "crashed";
    case SANDBOX_HUNG: return "hung";
    }
    return "?";
}

static void limit_message(const sandbox *sb, char *err, size_t errlen)
{
    switch (sb->poison) {
    case SANDBOX_INSTRUCTIONS:
        snprintf(err, errlen, "instruction limit reached (%llu instructions)",
                 (unsigned long long)sb->lim.max_instructions);
        break;
    case SANDBOX_MEMORY:
        snprintf(err, errlen, "memory limit reached (%zu bytes)", sb->lim.max_memory);
        break;
    case SANDBOX_TIMEOUT:
        snprintf(err, errlen, "time limit reached (%llu ms)",
                 (unsigned long long)sb->lim.timeout_ms);
        break;
    default: snprintf(err, errlen, "cancelled"); break; /* the one poison left */
    }
}

/* Gives the loaded chunk on top of the stack its own global table. */
static void give_chunk_env(sandbox *sb)
{
    lua_State *L = sb->L;
    sandbox_push_base(sb);
    sandbox_env_new_chunk_env(L, lua_gettop(L));
    lua_remove(L, -2);
    lua_setupvalue(L, -2, 1); /* the chunk's _ENV */
}

/* After a load failed: the limit's message if one tripped (the memory cap,
 * while compiling), else Lua's; pops the error. */
static sandbox_status load_failed(sandbox *sb, char *err, size_t errlen)
{
    lua_State *L = sb->L;
    if (sb->poison != SANDBOX_OK)
        limit_message(sb, err, errlen);
    else
        snprintf(err, errlen, "%s", lua_isstring(L, -1) ? lua_tostring(L, -1) : "load error");
    lua_pop(L, 1);
    return sb->poison != SANDBOX_OK ? sb->poison : SANDBOX_ERROR;
}

sandbox_status sandbox_load(sandbox *sb, const char *code, size_t len, const char *chunkname,
                            char *err, size_t errlen)
{
    lua_State *L = sb->L;
    if (sb->poison != SANDBOX_OK) {
        limit_message(sb, err, errlen);
        return sb->poison;
    }
    if (!lua_checkstack(L, 4)) {
        snprintf(err, errlen, "Lua stack exhausted");
        return SANDBOX_ERROR;
    }
    if (sandbox_chunk_check(code, len, chunkname, err, errlen) != 0) return SANDBOX_ERROR;
    /* Text only: precompiled chunks could break the VM's invariants. */
    int rc = luaL_loadbufferx(L, code, len, chunkname, "t");
    if (rc != LUA_OK) return load_failed(sb, err, errlen);
    give_chunk_env(sb);
    return SANDBOX_OK;
}

/*
 * Compiled chunks of trusted sources. Parsing the runtime and the built-in
 * skills costs about 0.5 ms per mission; loading their compiled form, about
 * 1 us. Entries are keyed by the full text and chunk name (not by address:
 * a registry may be freed and another built at the same place), and the
 * compiled form only ever comes from lua_dump of text this cache compiled.
 */
#define CHUNK_CACHE_MAX 256

typedef struct cached_chunk {
    uint64_t hash;
    char *text, *name;
    size_t len;
    char *code; /* the dumped function */
    size_t code_len;
} cached_chunk;

static cached_chunk chunk_cache[CHUNK_CACHE_MAX];
static int chunk_cache_n;
static pthread_mutex_t chunk_cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* A cheap key: length and a sample of bytes; entries still compare whole. */
static uint64_t hash_text(const char *s, size_t len, const char *name)
{
    uint64_t h = 1469598103934665603ull ^ len;
    size_t step = len / 64 + 1;
    for (size_t i = 0; i < len; i += step)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    for (; *name; name++)
        h = (h ^ (unsigned char)*name) * 1099511628211ull;
    return h;
}

typedef struct dump_buf {
    char *data;
    size_t len, cap;
} dump_buf;

static int dump_writer(lua_State *L, const void *p, size_t sz, void *ud)
{
    (void)L;
    dump_buf *b = ud;
    if (b->len + sz > b->cap) {
        size_t cap = (b->len + sz) * 2;
        char *grown = realloc(b->data, cap);
        if (!grown) return 1;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, sz);
    b->len += sz;
    return 0;
}

/* Looks up the compiled form; NULL if not cached. An entry is never
 * changed or freed once added, so its compiled form is read unlocked. */
static const char *chunk_cache_get(uint64_t h, const char *code, size_t len, const char *name,
                                   size_t *out_len)
{
    const char *found = NULL;
    pthread_mutex_lock(&chunk_cache_lock);
    for (int i = 0; i < chunk_cache_n; i++) {
        cached_chunk *c = &chunk_cache[i];
        if (c->hash == h && c->len == len && !memcmp(c->text, code, len) &&
            !strcmp(c->name, name)) {
            found = c->code;
            *out_len = c->code_len;
            break;
        }
    }
    pthread_mutex_unlock(&chunk_cache_lock);
    return found;
}

static void chunk_cache_put(uint64_t h, const char *code, size_t len, const char *name,
                            dump_buf *compiled)
{
    pthread_mutex_lock(&chunk_cache_lock);
    if (chunk_cache_n < CHUNK_CACHE_MAX) {
        cached_chunk *c = &chunk_cache[chunk_cache_n];
        c->text = malloc(len ? len : 1);
        c->name = strdup(name);
        if (c->text && c->name) {
            memcpy(c->text, code, len);
            c->hash = h;
            c->len = len;
            c->code = compiled->data;
            c->code_len = compiled->len;
            compiled->data = NULL;
            chunk_cache_n++;
        } else {
            free(c->text);
            free(c->name);
        }
    }
    pthread_mutex_unlock(&chunk_cache_lock);
}

sandbox_status sandbox_load_cached(sandbox *sb, const char *code, size_t len, const char *chunkname,
                                   char *err, size_t errlen)
{
    uint64_t h = hash_text(code, len, chunkname);
    size_t clen = 0;
    const char *compiled = chunk_cache_get(h, code, len, chunkname, &clen);
    if (!compiled) {
        sandbox_status st = sandbox_load(sb, code, len, chunkname, err, errlen);
        if (st != SANDBOX_OK) return st;
        dump_buf b = {0};
        if (lua_dump(sb->L, dump_writer, &b, 0) == 0) chunk_cache_put(h, code, len, chunkname, &b);
        free(b.data);
        return SANDBOX_OK;
    }
    if (sb->poison != SANDBOX_OK) {
        limit_message(sb, err, errlen);
        return sb->poison;
    }
    int rc = luaL_loadbufferx(sb->L, compiled, clen, chunkname, "b");
    if (rc != LUA_OK) return load_failed(sb, err, errlen);
    give_chunk_env(sb);
    return SANDBOX_OK;
}

sandbox_status sandbox_call(sandbox *sb, int nargs, int nresults, char *err, size_t errlen)
{
    lua_State *L = sb->L;
    if (sb->poison != SANDBOX_OK) {
        lua_pop(L, nargs + 1);
        limit_message(sb, err, errlen);
        return sb->poison;
    }
    int base = lua_gettop(L) - nargs - 1;
    /* The stack grows down on every platform Debian runs aloft on. */
    if (sb->call_depth++ == 0) sb->cstack_base = (uintptr_t)__builtin_frame_address(0);
    int rc = lua_pcall(L, nargs, nresults, 0);
    if (--sb->call_depth == 0) sb->cstack_base = 0;
    if (rc == LUA_OK && sb->poison == SANDBOX_OK) return SANDBOX_OK;
    /* A limit that tripped without reaching the top (a skill refused to act
     * and the script caught the error): the results do not count. */
    if (rc == LUA_OK) lua_settop(L, base);
    if (sb->poison != SANDBOX_OK) {
        limit_message(sb, err, errlen);
    } else if (rc == LUA_ERRMEM && (settle_refusal(L, sb), sb->poison != SANDBOX_OK)) {
        /* Lua raises LUA_ERRMEM for error("not enough memory") too, so only
         * a refusal the allocator really made counts. */
        limit_message(sb, err, errlen);
    } else {
        const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (msg)
            snprintf(err, errlen, "%s", msg);
        else
            snprintf(err, errlen, "(error object is a %s value)", luaL_typename(L, -1));
    }
    if (rc != LUA_OK) lua_settop(L, base);
    if (sb->poison != SANDBOX_OK) lua_sethook(L, sandbox_hook, LUA_MASKCOUNT, 1);
    return sb->poison != SANDBOX_OK ? sb->poison : SANDBOX_ERROR;
}

sandbox_status sandbox_run(sandbox *sb, const char *code, size_t len, const char *chunkname,
                           char *err, size_t errlen)
{
    sandbox_status st = sandbox_load(sb, code, len, chunkname, err, errlen);
    if (st != SANDBOX_OK) return st;
    return sandbox_call(sb, 0, 0, err, errlen);
}

/* ---- output ------------------------------------------------------------- */

void sandbox_write(sandbox *sb, const char *text, size_t len)
{
    size_t room = sb->lim.max_output - sb->out_len;
    if (len > room) {
        sb->out_truncated = true;
        len = room;
    }
    if (len == 0) return;
    char *grown = realloc(sb->out, sb->out_len + len + 1);
    if (!grown) {
        sb->out_truncated = true;
        return;
    }
    sb->out = grown;
    memcpy(sb->out + sb->out_len, text, len);
    sb->out_len += len;
    sb->out[sb->out_len] = '\0';
    if (sb->out_hook) sb->out_hook(sb->out_hook_ud, text, len);
}

const char *sandbox_output(const sandbox *sb, size_t *len)
{
    if (len) *len = sb->out_len;
    return sb->out ? sb->out : "";
}

bool sandbox_output_truncated(const sandbox *sb)
{
    return sb->out_truncated;
}

void sandbox_set_output_hook(sandbox *sb, void (*fn)(void *ud, const char *line, size_t len),
                             void *ud)
{
    sb->out_hook = fn;
    sb->out_hook_ud = ud;
}
