/* Wind in the simulator (SPEC §3): it carries the airborne drone whenever
 * simulated time passes (moves, turns, delays), toward its compass heading,
 * with seeded gusts; the same scene and seed give the same track at any time
 * scale; a landed drone stays put. */
#include "drone/scene.h"
#include "drone/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

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

static drone *open_sim(const scene *s, double time_scale, unsigned long long seed, bool fly)
{
    char err[256];
    sim_options o = {.time_scale = time_scale, .seed = seed, .picture_dir = NULL};
    drone *d = sim_open(s, &o, err, sizeof err);
    if (!d || (fly && d->ops->takeoff(d, err, sizeof err))) {
        fprintf(stderr, "open: %s\n", err);
        exit(1);
    }
    return d;
}

static drone_pose pose_of(drone *d)
{
    drone_state st;
    d->ops->get_state(d, &st);
    return st.pose;
}

#define NEAR(a, b) (fabs((a) - (b)) < 1e-6)

static void test_scene_wind_keys(void)
{
    scene *s = must_parse("{\"wind\":{\"speed\":30,\"heading\":225,\"gust\":5},\"objects\":[]}");
    CHECK(s->wind.speed == 30 && s->wind.heading == 225 && s->wind.gust == 5);
    s = must_parse("{\"objects\":[]}");
    CHECK(s->wind.speed == 0 && s->wind.gust == 0, "no wind by default");
    const char *bad[] = {
        "{\"wind\":{\"speed\":-1},\"objects\":[]}",
        "{\"wind\":{\"gust\":-0.5},\"objects\":[]}",
        "{\"wind\":{\"direction\":90},\"objects\":[]}",
        "{\"wind\":{\"speed\":\"strong\"},\"objects\":[]}",
        "{\"wind\":5,\"objects\":[]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        scene t;
        char err[256] = "";
        CHECK(scene_parse(&t, bad[i], strlen(bad[i]), err, sizeof err) == -1 &&
                  strstr(err, "wind") != NULL,
              "%s: want an error naming wind, got '%s'", bad[i], err);
    }
}

static void test_steady_wind_carries_a_hovering_drone(void)
{
    /* 20 cm/s toward the east, start away from the origin. */
    scene *s = must_parse("{\"drone\":{\"x\":-140,\"y\":75,\"z\":120,\"yaw\":30},"
                          "\"wind\":{\"speed\":20,\"heading\":90},\"objects\":[]}");
    drone *d = open_sim(s, 0, 7, true);
    char err[256];
    CHECK(d->ops->wait(d, 5000, err, sizeof err) == 0);
    drone_pose p = pose_of(d);
    CHECK(NEAR(p.x, -40) && NEAR(p.y, 75) && NEAR(p.z, 120) && NEAR(p.yaw, 30),
          "5 s of 20 cm/s east wind: want (-40, 75, 120) yaw 30, got (%g, %g, %g) yaw %g", p.x, p.y,
          p.z, p.yaw);

    /* A 90° turn takes 1 s at 90°/s: 20 cm more. */
    CHECK(d->ops->turn(d, 60, err, sizeof err) == 0);
    p = pose_of(d);
    CHECK(NEAR(p.x, -40 + 20 * 60.0 / 90) && NEAR(p.yaw, 90), "turning: got (%g, %g) yaw %g", p.x,
          p.y, p.yaw);

    /* Forward 100 cm at heading 90 (east) takes 1 s: 100 + 20 cm east. */
    double x0 = p.x;
    CHECK(d->ops->move(d, DRONE_FORWARD, 100, err, sizeof err) == 0);
    p = pose_of(d);
    CHECK(NEAR(p.x, x0 + 120) && NEAR(p.y, 75), "moving with the wind: got (%g, %g)", p.x, p.y);

    /* A climb of 50 cm (0.5 s): the wind moves it 10 cm east, not up. */
    CHECK(d->ops->move(d, DRONE_UP, 50, err, sizeof err) == 0);
    p = pose_of(d);
    CHECK(NEAR(p.x, x0 + 130) && NEAR(p.z, 170), "climbing: got (%g, %g, %g)", p.x, p.y, p.z);
    d->ops->destroy(d);
}

static void test_wind_heading_is_a_compass_heading(void)
{
    /* Toward 0 = north (+y), 180 = south, 270 = west. */
    const struct {
        double heading, dx, dy;
    } cases[] = {{0, 0, 50}, {180, 0, -50}, {270, -50, 0}, {45, 50 / M_SQRT2, 50 / M_SQRT2}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[256];
        snprintf(json, sizeof json,
                 "{\"drone\":{\"x\":33,\"y\":-21},\"wind\":{\"speed\":10,\"heading\":%g},"
                 "\"objects\":[]}",
                 cases[i].heading);
        drone *d = open_sim(must_parse(json), 0, 1, true);
        char err[256];
        d->ops->wait(d, 5000, err, sizeof err);
        drone_pose p = pose_of(d);
        CHECK(NEAR(p.x, 33 + cases[i].dx) && NEAR(p.y, -21 + cases[i].dy),
              "wind toward %g: want drift (%g, %g), got (%g, %g)", cases[i].heading, cases[i].dx,
              cases[i].dy, p.x - 33, p.y + 21);
        d->ops->destroy(d);
    }
}

