/*
 * Compiled plans run in the sandbox with the MiniSpec runtime: MiniSpec's
 * semantics (returns from inside loops, comparison and truth rules, probe
 * coercion, rp), and a plan executed event by event as it streams in does
 * exactly what the same plan does compiled whole.
 */
#include "embedded.h"
#include "minispec/stream_exec.h"
#include "skills/probe_answer.h"
#include "test_minispec_util.h"

#include <lauxlib.h>

#include "check.h"

static skill_registry *reg;

/* ---- a pretend world: skills that record their calls ---- */

typedef struct world {
    char log[4096];
    int heading, probes;
} world;

static world W;

static void note(const char *fmt, const char *a, const char *b)
{
    size_t k = strlen(W.log);
    snprintf(W.log + k, sizeof W.log - k, fmt, a, b);
}

static int fake_skill(lua_State *L)
{
    const char *name = lua_touserdata(L, lua_upvalueindex(1));
    int n = lua_gettop(L);
    char args[256] = "";
    for (int i = 1; i <= n; i++) {
        size_t k = strlen(args);
        snprintf(args + k, sizeof args - k, "%s%s", i > 1 ? "," : "", luaL_tolstring(L, i, NULL));
        lua_pop(L, 1);
    }
    note("%s(%s);", name, args);
    if (strncmp(name, "turn_", 5) == 0) {
        W.heading += (int)lua_tointeger(L, 1) * (name[5] == 'c' && name[6] == 'w' ? 1 : -1);
        lua_pushboolean(L, 1);
    } else if (strcmp(name, "is_visible") == 0) {
        lua_pushboolean(L, W.heading >= 90); /* things appear after a quarter turn */
    } else if (strncmp(name, "object_", 7) == 0) {
        if (W.heading >= 90)
            lua_pushnumber(L, 0.45);
        else
            lua_pushboolean(L, 0);
    } else if (strcmp(name, "probe") == 0) {
        /* raw answers, coerced by the probe skill's rule */
        static const char *const answers[] = {" 2 ", "True", "person_1", "False", "3.5"};
        const char *answer = answers[W.probes++ % 5];
        probe_answer_push(L, answer, strlen(answer));
    } else if (strcmp(name, "take_picture") == 0) {
        lua_pushstring(L, "picture-1.jpg");
    } else if (strcmp(name, "replan") == 0) {
        lua_pushnil(L);
    } else {
        lua_pushboolean(L, 1);
    }
    return 1;
}

static sandbox *world_sandbox(void)
{
    memset(&W, 0, sizeof W);
    char err[256];
    sandbox *sb = sandbox_new(NULL, err, sizeof err);
    if (!sb) {
        fprintf(stderr, "sandbox: %s\n", err);
        exit(1);
    }
    for (size_t i = 0; i < registry_count(reg); i++) {
        const skill *s = registry_at(reg, i);
        sandbox_set_global(sb, s->name, fake_skill, (void *)s->name);
    }
    const embedded_file *rt = embedded_find("lua/minispec.lua");
    if (!rt || sandbox_load(sb, rt->data, rt->len, "@lua/minispec.lua", err, sizeof err) ||
        sandbox_call(sb, 0, 1, err, sizeof err)) {
        fprintf(stderr, "runtime: %s\n", rt ? err : "lua/minispec.lua is not embedded");
        exit(1);
    }
    sandbox_set_global_table(sb, "minispec");
    return sb;
}

/* What a run did: the calls, then "=> result" or "!! error". */
static void outcome(sandbox *sb, sandbox_status st, const char *err, char *out, size_t outlen)
{
    lua_State *L = sandbox_lua(sb);
    if (st != SANDBOX_OK) {
        /* the error text after the chunk position ("plan:3: ") */
        const char *msg = strstr(err, ": ") ? strstr(err, ": ") + 2 : err;
        snprintf(out, outlen, "%s!! %s", W.log, msg);
    } else {
        snprintf(out, outlen, "%s=> %s", W.log, luaL_tolstring(L, -1, NULL));
        lua_pop(L, 2);
    }
}

