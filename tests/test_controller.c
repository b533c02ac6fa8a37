/* The mission controller against the fake OpenAI server: planning, retries,
 * replans, probes, LLM faults, cancel, and stream vs batch equivalence. */
#include "../tests/fake_llm.h"
#include "loader/loader.h"
#include "mission/controller.h"

#include <dirent.h>
#include <stdarg.h>

#include "check.h"

static skill_registry *reg;
static prompt_set *prompts;
static char scene_path[64];

typedef struct setup {
    const char *script;
    double rate;
    bool batch;
    int max_tries, max_replans;
    long idle_ms;
    const char *scene; /* NULL: the test scene */
    const char *task;
    mission_observer obs;
    const atomic_bool *cancel;
} setup;

typedef struct result {
    cJSON *doc;
    cJSON *requests; /* what the server received */
    mission_stats stats;
} result;

static result fly(const setup *su)
{
    result r = {0};
    fake_llm f;
    if (fake_llm_start(&f, su->script, su->rate)) exit(1);
    llm_config cfg;
    llm_config_defaults(&cfg);
    snprintf(cfg.base_url, sizeof cfg.base_url, "%s", f.base_url);
    snprintf(cfg.model, sizeof cfg.model, "fake");
    cfg.api_key[0] = '\0';
    cfg.backoff_ms = 10;
    cfg.backoff_max_ms = 40;
    cfg.idle_timeout_ms = su->idle_ms ? su->idle_ms : 20000;

    mission_world w;
    char err[256];
    sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = NULL};
    if (mission_world_sim(&w, su->scene ? su->scene : scene_path, &so, err, sizeof err)) {
        fprintf(stderr, "world: %s\n", err);
        exit(1);
    }
    mission_opts mo;
    mission_opts_defaults(&mo);
    mo.run.reg = reg;
    mo.run.world = &w;
    mo.run.limits = (sandbox_limits){0};
    mo.run.limits.max_instructions = 10000000;
    mo.run.limits.max_memory = 16 << 20;
    mo.run.limits.timeout_ms = 120000;
    mo.run.limits.max_output = 65536;
    mo.task = su->task ? su->task : "Turn around.";
    mo.prompts = prompts;
    mo.llm = mission_llm_default(&cfg);
    mo.stream = !su->batch;
    if (su->max_tries) mo.max_tries = su->max_tries;
    if (su->max_replans) mo.max_replans = su->max_replans;
    mo.obs = su->obs;
    mo.cancel = su->cancel;
    mo.stats = &r.stats;
    r.doc = mission_run(&mo);
    mission_world_close(&w, true);
    r.requests = fake_llm_requests(&f);
    fake_llm_stop(&f);
    return r;
}

static void result_free(result *r)
{
    cJSON_Delete(r->doc);
    cJSON_Delete(r->requests);
}

static bool ok_of(const result *r)
{
    return cJSON_IsTrue(cJSON_GetObjectItem(r->doc, "ok"));
}

static int num(const result *r, const char *key)
{
    return cJSON_GetObjectItem(r->doc, key)->valueint;
}

static const char *error_of(const result *r)
{
    cJSON *e = cJSON_GetObjectItem(r->doc, "error");
    return cJSON_IsString(e) ? e->valuestring : "";
}

/* The user message of request N ("" if none). */
static const char *user_msg(const result *r, int n)
{
    cJSON *req = cJSON_GetArrayItem(r->requests, n);
    cJSON *msgs = cJSON_GetObjectItem(cJSON_GetObjectItem(req, "body"), "messages");
    const char *out = "";
    for (cJSON *m = msgs ? msgs->child : NULL; m; m = m->next)
        if (strcmp(cJSON_GetObjectItem(m, "role")->valuestring, "user") == 0)
            out = cJSON_GetObjectItem(m, "content")->valuestring;
    return out;
}

/* "turn_cw(45) goto('apple') ..." for the calls made from the plan and
 * inside skills, without times: what must match across runs. */
