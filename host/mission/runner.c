/*
 * The plan runner: MiniSpec text in, one flown plan and its SPEC §2 report
 * out, on a mission world (world.h).
 */
#include "mission/runner.h"

#include "clock.h"
#include "drone/constraints.h"
#include "drone/heading.h"
#include "errmsg.h"
#include "mission/record.h"
#include "minispec/minispec.h"
#include "minispec/stream.h"
#include "minispec/stream_exec.h"
#include "worker/vm.h"
#include "vision/pipeline.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

store_status runner_store_status(runner_status st)
{
    switch (st) {
    case RUNNER_OK: return STORE_OK;
    case RUNNER_CANCELLED: return STORE_CANCELLED;
    case RUNNER_CRASHED: return STORE_CRASHED;
    case RUNNER_HUNG: return STORE_HUNG;
    default: return STORE_FAILED;
    }
}

/* ---- progress and the record ------------------------------------------------ */

/* A statement (or block header) that started, not yet known to have run. */
typedef struct pending_statement {
    /* Where it is in the plan text: an offset, not a pointer, since the
     * text of a streamed plan grows (and moves) while a block that started
     * waits for its first statement to run. */
    size_t off, len;
    int line, col, depth;
    double sim_s, t_ms; /* when it started */
} pending_statement;

#define RUNNER_MAX_PENDING 32

struct runner_session {
    const runner_opts *o;
    sandbox *sb;
    skill_ctx ctx;
    vm *vm;             /* the mission's VM: a worker process, or in this process */
    bool begun;         /* a plan was begun */
    skill_value result; /* the last plan's result, when it ran to its end */
    double t0, exec_ms;
    int plans; /* plans begun: the current one's number in the mission */
    /* Statements wait here until we know they ran: the first skill call
     * made by the statement prints and records them (see
     * runner_session_event). */
    pending_statement pending[RUNNER_MAX_PENDING];
    int npending;
    const char *src; /* the plan text as of the event being run */
    /* The world's camera, when views go through observe_recorded. */
    int (*observe)(void *ud, vision_object *out, int max, char *err, size_t errlen);
    void *observe_ud;
};

/* The time progress shows: simulated seconds, or for a real drone the
 * seconds since the mission started. */
static double clock_s(const runner_session *rs)
{
    mission_world *w = rs->o->world;
    return w->sim ? mission_world_sim_s(w) : (clock_now_ms() - rs->t0) / 1000;
}

static void pending_add(runner_session *rs, const ms_event *ev)
{
    const runner_opts *o = rs->o;
    if ((!o->on_statement && !o->record) || rs->npending == RUNNER_MAX_PENDING) return;
    pending_statement *p = &rs->pending[rs->npending++];
    p->off = ev->off, p->len = ev->len;
    p->line = ev->line, p->col = ev->col, p->depth = ev->depth;
    p->sim_s = clock_s(rs);
    p->t_ms = clock_now_ms() - rs->t0;
}

static void pending_flush(runner_session *rs, bool ran)
{
    const runner_opts *o = rs->o;
    for (int i = 0; ran && rs->src && i < rs->npending; i++) {
        const pending_statement *p = &rs->pending[i];
        const char *text = rs->src + p->off;
        if (o->record)
            mission_record_statement(o->record, p->t_ms, rs->plans, p->line, p->col, text, p->len);
        runner_statement st = {rs->plans, p->line, p->col,   p->depth,
                               text,      p->len,  p->sim_s, p->t_ms};
        if (o->on_statement) o->on_statement(o->on_statement_ud, &st);
    }
    rs->npending = 0;
}

void runner_print_value(FILE *f, const skill_value *v)
{
    switch (v ? v->kind : SKILL_VALUE_NIL) {
    case SKILL_VALUE_BOOL: fputs(v->b ? "True" : "False", f); break;
    case SKILL_VALUE_INT: fprintf(f, "%.4g", (double)v->i); break;
    case SKILL_VALUE_NUM: fprintf(f, "%.4g", v->n); break;
    /* a Lua value of another type shows its type name, as in the JSON */
    case SKILL_VALUE_STR:
    case SKILL_VALUE_OTHER: fprintf(f, "'%s'", v->s ? v->s : ""); break;
    default: fputs("None", f); break;
    }
}

/* The skill hook: the statements that led here, then the event, recorded
 * before a sink shows it, so progress never shows what is not on disk. */
