/*
 * The MiniSpec compiler on whole plans: every published TypeFly plan and
 * every example plan checks clean and compiles to Lua that Lua accepts;
 * malformed plans get exactly the diagnostics an LLM should read.
 */
#include "loader/loader.h"
#include "test_minispec_util.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "check.h"

static skill_registry *reg;

static bool lua_accepts(const char *code, char *err, size_t errlen)
{
    lua_State *L = luaL_newstate();
    int rc = luaL_loadbufferx(L, code, strlen(code), "=plan", "t");
    if (rc != LUA_OK) snprintf(err, errlen, "%s", lua_tostring(L, -1));
    lua_close(L);
    return rc == LUA_OK;
}

/* All diagnostics as "L:C: message" lines. */
static void diag_text(const ms_result *r, char *out, size_t outlen)
{
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; i < r->ndiags && k < outlen; i++)
        k += (size_t)snprintf(out + k, outlen - k, "%s%d:%d: %s", i ? "\n" : "", r->diags[i].line,
                              r->diags[i].col, r->diags[i].message);
}

static void test_example_plans_check_clean_and_compile(const char *src)
{
    char **files;
    int n = test_ms_plan_files(src, &files);
    CHECK(n >= 25, "expected the example plans, found %d", n);
    for (int i = 0; i < n; i++) {
        size_t len = 0;
        char *text = test_ms_read_file(files[i], &len);
        ms_result r;
        int rc = minispec_compile(reg, text, len, NULL, &r);
        char diags[2048];
        diag_text(&r, diags, sizeof diags);
        CHECK(rc == 0 && r.ok, "%s does not check clean:\n%s", files[i], diags);
        char err[512];
        if (r.ok)
            CHECK(lua_accepts(r.lua, err, sizeof err), "%s: Lua: %s\n%s", files[i], err, r.lua);
        ms_result_free(&r);
        free(text);
        free(files[i]);
    }
    free(files);
}

static void expect_lua(const char *plan, const char *lua)
{
    ms_result r;
    minispec_compile(reg, plan, strlen(plan), NULL, &r);
    CHECK(r.ok && strcmp(r.lua, lua) == 0, "plan %s compiled to\n%s\nexpected\n%s", plan,
          r.ok ? r.lua : "(errors)", lua);
    ms_result_free(&r);
}

static void test_lua_is_readable_and_exact(void)
{
    expect_lua("8{?iv,apple==True{->True}tc,45}->False",
               "local ms, v = minispec, {}\n"
               "for _ = 1, 8 do\n"
               "  if ms.call(\"is_visible\", \"apple\") == true then\n"
               "    do return true end\n"
               "  end\n"
               "  ms.call(\"turn_cw\", 45)\n"
               "end\n"
               "do return false end\n");
    expect_lua("_1=q('n?');?_1>2&_1!=5|_1{l(_1)}",
               "local ms, v = minispec, {}\n"
               "v._1 = ms.call(\"probe\", \"n?\")\n"
               "if ms.gt(v._1, 2) and v._1 ~= 5 or ms.truth(v._1) then\n"
               "  ms.call(\"log\", v._1)\n"
               "end\n");
    expect_lua("_1=ox('a');tc((_1-0.5)*90+1-(2-3));tc(8/2)",
               "local ms, v = minispec, {}\n"
               "v._1 = ms.call(\"object_x\", \"a\")\n"
               "ms.call(\"turn_cw\", (ms.num(v._1) - 0.5) * 90 + 1 - (2 - 3))\n"
               "ms.call(\"turn_cw\", ms.div(8, 2))\n");
    expect_lua("?iv,cup{rp};l,'say \"hi\"\\n'",
               "local ms, v = minispec, {}\n"
               "if ms.truth(ms.call(\"is_visible\", \"cup\")) then\n"
               "  do return ms.replan() end\n"
               "end\n"
               "ms.call(\"log\", \"say \\\"hi\\\"\\n\")\n");
    expect_lua("tc(-45);tc(--5);_1=-ox(x)", "local ms, v = minispec, {}\n"
                                            "ms.call(\"turn_cw\", -45)\n"
                                            "ms.call(\"turn_cw\", -(-5))\n"
                                            "v._1 = -ms.num(ms.call(\"object_x\", \"x\"))\n");
}

