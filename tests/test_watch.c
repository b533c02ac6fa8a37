/* The watch on the measured state (SPEC §10): the rules at their limits,
 * hysteresis, and in the windy simulator behind the guard: a drone blown out
 * comes back and never goes more than 50 cm beyond the fence, a wind too
 * strong lands it, a battery below the reserve flies it home and lands it,
 * the watch acts between calls too, and runs repeat exactly at any time
 * scale.
 * labels: safety watch */
#include "drone/constraints.h"
#include "drone/scene.h"
#include "drone/sim.h"
#include "drone/watch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

/* SPEC §10: with wind below half the drone's speed, never farther out. */
#define BOUND_CM 50.0

static scene *must_parse(const char *json)
{
    static scene s;
    char err[256];
    if (scene_parse(&s, json, strlen(json), err, sizeof err)) {
        fprintf(stderr, "scene did not parse: %s\n%s\n", err, json);
        exit(1);
    }
    return &s;
}

/* Every measured state the simulator reports, judged against the limits by
 * the test (not by the watch): how far beyond the fence or the band it went. */
typedef struct track {
    drone_measured_fn next;
    void *next_ud;
    scene_limits lim;
    double home_x, home_y;
    double beyond; /* farthest beyond the fence or the band */
    int states;
} track;

static void on_measured(void *ud, const drone_state *st)
{
    track *t = ud;
    if (st->flying) {
        double r = hypot(st->pose.x - t->home_x, st->pose.y - t->home_y);
        double b = fmax(r - t->lim.geofence_radius,
                        fmax(st->pose.z - t->lim.max_z, t->lim.min_z - st->pose.z));
        if (b > t->beyond) t->beyond = b;
        t->states++;
    }
    t->next(t->next_ud, st);
}

typedef struct rig {
    drone *g; /* the guard */
    track tr;
} rig;

/* The simulator in SC behind the guard, flying, its track recorded. */
static void rig_open(rig *r, const scene *sc, double time_scale, unsigned long long seed)
{
    char err[256];
    sim_options o = {.time_scale = time_scale, .seed = seed};
    drone *d = sim_open(sc, &o, err, sizeof err);
    r->g = d ? constraints_wrap(d, &sc->limits, &sc->start, err, sizeof err) : NULL;
    if (!r->g || r->g->ops->takeoff(r->g, err, sizeof err)) {
        fprintf(stderr, "open: %s\n", err);
        exit(1);
    }
    memset(&r->tr, 0, sizeof r->tr);
    r->tr.lim = sc->limits;
    r->tr.home_x = sc->start.x;
    r->tr.home_y = sc->start.y;
    drone *in = constraints_inner(r->g);
    r->tr.next = in->measured;
    r->tr.next_ud = in->measured_ud;
    in->measured = on_measured;
    in->measured_ud = &r->tr;
}

static drone_state state_of(drone *g)
{
    drone_state st;
    g->ops->get_state(g, &st);
    return st;
}

static double from_home(const rig *r, const drone_state *st)
{
    return hypot(st->pose.x - r->tr.home_x, st->pose.y - r->tr.home_y);
}

/* ---- the rules at their limits (a start that is not the origin) ---------- */

static drone_state at(double x, double y, double z, int battery)
{
    drone_state st;
    memset(&st, 0, sizeof st);
    st.pose = (drone_pose){x, y, z, 0};
    st.battery = battery;
    st.known = DRONE_KNOWN_ALL;
    st.flying = true;
    return st;
}