static void on_event(void *ud, const skill_event *ev)
{
    runner_session *rs = ud;
    pending_flush(rs, true);
    if (rs->o->record) mission_record_skill_event(rs->o->record, &rs->ctx, ev);
    if (rs->o->on_skill_event) rs->o->on_skill_event(rs->o->on_skill_event_ud, ev);
}

/* ---- the report ------------------------------------------------------------ */

/* The lines of the sandbox's output (the plan's log lines) into L. */
static void output_lines(const sandbox *sb, report_lines *l)
{
    size_t len;
    const char *out = sandbox_output(sb, &len), *end = out + len;
    while (out < end) {
        const char *nl = memchr(out, '\n', (size_t)(end - out));
        size_t n = nl ? (size_t)(nl - out) : (size_t)(end - out);
        report_lines_add(l, out, n);
        out += n + (nl ? 1 : 0);
    }
    if (sandbox_output_truncated(sb)) report_lines_add(l, "[output truncated]", 18);
}

/* Checks the plan; on failure puts the diagnostics into the report. */
static bool check(const runner_opts *o, mission_report *rep)
{
    ms_options mo = {.max_loop = o->max_loop};
    ms_result r;
    memset(&r, 0, sizeof r);
    bool ok = minispec_compile(o->reg, o->plan, o->plan_len, &mo, &r) == 0 && r.ok;
    if (!ok) {
        char msg[2048] = "";
        size_t used = 0;
        for (int i = 0; i < r.ndiags && used < sizeof msg - 1; i++)
            used += (size_t)snprintf(msg + used, sizeof msg - used, "%s%d:%d: %s", i ? "; " : "",
                                     r.diags[i].line, r.diags[i].col, r.diags[i].message);
        if (!msg[0]) snprintf(msg, sizeof msg, "the plan does not compile");
        mission_report_error(rep, msg);
        if (o->progress) fprintf(o->progress, "plan rejected: %s\n", msg);
        if (o->record) mission_record_plan(o->record, o->plan, o->plan_len, false, msg);
    } else if (o->record) {
        mission_record_plan(o->record, o->plan, o->plan_len, true, NULL);
    }
    ms_result_free(&r);
    return ok;
}

/* ---- sessions --------------------------------------------------------------- */

/* The camera of a recorded mission: every view the skills or the planner
 * look at also feeds the store's memory of objects. */
static int observe_recorded(void *ud, vision_object *out, int max, char *err, size_t errlen)
{
    runner_session *rs = ud;
    int n = rs->observe(rs->observe_ud, out, max, err, errlen);
    if (n > 0) mission_record_sightings(rs->o->record, &rs->ctx, out, n);
    return n;
}

runner_session *runner_session_open(const runner_opts *o, char *err, size_t errlen)
{
    runner_session *rs = calloc(1, sizeof *rs);
    if (!rs) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    rs->o = o;
    rs->t0 = o->t0_ms > 0 ? o->t0_ms : o->record ? mission_record_t0_ms(o->record) : clock_now_ms();
    rs->sb = sandbox_new(&o->limits, err, errlen);
    if (!rs->sb) {
        free(rs);
        return NULL;
    }
    skill_ctx *ctx = &rs->ctx;
    ctx->reg = o->reg;
    ctx->sb = rs->sb;
    ctx->t0_ms = rs->t0;
    ctx->probe = o->probe;
    ctx->probe_ud = o->probe_ud;
    ctx->on_event = on_event;
    ctx->event_ud = rs;
    mission_world_attach(o->world, ctx);
    if (o->record && ctx->observe) {
        rs->observe = ctx->observe;
        rs->observe_ud = ctx->observe_ud;
        ctx->observe = observe_recorded;
        ctx->observe_ud = rs;
    }
    if (skills_bind(ctx, err, errlen) ||
        !(rs->vm = vm_open(ctx, &o->limits, o->in_process, err, errlen))) {
        skills_release(ctx);
        sandbox_free(rs->sb);
        free(rs);
        return NULL;
    }
    if (o->on_sandbox) o->on_sandbox(o->on_sandbox_ud, rs->sb);
    return rs;
}

struct vm *runner_session_vm(runner_session *s)
{
    return s->vm;
}

sandbox *runner_session_sandbox(runner_session *s)
{
    return s->sb;
}

