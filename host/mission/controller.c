/*
 * The mission controller: plans from the LLM, run while they stream in, with
 * bounded retries and replans. See controller.h.
 */
#include "mission/controller.h"

#include "clock.h"
#include "drone/constraints.h"
#include "textbuf.h"

#include "llm/plan_text.h"
#include "mission/candidates.h"
#include "mission/probe.h"
#include "minispec/minispec.h"
#include "minispec/stream.h"
#include "vision/objects.h"
#include "vision/relevance.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- the default LLM source ------------------------------------------------- */

static int default_complete(void *ud, mission_llm_kind kind, bool stream, const llm_request *req,
                            llm_result *out)
{
    (void)kind;
    llm_config cfg = *(const llm_config *)ud;
    cfg.stream = stream;
    return llm_call(&cfg, req, out);
}

mission_llm mission_llm_default(const llm_config *cfg)
{
    mission_llm l = {default_complete, (void *)cfg};
    return l;
}

const char *mission_llm_kind_name(mission_llm_kind kind)
{
    switch (kind) {
    case MISSION_LLM_PLAN: return "plan";
    case MISSION_LLM_RETRY: return "retry";
    case MISSION_LLM_REPLAN: return "replan";
    case MISSION_LLM_PROBE: return "probe";
    }
    return "?";
}

void mission_opts_defaults(mission_opts *o)
{
    memset(o, 0, sizeof *o);
    o->stream = true;
    o->max_tries = 3;
    o->max_replans = 3;
}

/* ---- the mission ------------------------------------------------------------- */

/* How one plan ended. */
typedef enum plan_end {
    PLAN_DONE,      /* ran to its end */
    PLAN_REJECTED,  /* failed the checker, or no plan in the reply: retry */
    PLAN_REPLAN,    /* rp, a failed skill or a refusal: replan */
    PLAN_FATAL,     /* a limit, or the LLM failed: the mission ends */
    PLAN_CANCELLED, /* cancelled */
} plan_end;

/* Why the delta callback stopped the transfer. */
typedef enum stop_kind { STOP_NONE = 0, STOP_SYNTAX, STOP_EXEC, STOP_REFUSED, STOP_END } stop_kind;

typedef struct mission {
    const mission_opts *o;
    runner_opts ro; /* o->run with the controller's hooks */
    runner_session *s;
    skill_ctx *ctx;
    mission_stats stats;
    /* The mission's wall-clock limit (the sandbox's timeout_ms, counted from
     * when its session opened): LLM waits count too. */
    double deadline_ms;
    unsigned long long limit_ms;

    /* The report, whose plans, counters and tokens the mission keeps as
     * it goes (tokens_estimated: some reply's usage never came). */
    mission_report *rep;

    /* The plan being received and run. */
    int index;    /* its index in plans */
    textbuf plan; /* cleaned plan text so far */
    textbuf executed;
    textbuf diag;
    plan_stream cleaner;
    ms_stream *ps;
    stop_kind stop;
    sandbox_status st;
    char err[1024];
    int violations0; /* violations recorded before this plan */

    /* Overhead measurement: when the current delta arrived, and whether the
     * first skill call since then is still to come. */
    double t_delta;
    bool await_call;

    /* --candidates: the rounds so far, and the prompt of the one asking. */
    candidates cands;
    const prompt_msgs *pm;
} mission;

static bool cancelled(const mission *m)
{
    return m->o->cancel && atomic_load(m->o->cancel);
}

static void progress(const mission *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const mission *m, const char *fmt, ...)
{
    FILE *f = m->o->run.progress;
    if (!f) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fflush(f);
}

/* The remembered objects of this world out of view (mission/memory.h), for
 * a planning prompt: "" when there is no memory or nothing to say. */
