/*
 * libFuzzer harness for the MiniSpec compiler (parser, checker, emitter and
 * stream parser). Properties, each an abort when broken:
 *   - no crash, no undefined behaviour, no leak (ASan/UBSan/LeakSanitizer);
 *   - every plan or skill definition the checker accepts compiles to Lua
 *     that Lua's own parser accepts;
 *   - the whole-plan compiler and the stream parser fed the whole plan
 *     agree: the stream fails exactly when the plan is invalid, with the
 *     whole plan's first diagnostic (test_ms_whole_and_stream_agree);
 *   - the stream parser fed in chunks of pseudo-random sizes (down to one
 *     byte) reports the same events as fed whole, and fails exactly when
 *     the whole-plan checker does.
 *
 * The compiler's sources are included here rather than linked from
 * libaloft so that they carry the fuzzer's coverage instrumentation (the
 * library itself is built without it).
 */
#include "../../host/minispec/buf.c"
#include "../../host/minispec/check.c"
#include "../../host/minispec/compile.c"
#include "../../host/minispec/emit.c"
#include "../../host/minispec/lexer.c"
#include "../../host/minispec/parser.c"
#include "../../host/minispec/skilldef.c"
#include "../../host/minispec/stream.c"
#include "../../host/minispec/unit.c"
#include "../test_minispec_util.h"

#include <lauxlib.h>
#include <stdint.h>

static skill_registry *reg;
static lua_State *L;

static void lua_must_accept(const char *code, const char *what)
{
    if (luaL_loadbufferx(L, code, strlen(code), "=plan", "t") != LUA_OK) {
        fprintf(stderr, "%s: accepted plan compiled to Lua that does not load: %s\n%s\n", what,
                lua_tostring(L, -1), code);
        abort();
    }
    lua_settop(L, 0);
}

typedef struct event_log {
    ms_buf text; /* one line per event: kind off len code */
    bool error;
} event_log;

static void stream_events(const char *data, size_t size, uint32_t seed, event_log *log)
{
    ms_stream *s = ms_stream_new(reg, NULL);
    size_t fed = 0;
    bool stop = false;
    while (!stop) {
        if (fed < size) {
            size_t n = size - fed;
            if (seed) {
                seed = seed * 1103515245u + 12345u;
                size_t chunk = 1 + (seed >> 16) % 16;
                if (chunk < n) n = chunk;
            }
            ms_stream_feed(s, data + fed, n);
            fed += n;
        } else {
            ms_stream_finish(s);
            stop = true;
        }
        ms_event ev;
        ms_event_kind k;
        while ((k = ms_stream_next(s, &ev)) != MS_EV_NONE && k != MS_EV_DONE) {
            char head[64];
            snprintf(head, sizeof head, "%d %zu %zu ", (int)k, ev.off, ev.len);
            ms_buf_adds(&log->text, head);
            if (ev.lua) ms_buf_add(&log->text, ev.lua, ev.lua_len);
            if (k == MS_EV_ERROR) {
                ms_buf_adds(&log->text, ev.diag ? ev.diag->message : "?");
                log->error = true;
                stop = true;
                break;
            }
            ms_buf_addc(&log->text, '\n');
        }
    }
    ms_stream_free(s);
}

/* libFuzzer's entry point (declared here: no header of libFuzzer has it). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!reg) {
        reg = test_ms_registry(NULL);
        L = luaL_newstate();
    }
    if (size > 8192) return 0;
    const char *src = (const char *)data;

    ms_result r;
    minispec_compile(reg, src, size, NULL, &r);
    if (r.ok) lua_must_accept(r.lua, "plan");
    bool ok = r.ok;
    ms_result_free(&r);

    char why[4096];
    if (!test_ms_whole_and_stream_agree(reg, src, size, why, sizeof why)) {
        fprintf(stderr, "the whole-plan compiler and the stream parser disagree: %s\n", why);
        abort();
    }

    minispec_compile_definition(reg, src, size, 2, NULL, &r);
    if (r.ok) lua_must_accept(r.lua, "skill definition");
    ms_result_free(&r);

    event_log whole, chunked;
    memset(&whole, 0, sizeof whole);
    memset(&chunked, 0, sizeof chunked);
    stream_events(src, size, 0, &whole);
    stream_events(src, size, (uint32_t)size * 2654435761u + 1, &chunked);
    if (whole.error == ok) {
        fprintf(stderr, "stream error=%d but whole-plan ok=%d\n", whole.error, ok);
        abort();
    }
    const char *a = whole.text.data ? whole.text.data : "";
    const char *b = chunked.text.data ? chunked.text.data : "";
    if (strcmp(a, b) != 0) {
        fprintf(stderr,
                "chunked stream differs from whole stream:\n--- whole\n%s\n--- chunked\n%s\n", a,
                b);
        abort();
    }
    ms_buf_free(&whole.text);
    ms_buf_free(&chunked.text);
    return 0;
}