static void run_whole(const char *plan, char *out, size_t outlen)
{
    ms_result r;
    if (minispec_compile(reg, plan, strlen(plan), NULL, &r)) {
        snprintf(out, outlen, "!! %s", r.diags[0].message); /* as the executor reports it */
        ms_result_free(&r);
        return;
    }
    sandbox *sb = world_sandbox();
    char err[512] = "";
    sandbox_status st = sandbox_load(sb, r.lua, strlen(r.lua), "=plan", err, sizeof err);
    if (st == SANDBOX_OK) st = sandbox_call(sb, 0, 1, err, sizeof err);
    outcome(sb, st, err, out, outlen);
    sandbox_free(sb);
    ms_result_free(&r);
}

static void run_streamed(const char *plan, size_t chunk, char *out, size_t outlen)
{
    sandbox *sb = world_sandbox();
    ms_stream *s = ms_stream_new(reg, NULL);
    ms_exec *x = ms_exec_new(sb);
    char err[512] = "";
    sandbox_status st = SANDBOX_OK;
    size_t len = strlen(plan), fed = 0;
    bool done = false;
    while (!done && st == SANDBOX_OK) {
        if (fed < len) {
            size_t n = len - fed < chunk ? len - fed : chunk;
            ms_stream_feed(s, plan + fed, n);
            fed += n;
        } else {
            ms_stream_finish(s);
        }
        ms_event ev;
        ms_event_kind k;
        while (st == SANDBOX_OK && (k = ms_stream_next(s, &ev)) != MS_EV_NONE) {
            if (k == MS_EV_DONE) {
                done = true;
                break;
            }
            st = ms_exec_event(x, &ev, err, sizeof err);
        }
    }
    if (st == SANDBOX_OK) ms_exec_push_result(x);
    outcome(sb, st, err, out, outlen);
    ms_exec_free(x);
    ms_stream_free(s);
    sandbox_free(sb);
}

static void expect_run(const char *plan, const char *want)
{
    char got[16384];
    run_whole(plan, got, sizeof got);
    CHECK(strcmp(got, want) == 0, "plan %s\n  ran: %s\n want: %s", plan, got, want);
}

/* The forms of TypeFly's own plans (SPEC §4, TypeFly compatibility). */
static void test_typefly_forms(void)
{
    /* `->rp` and `->re_plan` return by replanning */
    expect_run("tc(10);?tc(5){->rp}l('never')", "turn_cw(10);turn_cw(5);replan();=> nil");
    expect_run("->re_plan;l('never')", "replan();=> nil");
    expect_run("re_plan();l('never')", "replan();=> nil");
    /* `p` alone is take_picture; with an argument it is probe */
    expect_run("o,chair_1;p", "orienting(chair_1);take_picture();=> nil");
    expect_run("_1=p;->_1", "take_picture();=> picture-1.jpg");
    expect_run("p();->p('n?')", "take_picture();probe(n?);=> 2");
    expect_run("->p,'n?'", "probe(n?);=> 2");
    expect_run("probe('n?');query,'m?'", "probe(n?);probe(m?);=> nil");
    /* goto and approach take a distance */
    expect_run("g('apple',20);a('apple',30);a",
               "goto(apple,20);approach(apple,30);approach();=> nil");
    /* named variables */
    expect_run("_obj=p('n?');_n_2=1;->_obj+_n_2", "probe(n?);=> 3");
    expect_run("_1a=5;_1=2;->_1a-_1", "=> 3");
    /* a numeral where text is expected is its text */
    expect_run("l,3;l(4.5);l(-2);->iv(7)", "log(3);log(4.5);log(-2);is_visible(7);=> false");
    /* TypeFly 2.0: && and ||, and an else branch */
    expect_run("?iv('a')&&True||False{l('y')}:{l('n')}->1", "is_visible(a);log(n);=> 1");
    expect_run("tc(90);?iv('a'){l('y')}:{l('n')}", "turn_cw(90);is_visible(a);log(y);=> nil");
    expect_run("?False{?True{l('a')}:{l('b')}}:{?False{l('c')}:{l('d')}}", "log(d);=> nil");
    expect_run("?True{}:{l('no')};?False{}:{_2=1};?True{l(1)}:{->2}->3", "log(1);=> 3");
    /* TypeFly 2.0: a condition that assigns (?_1=sd('...'){g(_1)}), and r */
    expect_run("?_1=p('n?'){l(_1)}:{l('no')}->_1", "probe(n?);log(2);=> 2");
    expect_run("?_v=iv('a'){l('y')}l(_v);->_v", "is_visible(a);log(false);=> false");
    expect_run("?_1=sd('edible?'){g(_1)}", "scan_abstract(edible?);goto(true);=> nil");
    expect_run("r(180);r(-30)", "rotate(180);rotate(-30);=> nil");
}

