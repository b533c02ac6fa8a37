/*
 * Plan verification: the plan flown in sampled worlds (see verify.h).
 *
 * Each world is a fresh simulator (time scale 0) behind the constraint
 * guard and a fresh runner session, so one world cannot leak into the next.
 * The plan goes through the same stream executor a mission uses, driven
 * here event by event so that the branch taken can be written down.
 */
#include "verify/verify.h"

#include "drone/constraints.h"
#include "minispec/stream.h"
#include "minispec/stream_exec.h"
#include "mission/runner.h"
#include "verify/verify_remote.h"
#include "verify/world.h"
#include "worker/vm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Long reports are cut: the start of a branch says how it went. */
#define VERIFY_MAX_BRANCH 200
#define VERIFY_MAX_CALLS 100
#define VERIFY_MAX_TEXT 80
#define VERIFY_MAX_STACK 64

const char *verify_kind_name(verify_kind k)
{
    switch (k) {
    case VERIFY_OK: return "ok";
    case VERIFY_VIOLATION: return "violation";
    case VERIFY_BUDGET: return "budget";
    case VERIFY_ERROR: return "error";
    case VERIFY_CANCELLED: return "cancelled";
    case VERIFY_WATCH: return "watch";
    }
    return "?";
}

/* ---- one world's run ------------------------------------------------------- */

typedef struct world_run {
    const verify_opts *o;
    mission_world w;
    verify_world_rng probe_rng;
    const scene *sc; /* the sampled scene (object names for probe) */
    cJSON *branch, *calls;
    int nbranch, ncalls, more_branch, more_calls;
    int nviolations;                    /* all of them */
    char first_violation[600];          /* the first one's text */
    char watch[700];                    /* the first monitor violation's reason, or "" */
    char reason[VERIFY_REASON_MAX + 1]; /* the verdict's reason, or "" */
    double z_before;                    /* altitude before the last low-level call */
    int clamped, refused;               /* guard counters seen so far */
} world_run;

static void append_value(char *buf, size_t len, size_t *used, const skill_value *v)
{
    if (*used >= len) return;
    char *p = buf + *used;
    size_t room = len - *used;
    int n;
    switch (v ? v->kind : SKILL_VALUE_NIL) {
    case SKILL_VALUE_BOOL: n = snprintf(p, room, "%s", v->b ? "True" : "False"); break;
    case SKILL_VALUE_INT: n = snprintf(p, room, "%.4g", (double)v->i); break;
    case SKILL_VALUE_NUM: n = snprintf(p, room, "%.4g", v->n); break;
    /* another Lua value shows its type name, as in the JSON */
    case SKILL_VALUE_STR:
    case SKILL_VALUE_OTHER: n = snprintf(p, room, "'%.60s'", v->s ? v->s : ""); break;
    default: n = snprintf(p, room, "None"); break;
    }
    *used += n > 0 ? (size_t)n : 0;
}

/* "name(arg, ...)" of an event into BUF. */
static void call_text(char *buf, size_t len, const skill_event *ev)
{
    size_t used = (size_t)snprintf(buf, len, "%s(", ev->skill->name);
    for (int i = 0; i < ev->nargs; i++) {
        if (i && used < len) used += (size_t)snprintf(buf + used, len - used, ", ");
        append_value(buf, len, &used, &ev->args[i]);
    }
    if (used < len) snprintf(buf + used, len - used, ")");
}

static void add_string(cJSON *arr, int *n, int *more, int max, const char *s)
{
    if (*n >= max) {
        (*more)++;
        return;
    }
    cJSON_AddItemToArray(arr, cJSON_CreateString(s));
    (*n)++;
}

static double drone_z(drone *d)
{
    drone_state st;
    memset(&st, 0, sizeof st);
    d->ops->get_state(d, &st);
    return st.pose.z;
}

static void add_violation(world_run *r, const char *msg)
{
    if (r->nviolations++ == 0) snprintf(r->first_violation, sizeof r->first_violation, "%s", msg);
}

/* A vertical move the altitude band shortened: the plan asked for a flight
 * the drone will not make. */
