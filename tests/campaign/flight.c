/*
 * The campaign's flight harness: see flight.h.
 */
#include "flight.h"

#include "drone/constraints.h"
#include "drone/watch.h"
#include "drone/scene.h"
#include "drone/sim.h"
#include "minispec/minispec.h"
#include "minispec/stream.h"
#include "minispec/stream_exec.h"
#include "skills/skills.h"
#include "verify/verify.h"

#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How far a float may stray past a limit (rounding in the guard's maths). */
#define FENCE_EPS 1e-6
/* The wall-clock allowance past the sandbox's limit: the 1 s, plus
 * half a second for a machine shared with other heavy jobs (a harness that
 * fails on scheduling noise would hide real findings). */
#define WALL_SLACK_MS 1500.0

/* ---- the environment ------------------------------------------------------- */

int camp_env_open(camp_env *env)
{
    memset(env, 0, sizeof *env);
    snprintf(env->pictures, sizeof env->pictures, "/tmp/aloft-campaign-XXXXXX");
    if (!mkdtemp(env->pictures)) {
        perror("campaign: mkdtemp");
        return -1;
    }
    env->reg = camp_registry();
    return env->reg ? 0 : -1;
}

/* Removes take_picture's directories (pictures are capped at one each). */
static void clean_pictures(const camp_env *env, bool also_root)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'%s", env->pictures, also_root ? "" : "/*");
    if (system(cmd) != 0) fprintf(stderr, "campaign: could not clean %s\n", env->pictures);
}

void camp_env_close(camp_env *env)
{
    clean_pictures(env, true);
    registry_free(env->reg);
    memset(env, 0, sizeof *env);
}

/* ---- cases ----------------------------------------------------------------- */

void camp_case_draw(camp_rng *r, const camp_env *env, bool lua, camp_case *c)
{
    c->seed = (uint64_t)camp_pick(r, 1u << 30) << 16 | camp_pick(r, 1u << 16);
    c->lua = lua;
    /* Mostly small budgets: a script that spins burns all of its budget,
     * and the campaign's throughput is what finds bugs. */
    static const uint64_t instr[] = {1000, 2000, 5000, 10000, 20000, 50000, 100000, 1000000};
    static const size_t mem[] = {64 << 10, 512 << 10, 2 << 20, 16 << 20};
    static const uint64_t ms[] = {5, 50, 300, 2000};
    c->limits.max_instructions = instr[camp_chance(r, 95) ? camp_pick(r, 6) : 6 + camp_pick(r, 2)];
    c->limits.max_memory = mem[camp_pick(r, 4)];
    c->limits.timeout_ms = ms[camp_pick(r, 4)];
    c->limits.max_output = camp_chance(r, 20) ? 16 : 0;
    c->max_loop = camp_chance(r, 80) ? 1000 : 1 + (int)camp_pick(r, 20);
    /* Now and then a motion takes real time, so the simulator reports poses
     * along the way: the fence is then checked mid-motion too. */
    c->time_scale = camp_chance(r, 1) ? 2000 : 0;
    if (c->time_scale > 0 && c->limits.timeout_ms > 300) c->limits.timeout_ms = 300;
    c->check_verify = !lua && camp_chance(r, 3);
    camp_gen_scene(r, &c->scene);
    if (lua)
        camp_gen_lua(r, env->reg, &c->program);
    else
        camp_gen_plan(r, env->reg, c->max_loop, &c->program);
}

void camp_case_free(camp_case *c)
{
    camp_text_free(&c->scene);
    camp_text_free(&c->program);
}

/* ---- one flight ------------------------------------------------------------ */

typedef struct flight {
    const camp_case *c;
    scene sc;
    drone *sim, *guard;
    sandbox *sb;
    skill_ctx ctx;
    camp_text trace;            /* every skill event, for the stream invariant */
    char broken[1024];          /* the first broken invariant */
    drone_pose last;            /* the previous true pose sample */
    double slack;               /* how far out the wind may carry it (CAMP_WIND_SLACK_CM or 0) */
    drone_measured_fn watch_fn; /* the guard's watch, which on_measured hands on to */
    void *watch_ud;
    uint64_t probes;    /* probe answers given */
    int passed_at_trip; /* guard's passed motions when the trip was seen, or -1 */
} flight;

