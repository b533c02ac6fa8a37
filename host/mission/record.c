/*
 * The mission recorder (record.h): skill events, statements, plans and LLM
 * exchanges turned into store records, each committed before the caller
 * goes on, so a call is on disk before the skill acts.
 */
#include "mission/record.h"
#include "clock.h"
#include "mission/sighting.h"
#include "skills/skills.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The call under way at one depth: high-level skills nest calls, and a call
 * that raised an error never returns, so its slot is simply reused by the
 * next call at that depth (the store keeps it as not done). */
typedef struct open_call {
    int64_t id;    /* store id, 0 when none is open */
    double t_ms;   /* when it started, mission time */
    double sim_ms; /* simulated time then, < 0 if unknown */
    char *args;    /* JSON text, for the violations it causes */
} open_call;

struct mission_record {
    store *own;       /* the store, when mission_record_open opened it */
    store *shared;    /* the store, when mission_record_begin was given it */
    store_mission *m; /* owned in either case */
    mission_world *world;
    double t0_ms; /* mission start on the clock_now_ms() clock */
    open_call *open;
    int nopen;
    int64_t plan_llm; /* the exchange the next plan comes from, or 0 */
    char model[128];  /* the LLM model, for its exchanges */
    char error[600];
};

mission_record *mission_record_new(store_mission *m, mission_world *world)
{
    mission_record *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->m = m;
    r->world = world;
    r->t0_ms = clock_now_ms() - store_mission_elapsed_ms(m);
    return r;
}

void mission_record_free(mission_record *r)
{
    if (!r) return;
    for (int i = 0; i < r->nopen; i++)
        free(r->open[i].args);
    free(r->open);
    if (r->own || r->shared) {
        /* The handle goes; the row stays running until the next open. */
        store_mission_abandon(r->m);
        store_close(r->own);
    }
    free(r);
}

mission_record *mission_record_begin(store *s, const store_mission_info *info, mission_world *world,
                                     char *err, size_t errlen)
{
    store_mission *m = store_mission_begin(s, info, err, errlen);
    mission_record *r = m ? mission_record_new(m, world) : NULL;
    if (!r) {
        if (m) {
            snprintf(err, errlen, "out of memory");
            store_mission_end(m, STORE_FAILED, "out of memory", NULL, NULL, 0);
        }
        return NULL;
    }
    r->shared = s;
    return r;
}

mission_record *mission_record_open(const char *db, const store_mission_info *info,
                                    mission_world *world, char *err, size_t errlen)
{
    store *s = store_open(db, 0, err, errlen);
    if (!s) return NULL;
    mission_record *r = mission_record_begin(s, info, world, err, errlen);
    if (!r) {
        store_close(s);
        return NULL;
    }
    r->shared = NULL;
    r->own = s;
    return r;
}

int mission_record_close(mission_record *r, store_status status, const char *error,
                         const cJSON *result, char *err, size_t errlen)
{
    char *res = result ? cJSON_PrintUnformatted(result) : NULL;
    int rc = store_mission_end(r->m, status, error, res, err, errlen);
    free(res);
    r->m = NULL; /* freed by store_mission_end */
    store *s = r->own;
    r->own = NULL;
    r->shared = NULL;
    mission_record_free(r);
    store_close(s);
    return rc;
}

int mission_record_hung(mission_record *r, const char *error, char *err, size_t errlen)
{
    return store_mission_mark(r->m, STORE_HUNG, error, err, errlen);
}

store *mission_record_store(const mission_record *r)
{
    return r->own ? r->own : r->shared;
}

store_mission *mission_record_mission(const mission_record *r)
{
    return r->m;
}

double mission_record_t0_ms(const mission_record *r)
{
    return r->t0_ms;
}

const char *mission_record_error(const mission_record *r)
{
    return r->error[0] ? r->error : NULL;
}

/* Keeps the first failure and stops the plan that caused it. */
static void fail(mission_record *r, skill_ctx *ctx, const char *err)
{
    if (!r->error[0]) snprintf(r->error, sizeof r->error, "mission store: %s", err);
    if (ctx && ctx->sb) sandbox_cancel(ctx->sb);
}

static double sim_now_ms(const mission_record *r)
{
    return r->world && r->world->sim ? mission_world_sim_s(r->world) * 1000 : -1;
}

static open_call *slot(mission_record *r, int depth)
{
    if (depth < 0) return NULL;
    if (depth >= r->nopen) {
        int n = depth + 8;
        open_call *grown = realloc(r->open, (size_t)n * sizeof *grown);
        if (!grown) return NULL;
        memset(grown + r->nopen, 0, (size_t)(n - r->nopen) * sizeof *grown);
        r->open = grown;
        r->nopen = n;
    }
    return &r->open[depth];
}

/* The store keeps values as JSON text, encoded as `run --json` does. */
static char *json_text(cJSON *v)
{
    char *text = v ? cJSON_PrintUnformatted(v) : NULL;
    cJSON_Delete(v);
    return text;
}