skill_ctx *runner_session_ctx(runner_session *s)
{
    return &s->ctx;
}

int runner_session_begin(runner_session *s)
{
    char err[256];
    s->ctx.replan = false;
    s->ctx.replan_reason[0] = '\0';
    s->npending = 0;
    s->plans++;
    /* A worker lost here ends the plan at its first event, as crashed. */
    s->begun = vm_begin(s->vm, err, sizeof err) == 0 || vm_lost(s->vm) != SANDBOX_OK;
    return s->begun ? 0 : -1;
}

/* Runs the plan statement by statement through the MiniSpec stream
 * executor, which behaves exactly like the whole-plan chunk but lets
 * progress show each statement as it starts. A statement's line is printed
 * at its first skill call, or after it ran if it called none, so statements
 * in blocks that were skipped never show. */
sandbox_status runner_session_event(runner_session *s, const ms_event *ev, const char *src,
                                    bool *ran, char *err, size_t errlen)
{
    if (ran) *ran = false;
    if (!s->begun) {
        snprintf(err, errlen, "no plan was begun");
        return SANDBOX_ERROR;
    }
    if (vm_finished(s->vm)) return SANDBOX_OK;
    ms_event_kind k = ev->kind;
    s->src = src; /* valid while this event runs: the text grows only between events */
    if (k == MS_EV_STATEMENT || k == MS_EV_BLOCK_BEGIN) pending_add(s, ev);
    double t = clock_now_ms();
    bool did = false;
    sandbox_status st = vm_event(s->vm, ev, &did, err, errlen);
    s->exec_ms += clock_now_ms() - t;
    if (ran) *ran = did;
    if (k == MS_EV_STATEMENT) pending_flush(s, did);
    if (k == MS_EV_BLOCK_END) pending_flush(s, false);
    return st;
}

bool runner_session_finished(const runner_session *s)
{
    return !s->begun || vm_finished(s->vm);
}

void runner_session_end(runner_session *s, sandbox_status st, const char *err, runner_outcome *out)
{
    pending_flush(s, false);
    skill_value_free(&s->result);
    if (st == SANDBOX_OK && s->begun && vm_result(s->vm, &s->result)) {
        st = SANDBOX_ERROR;
        err = "out of memory reading the plan's result";
    }
    drone *d = s->o->world->drone;
    d->ops->hover(d);
    /* A trip the watch handled between calls (mission/watch.h) that no
     * motion of the plan was refused with: recorded now. */
    char monitor[700];
    drone_pose at;
    bool tripped = constraints_take_pending(d, monitor, sizeof monitor, &at);
    if (tripped) skills_monitor_violation(&s->ctx, monitor, &at);
    memset(out, 0, sizeof *out);
    out->sandbox = st;
    out->status = st == SANDBOX_OK          ? RUNNER_OK
                  : st == SANDBOX_CANCELLED ? RUNNER_CANCELLED
                  : st == SANDBOX_CRASHED   ? RUNNER_CRASHED
                  : st == SANDBOX_HUNG      ? RUNNER_HUNG
                                            : RUNNER_FAILED;
    if (s->o->record && mission_record_error(s->o->record)) {
        /* The store failed and stopped the plan: say so, not "cancelled". */
        snprintf(out->reason, sizeof out->reason, "%s", mission_record_error(s->o->record));
        out->status = RUNNER_FAILED;
    } else if (st == SANDBOX_OK && s->ctx.replan) {
        snprintf(out->reason, sizeof out->reason, "replan requested: %s", s->ctx.replan_reason);
        out->status = RUNNER_REPLAN;
    } else if (st != SANDBOX_OK) {
        snprintf(out->reason, sizeof out->reason, "%s",
                 err && err[0] ? err : sandbox_status_name(st));
    }
    /* The watch landed the drone: nothing more can fly. A trip handled
     * after the plan's last motion: a new plan must know. */
    char ended[700];
    if (st != SANDBOX_CANCELLED && constraints_watch_ended(d, ended, sizeof ended)) {
        snprintf(out->reason, sizeof out->reason, "%s", ended);
        out->status = RUNNER_FAILED;
    } else if (out->status == RUNNER_OK && tripped) {
        snprintf(out->reason, sizeof out->reason, "the watch on the measured state acted: %s",
                 monitor);
        out->status = RUNNER_REPLAN;
    }
    out->violations = s->ctx.journal.nviolations;
}

