/*
 * The suite's checks in C (host/eval/check.c): every reference plan's flight
 * passes its setup's check and every wrong plan's flight is rejected, with
 * the same verdict and the same number of failed expectations as
 * examples/benchmark/run_suite.py gives for the very same report; then each
 * key at and beyond its limit on hand-made reports. The flights go through
 * host/eval/flights.c, two at a time, as `aloft eval` flies them.
 * labels: eval
 */
#include "check.h"
#include "eval/check.h"
#include "eval/flights.h"
#include "eval/suite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *aloft, *src;
static char tmpdir[] = "/tmp/aloft-evalcheck-XXXXXX";

/* One flight to judge: the setup, the plan, and whether it must pass. */
typedef struct judged {
    const evalsuite_task *task;
    const evalsuite_setup *setup;
    char plan_path[4200];
    const char *label;
    int must_pass;
} judged;

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "%s", path);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* run_suite.py's check() of REPORT on SETUP: its number of failures. */
static int python_fails(const char *report, const evalsuite_setup *setup)
{
    char rpath[4200], wpath[4200], cmd[16000];
    snprintf(rpath, sizeof rpath, "%s/report.json", tmpdir);
    snprintf(wpath, sizeof wpath, "%s/check.json", tmpdir);
    write_file(rpath, report);
    char *want = cJSON_PrintUnformatted(setup->check);
    write_file(wpath, want);
    free(want);
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c 'import sys, json; sys.path.insert(0, sys.argv[1]); "
             "import run_suite as s; r, c, w = (json.load(open(p)) for p in sys.argv[2:]); "
             "print(len(s.check(r, c, w)))' '%s/examples/benchmark' '%s' '%s' '%s'",
             src, rpath, setup->scene_path, wpath);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p) {
        if (fscanf(p, "%d", &n) != 1) n = -1;
        pclose(p);
    }
    return n;
}

static int add_wrong_plans(judged *j, int n, const evalsuite_task *t, const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%.3000s/wrong.json", dir);
    FILE *f = fopen(path, "r");
    if (!f) return n;
    static char text[65536];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    cJSON *list = cJSON_Parse(text);
    const cJSON *e;
    cJSON_ArrayForEach(e, list)
    {
        const char *only = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "setup"));
        for (int s = 0; s < t->n_setups; s++) {
            if (only && strcmp(only, t->setups[s].name) != 0) continue;
            j[n] = (judged){.task = t, .setup = &t->setups[s], .label = "wrong", .must_pass = 0};
            snprintf(j[n].plan_path, sizeof j[n].plan_path, "%s/wrong-%d.ms", tmpdir, n);
            write_file(j[n].plan_path,
                       cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "plan")));
            n++;
        }
    }
    cJSON_Delete(list);
    return n;
}

static void suite_flights(void)
{
    char bench[2048];
    snprintf(bench, sizeof bench, "%.2000s/examples/benchmark", src);
    char *dirs[] = {bench};
    char err[512];
    evalsuite suite;
    CHECK(evalsuite_load(&suite, dirs, 1, err, sizeof err) == 0, "%s", err);
    CHECK(suite.n_tasks == 12, "%d tasks", suite.n_tasks);
    static judged j[256];
    int n = 0;
    for (int k = 0; k < suite.n_tasks; k++) {
        const evalsuite_task *t = &suite.tasks[k];
        char dir[3000];
        snprintf(dir, sizeof dir, "%.2000s/%.900s", bench, t->name);
        for (int s = 0; s < t->n_setups; s++) {
            j[n] =
                (judged){.task = t, .setup = &t->setups[s], .label = "reference", .must_pass = 1};
            snprintf(j[n++].plan_path, sizeof j->plan_path, "%.3000s/plan.ms", dir);
        }
        n = add_wrong_plans(j, n, t, dir);
    }
    CHECK(n > 40, "%d flights", n);
    evalflight *f = calloc((size_t)n, sizeof *f);
    char *argv[256][14];
    for (int i = 0; i < n; i++) {
        char *v[] = {(char *)aloft, "run",
                     "--scene",     j[i].setup->scene_path,
                     "--plan",      j[i].plan_path,
                     "--json",      "--quiet",
                     "--seed",      "1",
                     "--pictures",  tmpdir,
                     NULL};
        memcpy(argv[i], v, sizeof v);
        f[i].argv = argv[i];
    }
    CHECK(evalflights_run(f, n, 2, NULL, NULL, NULL) == 2, "two flights at once");
    int passed = 0, rejected = 0;
    for (int i = 0; i < n; i++) {
        CHECK(f[i].ran && f[i].out && *f[i].out, "%s %s: no report: %s", j[i].task->name,
              j[i].label, f[i].err);
        cJSON *report = cJSON_Parse(f[i].out ? f[i].out : "");
        char why[1024];
        int fails = evalcheck_judge(report, j[i].setup->scene, j[i].setup->check, why, sizeof why);
        CHECK((fails == 0) == j[i].must_pass, "%s [%s] %s %s: %s", j[i].task->name,
              j[i].setup->name, j[i].label, j[i].plan_path, why);
        CHECK(fails == 0 || *why, "a rejection says why");
        int py = python_fails(f[i].out ? f[i].out : "{}", j[i].setup);
        CHECK(py == fails, "%s [%s] %s: C finds %d failures (%s), run_suite.py %d", j[i].task->name,
              j[i].setup->name, j[i].label, fails, why, py);
        passed += fails == 0 && j[i].must_pass;
        rejected += fails > 0 && !j[i].must_pass;
        cJSON_Delete(report);
        evalflight_clear(&f[i]);
    }
    CHECK(passed == 15, "15 reference setups pass: %d", passed);
    CHECK(rejected == n - 15, "every wrong plan is rejected: %d of %d", rejected, n - 15);
    free(f);
    evalsuite_free(&suite);
}