static void call_begin(mission_record *r, skill_ctx *ctx, const skill_event *ev, double t)
{
    char err[512];
    open_call *c = slot(r, ev->depth);
    char *args = json_text(skill_values_json(ev->args, ev->nargs));
    if (!c || !args) {
        free(args);
        fail(r, ctx, "out of memory");
        return;
    }
    free(c->args);
    c->args = args;
    c->t_ms = t;
    c->sim_ms = sim_now_ms(r);
    c->id = store_call_begin(r->m, t, ev->skill->name, args, ev->depth, err, sizeof err);
    if (c->id < 0) {
        c->id = 0;
        fail(r, ctx, err);
    }
}

static void call_end(mission_record *r, skill_ctx *ctx, const skill_event *ev, double t)
{
    char err[512];
    open_call *c = ev->depth < r->nopen ? slot(r, ev->depth) : NULL;
    if (!c || c->id <= 0) return;
    char *ret = ev->ret ? json_text(skill_value_json(ev->ret)) : strdup("null");
    store_call_result res = {.ret_json = ret, .sim_ms = -1, .wall_ms = t - c->t_ms};
    if (r->world) {
        drone_pose p = mission_world_pose(r->world);
        res.has_pose = true;
        res.x = p.x, res.y = p.y, res.z = p.z, res.yaw = p.yaw;
    }
    double sim = sim_now_ms(r);
    if (sim >= 0 && c->sim_ms >= 0) res.sim_ms = sim - c->sim_ms;
    if (!ret)
        fail(r, ctx, "out of memory");
    else if (store_call_end(r->m, c->id, &res, err, sizeof err))
        fail(r, ctx, err);
    free(ret);
    c->id = 0;
}

void mission_record_skill_event(mission_record *r, skill_ctx *ctx, const skill_event *ev)
{
    if (r->error[0]) {
        /* Nothing flies unrecorded, even after a statement failed to record. */
        if (ctx && ctx->sb) sandbox_cancel(ctx->sb);
        return;
    }
    /* Event times count from the context's start; ours from the mission's. */
    double t = ev->t_ms + (ctx ? ctx->t0_ms : r->t0_ms) - r->t0_ms;
    if (t < 0) t = 0;
    char err[512];
    switch (ev->kind) {
    case SKILL_EVENT_CALL: call_begin(r, ctx, ev, t); break;
    case SKILL_EVENT_RETURN: call_end(r, ctx, ev, t); break;
    case SKILL_EVENT_VIOLATION: {
        const open_call *c = ev->depth < r->nopen ? &r->open[ev->depth] : NULL;
        if (store_record_violation(r->m, t, ev->skill->name, c && c->id > 0 ? c->args : NULL,
                                   ev->reason, err, sizeof err))
            fail(r, ctx, err);
        break;
    }
    }
}

void mission_record_sightings(mission_record *r, skill_ctx *ctx, const vision_object *objs, int n)
{
    if (r->error[0] || !r->world || !r->world->scene || n <= 0) return;
    drone_pose pose = mission_world_pose(r->world);
    store_sighting *v = calloc((size_t)n, sizeof *v);
    char err[512];
    if (!v) {
        fail(r, ctx, "out of memory");
        return;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        double pos[3];
        if (!sighting_locate(&pose, &r->world->scene->camera, &objs[i], pos)) continue;
        v[k++] = (store_sighting){objs[i].cls, pos[0], pos[1], pos[2], objs[i].conf};
    }
    if (store_record_objects(r->m, v, k, err, sizeof err)) fail(r, ctx, err);
    free(v);
}

int64_t mission_record_llm(mission_record *r, const store_llm *x)
{
    if (r->error[0]) return -1;
    char err[512];
    int64_t id = store_record_llm(r->m, x, err, sizeof err);
    if (id < 0) {
        fail(r, NULL, err);
        return -1;
    }
    if (x->kind != STORE_LLM_PROBE) r->plan_llm = id;
    return id;
}

int mission_record_plan(mission_record *r, const char *text, size_t len, bool ok,
                        const char *diagnostics)
{
    if (r->error[0]) return -1;
    char err[512];
    char *copy = strndup(text ? text : "", text ? len : 0);
    if (!copy) {
        fail(r, NULL, "out of memory");
        return -1;
    }
    int no = store_record_plan(r->m, -1, r->plan_llm, copy, ok, diagnostics, err, sizeof err);
    free(copy);
    if (no < 0) fail(r, NULL, err);
    return no;
}

void mission_record_statement(mission_record *r, double t_ms, int plan_no, int line, int col,
                              const char *text, size_t len)
{
    if (r->error[0]) return;
    char err[512];
    char *copy = strndup(text, len);
    if (!copy) {
        fail(r, NULL, "out of memory");
        return;
    }
    if (store_record_statement(r->m, t_ms, plan_no, line, col, copy, err, sizeof err))
        fail(r, NULL, err);
    free(copy);
}

