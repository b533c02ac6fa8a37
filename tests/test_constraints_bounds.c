/* Every limit of the constraint guard (SPEC §10) at, just inside and just
 * outside its boundary, from a home away from the world origin and headings
 * that are not multiples of 90°. The guard sits in front of a scripted
 * driver whose state the test sets exactly, so a boundary is met to the
 * centimetre and the battery to the percent. Each failure names the rule it
 * guards.
 * labels: constraints safety */
#include "drone/constraints.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ---- a driver that records what reaches it ------------------------------ */

typedef struct scripted {
    drone self;
    drone_state st;
    int moves; /* motions that reached the driver */
    drone_dir last_dir;
    int last_cm;
    bool state_fails; /* get_state returns -1 */
} scripted;

static int s_ok(drone *d, char *err, size_t errlen)
{
    (void)d, (void)err, (void)errlen;
    return 0;
}

static int s_move(drone *d, drone_dir dir, int cm, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    scripted *s = d->impl;
    s->moves++;
    s->last_dir = dir;
    s->last_cm = cm;
    return 0;
}

static int s_turn(drone *d, int degrees, char *err, size_t errlen)
{
    (void)degrees, (void)err, (void)errlen;
    scripted *s = d->impl;
    s->moves++;
    return 0;
}

static int s_hover(drone *d)
{
    (void)d;
    return 0;
}

static int s_get_state(drone *d, drone_state *out)
{
    *out = ((scripted *)d->impl)->st;
    return ((scripted *)d->impl)->state_fails ? -1 : 0;
}

static int s_wait(drone *d, int ms, char *err, size_t errlen)
{
    (void)d, (void)ms, (void)err, (void)errlen;
    return 0;
}

static void s_destroy(drone *d)
{
    (void)d; /* the test owns the scripted driver */
}

static const drone_ops scripted_ops = {
    .name = "scripted",
    .connect = s_ok,
    .takeoff = s_ok,
    .land = s_ok,
    .move = s_move,
    .turn = s_turn,
    .hover = s_hover,
    .emergency = s_hover,
    .get_state = s_get_state,
    .wait = s_wait,
    .destroy = s_destroy,
};

/* Home and limits shared by the cases: home at (237, -312), fence 300 cm,
 * band 50..250 cm, longest move 400 cm, battery reserve 10 %. */
static const drone_pose home = {237, -312, 100, 37};

static scene_limits limits(void)
{
    scene_limits l;
    memset(&l, 0, sizeof l);
    l.geofence_radius = 300;
    l.min_z = 50;
    l.max_z = 250;
    l.max_move = 400;
    l.battery_reserve = 10;
    return l;
}

static scripted drv;

/* A guard over the scripted driver, which stands at POSE with BATTERY. */
static drone *guard_at(drone_pose pose, int battery)
{
    memset(&drv, 0, sizeof drv);
    drv.self.ops = &scripted_ops;
    drv.self.impl = &drv;
    drv.st.pose = pose;
    drv.st.battery = battery;
    drv.st.flying = true;
    drv.st.known = DRONE_KNOWN_ALL;
    scene_limits l = limits();
    char err[256];
    drone *g = constraints_wrap(&drv.self, &l, &home, err, sizeof err);
    if (!g) {
        fprintf(stderr, "constraints_wrap: %s\n", err);
        exit(1);
    }
    return g;
}

/* Moves G and reports whether the motion reached the driver. */
static bool passes(drone *g, drone_dir dir, int cm, char *err, size_t errlen)
{
    int before = drv.moves;
    err[0] = '\0';
    int rc = g->ops->move(g, dir, cm, err, errlen);
    bool reached = drv.moves > before;
    CHECK((rc == 0) == reached || (rc == 0 && dir >= DRONE_UP),
          "a move returned %d but %s the driver", rc, reached ? "reached" : "did not reach");
    return rc == 0;
}

static drone_pose at(double x, double y, double z, double yaw)
{
    drone_pose p = {x, y, z, yaw};
    return p;
}

/* ---- geofence --------------------------------------------------------------- */