static char *memory_now(mission *m, const vision_object *view, int nview)
{
    const mission_memory *mm = &m->o->memory;
    mission_world *w = m->o->run.world;
    if (!mm->recall || !w || !w->drone) return strdup("");
    store_object *objs = malloc(MEMORY_RECALL_MAX * sizeof *objs);
    double *ages = malloc(MEMORY_RECALL_MAX * sizeof *ages);
    int n = objs && ages ? mm->recall(mm->ud, objs, ages, MEMORY_RECALL_MAX) : -1;
    char *out = NULL;
    if (n > 0) {
        drone_pose pose = mission_world_pose(w);
        const scene_camera *cam = w->scene ? &w->scene->camera : NULL;
        size_t need = memory_describe(objs, ages, n, &pose, cam, view, nview, NULL, NULL, 0) + 1;
        out = malloc(need);
        if (out) memory_describe(objs, ages, n, &pose, cam, view, nview, NULL, out, need);
    }
    free(objs);
    free(ages);
    return out ? out : strdup("");
}

/* The scene description of what the camera sees now (SPEC §11): for a
 * planning prompt, the objects the task concerns first and the rest capped
 * (vision/relevance.h), and in *MEMORY what is remembered out of view; for
 * probe (TASK NULL) the full view. */
static char *scene_now(mission *m, const char *task, char **memory)
{
    vision_object objs[VISION_MAX_OBJECTS];
    char err[256];
    int n = m->ctx->observe
                ? m->ctx->observe(m->ctx->observe_ud, objs, VISION_MAX_OBJECTS, err, sizeof err)
                : 0;
    if (n < 0) n = 0;
    if (memory) *memory = memory_now(m, objs, n);
    size_t need = (task ? vision_describe_for_task(objs, n, task, NULL, 0)
                        : vision_describe(objs, n, NULL, 0)) +
                  1;
    char *out = malloc(need);
    if (out && task)
        vision_describe_for_task(objs, n, task, out, need);
    else if (out)
        vision_describe(objs, n, out, need);
    if (out && m->o->obs.scene) m->o->obs.scene(m->o->obs.ud, out);
    return out;
}

/* Tokens in LEN bytes of text, roughly: about four characters a token. */
static long estimate_tokens(size_t len)
{
    return (long)((len + 3) / 4);
}

static bool out_of_time(const mission *m)
{
    return clock_now_ms() >= m->deadline_ms;
}

/* One request to the LLM, counted and shown to the observer. It gets at
 * most the mission's remaining time; with none left it is not sent. */
static int ask(mission *m, mission_llm_kind kind, bool stream, const prompt_msgs *pm,
               llm_delta_fn on_delta, int nreplies, llm_result *res)
{
    llm_message msgs[2];
    int n = prompt_msgs_to_llm(pm, msgs);
    memset(res, 0, sizeof *res);
    double left = m->deadline_ms - clock_now_ms();
    if (left <= 0) {
        res->status = LLM_E_TIMEOUT;
        snprintf(res->error, sizeof res->error, "no time left to ask the LLM");
        return -1;
    }
    /* Rounded up: when the call times out, the mission's time is up too.
     * Clamped: --timeout-ms may be up to 2^64 ms, beyond a long. */
    long budget = left < (double)(LONG_MAX / 2) ? (long)ceil(left) : LONG_MAX / 2;
    llm_request req = {msgs, n, on_delta, m, m->o->cancel, budget, nreplies};
    int rc = m->o->llm.complete(m->o->llm.ud, kind, stream, &req, res);
    m->rep->llm_calls++;
    m->rep->plan_ms += res->latency_ms;
    if (res->usage_known) {
        m->rep->prompt_tokens += res->prompt_tokens;
        m->rep->completion_tokens += res->completion_tokens;
        m->rep->cached_tokens += res->cached_tokens;
    } else if (res->len > 0) {
        /* Part of a reply came but its usage did not (the transfer was cut,
         * by us when the plan stopped or by the network): estimate both
         * sides from the text and say so in the report. */
        for (int i = 0; i < n; i++)
            m->rep->prompt_tokens += estimate_tokens(strlen(msgs[i].content));
        size_t len = res->len;
        for (int i = 1; i < res->nchoices; i++) /* the first is res->text */
            len += res->choices[i].len;
        m->rep->completion_tokens += estimate_tokens(len);
        m->rep->tokens_estimated = true;
    }
    if (m->o->obs.llm_exchange) m->o->obs.llm_exchange(m->o->obs.ud, kind, msgs, n, res);
    return rc;
}