static void test_dialect_and_skills_used(void)
{
    static const struct {
        const char *plan, *dialect, *skills;
    } cases[] = {
        {"tc,45;o,apple;a", "v1", "turn_cw orienting approach"},
        {"tc(45);o('apple');a", "v2", "turn_cw orienting approach"},
        {"tc,45;o('apple');tc,90", "mixed", "turn_cw orienting"},
        {"a;->True", "v2", "approach"},
        {"q,'x';query('y');p('z')", "mixed", "probe"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ms_result r;
        minispec_compile(reg, cases[i].plan, strlen(cases[i].plan), NULL, &r);
        char used[256] = "";
        for (int k = 0; k < r.nskills; k++) {
            strcat(used, k ? " " : "");
            strcat(used, r.skills[k]);
        }
        CHECK(r.ok && strcmp(r.dialect, cases[i].dialect) == 0 &&
                  strcmp(used, cases[i].skills) == 0,
              "%s: ok=%d dialect %s skills '%s'", cases[i].plan, r.ok, r.dialect, used);
        ms_result_free(&r);
    }
}

/* The exact diagnostics for plans an LLM gets wrong. */
static void test_malformed_plans_get_exact_diagnostics(void)
{
    static const struct {
        const char *what, *plan, *diags;
    } cases[] = {
#include "test_minispec_cases.h"
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ms_result r;
        int rc = minispec_compile(reg, cases[i].plan, strlen(cases[i].plan), NULL, &r);
        char diags[4096];
        diag_text(&r, diags, sizeof diags);
        CHECK(rc == -1 && !r.ok && r.lua == NULL && strcmp(diags, cases[i].diags) == 0,
              "%s: plan %s\ngot:\n%s\nexpected:\n%s", cases[i].what, cases[i].plan, diags,
              cases[i].diags);
        ms_result_free(&r);
    }
}

static void test_loop_limit_is_configurable(void)
{
    ms_options o = {.max_loop = 5};
    ms_result r;
    minispec_compile(reg, "6{tc,1}", 7, &o, &r);
    CHECK(!r.ok && r.ndiags == 1 &&
              strcmp(r.diags[0].message, "loop count 6 must be between 1 and 5") == 0,
          "max_loop 5 not applied");
    ms_result_free(&r);
    minispec_compile(reg, "5{tc,1}", 7, &o, &r);
    CHECK(r.ok, "5 iterations refused with max_loop 5");
    ms_result_free(&r);
    minispec_compile(reg, "1000{tc,1}", 10, NULL, &r);
    CHECK(r.ok, "1000 iterations refused by default");
    ms_result_free(&r);
}

/* A 1 MB plan compiles, and an error at its very end is found at the right
 * line and column. */
static void test_megabyte_plan(void)
{
    size_t cap = 1100000, n = 0;
    char *plan = malloc(cap);
    int lines = 0;
    while (n < 1000000) {
        n += (size_t)sprintf(plan + n, "_%d=ox('ball');?_%d>0.5{tc(10)}mf(20);\n", lines % 50 + 1,
                             lines % 50 + 1);
        lines++;
    }
    ms_result r;
    minispec_compile(reg, plan, n, NULL, &r);
    char err[512] = "";
    CHECK(r.ok && lua_accepts(r.lua, err, sizeof err), "1 MB plan: ok=%d %s", r.ok, err);
    ms_result_free(&r);
    n += (size_t)sprintf(plan + n, "mf(20);turnleft(90)");
    minispec_compile(reg, plan, n, NULL, &r);
    char want[128];
    snprintf(want, sizeof want, "%d:8: unknown skill 'turnleft' (did you mean 'turn_ccw' / 'tu'?)",
             lines + 1);
    char diags[512];
    diag_text(&r, diags, sizeof diags);
    CHECK(strcmp(diags, want) == 0, "1 MB plan with an error: %s (want %s)", diags, want);
    ms_result_free(&r);
    free(plan);
}

static void test_skill_definitions(void)
{
    static const struct {
        const char *def;
        int nparams;
        const char *diags; /* NULL: valid */
    } cases[] = {
        {"8{?iv,$1==True{->True}tc,45}->False", 1, NULL},
        {"8{_1=q,$1;?_1!=False{->_1}tc,45}->False", 1, NULL},
        {"mf,120", 0, NULL},
        {"4{_1=ox,$1;?_1>0.6{tc,15};?_1<0.4{tu,15};_2=ox,$1;?_2<0.6&_2>0.4{->True}}->False", 1,
         NULL},
        {"tc($2)", 1, "1:4: '$2' is out of range: this skill takes 1 argument"},
        {"mf($1)", 0, "1:4: '$1' is out of range: this skill takes 0 arguments"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ms_result r;
        minispec_compile_definition(reg, cases[i].def, strlen(cases[i].def), cases[i].nparams, NULL,
                                    &r);
        char diags[1024], err[512] = "";
        diag_text(&r, diags, sizeof diags);
        if (!cases[i].diags)
            CHECK(r.ok && lua_accepts(r.lua, err, sizeof err), "%s: %s %s", cases[i].def, diags,
                  err);
        else
            CHECK(!r.ok && strcmp(diags, cases[i].diags) == 0, "%s: got %s", cases[i].def, diags);
        ms_result_free(&r);
    }
    /* $1 outside a skill definition */
    ms_result r;
    minispec_compile(reg, "tc($1)", 6, NULL, &r);
    CHECK(!r.ok &&
              strcmp(r.diags[0].message, "'$1' can only be used inside a skill definition") == 0,
          "$1 accepted in a plan");
    ms_result_free(&r);
}

/* A skill file whose definition is wrong is refused, and the report names
 * the file and the place in the definition. */
static char reported[1024];
static void remember_report(void *ud, const char *path, const char *message)
{
    (void)ud;
    snprintf(reported, sizeof reported, "%s: %s", path, message);
}

static void test_bad_skill_file_is_reported_at_the_file(void)
{
    skill_registry *r2 = registry_new();
    char err[512];
    loader_add_builtins(r2, err, sizeof err);
    const char *src = "return {name='spin', description='d', args={{name='n',type='int'}},"
                      " minispec='4{tc,$1;turnleft,$1}'}";
    CHECK(loader_load_source(r2, "my_skills/spin.lua", src, strlen(src), false, err, sizeof err) ==
              0,
          "load: %s", err);
    int removed = loader_finalize(r2, remember_report, NULL);
    CHECK(removed == 1 && !registry_find(r2, "spin", 4), "bad skill kept");
    CHECK(strcmp(reported, "my_skills/spin.lua: minispec 1:9: unknown skill 'turnleft' (did you "
                           "mean 'turn_ccw' / 'tu'?)") == 0,
          "report: %s", reported);
    registry_free(r2);
    const skill *s = registry_find(reg, "sweeping", 8);
    CHECK(s && s->lua_code && strstr(s->lua_code, "return function(a1)"), "sweeping not compiled");
}

int main(void)
{
    const char *src = getenv("SRC");
    if (!src) src = ".";
    reg = test_ms_registry(src);
    test_example_plans_check_clean_and_compile(src);
    test_lua_is_readable_and_exact();
    test_dialect_and_skills_used();
    test_malformed_plans_get_exact_diagnostics();
    test_loop_limit_is_configurable();
    test_megabyte_plan();
    test_skill_definitions();
    test_bad_skill_file_is_reported_at_the_file();
    registry_free(reg);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
