/*
 * Prompt templates (host/llm/prompt.h): the built-in prompts load, each
 * builder carries what it is given, skills come from the registry (user
 * skills included), and bad user templates fail at load time with a message
 * naming the file and the placeholder.
 */
#include "llm/prompt.h"
#include "loader/loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static int has(const char *hay, const char *needle)
{
    return hay && strstr(hay, needle) != NULL;
}
#define HAS(hay, needle) has((hay), (needle))

static const char *scene = "apple_1 x:0.41 y:0.63 width:0.08 height:0.09 color:red\n"
                           "person_2 x:0.80 y:0.50 width:0.12 height:0.60";

static const char user_skill[] =
    "return {name='circle_around', description='fly one circle around an object',\n"
    "  args={{name='object_name', type='str'}, {name='radius', type='int', optional=true}},\n"
    "  returns='bool', run=function(o, r) return true end}\n";

static void report(void *ud, const char *path, const char *message)
{
    (void)ud;
    fprintf(stderr, "skill %s: %s\n", path, message);
    failures++;
}

static skill_registry *make_registry(void)
{
    char err[256];
    skill_registry *reg = registry_new();
    if (loader_add_builtins(reg, err, sizeof err) ||
        loader_load_source(reg, "user/circle_around.lua", user_skill, sizeof user_skill - 1, false,
                           err, sizeof err)) {
        fprintf(stderr, "registry: %s\n", err);
        failures++;
    }
    loader_finalize(reg, report, NULL);
    return reg;
}

/* A scratch directory with FILE = TEXT in it. */
static void write_file(const char *dir, const char *file, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *fp = fopen(path, "w");
    if (!fp) {
        perror(path);
        failures++;
        return;
    }
    fputs(text, fp);
    fclose(fp);
}

static void remove_file(const char *dir, const char *file)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    unlink(path);
}

static void test_skill_list_comes_from_the_registry(const skill_registry *reg)
{
    char *list = prompt_skill_list(reg);
    if (!list) {
        CHECK(0, "no skill list");
        return;
    }
    CHECK(HAS(list, "tc turn_cw(degrees:int) -> bool: rotate clockwise"), "turn_cw line: %s", list);
    CHECK(HAS(list, "p probe(question:str) -> any (also q)"), "probe alias missing");
    CHECK(HAS(list, "rp replan()"), "replan missing");
    CHECK(HAS(list, "circle_around(object_name:str, [radius:int]) -> bool: fly one circle"),
          "user skill missing: %s", list);
    int lines = 0;
    for (const char *p = list; p && *p; p++)
        lines += *p == '\n';
    CHECK(lines == (int)registry_count(reg), "%d lines for %zu skills", lines, registry_count(reg));
    free(list);
}

static void test_plan_prompt_has_grammar_skills_examples_scene_and_task(const prompt_set *ps,
                                                                        const skill_registry *reg)
{
    prompt_msgs m;
    char err[512] = "";
    CHECK(prompt_plan(ps, reg, "fly to the aple", scene, NULL, &m, err, sizeof err) == 0,
          "plan: %s", err);
    CHECK(HAS(m.system, "?cond{statements}"), "grammar missing from the system message");
    CHECK(HAS(m.system, "circle_around("), "user skill missing from the planning prompt");
    CHECK(HAS(m.system, "Task: fly a square"), "examples missing");
    CHECK(HAS(m.system, "typo"), "typo guide missing");
    CHECK(!HAS(m.system, "{skills}") && !HAS(m.system, "{minispec}") &&
              !HAS(m.system, "{examples}"),
          "placeholder left in the system message");
    CHECK(HAS(m.user, "Task: fly to the aple"), "task missing: %s", m.user);
    CHECK(HAS(m.user, "person_2 x:0.80 y:0.50 width:0.12 height:0.60"), "scene missing");
    CHECK(!HAS(m.user, "{task}") && !HAS(m.user, "{scene}"), "placeholder left: %s", m.user);
    llm_message msgs[2];
    CHECK(prompt_msgs_to_llm(&m, msgs) == 2 && strcmp(msgs[0].role, "system") == 0 &&
              msgs[1].content == m.user,
          "messages");
    printf("planning prompt: %zu + %zu bytes\n", strlen(m.system), strlen(m.user));
    prompt_msgs_free(&m);

    CHECK(prompt_plan(ps, reg, "find a cat", "", NULL, &m, err, sizeof err) == 0, "plan: %s", err);
    CHECK(HAS(m.user, "(nothing in view)"), "empty scene not described: %s", m.user);
    prompt_msgs_free(&m);
}