static void test_limits(void)
{
    scene_limits lim = {.geofence_radius = 300, .min_z = 30, .max_z = 250, .battery_reserve = 10};
    drone_pose home = {120, -80, 100, 0};
    struct {
        double x, y, z;
        int battery;
        watch_rule want;
    } cases[] = {
        {120 + 300, -80, 100, 50, WATCH_NONE},        /* on the fence */
        {120 + 299.5, -80, 100, 50, WATCH_NONE},      /* just inside */
        {120 + 300.5, -80, 100, 50, WATCH_FENCE},     /* just outside */
        {120, -80 - 300.5, 100, 50, WATCH_FENCE},     /* just outside, south */
        {120 + 213, -80 + 213, 100, 50, WATCH_FENCE}, /* 301.2 cm out on the diagonal */
        {120, -80, 250, 50, WATCH_NONE},              /* at max_z */
        {120, -80, 250.5, 50, WATCH_CEILING},
        {120, -80, 30, 50, WATCH_NONE}, /* at min_z */
        {120, -80, 29.5, 50, WATCH_FLOOR},
        {120, -80, 100, 10, WATCH_NONE}, /* at the reserve: the check's business */
        {120, -80, 100, 9, WATCH_BATTERY},
        {0, 0, 100, 50, WATCH_NONE}, /* the origin is not home: 144 cm from it */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        watch *w = watch_new(&lim, &home);
        drone_state st = at(cases[i].x, cases[i].y, cases[i].z, cases[i].battery);
        watch_measured(w, &st);
        watch_trip t = {0};
        bool tripped = watch_tripped(w);
        bool took = watch_take(w, &t);
        watch_rule got = took ? t.rule : WATCH_NONE;
        CHECK(got == cases[i].want && tripped == took && !watch_tripped(w),
              "case %zu (%g, %g, %g, %d%%): want rule %d, got %d", i, cases[i].x, cases[i].y,
              cases[i].z, cases[i].battery, (int)cases[i].want, (int)got);
        if (took) CHECK(t.state.pose.x == cases[i].x && t.reason[0], "case %zu: the pose", i);
        watch_free(w);
    }
}

/* A part the driver reports known but that is no number (or no percentage)
 * is not judged: a NaN compares false and would pass anyway, and a battery
 * of -1 % is the driver's garbage, not a drone below its reserve. */
static void test_impossible_parts_not_judged(void)
{
    scene_limits lim = {.geofence_radius = 300, .min_z = 30, .max_z = 250, .battery_reserve = 10};
    drone_pose home = {120, -80, 100, 0};
    drone_state cases[] = {
        at(NAN, -80, 100, 50),  at(INFINITY, -80, 100, 50),   at(120, -INFINITY, 100, 50),
        at(120, -80, NAN, 50),  at(120, -80, INFINITY, 50),   at(120, -80, 100, -1),
        at(120, -80, 100, 101), at(120 + 500, -80, 100, 101), /* far out, a garbage battery */
    };
    watch_rule want[] = {WATCH_NONE, WATCH_NONE, WATCH_NONE, WATCH_NONE,
                         WATCH_NONE, WATCH_NONE, WATCH_NONE, WATCH_FENCE};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        watch *w = watch_new(&lim, &home);
        drone_state seen;
        CHECK(watch_latest(w, &seen) == 0, "case %zu: a state before any was measured", i);
        watch_measured(w, &cases[i]);
        watch_trip t = {0};
        watch_rule got = watch_take(w, &t) ? t.rule : WATCH_NONE;
        CHECK(got == want[i], "case %zu: want rule %d, got %d (%s)", i, (int)want[i], (int)got,
              t.reason);
        CHECK(watch_latest(w, &seen) == 1, "case %zu: the state is kept all the same", i);
        watch_free(w);
    }
    CHECK(!watch_tripped(NULL), "no watch, no trip");
    watch_free(NULL);
}

/* The guard's accessors asked of a drone that is no guard: nothing to say. */
static void test_no_guard(void)
{
    char err[256];
    scene *sc = must_parse("{\"objects\": []}");
    sim_options o = {.time_scale = 0, .seed = 1};
    drone *d = sim_open(sc, &o, err, sizeof err);
    CHECK(d != NULL, "%s", err);
    if (!d) return;
    drone_pose p = {0};
    char why[64] = "";
    CHECK(!constraints_is(d));
    CHECK(constraints_watch_tick(d, 1, NULL, NULL) == 0);
    CHECK(!constraints_monitor(d, &p));
    CHECK(!constraints_take_pending(d, why, sizeof why, &p));
    CHECK(!constraints_watch_ended(d, why, sizeof why) && why[0] == '\0');
    CHECK(constraints_excursion_cm(d) == 0);
    CHECK(constraints_watch(d) == NULL);
    /* a guard whose drone is on the ground: nothing to watch between calls */
    drone *g = constraints_wrap(d, &sc->limits, &sc->start, err, sizeof err);
    CHECK(g != NULL, "%s", err);
    if (!g) return;
    CHECK(constraints_watch_tick(g, 1, NULL, NULL) == 0 && !constraints_monitor(g, &p));
    g->ops->destroy(g);
}

