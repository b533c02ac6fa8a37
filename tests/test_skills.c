/* The skill registry and the dispatch path: abbreviations, user skill files
 * (good and broken), skills as Lua globals, argument checks, call records. */
#include "sandbox/sandbox.h"
#include "loader/loader.h"
#include "skills/registry.h"
#include "skills/skills.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

typedef struct reports {
    char text[8192];
    int n;
} reports;

static void collect(void *ud, const char *path, const char *message)
{
    reports *r = ud;
    size_t used = strlen(r->text);
    snprintf(r->text + used, sizeof r->text - used, "%s: %s\n", path, message);
    r->n++;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_builtin_abbreviations_match_typefly(void)
{
    static const char *const expected[][2] = {
        {"move_forward", "mf"}, {"move_backward", "mb"}, {"move_left", "ml"},
        {"move_right", "mr"},   {"move_up", "mu"},       {"move_down", "md"},
        {"turn_cw", "tc"},      {"turn_ccw", "tu"},      {"delay", "d"},
        {"is_visible", "iv"},   {"object_x", "ox"},      {"object_y", "oy"},
        {"object_width", "ow"}, {"object_height", "oh"}, {"log", "l"},
        {"take_picture", "tp"}, {"probe", "p"},          {"replan", "rp"},
        {"scan", "s"},          {"scan_abstract", "sa"}, {"orienting", "o"},
        {"approach", "a"},      {"goto", "g"},
    };
    skill_registry *reg = loader_standard(NULL, 0, NULL, NULL);
    CHECK(reg != NULL);
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        const skill *s = registry_find(reg, expected[i][0], strlen(expected[i][0]));
        CHECK(s != NULL);
        if (!s) continue;
        if (strcmp(s->abbr, expected[i][1]) != 0) {
            fprintf(stderr, "  %s: abbreviation '%s', want '%s'\n", s->name, s->abbr,
                    expected[i][1]);
            failures++;
        }
        CHECK(registry_find(reg, expected[i][1], strlen(expected[i][1])) == s);
    }
    const skill *q = registry_find(reg, "query", 5);
    CHECK(q && strcmp(q->name, "probe") == 0 && strcmp(q->alias_abbr, "q") == 0);
    CHECK(registry_find(reg, "q", 1) == q);
    const skill *a = registry_find(reg, "approach", 8);
    CHECK(a && a->min_args == 0 && a->nargs == 2 && a->level == SKILL_HIGH);
    const skill *g = registry_find(reg, "g", 1);
    CHECK(g && strcmp(g->name, "goto") == 0 && g->min_args == 1 && g->nargs == 2);
    const skill *r = registry_find(reg, "r", 1);
    CHECK(r && strcmp(r->name, "rotate") == 0 && r->nargs == 1);
    const skill *rp = registry_find(reg, "re_plan", 7);
    CHECK(rp && strcmp(rp->name, "replan") == 0 && strcmp(rp->abbr, "rp") == 0);
    CHECK(registry_find(reg, "turn", 4) == NULL);
    CHECK(registry_find(reg, "", 0) == NULL);
    registry_free(reg);
}

static const char good_skill[] =
    "return {name = 'look_twice', description = 'checks twice', abbr = 'lt',\n"
    "  args = {{name = 'object_name', type = 'str'}}, returns = 'bool',\n"
    "  run = function(o) log('looking for ' .. o) return is_visible ~= nil end}\n";

static const char turn_around_skill[] =
    "return {name = 'turn_around', description = 'logs twice',\n"
    "  args = {{name = 'times', type = 'int', optional = true}}, returns = 'int',\n"
    "  run = function(n) n = n or 2 for i = 1, n do log('turn ' .. i) end return n end}\n";

