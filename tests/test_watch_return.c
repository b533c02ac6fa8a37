/*
 * The watch's return (host/drone/watch_return.c) against a scripted drone
 * that does what each case needs: flies all of a move or part of it, fails
 * to say where it is, reports no number, refuses to land. Each failure of
 * the return ends with a landing where the drone is (or says the drone may
 * still be up when that fails too), and says why.
 * labels: safety watch
 */
#include "drone/watch.h"
#include "drone/watch_return.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

typedef struct fake {
    drone d;
    watch *w;
    drone_pose pose;
    int battery;
    double gain;      /* share of each move the drone flies (0: a wind too strong) */
    bool state_fails; /* get_state fails */
    int nan_after;    /* after the first move, no number in: 1 x, 2 y, 3 z, 4 yaw */
    bool move_fails;  /* every move fails */
    bool land_fails;  /* the landing fails */
    bool feed;        /* hands each state to the watch (drone_measured) */
    int moves, lands;
} fake;

static drone_state fake_state(const fake *f)
{
    drone_state st;
    memset(&st, 0, sizeof st);
    st.pose = f->pose;
    if (f->moves > 0) {
        double *part[] = {NULL, &st.pose.x, &st.pose.y, &st.pose.z, &st.pose.yaw};
        if (f->nan_after) *part[f->nan_after] = NAN;
    }
    st.battery = f->battery;
    st.known = DRONE_KNOWN_ALL;
    st.flying = f->lands == 0;
    return st;
}

static int get_state(drone *d, drone_state *out)
{
    fake *f = d->impl;
    *out = fake_state(f);
    return f->state_fails ? -1 : 0;
}

static int move(drone *d, drone_dir dir, int cm, char *err, size_t errlen)
{
    fake *f = d->impl;
    if (f->move_fails) return snprintf(err, errlen, "the motors say no"), -1;
    f->moves++;
    drone_pose to = drone_pose_after(&f->pose, dir, cm);
    f->pose.x += (to.x - f->pose.x) * f->gain;
    f->pose.y += (to.y - f->pose.y) * f->gain;
    f->pose.z += (to.z - f->pose.z) * f->gain;
    if (f->feed) {
        drone_state st = fake_state(f);
        watch_measured(f->w, &st);
    }
    return 0;
}

static int land(drone *d, char *err, size_t errlen)
{
    fake *f = d->impl;
    if (f->land_fails) return snprintf(err, errlen, "no answer"), -1;
    f->lands++;
    return 0;
}

static int hover(drone *d)
{
    (void)d;
    return 0;
}

static int pass_time(drone *d, int ms, char *err, size_t errlen)
{
    (void)d, (void)ms, (void)err, (void)errlen;
    return 0;
}

static const drone_ops sim_like = {.name = "fake",
                                   .land = land,
                                   .move = move,
                                   .hover = hover,
                                   .get_state = get_state,
                                   .pass_time = pass_time};
static const drone_ops real_like = {
    .name = "fake", .land = land, .move = move, .hover = hover, .get_state = get_state};

static int refuse_all(void *ud, const drone_pose *from, const drone_pose *to, const char *what,
                      char *err, size_t errlen)
{
    (void)ud, (void)from, (void)to;
    return snprintf(err, errlen, "refused: %s", what), -1;
}

static bool always(void *ud)
{
    (void)ud;
    return true;
}

static const scene_limits LIM = {
    .geofence_radius = 300, .min_z = 30, .max_z = 250, .max_move = 100, .battery_reserve = 10};
static const drone_pose HOME = {120, -80, 100, 30};

/* A fake at (X, Y, Z) with a 30-degree heading, flying all of each move. */
static void fake_at(fake *f, double x, double y, double z, const drone_ops *ops)
{
    memset(f, 0, sizeof *f);
    f->d.ops = ops;
    f->d.impl = f;
    f->pose = (drone_pose){x, y, z, 30};
    f->battery = 50;
    f->gain = 1;
    f->feed = ops == &sim_like;
    f->w = watch_new(&LIM, &HOME);
}