static void calls_of(const result *r, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    cJSON *calls = cJSON_GetObjectItem(r->doc, "calls");
    for (cJSON *c = calls ? calls->child : NULL; c && used < n; c = c->next) {
        char *args = cJSON_PrintUnformatted(cJSON_GetObjectItem(c, "args"));
        cJSON *rv = cJSON_GetObjectItem(c, "ret");
        /* picture file names differ from run to run */
        bool picture = cJSON_IsString(rv) && strstr(rv->valuestring, ".png");
        char *ret = picture ? strdup("picture") : cJSON_PrintUnformatted(rv);
        used += (size_t)snprintf(out + used, n - used, "%s%s->%s ",
                                 cJSON_GetObjectItem(c, "skill")->valuestring, args,
                                 ret ? ret : "none");
        free(args);
        free(ret);
    }
}

static char *script_of(int n, ...)
{
    cJSON *resp = cJSON_CreateArray();
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "content", va_arg(ap, const char *));
        cJSON_AddItemToArray(resp, o);
    }
    va_end(ap);
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddItemToObject(doc, "responses", resp);
    char *s = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return s;
}

static void test_planned_and_flown(void)
{
    char *s = script_of(1, "tc(180);?iv('apple'){l('apple seen');->True};->False");
    setup su = {.script = s, .rate = 500, .task = "[Q] Is there an apple behind you?"};
    result r = fly(&su);
    CHECK(ok_of(&r));
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(r.doc, "result")));
    CHECK(num(&r, "tries") == 1 && num(&r, "replans") == 0 && num(&r, "llm_calls") == 1);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r.doc, "plans")) == 1);
    CHECK(cJSON_IsNumber(cJSON_GetObjectItem(r.doc, "first_action_ms")));
    CHECK(cJSON_GetObjectItem(r.doc, "plan_ms")->valuedouble > 0);
    char calls[2048];
    calls_of(&r, calls, sizeof calls);
    CHECK(strstr(calls, "turn_cw[180]->true is_visible[\"apple\"]->true log"));
    CHECK(strstr(user_msg(&r, 0), "[Q] Is there an apple behind you?"));
    /* The prompt's scene is what the camera sees at the start. */
    CHECK(strstr(user_msg(&r, 0), "chair"));
    CHECK(r.stats.overhead_n >= 1 && r.stats.overhead_first_us >= 0);
    result_free(&r);
    free(s);
}

/* What the observer saw. */
typedef struct seen {
    int exchanges, plans, rejected, statements, scenes;
    mission_llm_kind kinds[8];
} seen;

static void saw_exchange(void *ud, mission_llm_kind kind, const llm_message *msgs, int n,
                         const llm_result *res)
{
    seen *s = ud;
    if (s->exchanges < 8) s->kinds[s->exchanges] = kind;
    s->exchanges++;
    /* the first reply was cut short on purpose: the plan broke mid-stream */
    CHECK(n >= 1 && msgs[n - 1].content && (res->status == LLM_OK || res->status == LLM_E_ABORTED));
}

static void saw_plan(void *ud, int index, const char *plan, size_t len, const char *diagnostics)
{
    seen *s = ud;
    CHECK(index == s->plans && plan && strlen(plan) == len);
    s->plans++;
    if (diagnostics) s->rejected++;
}

static void saw_statement(void *ud, int index, const char *text, size_t len, int depth)
{
    seen *s = ud;
    CHECK(index == 1 && len == 6 && strncmp(text, "tc(45)", 6) == 0 && depth == 0);
    s->statements++;
}

static void saw_scene(void *ud, const char *description)
{
    seen *s = ud;
    CHECK(description != NULL);
    s->scenes++;
}

static void test_malformed_retried(void)
{
    char *s = script_of(2, "frobnicate(2);tc(45)", "tc(45)");
    seen sn = {0};
    setup su = {.script = s};
    su.obs = (mission_observer){.llm_exchange = saw_exchange,
                                .plan = saw_plan,
                                .statement = saw_statement,
                                .scene = saw_scene,
                                .ud = &sn};
    result r = fly(&su);
    CHECK(sn.exchanges == 2 && sn.kinds[0] == MISSION_LLM_PLAN && sn.kinds[1] == MISSION_LLM_RETRY);
    CHECK(sn.plans == 2 && sn.rejected == 1 && sn.statements == 1);
    CHECK(sn.scenes == 2); /* one snapshot for each planning prompt */
    su.obs = (mission_observer){0};
    CHECK(ok_of(&r));
    CHECK(num(&r, "tries") == 2 && num(&r, "llm_calls") == 2);
    CHECK(strstr(user_msg(&r, 1), "1:1:"));
    CHECK(strstr(user_msg(&r, 1), "frobnicate")); /* the plan so far */
    char calls[512];
    calls_of(&r, calls, sizeof calls);
    CHECK(strcmp(calls, "turn_cw[45]->true ") == 0);
    result_free(&r);
    /* Batch: the same. */
    su.batch = true;
    r = fly(&su);
    CHECK(ok_of(&r) && num(&r, "tries") == 2 && strstr(user_msg(&r, 1), "1:1:"));
    result_free(&r);
    free(s);
}

