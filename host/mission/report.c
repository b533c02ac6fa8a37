/* What a flight did, and its one encoder: see report.h. */
#include "mission/report.h"

#include "drone/heading.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Room for one more item in *ITEMS (N used of *CAP, each SIZE bytes): the
 * lists of the report grow by doubling. 0, or -1 when out of memory. */
static int room(void **items, int n, int *cap, size_t size)
{
    if (n < *cap) return 0;
    if (*cap > INT_MAX / 2) return -1;
    int c = *cap ? 2 * *cap : 8;
    void *p = realloc(*items, (size_t)c * size);
    if (!p) return -1;
    *items = p, *cap = c;
    return 0;
}

int report_lines_add(report_lines *l, const char *text, size_t len)
{
    if (room((void **)&l->s, l->n, &l->cap, sizeof *l->s)) return -1;
    char *copy = strndup(text, len);
    if (!copy) return -1;
    l->s[l->n++] = copy;
    return 0;
}

int report_pictures_add(report_pictures *l, const char *path, const char *camera, int width,
                        int height, drone_pose pose)
{
    if (room((void **)&l->p, l->n, &l->cap, sizeof *l->p)) return -1;
    char *pa = strdup(path), *ca = strdup(camera);
    if (!pa || !ca) {
        free(pa);
        free(ca);
        return -1;
    }
    l->p[l->n++] = (report_picture){pa, ca, width, height, pose};
    return 0;
}

void report_pictures_free(report_pictures *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->p[i].path);
        free(l->p[i].camera);
    }
    free(l->p);
    memset(l, 0, sizeof *l);
}

void report_pictures_move(report_pictures *to, report_pictures *from)
{
    report_pictures_free(to);
    *to = *from;
    memset(from, 0, sizeof *from);
}

int report_candidates_add(report_candidates *l, const report_candidate *c)
{
    if (room((void **)&l->c, l->n, &l->cap, sizeof *l->c)) return -1;
    report_candidate copy = *c;
    copy.plan = strdup(c->plan ? c->plan : "");
    copy.diagnostics = c->diagnostics ? strdup(c->diagnostics) : NULL;
    if (!copy.plan || (c->diagnostics && !copy.diagnostics)) {
        free(copy.plan);
        free(copy.diagnostics);
        return -1;
    }
    l->c[l->n++] = copy;
    return 0;
}

void report_candidates_free(report_candidates *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->c[i].plan);
        free(l->c[i].diagnostics);
    }
    free(l->c);
    memset(l, 0, sizeof *l);
}

void report_candidates_move(report_candidates *to, report_candidates *from)
{
    report_candidates_free(to);
    *to = *from;
    memset(from, 0, sizeof *from);
}

static void lines_free(report_lines *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->s[i]);
    free(l->s);
    memset(l, 0, sizeof *l);
}

void mission_report_init(mission_report *r, const char *plan, size_t len)
{
    memset(r, 0, sizeof *r);
    r->first_action_ms = -1;
    if (plan && report_lines_add(&r->plans, plan, len) == 0) r->tries = 1;
}

void mission_report_error(mission_report *r, const char *msg)
{
    free(r->error);
    r->error = msg ? strdup(msg) : NULL;
}

void mission_report_pose(mission_report *r, drone_pose p)
{
    r->has_pose = true;
    r->pose = (drone_pose){.x = round(p.x * 10) / 10,
                           .y = round(p.y * 10) / 10,
                           .z = round(p.z * 10) / 10,
                           .yaw = heading_wrap(round(p.yaw * 10) / 10)};
}

static cJSON *lines_json(const report_lines *l)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < l->n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(l->s[i]));
    return a;
}

static cJSON *pose_json(const mission_report *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!r->has_pose) return o;
    cJSON_AddNumberToObject(o, "x", r->pose.x);
    cJSON_AddNumberToObject(o, "y", r->pose.y);
    cJSON_AddNumberToObject(o, "z", r->pose.z);
    cJSON_AddNumberToObject(o, "yaw", r->pose.yaw);
    return o;
}