/* probe: the question and the latest scene to the LLM, not streamed. */
static int probe(void *ud, const char *question, char *out, size_t outlen, char *err, size_t errlen)
{
    mission *m = ud;
    char *scene = scene_now(m, NULL, NULL);
    prompt_msgs pm = {0};
    if (prompt_probe(m->o->prompts, question, scene, &pm, err, errlen)) {
        free(scene);
        return -1;
    }
    free(scene);
    llm_result res;
    int rc = ask(m, MISSION_LLM_PROBE, false, &pm, NULL, 1, &res);
    prompt_msgs_free(&pm);
    if (probe_reply(rc, &res, out, outlen, err, errlen)) return -1;
    progress(m, "probe: %s -> %s\n", question, out);
    return 0;
}

static void on_skill_event(void *ud, const skill_event *ev)
{
    mission *m = ud;
    if (ev->kind == SKILL_EVENT_CALL && m->await_call) {
        double us = (clock_now_ms() - m->t_delta) * 1000;
        m->await_call = false;
        if (m->stats.overhead_n == 0) m->stats.overhead_first_us = us;
        m->stats.overhead_n++;
        m->stats.overhead_sum_us += us;
        if (us > m->stats.overhead_max_us) m->stats.overhead_max_us = us;
    }
    if (m->o->run.on_skill_event) m->o->run.on_skill_event(m->o->run.on_skill_event_ud, ev);
}

/* ---- running a plan as it arrives ----------------------------------------- */

static void add_diag(textbuf *t, const ms_diag *d)
{
    char line[400];
    int n = snprintf(line, sizeof line, "%d:%d: %s\n", d->line, d->col, d->message);
    if (n >= (int)sizeof line) n = (int)sizeof line - 1;
    textbuf_add(t, line, (size_t)n);
}

static void set_diag(mission *m, const ms_diag *d)
{
    add_diag(&m->diag, d);
}

/* Runs every event the parser can report from the text so far. Returns
 * non-zero once the plan must stop (m->stop says why). */
static int drain(mission *m)
{
    ms_event ev;
    ms_event_kind k;
    while (!m->stop && (k = ms_stream_next(m->ps, &ev)) != MS_EV_NONE && k != MS_EV_DONE) {
        if (k == MS_EV_ERROR) {
            set_diag(m, ev.diag);
            m->stop = STOP_SYNTAX;
            break;
        }
        if (cancelled(m)) {
            /* Also stops a skill that the caller's own cancel did not reach. */
            sandbox_cancel(runner_session_sandbox(m->s));
            snprintf(m->err, sizeof m->err, "cancelled");
            m->st = SANDBOX_CANCELLED;
            m->stop = STOP_EXEC;
            break;
        }
        bool ran;
        if ((k == MS_EV_STATEMENT || k == MS_EV_BLOCK_BEGIN) && m->o->obs.statement)
            m->o->obs.statement(m->o->obs.ud, m->index, m->plan.s + ev.off, ev.len, ev.depth);
        m->st = runner_session_event(m->s, &ev, m->plan.s, &ran, m->err, sizeof m->err);
        m->await_call = false;
        if (ran && (k == MS_EV_STATEMENT || k == MS_EV_BLOCK_BEGIN)) {
            textbuf_add(&m->executed, m->plan.s + ev.off, ev.len);
            textbuf_add(&m->executed, "\n", 1);
        }
        if (m->st != SANDBOX_OK)
            m->stop = STOP_EXEC;
        else if (m->ctx->journal.nviolations > m->violations0)
            m->stop = STOP_REFUSED;
        else if (runner_session_finished(m->s))
            m->stop = STOP_END;
    }
    return m->stop != STOP_NONE;
}