/* Judges the report text against the check text in a small scene: an apple
 * (explicit id fruit) 100 cm ahead, a chair without id (chair_1), a second
 * chair named chair_1 explicitly, so the unnamed one becomes chair_2. */
static int judge(const char *report, const char *want, char *why, size_t whylen)
{
    cJSON *scene = cJSON_Parse(
        "{\"objects\":[{\"class\":\"chair\",\"x\":-200,\"y\":0,\"w\":40,\"d\":40,\"h\":90},"
        "{\"id\":\"fruit\",\"class\":\"apple\",\"x\":0,\"y\":100,\"z\":80,\"w\":10,\"d\":10,"
        "\"h\":10},{\"id\":\"chair_1\",\"class\":\"chair\",\"x\":200,\"y\":0,\"w\":40,\"d\":40,"
        "\"h\":90}]}");
    cJSON *r = cJSON_Parse(report), *w = cJSON_Parse(want);
    int n = evalcheck_judge(r, scene, w, why, whylen);
    cJSON_Delete(scene);
    cJSON_Delete(r);
    cJSON_Delete(w);
    return n;
}

#define REPORT_WITH(logs)                                                                          \
    "{\"ok\":true,\"result\":true,\"pose\":{\"x\":0,\"y\":0,\"z\":80,\"yaw\":0},"                  \
    "\"logs\":" logs ",\"calls\":[{\"skill\":\"turn_cw\",\"args\":[90],"                           \
    "\"ret\":true},{\"skill\":\"move_forward\",\"args\":[50],\"ret\":true}],"                      \
    "\"violations\":[{\"skill\":\"move_up\",\"reason\":\"ceiling\"}]}"
#define REPORT_STD REPORT_WITH("[\"first 7\",\"I see 3 kinds\"]")

