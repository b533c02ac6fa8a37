/* The constraint guard (SPEC §10) in front of the simulator: altitude band,
 * geofence, longest move and battery reserve; refused motions never reach
 * the driver.
 * labels: constraints safety */
#include "drone/constraints.h"
#include "drone/scene.h"
#include "drone/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static drone *guarded(const char *json)
{
    static scene s;
    char err[256];
    if (scene_parse(&s, json, strlen(json), err, sizeof err)) {
        fprintf(stderr, "scene: %s\n", err);
        exit(1);
    }
    sim_options o = {.time_scale = 0, .seed = 1, .picture_dir = NULL};
    drone *d = sim_open(&s, &o, err, sizeof err);
    drone *g = constraints_wrap(d, &s.limits, &s.start, err, sizeof err);
    if (!g || g->ops->takeoff(g, err, sizeof err)) {
        fprintf(stderr, "takeoff: %s\n", err);
        exit(1);
    }
    return g;
}

static drone_pose pose_of(drone *d)
{
    drone_state st;
    d->ops->get_state(d, &st);
    return st.pose;
}

static void test_altitude_clamped_at_both_ends(void)
{
    drone *g = guarded("{\"limits\":{\"min_z\":50,\"max_z\":250},\"objects\":[]}");
    char err[256];
    CHECK(g->ops->move(g, DRONE_UP, 400, err, sizeof err) == 0);
    CHECK(fabs(pose_of(g).z - 250) < 1e-6);
    CHECK(g->ops->move(g, DRONE_UP, 30, err, sizeof err) == 0); /* at the ceiling: no-op */
    CHECK(fabs(pose_of(g).z - 250) < 1e-6);
    CHECK(g->ops->move(g, DRONE_DOWN, 400, err, sizeof err) == 0);
    CHECK(fabs(pose_of(g).z - 50) < 1e-6);
    CHECK(g->ops->move(g, DRONE_DOWN, 10, err, sizeof err) == 0);
    CHECK(fabs(pose_of(g).z - 50) < 1e-6);
    constraint_stats st = constraints_get_stats(g);
    CHECK(st.clamped == 4 && st.refused == 0);
    g->ops->destroy(g);
}

static void test_geofence_refuses_and_allows_return(void)
{
    drone *g = guarded("{\"limits\":{\"geofence_radius\":300},\"objects\":[]}");
    char err[256];
    CHECK(g->ops->move(g, DRONE_FORWARD, 250, err, sizeof err) == 0);
    CHECK(g->ops->move(g, DRONE_FORWARD, 100, err, sizeof err) == -1);
    CHECK(constraints_refused(g));
    CHECK(strstr(err, "geofence") != NULL);
    CHECK(fabs(pose_of(g).y - 250) < 1e-6);                          /* did not move */
    CHECK(g->ops->move(g, DRONE_RIGHT, 200, err, sizeof err) == -1); /* hypot(200,250) > 300 */
    CHECK(g->ops->move(g, DRONE_BACK, 400, err, sizeof err) == 0);   /* ends at -150: inside */
    CHECK(!constraints_refused(g));
    CHECK(g->ops->turn(g, 90, err, sizeof err) == 0);
    g->ops->destroy(g);
}

static void test_longest_move(void)
{
    drone *g = guarded("{\"limits\":{\"max_move\":200},\"objects\":[]}");
    char err[256];
    CHECK(g->ops->move(g, DRONE_LEFT, 201, err, sizeof err) == -1);
    CHECK(strstr(err, "longest move") != NULL);
    CHECK(g->ops->move(g, DRONE_LEFT, 200, err, sizeof err) == 0);
    g->ops->destroy(g);
}

static void test_battery_reserve(void)
{
    drone *g = guarded("{\"drone\":{\"battery\":12},\"limits\":{\"battery_reserve\":10},"
                       "\"objects\":[]}");
    char err[256];
    CHECK(g->ops->move(g, DRONE_FORWARD, 50, err, sizeof err) == 0);
    CHECK(g->ops->wait(g, 30000, err, sizeof err) == 0); /* 3 % drained */
    CHECK(g->ops->turn(g, 90, err, sizeof err) == -1);
    CHECK(strstr(err, "battery") != NULL && constraints_refused(g));
    CHECK(g->ops->move(g, DRONE_UP, 50, err, sizeof err) == -1);
    CHECK(g->ops->move(g, DRONE_DOWN, 20, err, sizeof err) == 0); /* descending stays allowed */
    g->ops->destroy(g);
}

static void test_driver_failure_is_not_a_refusal(void)
{
    drone *g = guarded("{\"objects\":[{\"class\":\"wall\",\"x\":0,\"y\":100,\"w\":300,\"d\":10,"
                       "\"h\":300}]}");
    char err[256];
    CHECK(g->ops->move(g, DRONE_FORWARD, 200, err, sizeof err) == -1);
    CHECK(!constraints_refused(g));
    CHECK(strstr(err, "obstacle") != NULL);
    constraint_stats st = constraints_get_stats(g);
    CHECK(st.passed == 2 && st.refused == 0); /* takeoff and the move reached the driver */
    g->ops->destroy(g);
}

int main(void)
{
    test_altitude_clamped_at_both_ends();
    test_geofence_refuses_and_allows_return();
    test_longest_move();
    test_battery_reserve();
    test_driver_failure_is_not_a_refusal();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_constraints: ok\n");
    return failures != 0;
}