static void test_geofence_is_centred_on_home(void)
{
    char err[256];
    /* Due north from home: the end is exactly 300 cm from home. */
    drone *g = guard_at(at(home.x, home.y, 100, 0), 50);
    CHECK(passes(g, DRONE_FORWARD, 299, err, sizeof err),
          "geofence: a move ending 299 cm from home inside a 300 cm fence was refused: %s", err);
    CHECK(passes(g, DRONE_FORWARD, 300, err, sizeof err),
          "geofence: a move ending exactly on the 300 cm fence was refused: %s", err);
    CHECK(!passes(g, DRONE_FORWARD, 301, err, sizeof err),
          "geofence must be centred on the start position, not the world origin: a move ending "
          "301 cm from home (237 cm from the origin) passed a 300 cm fence");
    CHECK(strstr(err, "geofence") != NULL, "the refusal names the geofence: %s", err);
    g->ops->destroy(g);

    /* From the world origin (392 cm from home in a 300 cm fence) every move
     * away from home is refused, although it stays near the origin. */
    g = guard_at(at(0, 0, 100, 0), 50);
    CHECK(!passes(g, DRONE_FORWARD, 20, err, sizeof err),
          "geofence must be centred on the start position, not the world origin: a move from the "
          "origin away from home passed");
    g->ops->destroy(g);
}

static void test_geofence_at_an_oblique_heading(void)
{
    char err[256];
    /* Heading 37°, starting at home: along the heading the fence is 300 cm
     * away, whatever the rounding of sin and cos. */
    drone *g = guard_at(home, 50);
    CHECK(passes(g, DRONE_FORWARD, 299, err, sizeof err),
          "geofence: 299 cm along heading 37 from home was refused: %s", err);
    CHECK(!passes(g, DRONE_FORWARD, 301, err, sizeof err),
          "geofence: 301 cm along heading 37 from home passed a 300 cm fence");
    /* Backward and sideways follow the heading too: right of 37° is 127°. */
    CHECK(!passes(g, DRONE_BACK, 301, err, sizeof err), "geofence: backward 301 cm passed");
    CHECK(!passes(g, DRONE_RIGHT, 301, err, sizeof err), "geofence: right 301 cm passed");
    CHECK(!passes(g, DRONE_LEFT, 301, err, sizeof err), "geofence: left 301 cm passed");
    CHECK(passes(g, DRONE_LEFT, 299, err, sizeof err), "geofence: left 299 cm refused: %s", err);
    g->ops->destroy(g);
}

static void test_geofence_directions_follow_the_heading(void)
{
    char err[256];
    /* 250 cm to the right of home as seen along heading 37 (bearing 127),
     * still facing 37: home is to the left. Sideways and backward moves
     * must use the heading's own frame, not a mirrored or unrotated one. */
    double r = 127 * M_PI / 180;
    drone_pose p = at(home.x + 250 * sin(r), home.y + 250 * cos(r), 100, 37);
    drone *g = guard_at(p, 50);
    CHECK(!passes(g, DRONE_RIGHT, 100, err, sizeof err),
          "geofence: right of heading 37 is bearing 127, away from home: 100 cm more ends 350 "
          "cm out of 300");
    CHECK(passes(g, DRONE_LEFT, 100, err, sizeof err),
          "geofence: left of heading 37 is bearing 307, toward home: refused: %s", err);
    CHECK(!passes(g, DRONE_BACK, 200, err, sizeof err),
          "geofence: backward 200 cm at heading 37 from 250 cm right of home ends 320 cm out");
    CHECK(!passes(g, DRONE_FORWARD, 200, err, sizeof err),
          "geofence: forward 200 cm at heading 37 from 250 cm right of home ends 320 cm out");
    CHECK(passes(g, DRONE_FORWARD, 160, err, sizeof err),
          "geofence: forward 160 cm at heading 37 from 250 cm right of home ends 297 cm out: %s",
          err);
    g->ops->destroy(g);
}