static void test_landed_drone_is_not_carried(void)
{
    scene *s = must_parse("{\"wind\":{\"speed\":50,\"heading\":10,\"gust\":20},\"objects\":[]}");
    drone *d = open_sim(s, 0, 3, false);
    char err[256];
    d->ops->wait(d, 3000, err, sizeof err);
    drone_pose p = pose_of(d);
    CHECK(p.x == 0 && p.y == 0, "a landed drone moved to (%g, %g)", p.x, p.y);
    d->ops->destroy(d);
}

/* A fixed sequence of motions in gusty wind; the final pose. */
static drone_pose gusty_flight(double time_scale, unsigned long long seed)
{
    scene *s = must_parse("{\"drone\":{\"x\":12,\"y\":-7,\"yaw\":200,\"speed\":1000,"
                          "\"yaw_rate\":900},\"wind\":{\"speed\":15,\"heading\":300,\"gust\":25},"
                          "\"objects\":[]}");
    drone *d = open_sim(s, time_scale, seed, true);
    char err[256];
    d->ops->wait(d, 1300, err, sizeof err);
    d->ops->move(d, DRONE_FORWARD, 700, err, sizeof err);
    d->ops->turn(d, 450, err, sizeof err);
    d->ops->wait(d, 2250, err, sizeof err);
    d->ops->move(d, DRONE_LEFT, 333, err, sizeof err);
    drone_pose p = pose_of(d);
    d->ops->destroy(d);
    return p;
}

static void test_gusts_repeat_per_seed_at_any_time_scale(void)
{
    drone_pose a = gusty_flight(0, 42), b = gusty_flight(0, 42);
    CHECK(a.x == b.x && a.y == b.y, "same seed, different track: (%g, %g) vs (%g, %g)", a.x, a.y,
          b.x, b.y);
    /* In real time (x20: about 0.3 s), the motion is animated in many small
     * steps; the track must not depend on them. */
    drone_pose c = gusty_flight(20, 42);
    CHECK(fabs(a.x - c.x) < 1e-6 && fabs(a.y - c.y) < 1e-6,
          "time scale changed the track: (%g, %g) instant vs (%g, %g) at x20", a.x, a.y, c.x, c.y);
    drone_pose e = gusty_flight(0, 43);
    CHECK(fabs(a.x - e.x) > 1e-3 || fabs(a.y - e.y) > 1e-3,
          "another seed gave the same gusts: (%g, %g)", e.x, e.y);
}

static void test_gusts_change_every_second(void)
{
    /* Gust only (no mean wind): successive seconds drift differently, and
     * over many seconds the mean drift per second stays near zero while its
     * spread is about the gust's standard deviation. */
    scene *s = must_parse("{\"wind\":{\"speed\":0,\"gust\":10},\"objects\":[]}");
    drone *d = open_sim(s, 0, 11, true);
    char err[256];
    int n = 400;
    double sum_x = 0, sum_y = 0, sq = 0, prev_x = 0, prev_y = 0;
    int same = 0;
    for (int i = 0; i < n; i++) {
        drone_pose before = pose_of(d);
        d->ops->wait(d, 1000, err, sizeof err);
        drone_pose after = pose_of(d);
        double dx = after.x - before.x, dy = after.y - before.y;
        if (i > 0 && dx == prev_x && dy == prev_y) same++;
        prev_x = dx, prev_y = dy;
        sum_x += dx, sum_y += dy, sq += dx * dx + dy * dy;
    }
    double mean_x = sum_x / n, mean_y = sum_y / n, sd = sqrt(sq / (2.0 * n));
    CHECK(same == 0, "%d seconds repeated the previous second's gust", same);
    CHECK(fabs(mean_x) < 2 && fabs(mean_y) < 2, "gusts are biased: mean (%g, %g) cm/s", mean_x,
          mean_y);
    CHECK(sd > 8 && sd < 12, "gust spread %g cm/s, want about 10", sd);
    d->ops->destroy(d);
}

int main(void)
{
    test_scene_wind_keys();
    test_steady_wind_carries_a_hovering_drone();
    test_wind_heading_is_a_compass_heading();
    test_landed_drone_is_not_carried();
    test_gusts_repeat_per_seed_at_any_time_scale();
    test_gusts_change_every_second();
    printf("%s\n", failures ? "FAIL" : "ok");
    return failures ? 1 : 0;
}