static void test_fenced_cleaned(void)
{
    char *s = script_of(1, "Here is the plan:\n```minispec\ntc(30)\n```\nIt turns the drone.");
    for (int batch = 0; batch < 2; batch++) {
        setup su = {.script = s, .batch = batch};
        result r = fly(&su);
        CHECK(ok_of(&r));
        CHECK(strcmp(cJSON_GetArrayItem(cJSON_GetObjectItem(r.doc, "plans"), 0)->valuestring,
                     "tc(30)") == 0);
        /* The reply was read to its end: the server's usage counts. */
        const cJSON *tok = cJSON_GetObjectItem(r.doc, "tokens");
        CHECK(cJSON_GetObjectItem(tok, "completion")->valueint > 0 &&
              cJSON_GetArraySize(tok) == 2 && !cJSON_GetObjectItem(r.doc, "tokens_estimated"));
        result_free(&r);
    }
    free(s);
}

static void test_probe(void)
{
    /* The probe is asked while the plan is still streaming. */
    char *s = script_of(3, "tc(10);?p('Is the chair red?'){tc(20)};tc(30);tc(40);tc(50);tc(60)",
                        "True", "");
    setup su = {.script = s, .rate = 200};
    result r = fly(&su);
    CHECK(ok_of(&r));
    char calls[1024];
    calls_of(&r, calls, sizeof calls);
    CHECK(strstr(calls, "turn_cw[10]->true probe[\"Is the chair red?\"]->true turn_cw[20]->true "
                        "turn_cw[30]"));
    CHECK(num(&r, "llm_calls") == 2);
    CHECK(strstr(user_msg(&r, 1), "Is the chair red?") && strstr(user_msg(&r, 1), "chair"));
    result_free(&r);
    free(s);
}

static void test_replans(void)
{
    /* rp */
    char *s = script_of(2, "tc(90);rp", "tc(45)");
    setup su = {.script = s};
    result r = fly(&su);
    CHECK(ok_of(&r) && num(&r, "replans") == 1 && num(&r, "tries") == 1);
    CHECK(strstr(user_msg(&r, 1), "replan") && strstr(user_msg(&r, 1), "tc(90)"));
    result_free(&r);
    free(s);

    /* A failed skill: the probe's LLM request is refused. */
    s = strdup("{\"responses\":[{\"content\":\"tc(10);_1=p('What is this?');l(_1)\"},"
               "{\"fault\":\"401\"},{\"content\":\"tc(20)\"}]}");
    su = (setup){.script = s};
    r = fly(&su);
    CHECK(ok_of(&r) && num(&r, "replans") == 1 && num(&r, "llm_calls") == 3);
    CHECK(strstr(user_msg(&r, 2), "probe") && strstr(user_msg(&r, 2), "tc(10)"));
    char calls[512];
    calls_of(&r, calls, sizeof calls);
    CHECK(strstr(calls, "turn_cw[10]") && strstr(calls, "turn_cw[20]") && !strstr(calls, "log"));
    result_free(&r);
    free(s);

    /* A refused motion (the geofence is 200 cm). */
    s = script_of(2, "mf(500);tc(10)", "tc(20)");
    su = (setup){.script = s};
    r = fly(&su);
    CHECK(ok_of(&r) && num(&r, "replans") == 1);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r.doc, "violations")) == 1);
    CHECK(strstr(user_msg(&r, 1), "refused"));
    calls_of(&r, calls, sizeof calls);
    CHECK(!strstr(calls, "turn_cw[10]") && strstr(calls, "turn_cw[20]"));
    result_free(&r);
    free(s);

    /* Bounded. */
    s = script_of(3, "rp", "rp", "rp");
    su = (setup){.script = s, .max_replans = 1};
    r = fly(&su);
    CHECK(!ok_of(&r) && num(&r, "replans") == 1 && num(&r, "llm_calls") == 2);
    CHECK(strstr(error_of(&r), "replan"));
    result_free(&r);
    free(s);
}

