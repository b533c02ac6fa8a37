/* The skills' typed journal (skills/skill_journal.h) and its encoders: every
 * kind of value a skill call carries, as the dispatch records it from Lua and
 * as `run --json` and the store show it (NaN and infinities as null, integral
 * numbers without ".0", a Lua table as its type name, invalid UTF-8 kept in
 * the store's text and repaired in the CLI's), violations with and without a
 * pose, empty journals, and a journal grown far past its first capacity.
 * labels: mission */
#include "jsonout.h"
#include "sandbox/sandbox.h"
#include "skills/registry.h"
#include "skills/skill_journal.h"
#include "skills/skills.h"

#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* V (freed) as the store's text (cJSON's, bytes as they are). */
static char *store_text(cJSON *v)
{
    char *t = v ? cJSON_PrintUnformatted(v) : NULL;
    cJSON_Delete(v);
    return t;
}

/* V (freed) as the CLI's text (jsonout: invalid UTF-8 repaired). */
static char *cli_text(cJSON *v)
{
    char *t = v ? jsonout_print(v) : NULL;
    cJSON_Delete(v);
    return t;
}

static void check_value(skill_value v, const char *want)
{
    char *t = store_text(skill_value_json(&v));
    CHECK(t && strcmp(t, want) == 0, "kind %d: %s, want %s", (int)v.kind, t ? t : "(null)", want);
    free(t);
}

static void test_value_kinds(void)
{
    check_value((skill_value){.kind = SKILL_VALUE_NIL}, "null");
    check_value((skill_value){.kind = SKILL_VALUE_BOOL, .b = true}, "true");
    check_value((skill_value){.kind = SKILL_VALUE_BOOL, .b = false}, "false");
    check_value((skill_value){.kind = SKILL_VALUE_INT, .i = 42}, "42");
    check_value((skill_value){.kind = SKILL_VALUE_INT, .i = -7}, "-7");
    /* Beyond a double's 53 bits the JSON has always carried cJSON's 15
     * digits (its round-trip check is approximate): kept as it was. */
    check_value((skill_value){.kind = SKILL_VALUE_INT, .i = 9007199254740993LL},
                "9.00719925474099e+15");
    check_value((skill_value){.kind = SKILL_VALUE_NUM, .n = 1.5}, "1.5");
    check_value((skill_value){.kind = SKILL_VALUE_NUM, .n = 3.0}, "3");
    check_value((skill_value){.kind = SKILL_VALUE_NUM, .n = 0.1}, "0.1");
    check_value((skill_value){.kind = SKILL_VALUE_NUM, .n = NAN}, "null");
    check_value((skill_value){.kind = SKILL_VALUE_NUM, .n = INFINITY}, "null");
    check_value((skill_value){.kind = SKILL_VALUE_NUM, .n = -INFINITY}, "null");
    check_value((skill_value){.kind = SKILL_VALUE_STR, .s = "say \"hi\"\n"},
                "\"say \\\"hi\\\"\\n\"");
    check_value((skill_value){.kind = SKILL_VALUE_OTHER, .s = "table"}, "\"table\"");

    /* Invalid UTF-8: the store keeps the bytes, the CLI repairs them. */
    skill_value bad;
    CHECK(skill_value_set_str(&bad, SKILL_VALUE_STR, "a\xff\xfe") == 0);
    char *st = store_text(skill_value_json(&bad)), *cl = cli_text(skill_value_json(&bad));
    CHECK(st && strcmp(st, "\"a\xff\xfe\"") == 0, "store %s", st ? st : "(null)");
    CHECK(cl && strcmp(cl, "\"a\xef\xbf\xbd\xef\xbf\xbd\"") == 0, "cli %s", cl ? cl : "(null)");
    free(st);
    free(cl);

    /* A copy owns its own text. */
    skill_value copy;
    CHECK(skill_value_copy(&copy, &bad) == 0 && copy.s != bad.s && strcmp(copy.s, bad.s) == 0);
    skill_value_free(&bad);
    CHECK(bad.kind == SKILL_VALUE_NIL && bad.s == NULL);
    CHECK(copy.kind == SKILL_VALUE_STR && strcmp(copy.s, "a\xff\xfe") == 0);
    skill_value_free(&copy);
}

static void check_arrays(const skill_journal *j, const char *calls, const char *violations)
{
    char *c = store_text(skill_journal_calls_json(j));
    char *v = store_text(skill_journal_violations_json(j));
    CHECK(c && strcmp(c, calls) == 0, "calls %s\n want %s", c ? c : "(null)", calls);
    CHECK(v && strcmp(v, violations) == 0, "violations %s\n want %s", v ? v : "(null)", violations);
    free(c);
    free(v);
}