static void note_clamp(world_run *r, const skill_event *ev)
{
    const skill_value *a = ev->nargs > 0 ? &ev->args[0] : NULL;
    double cm = !a                           ? 0
                : a->kind == SKILL_VALUE_INT ? (double)a->i
                : a->kind == SKILL_VALUE_NUM ? a->n
                                             : 0;
    bool up = strcmp(ev->skill->name, "move_up") == 0;
    double target = r->z_before + (up ? cm : -cm);
    const scene_limits *lim = &r->w.scene->limits;
    char msg[300];
    snprintf(msg, sizeof msg,
             "%s: altitude band: %.0f cm from %.0f cm would reach %.0f cm, %s %s %.0f cm "
             "(clamped)",
             ev->skill->name, cm, r->z_before, target, up ? "above" : "below",
             up ? "max_z" : "min_z", up ? lim->max_z : lim->min_z);
    add_violation(r, msg);
}

static void on_skill_event(void *ud, const skill_event *ev)
{
    world_run *r = ud;
    bool low = ev->skill->level != SKILL_HIGH;
    if (ev->kind == SKILL_EVENT_VIOLATION && strcmp(ev->skill->name, "monitor") == 0) {
        if (!r->watch[0]) snprintf(r->watch, sizeof r->watch, "%s", ev->reason ? ev->reason : "");
        return;
    }
    if (ev->kind == SKILL_EVENT_VIOLATION) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s: %s", ev->skill->name, ev->reason ? ev->reason : "refused");
        add_violation(r, msg);
        return;
    }
    if (ev->kind == SKILL_EVENT_CALL) {
        if (low) r->z_before = drone_z(r->w.drone);
        return;
    }
    /* RETURN */
    constraint_stats cs = constraints_get_stats(r->w.drone);
    if (low && cs.clamped > r->clamped && cs.refused == r->refused) note_clamp(r, ev);
    r->clamped = cs.clamped;
    r->refused = cs.refused;
    if (ev->depth != 0) return;
    char text[400];
    call_text(text, sizeof text, ev);
    size_t used = strlen(text);
    snprintf(text + used, sizeof text - used, " -> ");
    used = strlen(text);
    append_value(text, sizeof text, &used, ev->ret);
    add_string(r->calls, &r->ncalls, &r->more_calls, VERIFY_MAX_CALLS, text);
}

static int probe(void *ud, const char *question, char *out, size_t outlen, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    world_run *r = ud;
    verify_world_probe(&r->probe_rng, r->sc, question, out, outlen);
    return 0;
}

/* "LINE:COL text" of an event, with SUFFIX. */
static void add_branch(world_run *r, const ms_event *ev, const char *src, const char *suffix)
{
    char text[VERIFY_MAX_TEXT + 120];
    size_t n = ev->len > VERIFY_MAX_TEXT ? VERIFY_MAX_TEXT : ev->len;
    snprintf(text, sizeof text, "%d:%d %.*s%s%s", ev->line, ev->col, (int)n, src + ev->off,
             n < ev->len ? "..." : "", suffix);
    add_string(r->branch, &r->nbranch, &r->more_branch, VERIFY_MAX_BRANCH, text);
}

/* Is the block the executor just opened active? It is offered an empty
 * statement: the executor runs statements exactly when every open block is
 * active (stream.h), and counts them. */
static bool block_active(ms_exec *x, const ms_event *ev)
{
    ms_event probe_ev = *ev;
    probe_ev.kind = MS_EV_STATEMENT;
    probe_ev.lua = "";
    probe_ev.lua_len = 0;
    int before = ms_exec_statements_run(x);
    char err[64];
    ms_exec_event(x, &probe_ev, err, sizeof err);
    return ms_exec_statements_run(x) > before;
}

/* " -> error", " -> instructions" ...: how a statement that stopped the
 * plan ended; "" if it did not. */
static const char *stop_suffix(sandbox_status st, char *buf, size_t len)
{
    if (st == SANDBOX_OK) return "";
    snprintf(buf, len, " -> %s", sandbox_status_name(st));
    return buf;
}