static void test_syntax_error_mid_stream(void)
{
    char *s = script_of(2, "tc(45);tc(46);frobnicate(2);tc(11)", "tc(12)");
    setup su = {.script = s, .rate = 300};
    result r = fly(&su);
    CHECK(ok_of(&r) && num(&r, "tries") == 2);
    char calls[512];
    calls_of(&r, calls, sizeof calls);
    CHECK(strcmp(calls, "turn_cw[45]->true turn_cw[46]->true turn_cw[12]->true ") == 0);
    const char *retry = user_msg(&r, 1);
    CHECK(strstr(retry, "1:15:"));
    CHECK(strstr(retry, "tc(45)\ntc(46)"));
    /* The first reply was cut when its plan failed, so its usage never
     * came: both sides are estimated from the text, and the report says so.
     * The retry's own usage (its whole prompt) is counted as well. */
    const cJSON *tok = cJSON_GetObjectItem(r.doc, "tokens");
    int prompt = cJSON_GetObjectItem(tok, "prompt")->valueint;
    int completion = cJSON_GetObjectItem(tok, "completion")->valueint;
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(r.doc, "tokens_estimated")) && completion >= 5 &&
              prompt > 2 * (int)strlen(retry) / 8,
          "tokens after a cut reply: prompt %d, completion %d", prompt, completion);
    result_free(&r);
    free(s);
}

static void test_llm_faults(void)
{
    /* 429 then success */
    setup su = {.script = "{\"responses\":[{\"fault\":\"429\",\"retry_after\":0},"
                          "{\"content\":\"tc(30)\"}]}"};
    result r = fly(&su);
    CHECK(ok_of(&r) && cJSON_GetArraySize(r.requests) == 2 && num(&r, "llm_calls") == 1);
    result_free(&r);

    /* persistent 5xx */
    su = (setup){.script = "{\"responses\":[{\"fault\":\"503\",\"times\":20}]}"};
    r = fly(&su);
    CHECK(!ok_of(&r) && strstr(error_of(&r), "LLM") && strstr(error_of(&r), "server"));
    CHECK(cJSON_GetArraySize(r.requests) == 4); /* 1 + 3 retries */
    result_free(&r);

    /* 401 at once */
    su = (setup){.script = "{\"responses\":[{\"fault\":\"401\",\"times\":5}]}"};
    r = fly(&su);
    CHECK(!ok_of(&r) && strstr(error_of(&r), "auth") && cJSON_GetArraySize(r.requests) == 1);
    result_free(&r);

    char calls[512];

    /* stalled: the idle timeout ends it */
    su = (setup){.script = "{\"responses\":[{\"content\":\"tc(10);tc(20);tc(30)\","
                           "\"fault\":\"stall\",\"stall_after\":3,\"stall_seconds\":10}]}",
                 .idle_ms = 1000};
    r = fly(&su);
    calls_of(&r, calls, sizeof calls);
    CHECK(!ok_of(&r) && strstr(error_of(&r), "timeout"));
    CHECK(strcmp(calls, "turn_cw[10]->true ") == 0);
    result_free(&r);

    /* prose only, every time */
    su = (setup){.script = "{\"responses\":[{\"content\":\"I am sorry, but I cannot help with "
                           "that request.\",\"times\":5}]}"};
    r = fly(&su);
    CHECK(!ok_of(&r) && num(&r, "tries") == 3 && num(&r, "llm_calls") == 3);
    CHECK(strstr(error_of(&r), "no MiniSpec plan"));
    CHECK(strstr(user_msg(&r, 1), "no MiniSpec plan"));
    result_free(&r);
}

/* A reply the server cut short (SPEC §7): the statements the text proved
 * complete ran, the pending last one never runs (`tc,45` cut to `tc,4`
 * looks like a whole statement at the end of the input), the try fails with
 * the reason, the retry prompt carries it, and a good retry flies. */