/* Plan bytes from the cleaner. */
static int on_plan_text(void *ud, const char *s, size_t len)
{
    mission *m = ud;
    if (m->stop) return 1;
    if (textbuf_add(&m->plan, s, len)) {
        snprintf(m->err, sizeof m->err, "out of memory");
        m->st = SANDBOX_ERROR;
        m->stop = STOP_EXEC;
        return 1;
    }
    if (m->o->obs.plan_text) m->o->obs.plan_text(m->o->obs.ud, m->index, s, len);
    ms_stream_feed(m->ps, s, len);
    return drain(m);
}

/* Reply bytes from the LLM, on this thread, as they arrive. */
static int on_delta(void *ud, const char *s, size_t len)
{
    mission *m = ud;
    if (cancelled(m)) return 1;
    m->t_delta = clock_now_ms();
    m->await_call = true;
    int rc = plan_stream_feed(&m->cleaner, s, len, on_plan_text, m);
    m->await_call = false;
    return rc;
}

/* The whole plan is known: complete its last statement and run the rest. */
static void finish_plan(mission *m)
{
    if (m->stop) return;
    ms_stream_finish(m->ps);
    drain(m);
}

/* The checker's verdict on a whole plan; its diagnostics into DIAG. */
static bool check_into(mission *m, const char *plan, size_t len, textbuf *diag)
{
    ms_options mo = {.max_loop = m->o->run.max_loop};
    ms_result r;
    memset(&r, 0, sizeof r);
    bool ok = minispec_compile(m->o->run.reg, plan, len, &mo, &r) == 0 && r.ok;
    for (int i = 0; !ok && i < r.ndiags; i++)
        add_diag(diag, &r.diags[i]);
    if (!ok && !r.ndiags) textbuf_adds(diag, "the plan does not compile\n");
    ms_result_free(&r);
    return ok;
}

static bool check_whole(mission *m, const char *plan, size_t len)
{
    return check_into(m, plan, len, &m->diag);
}

/* The caller's last word on a valid plan before it runs (mission_opts.vet). */
static bool vet(mission *m, const char *plan, size_t len)
{
    if (!m->o->vet) return true;
    char why[2048] = "";
    if (m->o->vet(m->o->vet_ud, plan, len, why, sizeof why) == 0) return true;
    textbuf_adds(&m->diag, why[0] ? why : "the plan was refused before it ran");
    textbuf_adds(&m->diag, "\n");
    return false;
}

/* ---- candidate plans (mission/candidates.h) --------------------------------- */

static int cand_ask(void *ud, mission_llm_kind kind, int n, llm_result *res)
{
    mission *m = ud;
    return ask(m, kind, false, m->pm, NULL, n, res);
}

static bool cand_check(void *ud, const char *plan, size_t len, textbuf *diag)
{
    return check_into(ud, plan, len, diag);
}

static bool cand_cancelled(void *ud)
{
    return cancelled(ud);
}

/* One round of candidates for PM: the chosen plan runs as a whole plan
 * would; none chosen is a failed try. Returns ask()'s result (-1 when no
 * reply came, RES then says why). */
static int run_candidates(mission *m, mission_llm_kind kind, const prompt_msgs *pm, llm_result *res)
{
    candidates_ops ops = {.ask = cand_ask,
                          .check = cand_check,
                          .vet = m->o->vet,
                          .vet_ud = m->o->vet_ud,
                          .cancelled = cand_cancelled,
                          .obs = m->o->obs,
                          .progress = m->o->run.progress,
                          .ud = m};
    m->pm = pm;
    char *plan = NULL;
    size_t len = 0;
    int r = candidates_round(&m->cands, &ops, kind, &plan, &len, &m->plan, &m->diag, res);
    m->pm = NULL;
    if (r < 0) return -1;
    memset(res, 0, sizeof *res);
    if (r == 1) {
        on_plan_text(m, plan, len);
        finish_plan(m);
    } else {
        m->stop = STOP_SYNTAX;
    }
    free(plan);
    return 0;
}