/* A number, or null when negative (not measured). */
static cJSON *ms_or_null(double v)
{
    return v >= 0 ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

/* "frames": the camera's counts (SPEC §2 and §11, docs/cli.md). */
static cJSON *frames_json(const vision_stats *st)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "received", (double)st->captured);
    cJSON_AddNumberToObject(o, "dropped", (double)st->dropped);
    cJSON_AddNumberToObject(o, "age_ms_mean", st->age_ms_mean);
    cJSON_AddNumberToObject(o, "age_ms_max", st->age_ms_max);
    cJSON_AddNumberToObject(o, "used", (double)st->used);
    cJSON_AddNumberToObject(o, "detected", (double)st->processed);
    cJSON_AddNumberToObject(o, "detect_fps", st->detect_fps);
    cJSON_AddItemToObject(o, "first_frame_ms", ms_or_null(st->first_frame_ms));
    if (st->feed) {
        cJSON_AddItemToObject(o, "keyframe_to_frame_ms", ms_or_null(st->keyframe_frame_ms));
        cJSON_AddNumberToObject(o, "datagrams", (double)st->datagrams);
        cJSON_AddNumberToObject(o, "datagrams_dropped", (double)st->datagrams_dropped);
        cJSON_AddNumberToObject(o, "datagrams_skipped", (double)st->datagrams_skipped);
    }
    return o;
}

/* "pictures": [{"path","camera","width","height","pose"}]. */
static cJSON *pictures_json(const report_pictures *l)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < l->n; i++) {
        const report_picture *p = &l->p[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", p->path);
        cJSON_AddStringToObject(o, "camera", p->camera);
        cJSON_AddNumberToObject(o, "width", p->width);
        cJSON_AddNumberToObject(o, "height", p->height);
        cJSON *pose = cJSON_AddObjectToObject(o, "pose");
        cJSON_AddNumberToObject(pose, "x", p->pose.x);
        cJSON_AddNumberToObject(pose, "y", p->pose.y);
        cJSON_AddNumberToObject(pose, "z", p->pose.z);
        cJSON_AddNumberToObject(pose, "yaw", p->pose.yaw);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *candidate_json(const report_candidate *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "round", c->round);
    cJSON_AddNumberToObject(o, "index", c->index);
    cJSON_AddStringToObject(o, "kind", c->kind ? c->kind : "");
    cJSON_AddStringToObject(o, "plan", c->plan ? c->plan : "");
    cJSON_AddBoolToObject(o, "accepted", c->accepted);
    if (c->diagnostics)
        cJSON_AddStringToObject(o, "diagnostics", c->diagnostics);
    else
        cJSON_AddNullToObject(o, "diagnostics");
    if (c->verify_failed < 0)
        cJSON_AddNullToObject(o, "verify");
    else {
        cJSON *v = cJSON_AddObjectToObject(o, "verify");
        cJSON_AddBoolToObject(v, "passed", !c->refused);
        if (c->verify_failed == INT_MAX)
            cJSON_AddNullToObject(v, "failed");
        else
            cJSON_AddNumberToObject(v, "failed", c->verify_failed);
    }
    cJSON_AddNumberToObject(o, "tokens", (double)c->tokens);
    if (c->tokens_estimated) cJSON_AddTrueToObject(o, "tokens_estimated");
    cJSON_AddBoolToObject(o, "chosen", c->chosen);
    return o;
}

static cJSON *candidates_json(const report_candidates *l)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < l->n; i++)
        cJSON_AddItemToArray(a, candidate_json(&l->c[i]));
    return a;
}