/* Runs the plan event by event, writing down the branch. */
static sandbox_status execute(world_run *r, sandbox *sb, char *err, size_t errlen)
{
    const verify_opts *o = r->o;
    ms_options mo = {.max_loop = o->max_loop};
    ms_stream *ps = ms_stream_new(o->reg, &mo);
    ms_exec *x = ms_exec_new(sb);
    if (!ps || !x) {
        ms_stream_free(ps);
        ms_exec_free(x);
        snprintf(err, errlen, "out of memory");
        return SANDBOX_ERROR;
    }
    /* the same statements in every world: compiled once */
    ms_exec_cache_statements(x);
    ms_stream_feed(ps, o->plan, o->plan_len);
    ms_stream_finish(ps);
    /* Our own copy of the executor's block stack: is each open block
     * active? (A condition is evaluated only inside active blocks.) */
    bool active[VERIFY_MAX_STACK];
    int depth = 0;
    sandbox_status st = SANDBOX_OK;
    ms_event ev;
    ms_event_kind k;
    char stop[32];
    while (st == SANDBOX_OK && !ms_exec_finished(x) &&
           (k = ms_stream_next(ps, &ev)) != MS_EV_NONE && k != MS_EV_DONE) {
        bool outer =
            depth == 0 || active[depth > VERIFY_MAX_STACK ? VERIFY_MAX_STACK - 1 : depth - 1];
        int before = ms_exec_statements_run(x);
        st = ms_exec_event(x, &ev, err, errlen);
        bool ran = ms_exec_statements_run(x) > before;
        bool on = outer;
        if (k == MS_EV_STATEMENT && ran) {
            add_branch(r, &ev, o->plan, stop_suffix(st, stop, sizeof stop));
        } else if (k == MS_EV_BLOCK_BEGIN) {
            if (ev.block == MS_BLOCK_ELSE && outer) {
                on = block_active(x, &ev);
                add_branch(r, &ev, o->plan, on ? " -> else" : " -> not else");
            } else if (ev.block == MS_BLOCK_COND && outer) {
                if (st != SANDBOX_OK) {
                    add_branch(r, &ev, o->plan, stop_suffix(st, stop, sizeof stop));
                } else {
                    on = block_active(x, &ev);
                    add_branch(r, &ev, o->plan, on ? " -> True" : " -> False");
                }
            } else if (ev.block == MS_BLOCK_LOOP && outer) {
                add_branch(r, &ev, o->plan, "");
            }
            if (depth < VERIFY_MAX_STACK) active[depth] = on;
            depth++;
        } else if (k == MS_EV_BLOCK_END) {
            bool was =
                depth > 0 && active[depth > VERIFY_MAX_STACK ? VERIFY_MAX_STACK - 1 : depth - 1];
            if (depth > 0) depth--;
            if (ev.block == MS_BLOCK_LOOP && was && ev.count >= 2) {
                char suffix[64];
                snprintf(suffix, sizeof suffix, " iterations 2..%ld%s", ev.count,
                         stop_suffix(st, stop, sizeof stop));
                add_branch(r, &ev, o->plan, suffix);
            }
        } else if (k == MS_EV_ERROR) {
            /* The checker should have refused the plan before: say so. */
            add_branch(r, &ev, o->plan, " -> invalid plan");
        }
    }
    ms_exec_free(x);
    ms_stream_free(ps);
    return st;
}

/* The verdict's reason, kept typed in R and written into the entry E. */
static void set_reason(world_run *r, cJSON *e, const char *fmt, const char *a, const char *b)
{
    snprintf(r->reason, sizeof r->reason, fmt, a, b);
    cJSON_AddStringToObject(e, "reason", r->reason);
}

static void add_more(cJSON *arr, int more, const char *what)
{
    if (more <= 0) return;
    char msg[64];
    snprintf(msg, sizeof msg, "... %d more %s", more, what);
    cJSON_AddItemToArray(arr, cJSON_CreateString(msg));
}