/* Asks for one plan with PM and runs it. Fills *WHY for a retry, a replan
 * or the mission's failure. */
static plan_end run_plan(mission *m, mission_llm_kind kind, const prompt_msgs *pm, char *why,
                         size_t whylen)
{
    bool stream = m->o->stream && m->o->candidates <= 0;
    ms_options mo = {.max_loop = m->o->run.max_loop};
    textbuf_clear(&m->plan);
    textbuf_clear(&m->executed);
    textbuf_clear(&m->diag);
    plan_stream_init(&m->cleaner);
    m->stop = STOP_NONE;
    m->st = SANDBOX_OK;
    m->err[0] = '\0';
    m->violations0 = m->ctx->journal.nviolations;
    m->index = m->rep->plans.n;
    m->ps = ms_stream_new(m->o->run.reg, &mo);
    if (!m->ps || runner_session_begin(m->s)) {
        snprintf(why, whylen, "out of memory");
        return PLAN_FATAL;
    }
    progress(m, "asking the LLM for a plan (%s)\n", mission_llm_kind_name(kind));

    llm_result res;
    int rc = m->o->candidates > 0 ? run_candidates(m, kind, pm, &res)
                                  : ask(m, kind, stream, pm, stream ? on_delta : NULL, 1, &res);
    plan_text_status pts = PLAN_TEXT_OK;
    bool llm_failed = false;
    if (m->stop || (rc == 0 && m->o->candidates > 0)) {
        /* We ended the transfer: the plan stopped or ended. */
    } else if (rc && res.status == LLM_E_TRUNCATED) {
        /* A cut reply: what arrived is a prefix whose last statement may
         * look complete but is not (mf(10 cut to mf(1). The parser only
         * ran statements that a later token proved ended; the one pending
         * must not run, so the stream is never finished. In batch mode
         * nothing ran: the plan is checked whole, and this one is not. */
        textbuf_adds(&m->diag, "the reply was cut short: ");
        textbuf_adds(&m->diag, res.error);
        textbuf_adds(&m->diag, "; its unfinished last statement did not run\n");
        if (!stream) {
            char *plan = NULL;
            size_t len = 0;
            plan_text_clean(res.text ? res.text : "", res.len, &plan, &len);
            if (plan) textbuf_add(&m->plan, plan, len);
            free(plan);
        }
        m->stop = STOP_SYNTAX;
    } else if (rc) {
        llm_failed = true;
    } else if (stream) {
        pts = plan_stream_finish(&m->cleaner, on_plan_text, m);
        if (pts == PLAN_TEXT_OK) finish_plan(m);
    } else {
        char *plan = NULL;
        size_t len = 0;
        pts = plan_text_clean(res.text ? res.text : "", res.len, &plan, &len);
        if (pts == PLAN_TEXT_OK && check_whole(m, plan, len) && vet(m, plan, len)) {
            on_plan_text(m, plan, len);
            finish_plan(m);
        } else if (pts == PLAN_TEXT_OK) {
            textbuf_add(&m->plan, plan, len);
            m->stop = STOP_SYNTAX;
        }
        free(plan);
    }
    if (pts != PLAN_TEXT_OK && !m->stop) {
        textbuf_adds(&m->diag, "the reply holds no MiniSpec plan (only prose or nothing)\n");
        m->stop = STOP_SYNTAX;
    }
    report_lines_add(&m->rep->plans, textbuf_str(&m->plan), m->plan.len);
    /* A call that failed before any plan text arrived gave no plan: the
     * exchange (with its error) is what is observed, not an empty plan. */
    if (m->o->obs.plan && !(llm_failed && m->plan.len == 0))
        m->o->obs.plan(m->o->obs.ud, m->index, textbuf_str(&m->plan), m->plan.len,
                       m->stop == STOP_SYNTAX ? textbuf_str(&m->diag) : NULL);
    ms_stream_free(m->ps);
    m->ps = NULL;

    runner_outcome out;
    plan_end end;
    if (cancelled(m) || (llm_failed && res.status == LLM_E_CANCELLED)) {
        runner_session_end(m->s, SANDBOX_CANCELLED, "cancelled", &out);
        snprintf(why, whylen, "cancelled");
        end = PLAN_CANCELLED;
    } else if (llm_failed && res.status == LLM_E_TIMEOUT && out_of_time(m)) {
        snprintf(why, whylen, "time limit reached (%llu ms) while waiting for the LLM: %s",
                 m->limit_ms, res.error);
        runner_session_end(m->s, SANDBOX_TIMEOUT, why, &out);
        end = PLAN_FATAL;
    } else if (llm_failed) {
        runner_session_end(m->s, SANDBOX_ERROR, res.error, &out);
        snprintf(why, whylen, "the LLM failed (%s): %s", llm_status_name(res.status), res.error);
        end = PLAN_FATAL;
    } else if (m->stop == STOP_SYNTAX) {
        runner_session_end(m->s, SANDBOX_ERROR, textbuf_str(&m->diag), &out);
        out.status = RUNNER_REJECTED;
        snprintf(why, whylen, "%s", textbuf_str(&m->diag));
        end = PLAN_REJECTED;
    } else {
        runner_session_end(m->s, m->st, m->err, &out);
        if (out.status == RUNNER_OK && m->stop == STOP_REFUSED) {
            const skill_violation *v = &m->ctx->journal.violations[m->violations0];
            bool watch = strcmp(v->skill, "monitor") == 0;
            snprintf(out.reason, sizeof out.reason,
                     watch ? "the watch on the measured state stopped the plan%s: %s"
                           : "the constraint check refused %s: %s",
                     watch ? "" : v->skill, v->reason);
            out.status = RUNNER_REPLAN;
        }
        /* The watch landed the drone (runner_session_end): no new plan. */
        if (constraints_watch_ended(m->o->run.world->drone, NULL, 0)) {
            out.status = RUNNER_FAILED;
            out.sandbox = SANDBOX_OK; /* not a skill's error: no replan */
        }
        snprintf(why, whylen, "%s", out.reason);
        switch (out.status) {
        case RUNNER_OK: end = PLAN_DONE; break;
        case RUNNER_REPLAN: end = PLAN_REPLAN; break;
        case RUNNER_CANCELLED: end = PLAN_CANCELLED; break;
        default:
            /* A Lua error inside a skill is worth a new plan; a limit is not:
             * the budgets are the mission's. */
            end = out.sandbox == SANDBOX_ERROR ? PLAN_REPLAN : PLAN_FATAL;
            if (end == PLAN_REPLAN) snprintf(why, whylen, "a skill failed: %s", out.reason);
            break;
        }
    }
    if (m->o->outcome) *m->o->outcome = out;
    llm_result_free(&res);
    return end;
}