/* Noise on the edge trips once; the rule re-arms only 20 cm inside. */
static void test_hysteresis(void)
{
    scene_limits lim = {.geofence_radius = 300, .min_z = 30, .max_z = 250, .battery_reserve = 10};
    drone_pose home = {-50, 40, 100, 0};
    watch *w = watch_new(&lim, &home);
    watch_trip t;
    int trips = 0;
    /* Jitter of +-3 cm across the fence, 50 states. */
    for (int i = 0; i < 50; i++) {
        drone_state st = at(-50 + 300 + (i % 2 ? 3 : -3), 40, 100, 50);
        watch_measured(w, &st);
        trips += watch_take(w, &t);
    }
    CHECK(trips == 1, "jitter on the edge: %d trips, want 1", trips);
    drone_state in19 = at(-50 + 281, 40, 100, 50), out = at(-50 + 305, 40, 100, 50);
    watch_measured(w, &in19);
    watch_measured(w, &out);
    CHECK(!watch_take(w, &t), "19 cm inside does not re-arm");
    drone_state in20 = at(-50 + 280, 40, 100, 50);
    watch_measured(w, &in20);
    watch_measured(w, &out);
    CHECK(watch_take(w, &t) && t.rule == WATCH_FENCE, "20 cm inside re-arms");
    CHECK(fabs(watch_excursion_cm(w) - 5) < 1e-9, "excursion %g, want 5", watch_excursion_cm(w));
    /* Not judged: a landed drone, an unknown position, a paused watch. */
    drone_state far = at(2000, 2000, 1000, 50);
    watch *w2 = watch_new(&lim, &home);
    far.flying = false;
    watch_measured(w2, &far);
    far.flying = true;
    far.known = DRONE_KNOWN_BATTERY;
    watch_measured(w2, &far);
    far.known = DRONE_KNOWN_ALL;
    watch_pause(w2, true);
    watch_measured(w2, &far);
    CHECK(!watch_tripped(w2) && watch_excursion_cm(w2) == 0, "unjudged states tripped");
    watch_pause(w2, false);
    far.pose.x = NAN;
    far.known = DRONE_KNOWN_HEIGHT | DRONE_KNOWN_BATTERY;
    watch_measured(w2, &far);
    CHECK(watch_take(w2, &t) && t.rule == WATCH_CEILING, "the known height is still judged");
    watch_free(w2);
    watch_free(w);
}

/* ---- in the wind ---------------------------------------------------------- */

#define EDGE_SCENE(wind_speed, heading, gust)                                                      \
    "{\"drone\":{\"x\":120,\"y\":-80,\"z\":100,\"yaw\":30},"                                       \
    "\"limits\":{\"geofence_radius\":300,\"min_z\":30,\"max_z\":300},"                             \
    "\"wind\":{\"speed\":" #wind_speed ",\"heading\":" #heading ",\"gust\":" #gust "},"            \
    "\"objects\":[]}"

/* A hovering drone blown across the fence comes back, again and again. */
static void test_blown_across_the_fence(void)
{
    rig r;
    rig_open(&r, must_parse(EDGE_SCENE(45, 90, 8)), 0, 7);
    char err[700];
    int trips = 0;
    for (int i = 0; i < 12; i++) {
        int rc = r.g->ops->wait(r.g, 20000, err, sizeof err);
        drone_pose p;
        if (rc == 0) continue;
        trips++;
        CHECK(constraints_monitor(r.g, &p), "refused, but not by the watch: %s", err);
        CHECK(strstr(err, "geofence") && strstr(err, "returned inside"), "reason: %s", err);
        CHECK(hypot(p.x - 120, p.y + 80) > 300, "the measured pose (%g, %g) is outside", p.x, p.y);
        drone_state st = state_of(r.g);
        CHECK(st.flying && from_home(&r, &st) <= 300 - WATCH_REARM_CM + 1e-6,
              "back inside: %g cm from home", from_home(&r, &st));
    }
    CHECK(trips >= 10, "%d trips in 240 s of 45 cm/s", trips);
    CHECK(r.tr.beyond <= BOUND_CM, "went %.1f cm beyond the fence", r.tr.beyond);
    CHECK(r.tr.beyond > 0 && fabs(constraints_excursion_cm(r.g) - r.tr.beyond) < 1e-9,
          "excursion_cm %g, track %g", constraints_excursion_cm(r.g), r.tr.beyond);
    r.g->ops->destroy(r.g);
}