/* Trips the watch with the fake's state and runs the return. */
static watch_end trip_and_return(fake *f, char *why, size_t len)
{
    drone_state st = fake_state(f);
    watch_measured(f->w, &st);
    watch_trip t;
    if (!watch_take(f->w, &t)) {
        snprintf(why, len, "no trip");
        return WATCH_UP;
    }
    return watch_return(&f->d, f->w, &LIM, &HOME, &t, why, len);
}

static double from_home(const fake *f)
{
    return hypot(f->pose.x - HOME.x, f->pose.y - HOME.y);
}

static void test_back_inside(void)
{
    char why[400];
    fake f;
    /* 200 cm out: back 230 cm, in moves of at most the longest move (100 cm) */
    fake_at(&f, HOME.x + 500, HOME.y, 100, &sim_like);
    CHECK(trip_and_return(&f, why, sizeof why) == WATCH_BACK, "%s", why);
    CHECK(from_home(&f) <= 300 - WATCH_REARM_CM && f.lands == 0 && f.moves >= 3,
          "at %.0f cm after %d moves: %s", from_home(&f), f.moves, why);
    watch_free(f.w);
    /* the band, from above: straight down */
    fake_at(&f, HOME.x, HOME.y, 400, &sim_like);
    CHECK(trip_and_return(&f, why, sizeof why) == WATCH_BACK, "%s", why);
    CHECK(f.pose.z <= 250 - WATCH_REARM_CM && f.moves == 1, "z %.0f after %d moves", f.pose.z,
          f.moves);
    watch_free(f.w);
}

static void test_no_gain_lands(void)
{
    char why[400];
    fake f;
    fake_at(&f, HOME.x, HOME.y - 350, 100, &sim_like);
    f.gain = 0;
    CHECK(trip_and_return(&f, why, sizeof why) == WATCH_LANDED_OUT && f.lands == 1 &&
              strstr(why, "gained nothing"),
          "%s", why);
    watch_free(f.w);
    /* a little each time, never enough: tries run out */
    fake_at(&f, HOME.x + 2000, HOME.y, 100, &sim_like);
    f.gain = 0.05;
    CHECK(trip_and_return(&f, why, sizeof why) == WATCH_LANDED_OUT && strstr(why, "12 tries"), "%s",
          why);
    watch_free(f.w);
}

static void test_unknown_state(void)
{
    char why[400];
    fake f;
    /* the watch has no state, and the driver gives none: landed, where
     * unknown */
    fake_at(&f, HOME.x + 350, HOME.y, 100, &real_like);
    f.state_fails = true;
    watch_trip t = {.rule = WATCH_FENCE};
    CHECK(watch_return(&f.d, f.w, &LIM, &HOME, &t, why, sizeof why) == WATCH_LANDED_OUT &&
              f.lands == 1 && strstr(why, "state is unknown") && strstr(why, "; landed") &&
              !strstr(why, "landed at"),
          "%s", why);
    watch_free(f.w);
    /* the watch has one, the driver none: the move cannot be checked */
    fake_at(&f, HOME.x + 350, HOME.y, 100, &real_like);
    f.state_fails = true;
    CHECK(trip_and_return(&f, why, sizeof why) == WATCH_LANDED_OUT && f.moves == 0 &&
              strstr(why, "cannot be read"),
          "%s", why);
    watch_free(f.w);
    /* no number after the first move (facing home: one leg) */
    fake_at(&f, HOME.x + 350, HOME.y, 100, &sim_like);
    f.pose.yaw = 270;
    f.nan_after = 1;
    CHECK(trip_and_return(&f, why, sizeof why) == WATCH_LANDED_OUT && f.moves == 1 &&
              strstr(why, "state is unknown"),
          "%s", why);
    watch_free(f.w);
    /* a drone that hands the watch nothing new, cancelled meanwhile (the
     * abort callback): not waited for; the stale state shows no gain */
    fake_at(&f, HOME.x + 350, HOME.y, 100, &real_like);
    f.d.abort = always;
    CHECK(trip_and_return(&f, why, sizeof why) == WATCH_LANDED_OUT && f.moves >= 2 &&
              strstr(why, "gained nothing"),
          "%s (%d moves)", why, f.moves);
    watch_free(f.w);
}

/* Each part of the pose that is no number: the watch's state (y, z) or the
 * driver's (y, z, yaw, for a drone that hands the watch nothing new). */