/* The verdict from how the run ended and what the guard saw. */
static verify_kind judge(world_run *r, const runner_outcome *out, cJSON *e)
{
    int nv = r->nviolations;
    char first[700] = "";
    if (nv > 1)
        snprintf(first, sizeof first, "%s (and %d more)", r->first_violation, nv - 1);
    else if (nv)
        snprintf(first, sizeof first, "%s", r->first_violation);
    if (out->status == RUNNER_CANCELLED) {
        set_reason(r, e, "%s%s", "cancelled", "");
        return VERIFY_CANCELLED;
    }
    bool failed = out->status == RUNNER_FAILED;
    /* The wind carried the drone out, whatever else went wrong after. */
    if (r->watch[0]) {
        set_reason(r, e, "%s%s", "the watch on the measured state acted: ", r->watch);
        return VERIFY_WATCH;
    }
    if (nv > 0) {
        if (failed)
            set_reason(r, e, "%s; then: %s", first, out->reason);
        else
            set_reason(r, e, "%s%s", first, "");
        return VERIFY_VIOLATION;
    }
    if (!failed) return VERIFY_OK;
    set_reason(r, e, "%s%s", out->reason, "");
    switch (out->sandbox) {
    case SANDBOX_INSTRUCTIONS:
    case SANDBOX_MEMORY:
    case SANDBOX_TIMEOUT: return VERIFY_BUDGET;
    default: return VERIFY_ERROR;
    }
}

