/* The run report's one encoder (mission/report.h): the SPEC §2 `run --json`
 * document, its fields in their order, at their empty values and filled.
 * labels: mission */
#include "jsonout.h"
#include "mission/report.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* R as the document's text (what `run --json` prints). */
static char *text(const mission_report *r)
{
    cJSON *doc = mission_report_json(r);
    char *t = doc ? jsonout_print(doc) : NULL;
    cJSON_Delete(doc);
    return t;
}

static void check_text(const mission_report *r, const char *want)
{
    char *got = text(r);
    CHECK(got && strcmp(got, want) == 0, "\n got  %s\n want %s", got ? got : "(null)", want);
    free(got);
}

/* What R's document holds after its "tokens" (the optional fields) is WANT. */
static void check_tail(const mission_report *r, const char *want)
{
    const char *tokens = "\"tokens\":{\"prompt\":0,\"completion\":0},";
    char *got = text(r);
    const char *at = got ? strstr(got, tokens) : NULL;
    if (at) at += strlen(tokens);
    CHECK(at && strcmp(at, want) == 0, "\n got  %s\n want %s", got ? got : "(null)", want);
    free(got);
}

int main(void)
{
    mission_report r;
    /* Nothing flew: every field at its empty value, "pose" an empty object. */
    mission_report_init(&r, NULL, 0);
    check_text(&r, "{\"ok\":false,\"result\":null,\"error\":null,\"logs\":[],\"pose\":{},"
                   "\"calls\":[],\"violations\":[],\"plans\":[],\"tries\":0,\"replans\":0,"
                   "\"llm_calls\":0,\"plan_ms\":0,\"first_action_ms\":null,\"excursion_cm\":0,"
                   "\"exec_ms\":0,\"total_ms\":0,\"tokens\":{\"prompt\":0,\"completion\":0}}");
    mission_report_free(&r);

    /* A plan that flew: the plan (cut at its length), a try, logs, the pose
     * rounded to a tenth with the yaw wrapped, the optional fields last. */
    mission_report_init(&r, "tc(90);l('x')xyz", 13);
    r.ok = true;
    r.result = (skill_value){.kind = SKILL_VALUE_INT, .i = 3};
    report_lines_add(&r.logs, "x", 1);
    report_lines_add(&r.logs, "line two", 8);
    mission_report_pose(&r, (drone_pose){.x = 1.04, .y = -2.26, .z = 100, .yaw = -90});
    skill_value *args = calloc(1, sizeof *args);
    CHECK(args != NULL);
    args[0] = (skill_value){.kind = SKILL_VALUE_NUM, .n = 90.5};
    CHECK(skill_journal_add_call(&r.journal, "turn_cw", args, 1, 4) == 0);
    r.first_action_ms = 12.5;
    r.excursion_cm = 1.5;
    r.tokens_estimated = true;
    r.cached_tokens = 7;
    r.mission_id = 42;
    check_text(&r, "{\"ok\":true,\"result\":3,\"error\":null,\"logs\":[\"x\",\"line two\"],"
                   "\"pose\":{\"x\":1,\"y\":-2.3,\"z\":100,\"yaw\":270},"
                   "\"calls\":[{\"skill\":\"turn_cw\",\"args\":[90.5],\"ret\":null,\"t_ms\":4}],"
                   "\"violations\":[],"
                   "\"plans\":[\"tc(90);l('x')\"],\"tries\":1,\"replans\":0,\"llm_calls\":0,"
                   "\"plan_ms\":0,\"first_action_ms\":12.5,\"excursion_cm\":1.5,\"exec_ms\":0,"
                   "\"total_ms\":0,\"tokens\":{\"prompt\":0,\"completion\":0},"
                   "\"tokens_estimated\":true,\"cached_tokens\":7,\"mission_id\":42}");
    /* The encoder leaves the report as it was: a second encoding is the same. */
    char *a = text(&r), *b = text(&r);
    CHECK(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);
    /* The camera's counts (not measured: null; a Tello's stream adds its
     * datagrams) and the pictures taken, after the tokens. */
    mission_report_free(&r);
    mission_report_init(&r, NULL, 0);
    r.has_frames = true;
    r.frames = (vision_stats){.captured = 30,
                              .dropped = 2,
                              .age_ms_mean = 12.5,
                              .age_ms_max = 40,
                              .used = 5,
                              .processed = 28,
                              .detect_fps = 9.5,
                              .first_frame_ms = -1};
    CHECK(report_pictures_add(&r.pictures, "pics/1.ppm", "tello:11111", 960, 720,
                              (drone_pose){.x = 1.5, .y = -2, .z = 100, .yaw = 90}) == 0);
    check_tail(&r, "\"frames\":{\"received\":30,\"dropped\":2,\"age_ms_mean\":12.5,"
                   "\"age_ms_max\":40,\"used\":5,\"detected\":28,\"detect_fps\":9.5,"
                   "\"first_frame_ms\":null},\"pictures\":[{\"path\":\"pics/1.ppm\","
                   "\"camera\":\"tello:11111\",\"width\":960,\"height\":720,"
                   "\"pose\":{\"x\":1.5,\"y\":-2,\"z\":100,\"yaw\":90}}]}");
    r.frames.feed = true;
    r.frames.first_frame_ms = 250;
    r.frames.keyframe_frame_ms = 80;
    r.frames.datagrams = 400, r.frames.datagrams_dropped = 3, r.frames.datagrams_skipped = 7;
    report_pictures_free(&r.pictures);
    check_tail(&r, "\"frames\":{\"received\":30,\"dropped\":2,\"age_ms_mean\":12.5,"
                   "\"age_ms_max\":40,\"used\":5,\"detected\":28,\"detect_fps\":9.5,"
                   "\"first_frame_ms\":250,\"keyframe_to_frame_ms\":80,\"datagrams\":400,"
                   "\"datagrams_dropped\":3,\"datagrams_skipped\":7}}");
    /* The candidate plans (texts copied) and their cost, after the tokens;
     * a verification that could not count its failures says null. */
    mission_report_free(&r);
    mission_report_init(&r, NULL, 0);
    char plan[] = "tc(90)", why[] = "1:1: unknown skill";
    report_candidate c = {.round = 1,
                          .index = 0,
                          .kind = "plan",
                          .plan = plan,
                          .diagnostics = why,
                          .verify_failed = -1,
                          .tokens = 12,
                          .tokens_estimated = true};
    CHECK(report_candidates_add(&r.candidates, &c) == 0);
    plan[0] = 'X'; /* the report keeps its own copy */
    c = (report_candidate){.round = 1,
                           .index = 1,
                           .kind = "plan",
                           .plan = "mf(50)",
                           .accepted = true,
                           .verify_failed = INT_MAX,
                           .refused = true,
                           .tokens = 9,
                           .chosen = true};
    CHECK(report_candidates_add(&r.candidates, &c) == 0);
    r.has_candidates = true;
    r.candidates_cost = (report_candidates_cost){.k = 2,
                                                 .mode = "n",
                                                 .rounds = 1,
                                                 .requests = 1,
                                                 .received = 2,
                                                 .prompt_tokens = 100,
                                                 .completion_tokens = 21,
                                                 .unflown_completion_tokens = 12,
                                                 .llm_ms = 5.5,
                                                 .judge_ms = 1};
    check_tail(&r, "\"candidates\":[{\"round\":1,\"index\":0,\"kind\":\"plan\","
                   "\"plan\":\"tc(90)\",\"accepted\":false,"
                   "\"diagnostics\":\"1:1: unknown skill\",\"verify\":null,\"tokens\":12,"
                   "\"tokens_estimated\":true,\"chosen\":false},{\"round\":1,\"index\":1,"
                   "\"kind\":\"plan\",\"plan\":\"mf(50)\",\"accepted\":true,"
                   "\"diagnostics\":null,\"verify\":{\"passed\":false,\"failed\":null},"
                   "\"tokens\":9,\"chosen\":true}],\"candidates_cost\":{\"k\":2,"
                   "\"mode\":\"n\",\"rounds\":1,\"requests\":1,\"received\":2,"
                   "\"prompt_tokens\":100,\"completion_tokens\":21,"
                   "\"unflown_completion_tokens\":12,\"llm_ms\":5.5,\"judge_ms\":1}}");
    /* An error replaces the last one; "ok" false with it. */
    r.ok = false;
    mission_report_error(&r, "first");
    mission_report_error(&r, "second");
    cJSON *doc = mission_report_json(&r);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "error");
    CHECK(cJSON_IsString(e) && strcmp(e->valuestring, "second") == 0);
    CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(doc, "ok")));
    cJSON_Delete(doc);
    mission_report_free(&r);

    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_report: ok\n");
    return failures != 0;
}