typedef struct cut_case {
    const char *fault;
    int after;          /* tokens sent before the cut */
    const char *reason; /* in the retry prompt */
} cut_case;

/* split_tokens in fake_llm.py: "tc(1" "0);" " tc(2" "0);" " tc,4" "5;" " tc(3" "0)".
 * After 5 tokens the reply ends in the middle of tc,45; after 6 it ends
 * between statements. */
#define CUT_PLAN "tc(10); tc(20); tc,45; tc(30)"

static void test_cut_replies(void)
{
    static const cut_case cases[] = {
        {"length", 5, "finish_reason \"length\""},
        {"content_filter", 5, "finish_reason \"content_filter\""},
        {"no_finish", 5, "[DONE] came without one"},
        {"truncate_clean", 5, "without a finish_reason"},
        {"truncate", 5, "broke off"},
        {"length", 6, "finish_reason \"length\""},
        {"content_filter", 6, "finish_reason \"content_filter\""},
        {"no_finish", 6, "[DONE] came without one"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const cut_case *c = &cases[i];
        bool between = c->after == 6;
        char script[512];
        snprintf(script, sizeof script,
                 "{\"responses\":[{\"content\":\"" CUT_PLAN "\",\"fault\":\"%s\","
                 "\"truncate_after\":%d},{\"content\":\"tc(77)\"}]}",
                 c->fault, c->after);
        setup su = {.script = script};
        result r = fly(&su);
        char calls[512];
        calls_of(&r, calls, sizeof calls);
        const char *retry = user_msg(&r, 1);
        CHECK(strcmp(calls, between
                                ? "turn_cw[10]->true turn_cw[20]->true turn_cw[45]->true "
                                  "turn_cw[77]->true "
                                : "turn_cw[10]->true turn_cw[20]->true turn_cw[77]->true ") == 0,
              "%s after %d: calls %s", c->fault, c->after, calls);
        CHECK(ok_of(&r) && num(&r, "tries") == 2 && num(&r, "llm_calls") == 2,
              "%s: ok %d tries %d error %s", c->fault, ok_of(&r), num(&r, "tries"), error_of(&r));
        CHECK(strstr(retry, "cut short") && strstr(retry, c->reason) &&
                  strstr(retry, "did not run"),
              "%s: the retry prompt lacks the reason: %s", c->fault, retry);
        /* what already ran, so that the retry carries on from there */
        CHECK(strstr(retry, between ? "tc(10)\ntc(20)\ntc,45\n" : "tc(10)\ntc(20)\n"), "%s: %s",
              c->fault, retry);
        const char *plan0 = cJSON_GetArrayItem(cJSON_GetObjectItem(r.doc, "plans"), 0)->valuestring;
        CHECK(strncmp(plan0, "tc(10); tc(20);", 15) == 0, "%s: plan %s", c->fault, plan0);
        result_free(&r);
    }

    /* Batch: the cut plan is not whole, so none of it runs. */
    char script[512];
    snprintf(script, sizeof script,
             "{\"responses\":[{\"content\":\"" CUT_PLAN "\",\"fault\":\"length\","
             "\"truncate_after\":5},{\"content\":\"tc(77)\"}]}");
    setup su = {.script = script, .batch = true};
    result r = fly(&su);
    char calls[512];
    calls_of(&r, calls, sizeof calls);
    CHECK(strcmp(calls, "turn_cw[77]->true ") == 0, "batch: calls %s", calls);
    CHECK(ok_of(&r) && num(&r, "tries") == 2, "batch: %s", error_of(&r));
    CHECK(strstr(user_msg(&r, 1), "finish_reason \"length\"") &&
              strstr(user_msg(&r, 1), "tc(10); tc(20); tc,4"),
          "batch retry prompt: %s", user_msg(&r, 1));
    result_free(&r);

    /* Cut every time: no success, the mission fails after max_tries. */
    snprintf(script, sizeof script,
             "{\"responses\":[{\"content\":\"" CUT_PLAN "\",\"fault\":\"length\","
             "\"truncate_after\":5,\"times\":5}]}");
    for (int batch = 0; batch < 2; batch++) {
        su = (setup){.script = script, .batch = batch, .max_tries = 2};
        r = fly(&su);
        CHECK(!ok_of(&r) && num(&r, "tries") == 2 && strstr(error_of(&r), "cut short") &&
                  strstr(error_of(&r), "length"),
              "always cut (batch %d): ok %d error %s", batch, ok_of(&r), error_of(&r));
        calls_of(&r, calls, sizeof calls);
        CHECK(!strstr(calls, "turn_cw[4]"), "always cut (batch %d): %s", batch, calls);
        result_free(&r);
    }
}

static void cancel_at_statement(void *ud, int index, const char *text, size_t len, int depth)
{
    (void)index, (void)len, (void)depth;
    if (strncmp(text, "tc(20)", 6) == 0) atomic_store((atomic_bool *)ud, true);
}

static void test_cancel(void)
{
    atomic_bool cancel = false;
    setup su = {.script = "{\"responses\":[{\"content\":\"tc(10);tc(20);tc(30);tc(40);tc(50)\"}]}",
                .rate = 100,
                .cancel = &cancel};
    su.obs.statement = cancel_at_statement;
    su.obs.ud = &cancel;
    result r = fly(&su);
    CHECK(!ok_of(&r) && strstr(error_of(&r), "cancelled"));
    char calls[512];
    calls_of(&r, calls, sizeof calls);
    CHECK(!strstr(calls, "turn_cw[30]"));
    result_free(&r);
}

/* Every reference plan of the benchmark suite, streamed and batch: the
 * same skill calls. */
static void test_stream_equals_batch(const char *src)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/examples/benchmark", src);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d) return;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char plan_path[1024], scene[1024];
        snprintf(plan_path, sizeof plan_path, "%s/%s/plan.ms", dir, e->d_name);
        snprintf(scene, sizeof scene, "%s/%s/scene.json", dir, e->d_name);
        if (access(scene, R_OK))
            snprintf(scene, sizeof scene, "%s/%s/apple.scene.json", dir, e->d_name);
        FILE *f = fopen(plan_path, "r");
        if (!f) continue;
        char plan[4096];
        size_t len = fread(plan, 1, sizeof plan - 1, f);
        plan[len] = '\0';
        fclose(f);
        char *s = script_of(1, plan);
        char calls[2][8192];
        for (int batch = 0; batch < 2; batch++) {
            setup su = {.script = s, .batch = batch, .scene = scene};
            result r = fly(&su);
            CHECK(ok_of(&r));
            calls_of(&r, calls[batch], sizeof calls[batch]);
            result_free(&r);
        }
        if (strcmp(calls[0], calls[1]) != 0)
            fprintf(stderr, "%s:\n stream %s\n batch  %s\n", e->d_name, calls[0], calls[1]);
        CHECK(strcmp(calls[0], calls[1]) == 0 && calls[0][0]);
        free(s);
        n++;
    }
    closedir(d);
    CHECK(n >= 12);
}