static void test_outside_the_fence_only_back_toward_home(void)
{
    char err[256];
    /* 350 cm north-east of home along heading 37, facing away from it. */
    double r = 37 * M_PI / 180;
    drone *g = guard_at(at(home.x + 350 * sin(r), home.y + 350 * cos(r), 100, 37), 50);
    CHECK(passes(g, DRONE_BACK, 20, err, sizeof err),
          "geofence: a drone outside the fence must be allowed back toward home, also by a step "
          "that still ends outside (350 -> 330 cm of 300): %s",
          err);
    CHECK(passes(g, DRONE_BACK, 100, err, sizeof err),
          "geofence: a drone outside the fence must be allowed back toward home: %s", err);
    CHECK(passes(g, DRONE_BACK, 400, err, sizeof err),
          "geofence: from outside, a move through home that ends inside was refused: %s", err);
    CHECK(!passes(g, DRONE_FORWARD, 10, err, sizeof err),
          "geofence: a drone outside the fence moved farther away from home");
    CHECK(!passes(g, DRONE_RIGHT, 10, err, sizeof err),
          "geofence: a drone outside the fence moved along it (farther from home)");
    CHECK(!passes(g, DRONE_LEFT, 10, err, sizeof err),
          "geofence: a drone outside the fence moved along it (farther from home)");
    g->ops->destroy(g);
}

/* ---- altitude band ----------------------------------------------------------- */

static void test_altitude_band_edges(void)
{
    char err[256];
    drone *g = guard_at(at(home.x, home.y, 249, 37), 50);
    CHECK(passes(g, DRONE_UP, 1, err, sizeof err) && drv.last_cm == 1,
          "altitude band: a climb from 249 to exactly max_z 250 was changed or refused: %s", err);
    g->ops->destroy(g);

    g = guard_at(at(home.x, home.y, 249, 37), 50);
    CHECK(passes(g, DRONE_UP, 2, err, sizeof err) && drv.last_dir == DRONE_UP && drv.last_cm == 1,
          "altitude band: a climb from 249 by 2 must be clamped to 1 cm (max_z 250), sent %d",
          drv.last_cm);
    g->ops->destroy(g);

    g = guard_at(at(home.x, home.y, 250, 37), 50);
    int before = drv.moves;
    CHECK(passes(g, DRONE_UP, 1, err, sizeof err) && drv.moves == before,
          "altitude band: at max_z a climb must send nothing");
    g->ops->destroy(g);

    g = guard_at(at(home.x, home.y, 51, 37), 50);
    CHECK(passes(g, DRONE_DOWN, 2, err, sizeof err) && drv.last_cm == 1,
          "altitude band: a descent from 51 by 2 must be clamped to 1 cm (min_z 50), sent %d",
          drv.last_cm);
    g->ops->destroy(g);

    g = guard_at(at(home.x, home.y, 50, 37), 50);
    before = drv.moves;
    CHECK(passes(g, DRONE_DOWN, 1, err, sizeof err) && drv.moves == before,
          "altitude band: at min_z a descent must send nothing");
    g->ops->destroy(g);
}

static void test_outside_the_band_no_move_away_from_it(void)
{
    char err[256];
    /* Above max_z (250): "up" must not turn into a descent to the ceiling,
     * nor climb; below min_z (50): "down" likewise. */
    drone *g = guard_at(at(home.x, home.y, 260, 37), 50);
    int before = drv.moves;
    CHECK(passes(g, DRONE_UP, 5, err, sizeof err) && drv.moves == before,
          "altitude band: above max_z a climb must send nothing (sent %s %d cm)",
          drv.last_dir == DRONE_DOWN ? "down" : "up", drv.last_cm);
    CHECK(passes(g, DRONE_DOWN, 5, err, sizeof err) && drv.last_dir == DRONE_DOWN &&
              drv.last_cm == 10,
          "altitude band: above max_z a descent by 5 is clamped into the band (down 10 to "
          "250): sent %d: %s",
          drv.last_cm, err);
    g->ops->destroy(g);

    g = guard_at(at(home.x, home.y, 40, 37), 50);
    before = drv.moves;
    CHECK(passes(g, DRONE_DOWN, 5, err, sizeof err) && drv.moves == before,
          "altitude band: below min_z a descent must send nothing (sent %s %d cm)",
          drv.last_dir == DRONE_DOWN ? "down" : "up", drv.last_cm);
    CHECK(passes(g, DRONE_UP, 5, err, sizeof err) && drv.last_dir == DRONE_UP && drv.last_cm == 10,
          "altitude band: below min_z a climb by 5 is clamped into the band (up 10 to 50): "
          "sent %d: %s",
          drv.last_cm, err);
    g->ops->destroy(g);
}