cJSON *verify_world(const verify_opts *o, int i, verify_verdict *v, char *err, size_t errlen)
{
    scene *sc = malloc(sizeof *sc);
    cJSON *e = cJSON_CreateObject();
    world_run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    if (!sc || !e) {
        free(sc);
        cJSON_Delete(e);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    cJSON_AddNumberToObject(e, "world", i);
    cJSON *changes = cJSON_CreateArray();
    uint64_t sim_seed;
    verify_world_sample(o->scene, o->seed, i, sc, &sim_seed, &r.probe_rng, changes);
    r.sc = sc;
    /* A world rehearses the plan: its pictures are counted, never drawn. */
    sim_options so = {.time_scale = 0, .seed = sim_seed, .discard_pictures = true};
    if (mission_world_sim_scene(&r.w, sc, &so, err, errlen)) {
        free(sc);
        cJSON_Delete(changes);
        cJSON_Delete(e);
        return NULL;
    }
    if (o->from) sim_place(r.w.sim, o->from);
    r.branch = cJSON_CreateArray();
    r.calls = cJSON_CreateArray();
    runner_opts ro = {
        .reg = o->reg,
        .world = &r.w,
        .plan = o->plan,
        .plan_len = o->plan_len,
        .limits = o->limits,
        .max_loop = o->max_loop,
        .probe = probe,
        .probe_ud = &r,
        .on_sandbox = o->on_sandbox,
        .on_sandbox_ud = o->on_sandbox_ud,
        .on_skill_event = on_skill_event,
        .on_skill_event_ud = &r,
        .in_process = true, /* execute() runs the session's sandbox itself */
    };
    char msg[1024] = "";
    runner_session *s = runner_session_open(&ro, msg, sizeof msg);
    verify_kind k = VERIFY_ERROR;
    if (!s) {
        set_reason(&r, e, "%s%s", msg, "");
    } else {
        constraint_stats cs = constraints_get_stats(r.w.drone);
        r.clamped = cs.clamped, r.refused = cs.refused;
        sandbox_status st = execute(&r, runner_session_sandbox(s), msg, sizeof msg);
        runner_outcome out;
        runner_session_end(s, st, msg, &out);
        k = judge(&r, &out, e);
        if (k == VERIFY_WATCH) {
            double ex = constraints_excursion_cm(r.w.drone);
            cJSON_AddNumberToObject(e, "excursion_cm", round(ex * 10) / 10);
        }
        /* The world's verdict is all a world reports: the session's report
         * is taken as typed data (no JSON built) and dropped. */
        mission_report rep;
        mission_report_init(&rep, NULL, 0);
        runner_session_report(s, &rep, out.status == RUNNER_OK);
        mission_report_free(&rep);
    }
    mission_world_close(&r.w, false);
    cJSON_AddStringToObject(e, "kind", verify_kind_name(k));
    if (k == VERIFY_OK) cJSON_AddStringToObject(e, "reason", "");
    cJSON_AddItemToObject(e, "changes", changes);
    add_more(r.branch, r.more_branch, "statements");
    add_more(r.calls, r.more_calls, "calls");
    cJSON_AddItemToObject(e, "branch", r.branch);
    cJSON_AddItemToObject(e, "calls", r.calls);
    free(sc);
    if (v) {
        v->kind = k;
        snprintf(v->reason, sizeof v->reason, "%s", r.reason);
    }
    return e;
}

void verify_summary_init(verify_summary *sum)
{
    memset(sum, 0, sizeof *sum);
    sum->first_world = -1;
}

cJSON *verify_plan(const verify_opts *o, verify_summary *sum, char *err, size_t errlen)
{
    verify_summary own;
    if (!sum) sum = &own;
    verify_summary_init(sum);
    if (o->worlds < 1 || o->worlds > VERIFY_MAX_WORLDS) {
        snprintf(err, errlen, "the number of worlds must be between 1 and %d", VERIFY_MAX_WORLDS);
        return NULL;
    }
    /* SPEC §6: the worlds fly in workers, unless this process runs its VMs */
    if (vm_workers_enabled()) return verify_remote_plan(o, sum, err, errlen);
    cJSON *doc = cJSON_CreateObject();
    cJSON *worlds = cJSON_AddNumberToObject(doc, "worlds", 0);
    cJSON_AddNumberToObject(doc, "seed", (double)o->seed);
    cJSON *passed = cJSON_AddNumberToObject(doc, "passed", 0);
    cJSON *list = cJSON_AddArrayToObject(doc, "failed");
    for (int i = 0; i < o->worlds && !sum->cancelled; i++) {
        verify_verdict v;
        cJSON *e = verify_world(o, i, &v, err, errlen);
        if (!e) {
            cJSON_Delete(doc);
            return NULL;
        }
        if (v.kind == VERIFY_CANCELLED) {
            sum->cancelled = true;
            cJSON_Delete(e);
            continue;
        }
        sum->worlds++;
        if (v.kind == VERIFY_OK) {
            sum->passed++;
            cJSON_Delete(e);
            continue;
        }
        if (sum->failed++ == 0) {
            sum->first_world = i;
            sum->first_kind = v.kind;
            snprintf(sum->first_reason, sizeof sum->first_reason, "%s", v.reason);
        }
        cJSON_AddItemToArray(list, e);
    }
    cJSON_SetNumberValue(worlds, sum->worlds);
    cJSON_SetNumberValue(passed, sum->passed);
    if (sum->cancelled) cJSON_AddBoolToObject(doc, "cancelled", true);
    return doc;
}

static void print_list(FILE *f, const cJSON *arr, const char *sep)
{
    int i = 0;
    for (const cJSON *s = arr ? arr->child : NULL; s; s = s->next, i++)
        if (cJSON_IsString(s)) fprintf(f, "%s%s", i ? sep : "", s->valuestring);
}

void verify_print(FILE *f, const cJSON *report)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(report, "failed");
    for (const cJSON *e = list ? list->child : NULL; e; e = e->next) {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(e, "world");
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "kind");
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(e, "reason");
        const cJSON *ch = cJSON_GetObjectItemCaseSensitive(e, "changes");
        fprintf(f, "world %d: %s: %s | world: ", w ? w->valueint : -1,
                cJSON_IsString(k) ? k->valuestring : "?",
                cJSON_IsString(why) ? why->valuestring : "");
        if (cJSON_GetArraySize(ch) == 0)
            fputs("the scene as written", f);
        else
            print_list(f, ch, ", ");
        fputs(" | branch: ", f);
        print_list(f, cJSON_GetObjectItemCaseSensitive(e, "branch"), "; ");
        fputc('\n', f);
    }
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(report, "worlds");
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(report, "passed");
    int worlds = n ? n->valueint : 0, passed = p ? p->valueint : 0;
    fprintf(f, "%d worlds: %d passed, %d failed%s\n", worlds, passed, cJSON_GetArraySize(list),
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(report, "cancelled")) ? " (cancelled)"
                                                                                : "");
}