static void keys_at_their_limits(void)
{
    char why[512];
    /* near: the apple's box is 95 cm ahead of the pose */
    CHECK(judge(REPORT_STD, "{\"near\":[{\"object\":\"fruit\",\"max_cm\":95}],\"violations\":1}",
                why, sizeof why) == 0,
          "%s", why);
    CHECK(judge(REPORT_STD, "{\"near\":[{\"object\":\"fruit\",\"max_cm\":94.9}],\"violations\":1}",
                why, sizeof why) == 1,
          "%s", why);
    /* ids: explicit first, the unnamed chair becomes chair_2 (at x -200) */
    CHECK(judge(REPORT_STD,
                "{\"facing\":[{\"object\":\"chair_2\",\"max_deg\":270}],\"closer\":"
                "[[\"fruit\",\"chair_2\"]],\"violations\":1}",
                why, sizeof why) == 0,
          "%s", why);
    CHECK(judge(REPORT_STD,
                "{\"facing\":[{\"object\":\"chair_2\",\"max_deg\":89.9}],"
                "\"violations\":1}",
                why, sizeof why) == 1 &&
              strstr(why, "90 deg off chair_2"),
          "%s", why);
    CHECK(judge(REPORT_STD, "{\"closer\":[[\"chair_1\",\"fruit\"]],\"violations\":1}", why,
                sizeof why) == 1,
          "%s", why);
    CHECK(judge(REPORT_STD,
                "{\"near\":[{\"object\":\"apple_1\",\"max_cm\":999}],"
                "\"violations\":1}",
                why, sizeof why) == 1 &&
              strstr(why, "unknown object apple_1"),
          "%s", why);
    /* violations: allowed 1, there is 1; default 0 */
    CHECK(judge(REPORT_STD, "{}", why, sizeof why) == 1 && strstr(why, "violations"), "%s", why);
    /* answer: exactly one number in the last log line */
    CHECK(judge(REPORT_STD, "{\"answer\":3,\"violations\":1}", why, sizeof why) == 0, "%s", why);
    CHECK(judge(REPORT_STD, "{\"answer\":3.0,\"violations\":1}", why, sizeof why) == 0, "%s", why);
    CHECK(judge(REPORT_STD, "{\"answer\":7,\"violations\":1}", why, sizeof why) == 1, "%s", why);
    CHECK(judge(REPORT_WITH("[\"-3.5 or 2\"]"), "{\"answer\":-3.5,\"violations\":1}", why,
                sizeof why) == 1,
          "two numbers: %s", why);
    CHECK(judge(REPORT_WITH("[\"x-3.5y\"]"), "{\"answer\":-3.5,\"violations\":1}", why,
                sizeof why) == 0,
          "%s", why);
    CHECK(judge(REPORT_WITH("[]"), "{\"answer\":0,\"violations\":1}", why, sizeof why) == 1,
          "no log: %s", why);
    /* max_calls: two motion calls */
    CHECK(judge(REPORT_STD, "{\"max_calls\":{\"moves\":2},\"violations\":1}", why, sizeof why) == 0,
          "%s", why);
    CHECK(judge(REPORT_STD, "{\"max_calls\":{\"moves\":1},\"violations\":1}", why, sizeof why) == 1,
          "%s", why);
    /* called: skill, then args and ret when given */
    CHECK(judge(REPORT_STD,
                "{\"called\":[{\"skill\":\"turn_cw\",\"args\":[90.0],\"ret\":true}],"
                "\"violations\":1}",
                why, sizeof why) == 0,
          "%s", why);
    CHECK(judge(REPORT_STD,
                "{\"called\":[{\"skill\":\"turn_cw\",\"args\":[91]}],"
                "\"violations\":1}",
                why, sizeof why) == 1,
          "%s", why);
    CHECK(judge(REPORT_STD,
                "{\"called\":[{\"skill\":\"turn_cw\",\"ret\":false}],"
                "\"violations\":1}",
                why, sizeof why) == 1,
          "%s", why);
    /* ok, result and logs_contain */
    CHECK(judge(REPORT_STD,
                "{\"ok\":true,\"result\":false,\"logs_contain\":[\"kinds\"],"
                "\"violations\":1}",
                why, sizeof why) == 1 &&
              strstr(why, "result is true, want false"),
          "%s", why);
    CHECK(judge(REPORT_STD, "{\"logs_contain\":[\"Kinds\"],\"violations\":1}", why, sizeof why) ==
              1,
          "%s", why);
    CHECK(judge("{\"ok\":false}", "{\"ok\":true,\"near\":[{\"object\":\"fruit\",\"max_cm\":1e9}]}",
                why, sizeof why) == 2 &&
              strstr(why, "no pose"),
          "a report without a pose fails what needs one: %s", why);
    CHECK(judge("{\"pose\":{\"x\":0,\"y\":0,\"z\":0,\"yaw\":0}}", "{\"result\":null}", why,
                sizeof why) == 0,
          "a missing result is null: %s", why);
    CHECK(judge("[]", "{}", why, sizeof why) == 1, "not a report: %s", why);
    /* the reasons are cut to the buffer, never overrun */
    char small[8];
    CHECK(judge(REPORT_STD, "{\"answer\":9}", small, sizeof small) == 2 && strlen(small) == 7, "%s",
          small);
}

int main(void)
{
    aloft = getenv("ALOFT");
    src = getenv("SRC");
    if (!aloft || !src || !mkdtemp(tmpdir)) {
        fprintf(stderr, "needs ALOFT and SRC (run through ctest)\n");
        return 1;
    }
    keys_at_their_limits();
    suite_flights();
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return failures ? 1 : 0;
}