static void breaks(flight *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void breaks(flight *f, const char *fmt, ...)
{
    if (f->broken[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->broken, sizeof f->broken, fmt, ap);
    va_end(ap);
}

static bool inside(const flight *f, const drone_pose *p)
{
    const scene_limits *l = &f->sc.limits;
    double dx = p->x - f->sc.start.x, dy = p->y - f->sc.start.y;
    double out = FENCE_EPS + f->slack;
    return hypot(dx, dy) <= l->geofence_radius + out && p->z >= l->min_z - out &&
           p->z <= l->max_z + out;
}

/* A true pose: inside, and so is the straight line from the previous one
 * (the simulator interpolates linearly between its samples). */
static void sample(flight *f, const drone_pose *p, const char *when)
{
    for (int i = 1; i <= 8; i++) {
        double t = i / 8.0;
        drone_pose q = {f->last.x + (p->x - f->last.x) * t, f->last.y + (p->y - f->last.y) * t,
                        f->last.z + (p->z - f->last.z) * t, p->yaw};
        if (!inside(f, &q)) {
            breaks(f,
                   "fence: true pose (%.3f, %.3f, %.3f) %s is outside the geofence (radius %.3f "
                   "around %.3f, %.3f) or the band [%.3f, %.3f]",
                   q.x, q.y, q.z, when, f->sc.limits.geofence_radius, f->sc.start.x, f->sc.start.y,
                   f->sc.limits.min_z, f->sc.limits.max_z);
            break;
        }
    }
    f->last = *p;
}

/* Notes the moment a limit trip is first seen; motions after it break
 * the tripped invariant at the end. */
static void note_trip(flight *f)
{
    if (f->sb && f->passed_at_trip < 0 && sandbox_poison(f->sb) != SANDBOX_OK)
        f->passed_at_trip = constraints_get_stats(f->guard).passed;
}

/* Every state the simulator measures, on its way to the guard's watch. A
 * landing the watch makes (paused) and a landed drone are not judged. */
static void on_measured(void *ud, const drone_state *st)
{
    flight *f = ud;
    if (st->flying && !watch_paused(constraints_watch(f->guard)))
        sample(f, &st->pose, "while moving");
    else
        f->last = st->pose;
    if (f->watch_fn) f->watch_fn(f->watch_ud, st);
}

/* A sample of the true state after a call or at the end: a drone the watch
 * landed is not judged. */
static void sample_state(flight *f, const char *when)
{
    drone_state st;
    f->sim->ops->get_state(f->sim, &st);
    if (st.flying)
        sample(f, &st.pose, when);
    else
        f->last = st.pose;
}

/* take_picture's directories have random names: "aloft-pictures-" and
 * six characters become "aloft-pictures-*", in place. */
static void normalise(char *s)
{
    for (char *p = s; (p = strstr(p, "aloft-pictures-"));) {
        p += 15;
        size_t n = strlen(p);
        if (n < 6) break;
        *p++ = '*';
        memmove(p, p + 5, n - 5);
    }
}

/* V (taken) as JSON text into the trace; NULL: "-". */
static void trace_json(flight *f, cJSON *v)
{
    char buf[2048];
    if (!v) {
        camp_text_add(&f->trace, "-");
    } else if (cJSON_PrintPreallocated(v, buf, sizeof buf, false)) {
        normalise(buf);
        camp_text_add(&f->trace, buf);
    } else {
        camp_text_add(&f->trace, "(long)");
    }
    cJSON_Delete(v);
}

static void on_event(void *ud, const skill_event *ev)
{
    flight *f = ud;
    if (ev->kind == SKILL_EVENT_CALL && sandbox_poison(f->sb) != SANDBOX_OK)
        breaks(f, "tripped: %s was called after the %s limit tripped", ev->skill->name,
               sandbox_status_name(sandbox_poison(f->sb)));
    note_trip(f);
    camp_text_printf(&f->trace, "%d %d %s ", (int)ev->kind, ev->depth, ev->skill->name);
    if (ev->kind == SKILL_EVENT_VIOLATION) camp_text_add(&f->trace, ev->reason);
    trace_json(f, ev->kind == SKILL_EVENT_RETURN ? skill_value_json(ev->ret)
                  : ev->kind == SKILL_EVENT_CALL ? skill_values_json(ev->args, ev->nargs)
                                                 : NULL);
    camp_text_add(&f->trace, "\n");
    if (ev->kind == SKILL_EVENT_RETURN) {
        char when[96];
        snprintf(when, sizeof when, "after %s", ev->skill->name);
        sample_state(f, when);
    }
}

static int observe(void *ud, vision_object *out, int max, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    return sim_observe(ud, out, max);
}

/* The planner's answers, drawn from the case's seed: what an LLM might say,
 * edge cases included. */
static int probe(void *ud, const char *question, char *out, size_t outlen, char *err, size_t errlen)
{
    flight *f = ud;
    (void)question;
    static const char *const answers[] = {
        "True",
        "False",
        "3",
        "0",
        "-1",
        "apple",
        "0.5",
        "",
        "None",
        "1e999",
        "nan",
        "a very long answer that goes on and on about the apple on the table",
        "\xff\xfe",
        "person_2",
        "99999999999999999999"};
    camp_rng r;
    camp_rng_seed(&r, f->c->seed * 31 + f->probes++);
    unsigned i = camp_pick(&r, sizeof answers / sizeof answers[0] + 1);
    if (i == sizeof answers / sizeof answers[0])
        return snprintf(err, errlen, "the planner did not answer"), -1;
    snprintf(out, outlen, "%s", answers[i]);
    return 0;
}

static int flight_open(flight *f, const camp_env *env, const camp_case *c, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->c = c;
    f->passed_at_trip = -1;
    if (scene_parse(&f->sc, c->scene.s, c->scene.len, err, errlen)) return -1;
    sim_options so = {.time_scale = c->time_scale,
                      .seed = c->seed,
                      .picture_dir = env->pictures,
                      .max_pictures = 1};
    f->sim = sim_open(&f->sc, &so, err, errlen);
    if (!f->sim) return -1;
    f->guard = constraints_wrap(f->sim, &f->sc.limits, &f->sc.start, err, errlen);
    if (!f->guard) {
        f->sim->ops->destroy(f->sim);
        return -1;
    }
    f->slack = f->sc.wind.speed > 0 || f->sc.wind.gust > 0 ? CAMP_WIND_SLACK_CM : 0;
    f->watch_fn = f->sim->measured;
    f->watch_ud = f->sim->measured_ud;
    f->sim->measured = on_measured;
    f->sim->measured_ud = f;
    if (f->guard->ops->connect(f->guard, err, errlen) ||
        f->guard->ops->takeoff(f->guard, err, errlen))
        return -1;
    drone_state st;
    f->sim->ops->get_state(f->sim, &st);
    f->last = st.pose;
    if (!inside(f, &st.pose)) return snprintf(err, errlen, "the scene starts outside"), -1;
    f->sb = sandbox_new(&c->limits, err, errlen);
    if (!f->sb) return -1;
    f->ctx.reg = env->reg;
    f->ctx.sb = f->sb;
    f->ctx.drone = f->guard;
    f->ctx.observe = observe;
    f->ctx.observe_ud = f->sim;
    f->ctx.probe = probe;
    f->ctx.probe_ud = f;
    f->ctx.on_event = on_event;
    f->ctx.event_ud = f;
    return skills_bind(&f->ctx, err, errlen);
}

static void flight_close(flight *f)
{
    if (f->sb) {
        skills_release(&f->ctx);
        sandbox_free(f->sb);
    }
    /* Destroyed without landing: the landing's descent to the ground would
     * leave the band, and is not the plan's doing. */
    if (f->guard)
        f->guard->ops->destroy(f->guard);
    else if (f->sim)
        f->sim->ops->destroy(f->sim);
    camp_text_free(&f->trace);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* What a run ended with, for the stream invariant. */
typedef struct ending {
    sandbox_status st;
    char err[512];
    char result[256];
    bool replan;
} ending;

static void take_result(flight *f, ending *e)
{
    lua_State *L = sandbox_lua(f->sb);
    const char *s = lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER ||
                            lua_type(L, -1) == LUA_TBOOLEAN || lua_isnil(L, -1)
                        ? luaL_tolstring(L, -1, NULL)
                        : lua_typename(L, lua_type(L, -1));
    snprintf(e->result, sizeof e->result, "%s", s);
    normalise(e->result);
    lua_settop(L, 0);
}

static sandbox_status run_whole(flight *f, const char *lua, size_t len, const char *name, ending *e)
{
    sandbox_status st = sandbox_load(f->sb, lua, len, name, e->err, sizeof e->err);
    if (st == SANDBOX_OK) st = sandbox_call(f->sb, 0, 1, e->err, sizeof e->err);
    if (st == SANDBOX_OK) take_result(f, e);
    return st;
}

static sandbox_status run_streamed(flight *f, const camp_env *env, ending *e)
{
    const camp_case *c = f->c;
    ms_options mo = {.max_loop = c->max_loop};
    ms_stream *s = ms_stream_new(env->reg, &mo);
    ms_exec *x = ms_exec_new(f->sb);
    if (!s || !x) abort();
    camp_rng r;
    camp_rng_seed(&r, c->seed ^ 0x5eed);
    sandbox_status st = SANDBOX_OK;
    size_t fed = 0;
    bool done = false;
    while (!done && st == SANDBOX_OK && !ms_exec_finished(x)) {
        if (fed < c->program.len) {
            size_t n = 1 + camp_pick(&r, camp_chance(&r, 50) ? 4 : 64);
            if (n > c->program.len - fed) n = c->program.len - fed;
            ms_stream_feed(s, c->program.s + fed, n);
            fed += n;
        } else {
            ms_stream_finish(s);
        }
        ms_event ev;
        ms_event_kind k;
        while (st == SANDBOX_OK && !ms_exec_finished(x) &&
               (k = ms_stream_next(s, &ev)) != MS_EV_NONE) {
            if (k == MS_EV_DONE) {
                done = true;
                break;
            }
            st = ms_exec_event(x, &ev, e->err, sizeof e->err);
        }
    }
    if (st == SANDBOX_OK) {
        ms_exec_push_result(x);
        take_result(f, e);
    }
    ms_exec_free(x);
    ms_stream_free(s);
    return st;
}

static bool is_limit(sandbox_status st)
{
    return st == SANDBOX_INSTRUCTIONS || st == SANDBOX_MEMORY || st == SANDBOX_TIMEOUT;
}

/* Checks the budget and tripped invariants at the end of a run. */
static void check_end(flight *f, sandbox_status st, double wall_ms)
{
    const sandbox_limits *l = &f->c->limits;
    uint64_t budget = l->max_instructions ? l->max_instructions : SANDBOX_DEFAULT_INSTRUCTIONS;
    sandbox_usage u = sandbox_get_usage(f->sb);
    /* A library call charges its work in one go before doing it (a big
     * string.rep, table.move), and a poisoned VM counts every instruction
     * it refuses while unwinding: the count may then pass the budget, but
     * only when the run stopped on a limit. */
    if (u.instructions > budget + SANDBOX_HOOK_STEP && !is_limit(st))
        breaks(f, "budget: %llu instructions ran, the budget is %llu, and the run ended %s",
               (unsigned long long)u.instructions, (unsigned long long)budget,
               sandbox_status_name(st));
    double limit = (double)(l->timeout_ms ? l->timeout_ms : SANDBOX_DEFAULT_TIMEOUT_MS);
    if (wall_ms > limit + WALL_SLACK_MS)
        breaks(f, "budget: the run took %.0f ms, its wall-clock limit is %.0f ms", wall_ms, limit);
    note_trip(f);
    int passed = constraints_get_stats(f->guard).passed;
    if (f->passed_at_trip >= 0 && passed != f->passed_at_trip)
        breaks(f, "tripped: %d motions reached the drone after the %s limit tripped",
               passed - f->passed_at_trip, sandbox_status_name(sandbox_poison(f->sb)));
    sample_state(f, "at the end");
}

/* Flies C once (streamed or whole); fills E and TRACE (taken). Returns 1
 * with WHY when an invariant broke, -1 when the flight could not start. */
static int fly(camp_env *env, const camp_case *c, const char *lua, bool streamed, ending *e,
               camp_text *trace, char *why, size_t whylen)
{
    flight f;
    memset(e, 0, sizeof *e);
    double t0 = now_ms();
    if (flight_open(&f, env, c, why, whylen)) {
        flight_close(&f);
        return -1;
    }
    env->runs++;
    if (streamed)
        e->st = run_streamed(&f, env, e);
    else if (c->lua)
        e->st = run_whole(&f, c->program.s, c->program.len, "=script", e);
    else
        e->st = run_whole(&f, lua, strlen(lua), "=plan", e);
    e->replan = f.ctx.replan;
    if (is_limit(e->st)) env->tripped++;
    if (f.slack > 0) env->windy++;
    if (f.slack > 0 && constraints_excursion_cm(f.guard) > 0) env->carried++;
    check_end(&f, e->st, now_ms() - t0);
    int rc = 0;
    if (f.broken[0]) {
        snprintf(why, whylen, "%s", f.broken);
        rc = 1;
    }
    *trace = f.trace;
    f.trace = (camp_text){0};
    flight_close(&f);
    return rc;
}

static int check_verify(camp_env *env, const camp_case *c, char *why, size_t whylen)
{
    scene sc;
    if (scene_parse(&sc, c->scene.s, c->scene.len, why, whylen)) return -1;
    verify_opts vo = {.reg = env->reg,
                      .scene = &sc,
                      .plan = c->program.s,
                      .plan_len = c->program.len,
                      .worlds = 2,
                      .seed = c->seed,
                      .limits = c->limits,
                      .max_loop = c->max_loop};
    /* Only without a wall-clock limit that could trip in one and not the
     * other: verification flies at instant time, so a generous one. */
    vo.limits.timeout_ms = 60000;
    char *text[2] = {NULL, NULL};
    verify_kind kind[2];
    for (int i = 0; i < 2; i++) {
        char err[512];
        verify_verdict v;
        cJSON *w = verify_world(&vo, 1 + (int)(c->seed % 1000), &v, err, sizeof err);
        if (!w) {
            free(text[0]);
            return snprintf(why, whylen, "verify: world could not be built: %s", err), 1;
        }
        kind[i] = v.kind;
        text[i] = cJSON_PrintUnformatted(w);
        normalise(text[i]);
        cJSON_Delete(w);
    }
    int rc = 0;
    if (kind[0] != kind[1] || strcmp(text[0], text[1]) != 0)
        rc = 1, snprintf(why, whylen, "verify: two runs of seed %llu differ:\n%s\n%s",
                         (unsigned long long)c->seed, text[0], text[1]);
    free(text[0]);
    free(text[1]);
    return rc;
}

int camp_check(camp_env *env, const camp_case *c, char *why, size_t whylen)
{
    why[0] = '\0';
    if (env->runs % 4096 == 4095) clean_pictures(env, false);
    ms_result r = {0};
    const char *lua = NULL;
    if (!c->lua) {
        ms_options mo = {.max_loop = c->max_loop};
        minispec_compile(env->reg, c->program.s, c->program.len, &mo, &r);
        if (!r.ok) {
            env->rejected++;
            snprintf(why, whylen, "accept: the checker refused a generated plan: %s",
                     r.ndiags ? r.diags[0].message : "?");
            ms_result_free(&r);
            return 1;
        }
        lua = r.lua;
    }
    ending whole, streamed;
    camp_text t1 = {0}, t2 = {0};
    int rc = fly(env, c, lua, false, &whole, &t1, why, whylen);
    if (rc == 0 && !c->lua) {
        rc = fly(env, c, lua, true, &streamed, &t2, why, whylen);
        if (rc == 0 && !is_limit(whole.st) && !is_limit(streamed.st)) {
            const char *a = t1.s ? t1.s : "", *b = t2.s ? t2.s : "";
            if (whole.st != streamed.st || strcmp(a, b) != 0 ||
                strcmp(whole.result, streamed.result) != 0 || whole.replan != streamed.replan)
                rc = 1,
                snprintf(why, whylen,
                         "stream: whole ended %s (%s) result %s, streamed %s (%s) result "
                         "%s\n--- whole calls\n%.1500s--- streamed calls\n%.1500s",
                         sandbox_status_name(whole.st), whole.err, whole.result,
                         sandbox_status_name(streamed.st), streamed.err, streamed.result, a, b);
        }
    }
    if (rc == 0 && c->check_verify) rc = check_verify(env, c, why, whylen);
    camp_text_free(&t1);
    camp_text_free(&t2);
    ms_result_free(&r);
    return rc;
}