/* ---- the mission loop ------------------------------------------------------- */

static void report_finish(mission *m, bool ok, const char *error)
{
    runner_session_report(m->s, m->rep, ok);
    m->s = NULL;
    if (!ok && error) mission_report_error(m->rep, error);
    if (m->o->candidates > 0) candidates_report(&m->cands, m->rep);
}

void mission_run_report(const mission_opts *o, mission_report *rep)
{
    mission_report_init(rep, NULL, 0);
    mission *m = calloc(1, sizeof *m);
    if (!m) {
        mission_report_error(rep, "out of memory");
        return;
    }
    m->o = o;
    m->rep = rep;
    m->stats.overhead_first_us = -1;
    if (o->candidates > 0) candidates_init(&m->cands, o->candidates);
    m->ro = o->run;
    m->ro.plan = NULL;
    m->ro.plan_len = 0;
    m->ro.probe = probe;
    m->ro.probe_ud = m;
    m->ro.on_skill_event = on_skill_event;
    m->ro.on_skill_event_ud = m;
    m->ro.outcome = NULL;
    if (m->ro.t0_ms <= 0) m->ro.t0_ms = clock_now_ms();
    int max_tries = o->max_tries < 1 ? 1 : o->max_tries;
    int max_replans = o->max_replans < 0 ? 0 : o->max_replans;

    char err[1024] = "";
    m->limit_ms = o->run.limits.timeout_ms ? o->run.limits.timeout_ms : SANDBOX_DEFAULT_TIMEOUT_MS;
    m->deadline_ms = clock_now_ms() + (double)m->limit_ms;
    m->s = runner_session_open(&m->ro, err, sizeof err);
    if (!m->s) {
        mission_report_error(rep, err);
        mission_report_pose(rep, mission_world_pose(o->run.world));
        candidates_free(&m->cands);
        free(m);
        return;
    }
    m->ctx = runner_session_ctx(m->s);

    mission_llm_kind kind = MISSION_LLM_PLAN;
    char *prev_plan = NULL, *prev_exec = NULL;
    char why[2048] = "", error[2400] = "";
    bool ok = false;
    for (;;) {
        if (cancelled(m)) {
            snprintf(error, sizeof error, "cancelled");
            break;
        }
        if (out_of_time(m)) {
            snprintf(error, sizeof error, "time limit reached (%llu ms)", m->limit_ms);
            break;
        }
        char *memory = NULL;
        char *scene = scene_now(m, o->task, &memory);
        prompt_msgs pm = {0};
        int prc;
        if (kind == MISSION_LLM_PLAN)
            prc = prompt_plan(o->prompts, o->run.reg, o->task, scene, memory, &pm, err, sizeof err);
        else if (kind == MISSION_LLM_RETRY)
            prc = prompt_retry(o->prompts, o->run.reg, o->task, scene, memory, prev_plan, why,
                               prev_exec, &pm, err, sizeof err);
        else
            prc = prompt_replan(o->prompts, o->run.reg, o->task, scene, memory, prev_plan,
                                prev_exec, why, &pm, err, sizeof err);
        free(scene);
        free(memory);
        if (prc) {
            snprintf(error, sizeof error, "prompt: %s", err);
            break;
        }
        if (kind != MISSION_LLM_REPLAN) m->rep->tries++;
        plan_end end = run_plan(m, kind, &pm, why, sizeof why);
        prompt_msgs_free(&pm);
        free(prev_plan);
        free(prev_exec);
        prev_plan = strdup(textbuf_str(&m->plan));
        prev_exec = strdup(textbuf_str(&m->executed));
        if (end == PLAN_DONE) {
            ok = true;
            break;
        }
        if (end == PLAN_CANCELLED || end == PLAN_FATAL) {
            snprintf(error, sizeof error, "%s", why);
            break;
        }
        if (end == PLAN_REJECTED) {
            progress(m, "plan rejected: %s", why);
            if (m->rep->tries >= max_tries) {
                snprintf(error, sizeof error, "no valid plan after %d tries: %s", m->rep->tries,
                         why);
                break;
            }
            kind = MISSION_LLM_RETRY;
        } else {
            if (m->rep->replans >= max_replans) {
                snprintf(error, sizeof error, "%s (no replans left after %d)", why,
                         m->rep->replans);
                break;
            }
            progress(m, "replanning: %s\n", why);
            m->rep->replans++;
            kind = MISSION_LLM_REPLAN;
        }
    }
    size_t n = strlen(error);
    while (n && error[n - 1] == '\n')
        error[--n] = '\0';
    if (ok)
        progress(m, "[%7.2fs] done\n", mission_world_sim_s(o->run.world));
    else
        progress(m, "mission failed: %s\n", error);
    report_finish(m, ok, error);
    if (o->stats) *o->stats = m->stats;
    free(prev_plan);
    free(prev_exec);
    textbuf_free(&m->plan);
    textbuf_free(&m->executed);
    textbuf_free(&m->diag);
    candidates_free(&m->cands);
    free(m);
}

cJSON *mission_run(const mission_opts *o)
{
    mission_report rep;
    mission_run_report(o, &rep);
    cJSON *doc = mission_report_json(&rep);
    mission_report_free(&rep);
    return doc;
}