/* ---- longest move ------------------------------------------------------------ */

static void test_longest_move_edges(void)
{
    char err[256];
    /* Heading 217; the fence is 300 cm, so the longest move is tried from
     * 200 cm behind home, across it, to 200 cm beyond. */
    double r = 217 * M_PI / 180;
    drone *g = guard_at(at(home.x - 200 * sin(r), home.y - 200 * cos(r), 100, 217), 50);
    CHECK(passes(g, DRONE_FORWARD, 399, err, sizeof err),
          "longest move: 399 cm with a 400 cm limit was refused: %s", err);
    CHECK(passes(g, DRONE_FORWARD, 400, err, sizeof err),
          "longest move: exactly the 400 cm limit was refused: %s", err);
    CHECK(!passes(g, DRONE_FORWARD, 401, err, sizeof err),
          "longest move: 401 cm passed a 400 cm limit");
    CHECK(strstr(err, "longest move") != NULL, "the refusal names the longest move: %s", err);
    CHECK(!passes(g, DRONE_FORWARD, -1, err, sizeof err), "a negative distance passed");
    g->ops->destroy(g);
}

/* ---- battery reserve ------------------------------------------------------- */

static void test_battery_reserve_edges(void)
{
    char err[256];
    drone *g = guard_at(at(home.x, home.y, 100, 37), 11);
    CHECK(passes(g, DRONE_FORWARD, 20, err, sizeof err),
          "battery reserve: 11 %% with a 10 %% reserve must still fly: %s", err);
    g->ops->destroy(g);

    g = guard_at(at(home.x, home.y, 100, 37), 10);
    CHECK(!passes(g, DRONE_FORWARD, 20, err, sizeof err),
          "battery reserve: a move at exactly the 10 %% reserve passed (the reserve is 'at or "
          "below', <=)");
    CHECK(strstr(err, "battery") != NULL, "the refusal names the battery: %s", err);
    CHECK(g->ops->turn(g, 30, err, sizeof err) == -1,
          "battery reserve: a turn at exactly the reserve passed");
    CHECK(!passes(g, DRONE_UP, 20, err, sizeof err),
          "battery reserve: a climb at exactly the reserve passed");
    CHECK(passes(g, DRONE_DOWN, 20, err, sizeof err),
          "battery reserve: descending must stay allowed at the reserve: %s", err);
    CHECK(g->ops->takeoff(g, err, sizeof err) == -1,
          "battery reserve: takeoff at exactly the reserve passed");
    g->ops->destroy(g);

    g = guard_at(at(home.x, home.y, 100, 37), 9);
    CHECK(!passes(g, DRONE_FORWARD, 20, err, sizeof err),
          "battery reserve: a move below the reserve passed");
    g->ops->destroy(g);
}

/* ---- unknown parts of the state -------------------------------------------- */

static void test_unknown_parts_refuse_what_needs_them(void)
{
    char err[256];
    /* The driver says it does not know the battery: nothing but a descent. */
    drone *g = guard_at(at(home.x, home.y, 100, 37), 50);
    drv.st.known = DRONE_KNOWN_ALL & ~(unsigned)DRONE_KNOWN_BATTERY;
    CHECK(!passes(g, DRONE_FORWARD, 20, err, sizeof err) && strstr(err, "unknown battery"),
          "unknown state: a move with the battery unknown passed or did not say why: %s", err);
    CHECK(g->ops->turn(g, 10, err, sizeof err) == -1, "unknown state: a turn passed");
    CHECK(passes(g, DRONE_DOWN, 20, err, sizeof err),
          "unknown state: descending must stay allowed with the battery unknown: %s", err);
    g->ops->destroy(g);

    /* Position unknown: horizontal moves refused, vertical ones not. */
    g = guard_at(at(home.x, home.y, 100, 37), 50);
    drv.st.known = DRONE_KNOWN_ALL & ~(unsigned)DRONE_KNOWN_POSITION;
    CHECK(!passes(g, DRONE_LEFT, 20, err, sizeof err) && strstr(err, "unknown position"),
          "unknown state: a horizontal move with the position unknown passed: %s", err);
    CHECK(passes(g, DRONE_UP, 20, err, sizeof err),
          "unknown state: a climb needs the height, not the position: %s", err);
    g->ops->destroy(g);

    /* Height unknown: vertical moves refused. */
    g = guard_at(at(home.x, home.y, 100, 37), 50);
    drv.st.known = DRONE_KNOWN_ALL & ~(unsigned)DRONE_KNOWN_HEIGHT;
    CHECK(!passes(g, DRONE_UP, 20, err, sizeof err) && strstr(err, "unknown height"),
          "unknown state: a climb with the height unknown passed: %s", err);
    g->ops->destroy(g);
}