static const struct {
    const char *file, *text, *reason;
} broken_skills[] = {
    {"b_syntax.lua", "return {name = 'x',", "unexpected symbol"},
    {"c_not_table.lua", "return 42", "must return a table"},
    {"d_no_name.lua", "return {description = 'd', run = function() end}", "field 'name'"},
    {"e_bad_type.lua",
     "return {name = 'bad_type', description = 'd', args = {{name = 'a', type = 'vector'}}, "
     "run = function() end}",
     "unknown type 'vector'"},
    {"f_both.lua",
     "return {name = 'both', description = 'd', run = function() end, minispec = 'l(1)'}",
     "exactly one of"},
    {"g_loops.lua", "while true do end", "instruction limit"},
    {"h_duplicate.lua", "return {name = 'scan', description = 'd', run = function() end}",
     "already exists"},
    {"i_io.lua", "io.open('/etc/passwd') return {}", "global 'io'"},
    {"j_bad_name.lua", "return {name = 'Bad Name', description = 'd', run = function() end}",
     "lower-case"},
};

static void test_user_skills_load_and_broken_ones_are_reported(void)
{
    char dir[] = "/tmp/aloft-skills-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    write_file(dir, "a_good.lua", good_skill);
    write_file(dir, "k_turn_around.lua", turn_around_skill);
    for (size_t i = 0; i < sizeof broken_skills / sizeof broken_skills[0]; i++)
        write_file(dir, broken_skills[i].file, broken_skills[i].text);

    reports r = {{0}, 0};
    const char *dirs[] = {dir};
    skill_registry *reg = loader_standard(dirs, 1, collect, &r);
    CHECK(reg != NULL);
    CHECK(r.n == (int)(sizeof broken_skills / sizeof broken_skills[0]));
    for (size_t i = 0; i < sizeof broken_skills / sizeof broken_skills[0]; i++) {
        char want[600];
        snprintf(want, sizeof want, "%s/%s: ", dir, broken_skills[i].file);
        const char *line = strstr(r.text, want);
        if (!line || !strstr(line, broken_skills[i].reason) ||
            strstr(line, broken_skills[i].reason) > strchr(line, '\n')) {
            fprintf(stderr, "  %s: want a report with '%s'\n", broken_skills[i].file,
                    broken_skills[i].reason);
            failures++;
        }
    }
    const skill *good = registry_find(reg, "lt", 2);
    CHECK(good && strcmp(good->name, "look_twice") == 0 && good->level == SKILL_HIGH);
    const skill *ta = registry_find(reg, "turn_around", 11);
    /* "ta" is free: the initials of its two words */
    CHECK(ta && strcmp(ta->abbr, "ta") == 0 && ta->min_args == 0 && ta->nargs == 1);
    /* user skills never change the built-ins' abbreviations */
    const skill *tu = registry_find(reg, "tu", 2);
    CHECK(tu && strcmp(tu->name, "turn_ccw") == 0);

    /* the same directory loaded again gives the same abbreviations */
    reports r2 = {{0}, 0};
    skill_registry *again = loader_standard(dirs, 1, collect, &r2);
    for (size_t i = 0; i < registry_count(reg); i++)
        CHECK(strcmp(registry_at(reg, i)->abbr, registry_at(again, i)->abbr) == 0);
    registry_free(again);

    /* the user skill runs as a global and its inner calls are recorded */
    char err[512];
    sandbox *sb = sandbox_new(NULL, err, sizeof err);
    skill_ctx ctx = {.reg = reg, .sb = sb};
    CHECK(skills_bind(&ctx, err, sizeof err) == 0);
    const char script[] = "assert(turn_around(3) == 3)\nassert(turn_around() == 2)\n"
                          "assert(look_twice('apple') == true)";
    sandbox_status st = sandbox_run(sb, script, strlen(script), "=t", err, sizeof err);
    if (st != SANDBOX_OK) fprintf(stderr, "  script: %s\n", err);
    CHECK(st == SANDBOX_OK);
    CHECK(ctx.journal.ncalls == 9);
    const char *order[] = {"turn_around", "log", "log",        "log", "turn_around",
                           "log",         "log", "look_twice", "log"};
    for (int i = 0; i < 9 && i < ctx.journal.ncalls; i++)
        CHECK(strcmp(ctx.journal.calls[i].skill, order[i]) == 0);
    const skill_value *first = &ctx.journal.calls[0].ret;
    CHECK(first->kind == SKILL_VALUE_INT && first->i == 3);
    size_t len;
    const char *out = sandbox_output(sb, &len);
    CHECK(strcmp(out, "turn 1\nturn 2\nturn 3\nturn 1\nturn 2\nlooking for apple\n") == 0);
    skills_release(&ctx);
    sandbox_free(sb);
    registry_free(reg);

    for (size_t i = 0; i < sizeof broken_skills / sizeof broken_skills[0]; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, broken_skills[i].file);
        unlink(path);
    }
    char path[600];
    snprintf(path, sizeof path, "%s/a_good.lua", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/k_turn_around.lua", dir);
    unlink(path);
    rmdir(dir);
}

