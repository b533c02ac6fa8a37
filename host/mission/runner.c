/*
 * The plan runner: MiniSpec text in, one flown plan and its SPEC §2 report
 * out. Also the mission world, which puts every driver behind the one
 * constraint check before skills can see it.
 */
#include "mission/runner.h"

#include "drone/constraints.h"
#include "minispec/minispec.h"
#include "minispec/stream.h"
#include "minispec/stream_exec.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the world ----------------------------------------------------------- */

static int wrap(mission_world *w, drone *driver, char *err, size_t errlen)
{
    w->drone = constraints_wrap(driver, &w->scene->limits, &w->scene->start, err, errlen);
    if (!w->drone) {
        driver->ops->destroy(driver);
        free(w->scene);
        w->scene = NULL;
        return -1;
    }
    return 0;
}

int mission_world_sim(mission_world *w, const char *scene_path, const sim_options *opts, char *err,
                      size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->scene = malloc(sizeof *w->scene);
    if (!w->scene) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (scene_load(w->scene, scene_path, err, errlen)) {
        free(w->scene);
        w->scene = NULL;
        return -1;
    }
    drone *d = sim_open(w->scene, opts, err, errlen);
    if (!d) {
        free(w->scene);
        w->scene = NULL;
        return -1;
    }
    w->sim = d;
    if (wrap(w, d, err, errlen)) return -1;
    if (mission_world_launch(w, err, errlen)) {
        mission_world_close(w, false);
        return -1;
    }
    return 0;
}