static void test_step_check_needs_the_state_too(void)
{
    /* A driver's step (drone.check_step) between two poses: refused while the
     * part it changes is unknown, even if the motion as a whole passed. */
    char err[256] = "";
    drone *g = guard_at(at(home.x, home.y, 100, 37), 50);
    CHECK(drv.self.check_step != NULL, "the guard installs its step check in the driver");
    drone_pose from = at(home.x, home.y, 100, 37), ahead = at(home.x + 12, home.y + 16, 100, 37),
               above = at(home.x, home.y, 120, 37);
    CHECK(drv.self.check_step(drv.self.check_step_ud, &from, &ahead, "forward 20", err,
                              sizeof err) == 0,
          "step check: a step inside every limit was refused: %s", err);
    drv.st.known = DRONE_KNOWN_ALL & ~(unsigned)DRONE_KNOWN_POSITION;
    CHECK(drv.self.check_step(drv.self.check_step_ud, &from, &ahead, "forward 20", err,
                              sizeof err) == -1 &&
              strstr(err, "unknown position"),
          "step check: a horizontal step with the position unknown passed: %s", err);
    CHECK(drv.self.check_step(drv.self.check_step_ud, &from, &above, "up 20", err, sizeof err) == 0,
          "step check: a vertical step needs only the height: %s", err);
    drv.st.known = DRONE_KNOWN_ALL & ~(unsigned)DRONE_KNOWN_HEIGHT;
    CHECK(drv.self.check_step(drv.self.check_step_ud, &from, &above, "up 20", err, sizeof err) ==
                  -1 &&
              strstr(err, "unknown height"),
          "step check: a vertical step with the height unknown passed: %s", err);
    g->ops->destroy(g);
}

static void test_nonfinite_state_counts_as_unknown(void)
{
    /* A driver that claims to know everything but reports NaN, infinity or
     * an impossible battery: the guard never compares with such a value. */
    char err[256];
    drone *g = guard_at(at(NAN, home.y, 100, 37), 50);
    CHECK(!passes(g, DRONE_FORWARD, 20, err, sizeof err) && strstr(err, "unknown position"),
          "NaN x: a move passed (every comparison with NaN is false): %s", err);
    g->ops->destroy(g);
    g = guard_at(at(home.x, home.y, 100, INFINITY), 50);
    CHECK(!passes(g, DRONE_FORWARD, 20, err, sizeof err) && strstr(err, "unknown position"),
          "infinite yaw: a move passed: %s", err);
    g->ops->destroy(g);
    g = guard_at(at(home.x, home.y, NAN, 37), 50);
    CHECK(!passes(g, DRONE_UP, 20, err, sizeof err) && strstr(err, "unknown height"),
          "NaN height: a climb passed: %s", err);
    g->ops->destroy(g);
    const int bad_battery[] = {-1, 101, -2147483647 - 1};
    for (size_t i = 0; i < sizeof bad_battery / sizeof bad_battery[0]; i++) {
        g = guard_at(at(home.x, home.y, 100, 37), bad_battery[i]);
        CHECK(!passes(g, DRONE_FORWARD, 20, err, sizeof err) && strstr(err, "unknown battery"),
              "battery %d%%: a move passed: %s", bad_battery[i], err);
        g->ops->destroy(g);
    }
    g = guard_at(at(home.x, home.y, 100, 37), 100);
    CHECK(passes(g, DRONE_FORWARD, 20, err, sizeof err), "battery 100%%: refused: %s", err);
    g->ops->destroy(g);
    g = guard_at(at(home.x, home.y, 100, 37), 0);
    CHECK(!passes(g, DRONE_FORWARD, 20, err, sizeof err) && strstr(err, "reserve"),
          "battery 0%%: want the reserve's refusal: %s", err);
    g->ops->destroy(g);
}