/* ---- the mission controller ------------------------------------------------ */

store_llm_kind mission_record_llm_kind(mission_llm_kind k)
{
    switch (k) {
    case MISSION_LLM_RETRY: return STORE_LLM_RETRY;
    case MISSION_LLM_REPLAN: return STORE_LLM_REPLAN;
    case MISSION_LLM_PROBE: return STORE_LLM_PROBE;
    default: return STORE_LLM_PLAN;
    }
}

/* The replies to a request with n > 1 as the server's body says them,
 * {"choices":[{"index","message":{"content"},"finish_reason"}]}: every
 * candidate is kept, and a replay reads them back (mission/replay.h). */
static char *choices_text(const llm_result *res)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(doc, "choices");
    for (int i = 0; i < res->nchoices; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddNumberToObject(c, "index", res->choices[i].index);
        cJSON *m = cJSON_AddObjectToObject(c, "message");
        cJSON_AddStringToObject(m, "content", res->choices[i].text ? res->choices[i].text : "");
        cJSON_AddStringToObject(c, "finish_reason", res->choices[i].finish_reason);
        cJSON_AddItemToArray(arr, c);
    }
    char *s = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return s;
}

static void observe_llm(void *ud, mission_llm_kind kind, const llm_message *msgs, int nmsgs,
                        const llm_result *res)
{
    mission_record *r = ud;
    cJSON *req = cJSON_CreateArray();
    for (int i = 0; i < nmsgs; i++) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", msgs[i].role ? msgs[i].role : "");
        cJSON_AddStringToObject(m, "content", msgs[i].content ? msgs[i].content : "");
        cJSON_AddItemToArray(req, m);
    }
    char *prompt = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    char *several = res->nchoices > 0 ? choices_text(res) : NULL;
    char error[LLM_ERR_MAX + 64] = "";
    if (res->status != LLM_OK)
        snprintf(error, sizeof error, "%s: %s", llm_status_name(res->status), res->error);
    /* The request went out the whole call ago, time in the callback included. */
    double t = store_mission_elapsed_ms(r->m) - (res->wall_ms > 0 ? res->wall_ms : res->latency_ms);
    store_llm x = {
        .kind = mission_record_llm_kind(kind),
        .model = r->model[0] ? r->model : NULL,
        .t_ms = t < 0 ? 0 : t, /* when the request was sent */
        .prompt = prompt ? prompt : "",
        .response = several     ? several
                    : res->text ? res->text
                                : "",
        .latency_ms = res->latency_ms,
        .ttft_ms = res->ttft_ms,
        .prompt_tokens = res->usage_known ? res->prompt_tokens : -1,
        .completion_tokens = res->usage_known ? res->completion_tokens : -1,
        .error = error[0] ? error : NULL,
    };
    mission_record_llm(r, &x);
    free(prompt);
    free(several);
}

static void observe_plan(void *ud, int index, const char *plan, size_t len, const char *diagnostics)
{
    (void)index; /* plans are numbered in recording order (a failed call has none) */
    mission_record_plan(ud, plan, len, diagnostics == NULL, diagnostics);
}

/* The scene snapshot a prompt was built from, with where the drone was. */
static void observe_scene(void *ud, const char *description)
{
    mission_record *r = ud;
    char err[512];
    bool has_pose = r->world != NULL;
    drone_pose p = {0, 0, 0, 0};
    if (has_pose) p = mission_world_pose(r->world);
    if (store_record_scene(r->m, store_mission_elapsed_ms(r->m), description, has_pose, p.x, p.y,
                           p.z, p.yaw, err, sizeof err))
        fail(r, NULL, err);
}

static void observe_candidate(void *ud, const mission_candidate *c)
{
    mission_record *r = ud;
    if (r->error[0]) return;
    char err[512];
    store_candidate x = {.llm_id = r->plan_llm,
                         .round = c->round,
                         .index = c->index,
                         .text = c->plan,
                         .accepted = c->accepted,
                         .diagnostics = c->diagnostics,
                         /* could not run (INT_MAX): its diagnostics say why */
                         .verify_failed = c->verify_failed == INT_MAX ? -1 : c->verify_failed,
                         .tokens = c->tokens,
                         .chosen = c->chosen};
    if (store_record_candidate(r->m, -1, &x, err, sizeof err)) fail(r, NULL, err);
}

mission_observer mission_record_observer(mission_record *r, const char *model)
{
    snprintf(r->model, sizeof r->model, "%s", model ? model : "");
    return (mission_observer){.llm_exchange = observe_llm,
                              .plan = observe_plan,
                              .scene = observe_scene,
                              .candidate = observe_candidate,
                              .ud = r};
}

static int recall(void *ud, store_object *out, double *age_s, int max)
{
    mission_record *r = ud;
    char err[512];
    return r->m ? store_world_objects(r->m, out, age_s, max, err, sizeof err) : -1;
}

mission_memory mission_record_memory(mission_record *r)
{
    return (mission_memory){recall, r};
}