int mission_world_wrap(mission_world *w, drone *driver, const char *scene_path, char *err,
                       size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->scene = malloc(sizeof *w->scene);
    if (!w->scene) {
        driver->ops->destroy(driver);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    scene_defaults(w->scene);
    if (scene_path && scene_load(w->scene, scene_path, err, errlen)) {
        driver->ops->destroy(driver);
        free(w->scene);
        w->scene = NULL;
        return -1;
    }
    /* A real drone's geofence is centred where it takes off. */
    drone_state st;
    if (driver->ops->get_state(driver, &st) == 0) w->scene->start = st.pose;
    return wrap(w, driver, err, errlen);
}

int mission_world_launch(mission_world *w, char *err, size_t errlen)
{
    drone *d = w->drone;
    if (d->ops->connect(d, err, errlen) || d->ops->takeoff(d, err, errlen)) return -1;
    w->launched = true;
    return 0;
}

static int observe_sim(void *ud, vision_object *out, int max, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    return sim_observe(ud, out, max);
}

void mission_world_attach(mission_world *w, skill_ctx *ctx)
{
    ctx->drone = w->drone;
    if (w->sim) {
        ctx->observe = observe_sim;
        ctx->observe_ud = w->sim;
    }
}

drone_pose mission_world_pose(mission_world *w)
{
    drone_state st;
    memset(&st, 0, sizeof st);
    w->drone->ops->get_state(w->drone, &st);
    st.pose.yaw = fmod(fmod(st.pose.yaw, 360) + 360, 360);
    return st.pose;
}

double mission_world_sim_s(mission_world *w)
{
    return w->sim ? sim_time_ms(w->sim) / 1000 : 0;
}

void mission_world_close(mission_world *w, bool land)
{
    if (w->drone) {
        char err[256];
        w->drone->abort = NULL;
        w->drone->ops->hover(w->drone);
        if (land && w->launched) w->drone->ops->land(w->drone, err, sizeof err);
        w->drone->ops->destroy(w->drone);
    }
    free(w->scene);
    memset(w, 0, sizeof *w);
}

/* ---- progress ------------------------------------------------------------- */

typedef struct run_state {
    const runner_opts *o;
    skill_ctx ctx;
    double t0;
    /* Statement lines wait here until we know they ran: the first skill
     * call made by the statement prints them (see execute). */
    char pending[2048];
    size_t npending;
} run_state;

static void pending_add(run_state *rs, int depth, const char *text, size_t len)
{
    if (!rs->o->progress) return;
    int n = snprintf(rs->pending + rs->npending, sizeof rs->pending - rs->npending,
                     "[%7.2fs] %*s> %.*s\n", mission_world_sim_s(rs->o->world), 2 * depth, "",
                     (int)(len > 400 ? 400 : len), text);
    if (n > 0 && rs->npending + (size_t)n < sizeof rs->pending) rs->npending += (size_t)n;
}

static void pending_flush(run_state *rs, bool print)
{
    if (print && rs->npending) {
        fwrite(rs->pending, 1, rs->npending, rs->o->progress);
        fflush(rs->o->progress);
    }
    rs->npending = 0;
}

static void print_value(FILE *f, const cJSON *v)
{
    if (!v || cJSON_IsNull(v))
        fputs("None", f);
    else if (cJSON_IsBool(v))
        fputs(cJSON_IsTrue(v) ? "True" : "False", f);
    else if (cJSON_IsNumber(v))
        fprintf(f, "%.4g", v->valuedouble);
    else if (cJSON_IsString(v))
        fprintf(f, "'%s'", v->valuestring);
    else
        fputs("?", f);
}

/* "[  1.20s] turn_cw(45) -> True", indented by call depth. High-level skills
 * are announced when they start, since they run for a while. */
static void on_event(void *ud, const skill_event *ev)
{
    run_state *rs = ud;
    FILE *f = rs->o->progress;
    if (!f) return;
    bool high = ev->skill->level == SKILL_HIGH;
    pending_flush(rs, true);
    if (ev->kind == SKILL_EVENT_CALL && !high) return;
    fprintf(f, "[%7.2fs] %*s%s(", mission_world_sim_s(rs->o->world), 2 * ev->depth, "",
            ev->skill->name);
    int i = 0;
    for (const cJSON *a = ev->args ? ev->args->child : NULL; a; a = a->next, i++) {
        if (i) fputs(", ", f);
        print_value(f, a);
    }
    if (ev->kind == SKILL_EVENT_CALL) {
        fputs(") ...\n", f);
    } else {
        fputs(") -> ", f);
        print_value(f, ev->ret);
        fputc('\n', f);
    }
    fflush(f);
}

/* ---- the report ------------------------------------------------------------ */

cJSON *runner_output_lines(const sandbox *sb)
{
    cJSON *logs = cJSON_CreateArray();
    size_t len;
    const char *out = sandbox_output(sb, &len), *end = out + len;
    while (out < end) {
        const char *nl = memchr(out, '\n', (size_t)(end - out));
        size_t n = nl ? (size_t)(nl - out) : (size_t)(end - out);
        char *line = strndup(out, n);
        cJSON_AddItemToArray(logs, cJSON_CreateString(line ? line : ""));
        free(line);
        out += n + (nl ? 1 : 0);
    }
    if (sandbox_output_truncated(sb))
        cJSON_AddItemToArray(logs, cJSON_CreateString("[output truncated]"));
    return logs;
}

static cJSON *lua_to_json(lua_State *L, int idx)
{
    switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN: return cJSON_CreateBool(lua_toboolean(L, idx));
    case LUA_TNUMBER: return cJSON_CreateNumber(lua_tonumber(L, idx));
    case LUA_TSTRING: return cJSON_CreateString(lua_tostring(L, idx));
    case LUA_TNIL:
    case LUA_TNONE: return cJSON_CreateNull();
    default: return cJSON_CreateString(luaL_typename(L, idx));
    }
}

static cJSON *report_new(const runner_opts *o)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddBoolToObject(doc, "ok", false);
    cJSON_AddNullToObject(doc, "result");
    cJSON_AddNullToObject(doc, "error");
    cJSON_AddItemToObject(doc, "logs", cJSON_CreateArray());
    cJSON_AddItemToObject(doc, "pose", cJSON_CreateObject());
    cJSON_AddItemToObject(doc, "calls", cJSON_CreateArray());
    cJSON_AddItemToObject(doc, "violations", cJSON_CreateArray());
    cJSON *plans = cJSON_AddArrayToObject(doc, "plans");
    char *text = strndup(o->plan ? o->plan : "", o->plan_len);
    cJSON_AddItemToArray(plans, cJSON_CreateString(text ? text : ""));
    free(text);
    cJSON_AddNumberToObject(doc, "tries", 1);
    cJSON_AddNumberToObject(doc, "replans", 0);
    cJSON_AddNumberToObject(doc, "llm_calls", 0);
    cJSON_AddNumberToObject(doc, "plan_ms", 0);
    cJSON_AddNullToObject(doc, "first_action_ms");
    cJSON_AddNumberToObject(doc, "exec_ms", 0);
    cJSON_AddNumberToObject(doc, "total_ms", 0);
    cJSON *tok = cJSON_AddObjectToObject(doc, "tokens");
    cJSON_AddNumberToObject(tok, "prompt", 0);
    cJSON_AddNumberToObject(tok, "completion", 0);
    return doc;
}