static void test_records(void)
{
    skill_journal j = {0};
    check_arrays(&j, "[]", "[]");

    skill_value *args = calloc(2, sizeof *args);
    CHECK(args != NULL);
    args[0] = (skill_value){.kind = SKILL_VALUE_INT, .i = 90};
    CHECK(skill_value_set_str(&args[1], SKILL_VALUE_STR, "x") == 0);
    CHECK(skill_journal_add_call(&j, "turn_cw", args, 2, 12.25) == 0);
    CHECK(skill_journal_add_call(&j, "replan", NULL, 0, 20) == 1);
    skill_value ret = {.kind = SKILL_VALUE_BOOL, .b = true};
    skill_journal_set_ret(&j, 0, &ret);
    skill_value stray;
    CHECK(skill_value_set_str(&stray, SKILL_VALUE_STR, "nobody's") == 0);
    skill_journal_set_ret(&j, 5, &stray); /* no such call: dropped (and freed) */
    CHECK(stray.s == NULL);
    drone_pose p = {.x = 10, .y = -20, .z = 100, .yaw = 270};
    CHECK(skill_journal_add_violation(&j, "move_up", "above max_z", NULL) == 0);
    CHECK(skill_journal_add_violation(&j, "monitor", "left the geofence", &p) == 0);
    check_arrays(&j,
                 "[{\"skill\":\"turn_cw\",\"args\":[90,\"x\"],\"ret\":true,\"t_ms\":12.25},"
                 "{\"skill\":\"replan\",\"args\":[],\"ret\":null,\"t_ms\":20}]",
                 "[{\"skill\":\"move_up\",\"reason\":\"above max_z\"},"
                 "{\"skill\":\"monitor\",\"reason\":\"left the geofence\","
                 "\"pose\":{\"x\":10,\"y\":-20,\"z\":100,\"yaw\":270}}]");

    /* A move leaves the source empty and the target with the records. */
    skill_journal to = {0};
    skill_journal_move(&to, &j);
    CHECK(j.ncalls == 0 && j.nviolations == 0 && j.calls == NULL);
    CHECK(to.ncalls == 2 && to.nviolations == 2);
    check_arrays(&j, "[]", "[]");
    skill_journal_free(&to);
    CHECK(to.ncalls == 0 && to.calls == NULL);
}

/* A journal that cannot grow (here: at the largest capacity an int can
 * double to, as when memory ran out) refuses the record with -1, frees
 * the arguments it was given (the ASan build would see a leak) and keeps
 * what it had. */
static void test_full(void)
{
    skill_journal j = {0};
    CHECK(skill_journal_add_call(&j, "log", NULL, 0, 1) == 0);
    CHECK(skill_journal_add_violation(&j, "move_up", "above max_z", NULL) == 0);
    int calls = j.ncalls, cap = j.calls_cap, nv = j.nviolations, vcap = j.violations_cap;
    j.ncalls = j.calls_cap = INT_MAX / 2 + 1;
    j.nviolations = j.violations_cap = INT_MAX / 2 + 1;
    skill_value *args = calloc(1, sizeof *args);
    CHECK(args && skill_value_set_str(&args[0], SKILL_VALUE_STR, "lost") == 0);
    CHECK(skill_journal_add_call(&j, "log", args, 1, 2) == -1);
    CHECK(skill_journal_add_violation(&j, "move_up", "again", NULL) == -1);
    CHECK(j.ncalls == INT_MAX / 2 + 1 && j.nviolations == INT_MAX / 2 + 1);
    j.ncalls = calls, j.calls_cap = cap, j.nviolations = nv, j.violations_cap = vcap;
    check_arrays(&j, "[{\"skill\":\"log\",\"args\":[],\"ret\":null,\"t_ms\":1}]",
                 "[{\"skill\":\"move_up\",\"reason\":\"above max_z\"}]");
    skill_journal_free(&j);
}

/* ---- through the dispatch: what Lua hands a skill ------------------------------ */

static int echo(struct skill_ctx *ctx, lua_State *L)
{
    (void)ctx;
    lua_settop(L, 1);
    return 1;
}

static skill_registry *echo_registry(void)
{
    skill_registry *reg = registry_new();
    skill s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "echo");
    s.level = SKILL_LOW;
    s.fn = echo;
    s.nargs = 3;
    for (int i = 0; i < 3; i++) {
        snprintf(s.args[i].name, sizeof s.args[i].name, "v%d", i);
        s.args[i].type = SKILL_T_ANY;
        s.args[i].optional = true;
    }
    s.returns = SKILL_T_ANY;
    char err[256];
    CHECK(registry_add(reg, &s, err, sizeof err) == 0, "%s", err);
    return reg;
}

/* The calls of the script's loop: far past the journal's first capacity. */
#define MANY 5000