static void test_semantics(void)
{
    /* -> ends the plan from inside nested loops */
    expect_run("3{2{tc,45;?iv,cup{->True}}}->False",
               "turn_cw(45);is_visible(cup);turn_cw(45);is_visible(cup);=> true");
    expect_run("3{3{->tc(1)}}l('never')", "turn_cw(1);=> true");
    /* comparisons: numbers numerically, == across types false, != true */
    expect_run("->1==1.0", "=> true");
    expect_run("->1=='1'", "=> false");
    expect_run("->'a'!=1", "=> true");
    expect_run("->True==1", "=> false");
    expect_run("->2.5>=2", "=> true");
    expect_run("?'a'<1{}", "!! cannot compare text 'a' < number 1: '<' compares numbers only "
                           "(or a bool with a number)");
    expect_run("?'a'>=True{}", "!! cannot compare text 'a' >= True: '>=' compares numbers only "
                               "(or a bool with a number)");
    expect_run("?None<1{}", "!! cannot compare None < number 1: '<' compares numbers only "
                            "(or a bool with a number)");
    expect_run("?True<False{}", "!! cannot compare True < False: '<' compares numbers only "
                                "(or a bool with a number)");
    /* a bool orders against a number as 0/1, as in Python (TypeFly 2023's
     * orienting tests `?_1>0.6` with _1 False when the object is unseen) */
    expect_run("_1=ox('cup');?_1>0.5{l('right')}->_1", "object_x(cup);=> false");
    expect_run("->False<0.4", "=> true");
    expect_run("->False>=0", "=> true");
    expect_run("->True>0.99", "=> true");
    expect_run("->True<=1", "=> true");
    expect_run("->1<True", "=> false");
    expect_run("->0.5>False", "=> true");
    /* truth: False, None, 0 and '' are false */
    expect_run("?0{->1}?''{->2}?None{->3}?False{->4}?'x'{->5}->6", "=> 5");
    expect_run("?0.0|''{->1}?1&'a'{->2}->3", "=> 2");
    /* arithmetic */
    expect_run("->7/2", "=> 3.5");
    expect_run("->2+3*4-(1-2)", "=> 15");
    expect_run("->1/0", "!! division by zero");
    expect_run("_1=tp;->_1*2",
               "take_picture();!! arithmetic needs numbers, got text 'picture-1.jpg'");
    /* probe answers are coerced: " 2 " -> 2, "True" -> true, else text */
    expect_run("_1=p('how many?');_2=q,'is it?';_3=p('who');->_1+1==3&_2==True&_3=='person_1'",
               "probe(how many?);probe(is it?);probe(who);=> true");
    /* rp calls replan and ends the plan */
    expect_run("tc(10);rp;l('never')", "turn_cw(10);replan();=> nil");
    /* variables keep their values across statements and loop iterations */
    expect_run("_1=0;4{_1=_1+1}->_1", "=> 4");
    expect_run("_1=s('cup');?_1==True{o,cup;a;->True}->False",
               "scan(cup);orienting(cup);approach();=> true");
    test_typefly_forms();
}

/* Every example plan, and some with loops and returns, behave the same fed
 * whole, byte by byte, and in chunks of 7. */