static cJSON *cost_json(const report_candidates_cost *cs)
{
    cJSON *c = cJSON_CreateObject();
    cJSON_AddNumberToObject(c, "k", cs->k);
    cJSON_AddStringToObject(c, "mode", cs->mode ? cs->mode : "");
    cJSON_AddNumberToObject(c, "rounds", cs->rounds);
    cJSON_AddNumberToObject(c, "requests", cs->requests);
    cJSON_AddNumberToObject(c, "received", cs->received);
    cJSON_AddNumberToObject(c, "prompt_tokens", (double)cs->prompt_tokens);
    cJSON_AddNumberToObject(c, "completion_tokens", (double)cs->completion_tokens);
    cJSON_AddNumberToObject(c, "unflown_completion_tokens", (double)cs->unflown_completion_tokens);
    if (cs->tokens_estimated) cJSON_AddTrueToObject(c, "tokens_estimated");
    cJSON_AddNumberToObject(c, "llm_ms", cs->llm_ms);
    cJSON_AddNumberToObject(c, "judge_ms", cs->judge_ms);
    return c;
}

cJSON *mission_report_json(const mission_report *r)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc) return NULL;
    cJSON_AddBoolToObject(doc, "ok", r->ok);
    cJSON_AddItemToObject(doc, "result", skill_value_json(&r->result));
    if (r->error)
        cJSON_AddStringToObject(doc, "error", r->error);
    else
        cJSON_AddNullToObject(doc, "error");
    cJSON_AddItemToObject(doc, "logs", lines_json(&r->logs));
    cJSON_AddItemToObject(doc, "pose", pose_json(r));
    cJSON_AddItemToObject(doc, "calls", skill_journal_calls_json(&r->journal));
    cJSON_AddItemToObject(doc, "violations", skill_journal_violations_json(&r->journal));
    cJSON_AddItemToObject(doc, "plans", lines_json(&r->plans));
    cJSON_AddNumberToObject(doc, "tries", r->tries);
    cJSON_AddNumberToObject(doc, "replans", r->replans);
    cJSON_AddNumberToObject(doc, "llm_calls", r->llm_calls);
    cJSON_AddNumberToObject(doc, "plan_ms", r->plan_ms);
    if (r->first_action_ms >= 0)
        cJSON_AddNumberToObject(doc, "first_action_ms", r->first_action_ms);
    else
        cJSON_AddNullToObject(doc, "first_action_ms");
    cJSON_AddNumberToObject(doc, "excursion_cm", r->excursion_cm);
    cJSON_AddNumberToObject(doc, "exec_ms", r->exec_ms);
    cJSON_AddNumberToObject(doc, "total_ms", r->total_ms);
    cJSON *tok = cJSON_AddObjectToObject(doc, "tokens");
    cJSON_AddNumberToObject(tok, "prompt", (double)r->prompt_tokens);
    cJSON_AddNumberToObject(tok, "completion", (double)r->completion_tokens);
    /* Beside "tokens", which keeps exactly the SPEC's two counts. */
    if (r->tokens_estimated) cJSON_AddTrueToObject(doc, "tokens_estimated");
    if (r->cached_tokens > 0)
        cJSON_AddNumberToObject(doc, "cached_tokens", (double)r->cached_tokens);
    if (r->has_candidates) {
        cJSON_AddItemToObject(doc, "candidates", candidates_json(&r->candidates));
        cJSON_AddItemToObject(doc, "candidates_cost", cost_json(&r->candidates_cost));
    }
    if (r->has_frames) cJSON_AddItemToObject(doc, "frames", frames_json(&r->frames));
    if (r->pictures.n > 0) cJSON_AddItemToObject(doc, "pictures", pictures_json(&r->pictures));
    if (r->mission_id > 0) cJSON_AddNumberToObject(doc, "mission_id", (double)r->mission_id);
    return doc;
}

void mission_report_free(mission_report *r)
{
    skill_value_free(&r->result);
    free(r->error);
    lines_free(&r->logs);
    skill_journal_free(&r->journal);
    lines_free(&r->plans);
    report_candidates_free(&r->candidates);
    report_pictures_free(&r->pictures);
    memset(r, 0, sizeof *r);
    r->first_action_ms = -1;
}