static void test_retry_prompt_carries_plan_diagnostics_and_progress(const prompt_set *ps,
                                                                    const skill_registry *reg)
{
    prompt_msgs m;
    char err[512] = "";
    CHECK(prompt_retry(ps, reg, "find the apple", scene, NULL, "s('apple');turnleft(90)",
                       "1:12: unknown skill 'turnleft' (did you mean 'turn_ccw' / 'tu'?)",
                       "s('apple')", &m, err, sizeof err) == 0,
          "retry: %s", err);
    CHECK(HAS(m.user, "s('apple');turnleft(90)"), "plan missing");
    CHECK(HAS(m.user, "1:12: unknown skill 'turnleft'"), "diagnostics missing");
    CHECK(HAS(m.user, "Already done by the drone"), "executed section missing");
    CHECK(HAS(m.user, "find the apple"), "task missing");
    CHECK(HAS(m.system, "Skills"), "retry lost the planner system message");
    prompt_msgs_free(&m);
}

static void test_replan_prompt_carries_reason_and_progress(const prompt_set *ps,
                                                           const skill_registry *reg)
{
    prompt_msgs m;
    char err[512] = "";
    CHECK(prompt_replan(ps, reg, "cross the room", scene, NULL, "mf(900)", "tc(90)",
                        "move_forward(900) was refused: it would leave the geofence", &m, err,
                        sizeof err) == 0,
          "replan: %s", err);
    CHECK(HAS(m.user, "would leave the geofence"), "reason missing");
    CHECK(HAS(m.user, "tc(90)"), "executed statements missing");
    CHECK(HAS(m.user, "mf(900)"), "previous plan missing");
    prompt_msgs_free(&m);

    CHECK(prompt_replan(ps, reg, "x", scene, NULL, "rp", NULL, NULL, &m, err, sizeof err) == 0,
          "replan without details: %s", err);
    CHECK(HAS(m.user, "(nothing ran)"), "missing executed not described");
    prompt_msgs_free(&m);
}

static void test_probe_prompt_is_question_and_scene_only(const prompt_set *ps)
{
    prompt_msgs m;
    char err[512] = "";
    CHECK(prompt_probe(ps, "Is anything here edible?", scene, &m, err, sizeof err) == 0,
          "probe: %s", err);
    CHECK(m.system == NULL, "probe has a system message");
    CHECK(HAS(m.user, "Is anything here edible?") && HAS(m.user, "apple_1 x:0.41"), "probe: %s",
          m.user);
    CHECK(HAS(m.user, "True or False"), "answer format missing");
    CHECK(!HAS(m.user, "move_forward"), "probe carries the skill list");
    llm_message msgs[2];
    CHECK(prompt_msgs_to_llm(&m, msgs) == 1 && strcmp(msgs[0].role, "user") == 0, "messages");
    prompt_msgs_free(&m);
}