/* Many small moves along the edge in gusty winds from every side, and a
 * long delay there: never more than 50 cm out. */
static void test_gusty_plan_along_the_edge(void)
{
    double worst = 0;
    int trips = 0;
    for (int k = 0; k < 16; k++) {
        char json[400];
        snprintf(json, sizeof json,
                 "{\"drone\":{\"x\":-40,\"y\":70,\"z\":100,\"yaw\":0},"
                 "\"limits\":{\"geofence_radius\":250,\"min_z\":30,\"max_z\":300},"
                 "\"wind\":{\"speed\":%d,\"heading\":%d,\"gust\":12},\"objects\":[]}",
                 35 + k % 4 * 4, k * 23);
        rig r;
        rig_open(&r, must_parse(json), 0, 100 + (unsigned)k);
        char err[700];
        /* To the edge: 245 cm east, facing north; then along it. */
        r.g->ops->turn(r.g, 90, err, sizeof err);
        r.g->ops->move(r.g, DRONE_FORWARD, 245, err, sizeof err);
        r.g->ops->turn(r.g, -90, err, sizeof err);
        for (int i = 0; i < 60; i++) {
            if (r.g->ops->move(r.g, DRONE_FORWARD, 20, err, sizeof err) &&
                constraints_monitor(r.g, NULL))
                trips++;
            if (r.g->ops->turn(r.g, -5, err, sizeof err) && constraints_monitor(r.g, NULL)) trips++;
        }
        if (r.g->ops->wait(r.g, 60000, err, sizeof err) && constraints_monitor(r.g, NULL)) trips++;
        CHECK(state_of(r.g).flying, "wind %d: the drone landed: %s", 35 + k % 4 * 4, err);
        if (r.tr.beyond > worst) worst = r.tr.beyond;
        r.g->ops->destroy(r.g);
    }
    CHECK(trips > 16, "only %d trips: the plan did not reach the edge", trips);
    CHECK(worst <= BOUND_CM, "went %.1f cm beyond the fence", worst);
}

/* A wind stronger than the drone: the return gains nothing; it lands. */
static void test_wind_too_strong(void)
{
    rig r;
    rig_open(&r, must_parse(EDGE_SCENE(150, 200, 0)), 0, 1);
    char err[700] = "";
    CHECK(r.g->ops->wait(r.g, 10000, err, sizeof err) == -1);
    CHECK(constraints_monitor(r.g, NULL) && strstr(err, "could not be made") &&
              strstr(err, "gained nothing") && strstr(err, "landed"),
          "reason: %s", err);
    char why[700];
    CHECK(constraints_watch_ended(r.g, why, sizeof why) && strstr(why, "landed"), "ended: %s", why);
    CHECK(!state_of(r.g).flying, "still flying");
    CHECK(r.g->ops->move(r.g, DRONE_FORWARD, 50, err, sizeof err) == -1 &&
              strstr(err, "the watch ended the flight"),
          "a motion after the landing: %s", err);
    r.g->ops->destroy(r.g);
}

/* A battery below the reserve mid-plan: home, then land. */
static void test_battery_below_reserve(void)
{
    rig r;
    rig_open(&r,
             must_parse("{\"drone\":{\"x\":120,\"y\":-80,\"z\":100,\"yaw\":30,\"battery\":12},"
                        "\"limits\":{\"battery_reserve\":10},\"objects\":[]}"),
             0, 1);
    char err[700] = "";
    CHECK(r.g->ops->move(r.g, DRONE_RIGHT, 200, err, sizeof err) == 0, "%s", err);
    CHECK(r.g->ops->wait(r.g, 40000, err, sizeof err) == -1);
    CHECK(constraints_monitor(r.g, NULL) && strstr(err, "battery") && strstr(err, "landed"),
          "reason: %s", err);
    drone_state st = state_of(r.g);
    CHECK(!st.flying && from_home(&r, &st) < 2, "landed %g cm from home", from_home(&r, &st));
    CHECK(st.battery == 9, "tripped at %d%%, want the first below 10%%", st.battery);
    CHECK(constraints_watch_ended(r.g, NULL, 0));
    r.g->ops->destroy(r.g);
}