void runner_session_report(runner_session *s, mission_report *rep, bool ok)
{
    skill_ctx *ctx = &s->ctx;
    if (s->o->on_sandbox) s->o->on_sandbox(s->o->on_sandbox_ud, NULL);
    if (ok) {
        rep->ok = true;
        skill_value_free(&rep->result);
        rep->result = s->result;
        memset(&s->result, 0, sizeof s->result);
    }
    output_lines(s->sb, &rep->logs);
    mission_report_pose(rep, mission_world_pose(s->o->world));
    /* One decimal: what the watch measured, not noise in the last digits. */
    double ex = constraints_excursion_cm(s->o->world->drone);
    rep->excursion_cm = round(ex * 10) / 10;
    skill_journal_move(&rep->journal, &ctx->journal);
    if (ctx->first_action_ms >= 0) rep->first_action_ms = ctx->first_action_ms;
    rep->exec_ms = s->exec_ms;
    rep->total_ms = clock_now_ms() - s->t0;
    skill_value_free(&s->result);
    vm_close(s->vm);
    skills_release(ctx);
    sandbox_free(s->sb);
    free(s);
}

/* ---- one plan --------------------------------------------------------------- */

static void finish_error(mission_report *rep, const char *msg, const runner_opts *o)
{
    mission_report_error(rep, msg);
    if (o->progress) fprintf(o->progress, "mission failed: %s\n", msg);
}

static sandbox_status execute(runner_session *s, const runner_opts *o, char *err, size_t errlen)
{
    ms_options mo = {.max_loop = o->max_loop};
    ms_stream *ps = ms_stream_new(o->reg, &mo);
    if (!ps || runner_session_begin(s)) {
        ms_stream_free(ps);
        snprintf(err, errlen, "out of memory");
        return SANDBOX_ERROR;
    }
    ms_stream_feed(ps, o->plan, o->plan_len);
    ms_stream_finish(ps);
    sandbox_status st = SANDBOX_OK;
    ms_event ev;
    ms_event_kind k;
    while (st == SANDBOX_OK && !runner_session_finished(s) &&
           (k = ms_stream_next(ps, &ev)) != MS_EV_NONE && k != MS_EV_DONE)
        st = runner_session_event(s, &ev, o->plan, NULL, err, errlen);
    ms_stream_free(ps);
    return st;
}

void runner_run_report(const runner_opts *o, mission_report *rep)
{
    double t0 = o->t0_ms > 0 ? o->t0_ms
                : o->record  ? mission_record_t0_ms(o->record)
                             : clock_now_ms();
    mission_report_init(rep, o->plan ? o->plan : "", o->plan_len);
    runner_outcome none;
    runner_outcome *out = o->outcome ? o->outcome : &none;
    memset(out, 0, sizeof *out);
    if (!check(o, rep)) {
        out->status = RUNNER_REJECTED;
        out->sandbox = SANDBOX_ERROR;
        snprintf(out->reason, sizeof out->reason, "%s", rep->error ? rep->error : "");
        mission_report_pose(rep, mission_world_pose(o->world));
        rep->total_ms = clock_now_ms() - t0;
        return;
    }
    char err[1024] = "";
    runner_opts oo = *o;
    oo.t0_ms = t0;
    runner_session *s = runner_session_open(&oo, err, sizeof err);
    if (!s) {
        finish_error(rep, err, o);
        out->status = RUNNER_FAILED;
        out->sandbox = SANDBOX_ERROR;
        snprintf(out->reason, sizeof out->reason, "%s", err);
        return;
    }
    sandbox_status st = execute(s, &oo, err, sizeof err);
    runner_session_end(s, st, err, out);
    bool ok = out->status == RUNNER_OK;
    if (ok) {
        if (o->progress) {
            fprintf(o->progress, "[%7.2fs] done", clock_s(s));
            if (s->result.kind != SKILL_VALUE_NIL) {
                fputs(", result ", o->progress);
                runner_print_value(o->progress, &s->result);
            }
            fputc('\n', o->progress);
        }
    } else {
        finish_error(rep, out->reason, o);
    }
    runner_session_report(s, rep, ok);
}

cJSON *runner_run(const runner_opts *o)
{
    mission_report rep;
    runner_run_report(o, &rep);
    cJSON *doc = mission_report_json(&rep);
    mission_report_free(&rep);
    return doc;
}