static void test_user_directory_overrides_one_file(const skill_registry *reg, const char *dir)
{
    char err[512] = "";
    write_file(dir, "plan.txt", "{{literal}} {task}!!{scene}");
    write_file(dir, "minispec.txt", "MY GRAMMAR {not_a_placeholder} }}");
    prompt_set *ps = prompt_load(dir, err, sizeof err);
    CHECK(ps != NULL, "override: %s", err);
    if (ps) {
        prompt_msgs m;
        CHECK(prompt_plan(ps, reg, "find it", "apple_1", NULL, &m, err, sizeof err) == 0, "%s",
              err);
        CHECK(m.user && strcmp(m.user, "{literal} find it!!apple_1") == 0, "user [%s]", m.user);
        CHECK(HAS(m.system, "MY GRAMMAR {not_a_placeholder} }}"), "verbatim file was altered");
        CHECK(HAS(prompt_source(ps, "plan.txt"), dir), "source %s", prompt_source(ps, "plan.txt"));
        CHECK(strcmp(prompt_source(ps, "retry.txt"), "prompts/retry.txt") == 0,
              "retry.txt should stay built in");
        prompt_msgs_free(&m);
        prompt_free(ps);
    }
    remove_file(dir, "plan.txt");
    remove_file(dir, "minispec.txt");
}

static void test_unknown_placeholder_fails_at_load(const char *dir)
{
    char err[512] = "";
    write_file(dir, "plan.txt", "Scene: {scene}\nTask: {task}\nWeather: {weather}\n");
    prompt_set *ps = prompt_load(dir, err, sizeof err);
    CHECK(ps == NULL, "unknown placeholder accepted");
    CHECK(HAS(err, "plan.txt:3") && HAS(err, "{weather}"), "unclear message: %s", err);
    prompt_free(ps);

    /* a placeholder of another template is unknown here too */
    write_file(dir, "plan.txt", "{task} {scene} {question}");
    ps = prompt_load(dir, err, sizeof err);
    CHECK(ps == NULL && HAS(err, "{question}"), "foreign placeholder accepted: %s", err);
    prompt_free(ps);
    remove_file(dir, "plan.txt");
}

static void test_missing_required_placeholder_fails_at_load(const char *dir)
{
    char err[512] = "";
    write_file(dir, "probe.txt", "Question: {question}\nAnswer:");
    prompt_set *ps = prompt_load(dir, err, sizeof err);
    CHECK(ps == NULL, "probe without {scene} accepted");
    CHECK(HAS(err, "probe.txt") && HAS(err, "{scene}") && HAS(err, "missing"),
          "unclear message: %s", err);
    prompt_free(ps);
    remove_file(dir, "probe.txt");

    write_file(dir, "retry.txt", "{plan} {{diagnostics}}");
    ps = prompt_load(dir, err, sizeof err);
    CHECK(ps == NULL && HAS(err, "{diagnostics}"), "escaped braces counted as placeholder: %s",
          err);
    prompt_free(ps);
    remove_file(dir, "retry.txt");
}

int main(void)
{
    char err[512] = "";
    skill_registry *reg = make_registry();
    prompt_set *ps = prompt_load(NULL, err, sizeof err);
    CHECK(ps != NULL, "built-in prompts: %s", err);
    if (!ps) return 1;
    CHECK(strcmp(prompt_source(ps, "plan.txt"), "prompts/plan.txt") == 0, "source");

    char dir[] = "/tmp/aloft-prompts-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_skill_list_comes_from_the_registry(reg);
    test_plan_prompt_has_grammar_skills_examples_scene_and_task(ps, reg);
    test_retry_prompt_carries_plan_diagnostics_and_progress(ps, reg);
    test_replan_prompt_carries_reason_and_progress(ps, reg);
    test_probe_prompt_is_question_and_scene_only(ps);
    test_user_directory_overrides_one_file(reg, dir);
    test_unknown_placeholder_fails_at_load(dir);
    test_missing_required_placeholder_fails_at_load(dir);
    prompt_set *none = prompt_load("/nonexistent/aloft-prompts", err, sizeof err);
    CHECK(none == NULL && HAS(err, "/nonexistent/aloft-prompts"),
          "a missing prompt directory was ignored: %s", err);
    rmdir(dir);
    prompt_free(ps);
    registry_free(reg);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