/* Between calls: the watch thread's tick hovers a windy simulator through
 * the real time that passed; the next motion is refused with the trip. */
static void test_between_calls(void)
{
    rig r;
    rig_open(&r, must_parse(EDGE_SCENE(45, 90, 0)), 0, 1);
    struct timespec ts = {0, 150 * 1000000L};
    nanosleep(&ts, NULL);
    /* 150 ms real at 100x: 15 s simulated, 675 cm of wind. */
    CHECK(constraints_watch_tick(r.g, 100, NULL, NULL) == 1, "the tick did not act");
    drone_state st = state_of(r.g);
    CHECK(st.flying && from_home(&r, &st) <= 280 + 1e-6, "back inside: %g", from_home(&r, &st));
    char err[700] = "";
    CHECK(r.g->ops->move(r.g, DRONE_UP, 10, err, sizeof err) == -1 &&
              constraints_monitor(r.g, NULL) && strstr(err, "geofence"),
          "the next motion: %s", err);
    CHECK(r.g->ops->move(r.g, DRONE_UP, 10, err, sizeof err) == 0, "then it flies: %s", err);
    CHECK(r.tr.beyond <= BOUND_CM, "went %.1f cm beyond", r.tr.beyond);
    /* No wind, no scale: nothing moves between calls. */
    rig q;
    rig_open(&q, must_parse(EDGE_SCENE(0, 90, 0)), 0, 1);
    drone_state before = state_of(q.g);
    nanosleep(&ts, NULL);
    constraints_watch_tick(q.g, 0, NULL, NULL);
    drone_state after = state_of(q.g);
    CHECK(before.pose.x == after.pose.x && before.battery == after.battery);
    q.g->ops->destroy(q.g);
    r.g->ops->destroy(r.g);
}

/* The same scene, seed and calls give the same track at any time scale. */
static void fly_fixed(double time_scale, drone_pose *end, double *beyond, int *trips)
{
    rig r;
    rig_open(&r, must_parse(EDGE_SCENE(40, 70, 15)), time_scale, 42);
    char err[700];
    *trips = 0;
    for (int i = 0; i < 6; i++) {
        *trips += r.g->ops->move(r.g, DRONE_RIGHT, 60, err, sizeof err) != 0;
        *trips += r.g->ops->wait(r.g, 1500, err, sizeof err) != 0;
        *trips += r.g->ops->turn(r.g, 45, err, sizeof err) != 0;
    }
    *end = state_of(r.g).pose;
    *beyond = constraints_excursion_cm(r.g);
    r.g->ops->destroy(r.g);
}

static void test_repeats_at_any_time_scale(void)
{
    drone_pose a, b;
    double ea, eb;
    int ta, tb;
    fly_fixed(0, &a, &ea, &ta);
    fly_fixed(40, &b, &eb, &tb); /* about 0.4 s of real time */
    CHECK(ta > 0, "the watch never acted");
    CHECK(a.x == b.x && a.y == b.y && a.z == b.z && a.yaw == b.yaw && ea == eb && ta == tb,
          "instant (%.9g, %.9g) %g %d trips vs 40x (%.9g, %.9g) %g %d trips", a.x, a.y, ea, ta, b.x,
          b.y, eb, tb);
}

int main(void)
{
    test_limits();
    test_impossible_parts_not_judged();
    test_no_guard();
    test_hysteresis();
    test_blown_across_the_fence();
    test_gusty_plan_along_the_edge();
    test_wind_too_strong();
    test_battery_below_reserve();
    test_between_calls();
    test_repeats_at_any_time_scale();
    return failures ? 1 : 0;
}