/* A state the driver cannot read refuses every checked motion and step;
 * a NaN y is an unknown position like a NaN x; a step whose own ends are
 * not finite is refused whatever the state says. */
static void test_unreadable_state_and_nonfinite_steps(void)
{
    char err[256];
    drone *g = guard_at(at(home.x, home.y, 100, 37), 50);
    drv.state_fails = true;
    CHECK(!passes(g, DRONE_FORWARD, 20, err, sizeof err) &&
              strcmp(err, "cannot read the drone's state") == 0,
          "unreadable state: a move passed: %s", err);
    CHECK(g->ops->takeoff(g, err, sizeof err) == -1 && strstr(err, "cannot read"),
          "unreadable state: a takeoff passed: %s", err);
    drone_pose from = home, to = at(home.x + 10, home.y, 100, 37);
    CHECK(drv.self.check_step(drv.self.check_step_ud, &from, &to, "forward 20", err, sizeof err) ==
                  -1 &&
              strstr(err, "cannot read"),
          "unreadable state: a step passed: %s", err);
    g->ops->destroy(g);

    g = guard_at(at(home.x, NAN, 100, 37), 50);
    CHECK(!passes(g, DRONE_FORWARD, 20, err, sizeof err) && strstr(err, "unknown position"),
          "NaN y: a move passed: %s", err);
    g->ops->destroy(g);

    g = guard_at(home, 50);
    for (int i = 0; i < 6; i++) {
        drone_pose a = home, b = at(home.x + 10, home.y + 10, 110, 37);
        double *coord[] = {&a.x, &a.y, &a.z, &b.x, &b.y, &b.z};
        *coord[i] = NAN;
        CHECK(drv.self.check_step(drv.self.check_step_ud, &a, &b, "forward 20", err, sizeof err) ==
                      -1 &&
                  strstr(err, "unknown position"),
              "step check: a step with a NaN end (coordinate %d) passed: %s", i, err);
    }
    g->ops->destroy(g);
}

/* A value that is none of the six directions never reaches the driver. */
static void test_unknown_direction_is_refused(void)
{
    char err[256];
    drone *g = guard_at(home, 50);
    const int bad[] = {DRONE_DOWN + 1, -1, 99};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(!passes(g, (drone_dir)bad[i], 20, err, sizeof err), "direction %d: passed", bad[i]);
        char want[64];
        snprintf(want, sizeof want, "direction: %d is not a direction", bad[i]);
        CHECK(strcmp(err, want) == 0, "direction %d: '%s'", bad[i], err);
    }
    CHECK(constraints_refused(g) && constraints_get_stats(g).refused == 3);
    g->ops->destroy(g);
}

/* The guard's queries on a drone that is not a guard. */
static void test_queries_on_other_drones(void)
{
    scripted plain = {0};
    plain.self.ops = &scripted_ops;
    CHECK(!constraints_is(NULL) && !constraints_is(&plain.self));
    CHECK(!constraints_refused(&plain.self));
    CHECK(constraints_get_stats(&plain.self).checked == 0 &&
          constraints_get_stats(&plain.self).refused == 0);
    CHECK(constraints_inner(&plain.self) == NULL);
    drone *g = guard_at(home, 50);
    CHECK(constraints_is(g) && constraints_inner(g) == &drv.self);
    g->ops->destroy(g);
}

int main(void)
{
    test_geofence_is_centred_on_home();
    test_geofence_at_an_oblique_heading();
    test_geofence_directions_follow_the_heading();
    test_outside_the_fence_only_back_toward_home();
    test_outside_the_band_no_move_away_from_it();
    test_altitude_band_edges();
    test_longest_move_edges();
    test_battery_reserve_edges();
    test_unknown_parts_refuse_what_needs_them();
    test_nonfinite_state_counts_as_unknown();
    test_unreadable_state_and_nonfinite_steps();
    test_unknown_direction_is_refused();
    test_queries_on_other_drones();
    test_step_check_needs_the_state_too();
    printf("%s\n", failures ? "FAIL" : "ok");
    return failures ? 1 : 0;
}