static void report_set(cJSON *doc, const char *key, cJSON *value)
{
    cJSON_ReplaceItemInObjectCaseSensitive(doc, key, value);
}

static void report_pose(cJSON *doc, mission_world *w)
{
    drone_pose p = mission_world_pose(w);
    cJSON *pose = cJSON_CreateObject();
    cJSON_AddNumberToObject(pose, "x", round(p.x * 10) / 10);
    cJSON_AddNumberToObject(pose, "y", round(p.y * 10) / 10);
    cJSON_AddNumberToObject(pose, "z", round(p.z * 10) / 10);
    cJSON_AddNumberToObject(pose, "yaw", fmod(round(p.yaw * 10) / 10, 360));
    report_set(doc, "pose", pose);
}

/* Compiles the plan; on failure puts the diagnostics into the report. */
static char *compile(const runner_opts *o, cJSON *doc)
{
    ms_options mo = {o->max_loop, 0};
    ms_result r;
    memset(&r, 0, sizeof r);
    char *lua = NULL;
    if (minispec_compile(o->reg, o->plan, o->plan_len, &mo, &r) == 0 && r.ok && r.lua) {
        lua = r.lua;
        r.lua = NULL;
    } else {
        char msg[2048] = "";
        size_t used = 0;
        for (int i = 0; i < r.ndiags && used < sizeof msg - 1; i++)
            used += (size_t)snprintf(msg + used, sizeof msg - used, "%s%d:%d: %s", i ? "; " : "",
                                     r.diags[i].line, r.diags[i].col, r.diags[i].message);
        if (!msg[0]) snprintf(msg, sizeof msg, "the plan does not compile");
        report_set(doc, "error", cJSON_CreateString(msg));
        if (o->progress) fprintf(o->progress, "plan rejected: %s\n", msg);
    }
    ms_result_free(&r);
    return lua;
}

/* Runs the (already checked) plan statement by statement through the
 * MiniSpec stream executor, which behaves exactly like the whole-plan chunk
 * but lets progress show each statement as it starts. A statement's line is
 * printed at its first skill call, or after it ran if it called none, so
 * statements in blocks that were skipped never show. Leaves the plan's
 * result on the stack when it returns SANDBOX_OK. */
static sandbox_status execute(run_state *rs, sandbox *sb, char *err, size_t errlen)
{
    const runner_opts *o = rs->o;
    ms_options mo = {o->max_loop, 0};
    ms_stream *ps = ms_stream_new(o->reg, &mo);
    ms_exec *x = ms_exec_new(sb);
    if (!ps || !x) {
        ms_stream_free(ps);
        ms_exec_free(x);
        snprintf(err, errlen, "out of memory");
        return SANDBOX_ERROR;
    }
    ms_stream_feed(ps, o->plan, o->plan_len);
    ms_stream_finish(ps);
    sandbox_status st = SANDBOX_OK;
    ms_event ev;
    ms_event_kind k;
    while (st == SANDBOX_OK && !ms_exec_finished(x) &&
           (k = ms_stream_next(ps, &ev)) != MS_EV_NONE && k != MS_EV_DONE) {
        if (k == MS_EV_STATEMENT || k == MS_EV_BLOCK_BEGIN)
            pending_add(rs, ev.depth, o->plan + ev.off, ev.len);
        int before = ms_exec_statements_run(x);
        st = ms_exec_event(x, &ev, err, errlen);
        if (k == MS_EV_STATEMENT) pending_flush(rs, ms_exec_statements_run(x) > before);
        if (k == MS_EV_BLOCK_END) pending_flush(rs, false);
    }
    pending_flush(rs, false);
    if (st == SANDBOX_OK) ms_exec_push_result(x);
    ms_exec_free(x);
    ms_stream_free(ps);
    return st;
}

static void finish_error(cJSON *doc, const char *msg, const runner_opts *o)
{
    report_set(doc, "error", cJSON_CreateString(msg));
    if (o->progress) fprintf(o->progress, "mission failed: %s\n", msg);
}