static const char *run_error(skill_registry *reg, const char *script)
{
    static char err[512];
    sandbox *sb = sandbox_new(NULL, err, sizeof err);
    skill_ctx ctx = {.reg = reg, .sb = sb};
    skills_bind(&ctx, err, sizeof err);
    err[0] = '\0';
    sandbox_run(sb, script, strlen(script), "=t", err, sizeof err);
    skills_release(&ctx);
    sandbox_free(sb);
    return err;
}

static void test_dispatch_checks_arguments(void)
{
    skill_registry *reg = loader_standard(NULL, 0, NULL, NULL);
    CHECK(strstr(run_error(reg, "turn_cw(1, 2)"), "turn_cw takes 1 argument, got 2"));
    CHECK(strstr(run_error(reg, "log()"), "log takes 1 argument, got 0"));
    CHECK(strstr(run_error(reg, "turn_cw('left')"), "must be int, got string"));
    CHECK(strstr(run_error(reg, "is_visible({})"), "must be str, got table"));
    CHECK(strstr(run_error(reg, "approach(1, 2, 3)"), "approach takes 0 to 2 arguments, got 3"));
    CHECK(strstr(run_error(reg, "approach('apple', 0/0)"), "must be a finite number"));
    CHECK(strstr(run_error(reg, "approach('apple', -1)"), "distance must be a number of cm"));
    CHECK(strstr(run_error(reg, "approach('apple', 1001)"), "distance must be a number of cm"));
    /* 0 and 1000 cm are accepted: it goes on to the camera (none here) */
    CHECK(strstr(run_error(reg, "approach('apple', 1000)"), "no camera connected"));
    CHECK(strstr(run_error(reg, "approach('apple', 0)"), "no camera connected"));
    CHECK(strstr(run_error(reg, "turn_cw(0/0)"), "must be a finite number"));
    /* no drone: a clear error, not a crash */
    CHECK(strstr(run_error(reg, "move_forward(10)"), "no drone connected"));
    CHECK(strstr(run_error(reg, "probe('what?')"), "no LLM is configured"));
    /* numbers and booleans given to text arguments are printed as MiniSpec does */
    CHECK(strcmp(run_error(reg, "log(12) log(true) log(1.5)"), "") == 0);
    registry_free(reg);
}

static void test_skill_calls_refused_after_a_limit(void)
{
    skill_registry *reg = loader_standard(NULL, 0, NULL, NULL);
    char err[512];
    sandbox_limits lim = {.max_instructions = 50000};
    sandbox *sb = sandbox_new(&lim, err, sizeof err);
    skill_ctx ctx = {.reg = reg, .sb = sb};
    CHECK(skills_bind(&ctx, err, sizeof err) == 0);
    const char script[] = "pcall(function() while true do end end)\nlog('after the limit')";
    CHECK(sandbox_run(sb, script, strlen(script), "=t", err, sizeof err) == SANDBOX_INSTRUCTIONS);
    CHECK(ctx.journal.ncalls == 0);
    CHECK(!sandbox_alive(sb));
    /* the state stays poisoned for every later chunk */
    CHECK(sandbox_run(sb, "log('x')", 8, "=t2", err, sizeof err) == SANDBOX_INSTRUCTIONS);
    CHECK(ctx.journal.ncalls == 0);
    skills_release(&ctx);
    sandbox_free(sb);
    registry_free(reg);
}

int main(void)
{
    test_builtin_abbreviations_match_typefly();
    test_user_skills_load_and_broken_ones_are_reported();
    test_dispatch_checks_arguments();
    test_skill_calls_refused_after_a_limit();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_skills: all checks passed\n");
    return failures ? 1 : 0;
}