static void check_same(const char *name, const char *plan)
{
    char whole[16384], bytes[16384], chunks[16384];
    run_whole(plan, whole, sizeof whole);
    run_streamed(plan, 1, bytes, sizeof bytes);
    run_streamed(plan, 7, chunks, sizeof chunks);
    CHECK(strcmp(whole, bytes) == 0 && strcmp(whole, chunks) == 0,
          "%s: whole and streamed differ\n  whole:  %s\n  bytes:  %s\n  chunks: %s", name, whole,
          bytes, chunks);
}

static void test_stream_execution_matches_whole(const char *src)
{
    char **files;
    int n = test_ms_plan_files(src, &files);
    for (int i = 0; i < n; i++) {
        size_t len;
        char *text = test_ms_read_file(files[i], &len);
        check_same(files[i], text);
        free(text);
        free(files[i]);
    }
    free(files);
    static const char *const plans[] = {
        "3{tc(10);?iv('x'){l('seen');->ow('x')}}l('end')",
        "_1=0;5{_1=_1+1;?_1==3{->_1}}",
        "2{3{tc(40)}l('lap')}?iv('x')==False{->0}->1",
        "4{_1=p('q');?_1!=False{l(_1)}}",
        "?iv('x'){2{tc(100)}}tc(100);?iv('x'){2{->tc(5)}}",
        "tc(10);rp;tc(20)",
        "_1=1;->_1+",
        "tc(10);?tc(5){->rp}l('never')",
        "o,chair_1;p;_x=p;l(_x)",
        "_obj='a';?iv(_obj)&&True||False{l('y')}:{l('n');?False{}:{l('m')}}l(3)",
        "tc(90);?iv('a'){l('y')}:{l('n')}->re_plan",
        "3{?iv('a'){->1}:{tc(45)}}",
        "?_1=p('q'){l(_1)}:{l('n')}l(_1);4{?_2=iv('x'){->_2}tc(90)}",
    };
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++)
        check_same(plans[i], plans[i]);
}

/* A MiniSpec-defined skill (a skill file with minispec=) runs as the Lua
 * function its definition compiled to. */
static void expect_skill(const char *name, const char *arg, const char *want)
{
    const skill *s = registry_find(reg, name, strlen(name));
    CHECK(s && s->lua_code, "%s has no compiled definition", name);
    if (!s || !s->lua_code) return;
    sandbox *sb = world_sandbox();
    char err[512] = "", got[16384];
    lua_State *L = sandbox_lua(sb);
    sandbox_status st =
        sandbox_load(sb, s->lua_code, strlen(s->lua_code), "=skill", err, sizeof err);
    if (st == SANDBOX_OK) st = sandbox_call(sb, 0, 1, err, sizeof err);
    if (st == SANDBOX_OK) {
        int n = 0;
        if (arg) {
            lua_pushstring(L, arg);
            n = 1;
        }
        st = sandbox_call(sb, n, 1, err, sizeof err);
    }
    outcome(sb, st, err, got, sizeof got);
    CHECK(strcmp(got, want) == 0, "skill %s(%s)\n  ran: %s\n want: %s", name, arg ? arg : "", got,
          want);
    sandbox_free(sb);
}

static void test_minispec_skills(void)
{
    expect_skill("sweeping", "cup",
                 "is_visible(cup);turn_cw(45);is_visible(cup);turn_cw(45);is_visible(cup);=> true");
    expect_skill("sweeping_abstract", "anything edible?", "probe(anything edible?);=> 2");
    expect_skill("approach_typefly", NULL, "move_forward(120);=> nil");
    /* unseen: x is False, which Python orders as 0 < 0.4: it turns left */
    expect_skill("orienting_typefly", "door",
                 "object_x(door);turn_ccw(15);object_x(door);object_x(door);turn_ccw(15);"
                 "object_x(door);object_x(door);turn_ccw(15);object_x(door);object_x(door);"
                 "turn_ccw(15);object_x(door);=> false");
}

int main(void)
{
    const char *src = getenv("SRC");
    if (!src) src = ".";
    reg = test_ms_registry(src);
    test_semantics();
    test_minispec_skills();
    test_stream_execution_matches_whole(src);
    registry_free(reg);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