cJSON *runner_run(const runner_opts *o)
{
    double t0 = skills_now_ms();
    cJSON *doc = report_new(o);
    runner_outcome none;
    runner_outcome *out = o->outcome ? o->outcome : &none;
    memset(out, 0, sizeof *out);
    char *lua = compile(o, doc);
    if (!lua) {
        out->status = RUNNER_REJECTED;
        out->sandbox = SANDBOX_ERROR;
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "error");
        snprintf(out->reason, sizeof out->reason, "%s", cJSON_IsString(e) ? e->valuestring : "");
        report_pose(doc, o->world);
        report_set(doc, "total_ms", cJSON_CreateNumber(skills_now_ms() - t0));
        return doc;
    }
    char err[1024] = "";
    sandbox *sb = sandbox_new(&o->limits, err, sizeof err);
    if (!sb) {
        free(lua);
        finish_error(doc, err, o);
        out->status = RUNNER_FAILED;
        out->sandbox = SANDBOX_ERROR;
        snprintf(out->reason, sizeof out->reason, "%s", err);
        return doc;
    }
    run_state rs;
    memset(&rs, 0, sizeof rs);
    rs.o = o;
    rs.t0 = t0;
    skill_ctx *ctx = &rs.ctx;
    ctx->reg = o->reg;
    ctx->sb = sb;
    ctx->t0_ms = t0;
    ctx->probe = o->probe;
    ctx->probe_ud = o->probe_ud;
    ctx->on_event = on_event;
    ctx->event_ud = &rs;
    mission_world_attach(o->world, ctx);

    double exec0 = skills_now_ms();
    sandbox_status st = SANDBOX_ERROR;
    if (skills_bind(ctx, err, sizeof err) == 0) {
        if (o->on_sandbox) o->on_sandbox(o->on_sandbox_ud, sb);
        exec0 = skills_now_ms();
        st = execute(&rs, sb, err, sizeof err);
        if (o->on_sandbox) o->on_sandbox(o->on_sandbox_ud, NULL);
        if (st == SANDBOX_OK) {
            lua_State *L = sandbox_lua(sb);
            report_set(doc, "result", lua_to_json(L, -1));
            lua_pop(L, 1);
        }
    }
    double exec_ms = skills_now_ms() - exec0;
    o->world->drone->ops->hover(o->world->drone);

    out->sandbox = st;
    out->status = st == SANDBOX_OK          ? RUNNER_OK
                  : st == SANDBOX_CANCELLED ? RUNNER_CANCELLED
                                            : RUNNER_FAILED;
    if (st == SANDBOX_OK && ctx->replan) {
        snprintf(err, sizeof err, "replan requested: %s", ctx->replan_reason);
        st = SANDBOX_ERROR;
        out->status = RUNNER_REPLAN;
    }
    if (st != SANDBOX_OK)
        snprintf(out->reason, sizeof out->reason, "%s", err[0] ? err : sandbox_status_name(st));
    out->violations = cJSON_GetArraySize(ctx->violations);
    if (st == SANDBOX_OK) {
        report_set(doc, "ok", cJSON_CreateTrue());
        if (o->progress) {
            fprintf(o->progress, "[%7.2fs] done", mission_world_sim_s(o->world));
            cJSON *res = cJSON_GetObjectItemCaseSensitive(doc, "result");
            if (!cJSON_IsNull(res)) {
                fputs(", result ", o->progress);
                print_value(o->progress, res);
            }
            fputc('\n', o->progress);
        }
    } else {
        finish_error(doc, err[0] ? err : sandbox_status_name(st), o);
    }
    report_set(doc, "logs", runner_output_lines(sb));
    report_pose(doc, o->world);
    report_set(doc, "calls", ctx->calls);
    report_set(doc, "violations", ctx->violations);
    ctx->calls = ctx->violations = NULL;
    if (ctx->first_action_ms >= 0)
        report_set(doc, "first_action_ms", cJSON_CreateNumber(ctx->first_action_ms));
    report_set(doc, "exec_ms", cJSON_CreateNumber(exec_ms));
    report_set(doc, "total_ms", cJSON_CreateNumber(skills_now_ms() - t0));
    skills_release(ctx);
    sandbox_free(sb);
    free(lua);
    return doc;
}