static void test_dispatch(void)
{
    char err[512];
    skill_registry *reg = echo_registry();
    sandbox_limits lim = {.max_instructions = 100000000};
    sandbox *sb = sandbox_new(&lim, err, sizeof err);
    CHECK(sb != NULL, "%s", err);
    if (!sb) return;
    skill_ctx ctx = {.reg = reg, .sb = sb};
    CHECK(skills_bind(&ctx, err, sizeof err) == 0, "%s", err);
    const char script[] = "echo(1, 1.5, 3.0)\n"
                          "echo(0/0, 1/0, -1/0)\n"
                          "echo({}, function() end, nil)\n"
                          "echo('a\\255\\254', true, false)\n"
                          "echo('cut\\0here')\n"
                          "echo()\n"
                          "echo(math.maxinteger)\n"
                          "echo(string.rep('x', 1 << 20))\n"
                          "for i = 1, 5000 do echo(i) end\n"; /* MANY */
    sandbox_status st = sandbox_run(sb, script, strlen(script), "=t", err, sizeof err);
    CHECK(st == SANDBOX_OK, "%s", err);

    const skill_journal *j = &ctx.journal;
    CHECK(j->ncalls == 8 + MANY, "%d calls", j->ncalls);
    if (j->ncalls == 8 + MANY) {
        /* integers and floats stay apart inside, even where the JSON agrees */
        CHECK(j->calls[0].args[0].kind == SKILL_VALUE_INT && j->calls[0].args[0].i == 1);
        CHECK(j->calls[0].args[2].kind == SKILL_VALUE_NUM && j->calls[0].args[2].n == 3.0);
        CHECK(j->calls[0].ret.kind == SKILL_VALUE_INT);
        CHECK(j->calls[1].args[0].kind == SKILL_VALUE_NUM && isnan(j->calls[1].args[0].n));
        CHECK(j->calls[2].nargs == 3 && j->calls[2].args[2].kind == SKILL_VALUE_NIL);
        CHECK(j->calls[5].nargs == 0 && j->calls[5].args == NULL);
        const skill_value *huge = &j->calls[7].args[0];
        CHECK(huge->kind == SKILL_VALUE_STR && strlen(huge->s) == (size_t)1 << 20);
        CHECK(j->calls[7].ret.kind == SKILL_VALUE_STR && strlen(j->calls[7].ret.s) == 1 << 20);
        const skill_call *last = &j->calls[j->ncalls - 1];
        CHECK(strcmp(last->skill, "echo") == 0 && last->nargs == 1 &&
              last->args[0].kind == SKILL_VALUE_INT && last->args[0].i == MANY &&
              last->ret.kind == SKILL_VALUE_INT && last->ret.i == MANY);
        CHECK(j->calls_cap >= j->ncalls);
    }
    CHECK(j->nviolations == 0);

    /* The JSON of the first calls: what `run --json` and the store show. */
    cJSON *calls = skill_journal_calls_json(j);
    CHECK(calls && cJSON_GetArraySize(calls) == 8 + MANY);
    static const char *const want[] = {
        "{\"skill\":\"echo\",\"args\":[1,1.5,3],\"ret\":1}",
        "{\"skill\":\"echo\",\"args\":[null,null,null],\"ret\":null}",
        "{\"skill\":\"echo\",\"args\":[\"table\",\"function\",null],\"ret\":\"table\"}",
        "{\"skill\":\"echo\",\"args\":[\"a\xff\xfe\",true,false],\"ret\":\"a\xff\xfe\"}",
        "{\"skill\":\"echo\",\"args\":[\"cut\"],\"ret\":\"cut\"}",
        "{\"skill\":\"echo\",\"args\":[],\"ret\":null}",
        "{\"skill\":\"echo\",\"args\":[9.2233720368547758e+18],\"ret\":9.2233720368547758e+18}",
    };
    for (int i = 0; calls && i < (int)(sizeof want / sizeof want[0]); i++) {
        cJSON *c = cJSON_GetArrayItem(calls, i);
        /* t_ms is a time: left out of the comparison */
        cJSON *t = cJSON_DetachItemFromObjectCaseSensitive(c, "t_ms");
        CHECK(cJSON_IsNumber(t) && t->valuedouble >= 0);
        cJSON_Delete(t);
        char *text = c ? cJSON_PrintUnformatted(c) : NULL;
        CHECK(text && strcmp(text, want[i]) == 0, "call %d: %s\n want %s", i, text ? text : "",
              want[i]);
        free(text);
    }
    cJSON_Delete(calls);
    skills_release(&ctx);
    CHECK(ctx.journal.ncalls == 0 && ctx.journal.calls == NULL);
    sandbox_free(sb);
    registry_free(reg);
}

int main(void)
{
    test_value_kinds();
    test_records();
    test_full();
    test_dispatch();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_skill_journal: ok\n");
    return failures != 0;
}