static void test_no_number_anywhere(void)
{
    char why[400];
    fake f;
    for (int part = 2; part <= 4; part++) {
        /* the watch's state, read after each move, has no heading */
        fake_at(&f, HOME.x + 350, HOME.y, 100, &sim_like);
        f.pose.yaw = 270, f.nan_after = part;
        watch_end want = part == 4 ? WATCH_BACK : WATCH_LANDED_OUT;
        CHECK(trip_and_return(&f, why, sizeof why) == want &&
                  (part == 4 || strstr(why, "state is unknown")),
              "part %d: %s", part, why);
        watch_free(f.w);
        fake_at(&f, HOME.x + 350, HOME.y, 100, &real_like);
        f.d.abort = always, f.nan_after = part;
        CHECK(trip_and_return(&f, why, sizeof why) == WATCH_LANDED_OUT && f.lands == 1 &&
                  strstr(why, "cannot be read"),
              "part %d, no new state: %s", part, why);
        watch_free(f.w);
    }
    /* the band: the move down cannot be checked */
    fake_at(&f, HOME.x, HOME.y, 400, &real_like);
    f.d.abort = always, f.state_fails = true;
    CHECK(trip_and_return(&f, why, sizeof why) == WATCH_LANDED_OUT && f.moves == 0 &&
              strstr(why, "cannot be read"),
          "%s", why);
    watch_free(f.w);
}

/* A longest move under 1 cm: the return flies in steps of 1 cm. */
static void test_tiny_moves(void)
{
    char why[400];
    fake f;
    fake_at(&f, HOME.x + 320, HOME.y, 100, &sim_like);
    f.pose.yaw = 270;
    scene_limits fine = LIM;
    fine.max_move = 0.5;
    drone_state st = fake_state(&f);
    watch_measured(f.w, &st);
    watch_trip t;
    CHECK(watch_take(f.w, &t));
    CHECK(watch_return(&f.d, f.w, &fine, &HOME, &t, why, sizeof why) == WATCH_BACK && f.moves == 50,
          "%s after %d moves", why, f.moves);
    watch_free(f.w);
}

static void test_refused_or_failed(void)
{
    char why[400];
    fake f;
    fake_at(&f, HOME.x + 350, HOME.y, 100, &sim_like);
    f.d.check_step = refuse_all;
    CHECK(trip_and_return(&f, why, sizeof why) == WATCH_LANDED_OUT && f.moves == 0 &&
              strstr(why, "refused: return:") && strstr(why, "landed at"),
          "%s", why);
    watch_free(f.w);
    fake_at(&f, HOME.x + 350, HOME.y, 100, &sim_like);
    f.land_fails = true, f.gain = 0;
    CHECK(trip_and_return(&f, why, sizeof why) == WATCH_UP && strstr(why, "may still be flying"),
          "%s", why);
    watch_free(f.w);
}

static void test_battery(void)
{
    char why[400];
    fake f;
    fake_at(&f, HOME.x + 150, HOME.y + 100, 100, &sim_like);
    f.battery = 9;
    CHECK(trip_and_return(&f, why, sizeof why) == WATCH_LANDED && f.lands == 1 &&
              from_home(&f) < 1 && strstr(why, "flew toward home"),
          "%s at %.0f cm", why, from_home(&f));
    watch_free(f.w);
    fake_at(&f, HOME.x + 150, HOME.y, 100, &sim_like);
    f.battery = 9, f.move_fails = true;
    CHECK(trip_and_return(&f, why, sizeof why) == WATCH_LANDED && f.lands == 1 &&
              strstr(why, "flying home failed (the motors say no)"),
          "%s", why);
    watch_free(f.w);
    /* where it is unknown: landed there */
    fake_at(&f, HOME.x + 150, HOME.y, 100, &sim_like);
    f.battery = 9, f.state_fails = true;
    CHECK(trip_and_return(&f, why, sizeof why) == WATCH_LANDED && f.moves == 0 && f.lands == 1,
          "%s", why);
    watch_free(f.w);
}

int main(void)
{
    test_back_inside();
    test_no_gain_lands();
    test_unknown_state();
    test_no_number_anywhere();
    test_tiny_moves();
    test_refused_or_failed();
    test_battery();
    if (failures) fprintf(stderr, "test_watch_return: %d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