int main(void)
{
    const char *src = getenv("SRC");
    if (!src || !*src) src = ".";
    reg = loader_standard(NULL, 0, NULL, NULL);
    char err[256];
    prompts = prompt_load(NULL, err, sizeof err);
    if (!reg || !prompts) {
        fprintf(stderr, "setup: %s\n", err);
        return 1;
    }
    snprintf(scene_path, sizeof scene_path, "/tmp/aloft-test-controller-%d.json", (int)getpid());
    FILE *f = fopen(scene_path, "w");
    fputs("{\"limits\":{\"geofence_radius\":200},\"objects\":["
          "{\"class\":\"chair\",\"x\":0,\"y\":150,\"z\":0,\"w\":50,\"d\":50,\"h\":90,"
          "\"color\":\"red\"},"
          "{\"class\":\"apple\",\"x\":0,\"y\":-150,\"z\":80,\"w\":8,\"d\":8,\"h\":9}]}",
          f);
    fclose(f);

    test_planned_and_flown();
    test_malformed_retried();
    test_fenced_cleaned();
    test_probe();
    test_replans();
    test_syntax_error_mid_stream();
    test_llm_faults();
    test_cut_replies();
    test_cancel();
    test_stream_equals_batch(src);

    unlink(scene_path);
    prompt_free(prompts);
    registry_free(reg);
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
