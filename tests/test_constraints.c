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
    /* 2.5 % drained: 9.5 %, shown as 10 %, at the reserve (below it, the
     * watch would fly home and land: test_watch) */
    CHECK(g->ops->wait(g, 25000, err, sizeof err) == 0);
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

/* Asks the guard G about one step from FROM to TO, as a driver does. */
static int step(drone *g, drone_pose from, drone_pose to, char *err, size_t errlen)
{
    drone *inner = constraints_inner(g);
    return inner->check_step(inner->check_step_ud, &from, &to, "step", err, errlen);
}

/* The per-step check (drone.check_step), at, inside and outside each
 * limit, around a home away from the origin. */
static void test_step_check_at_each_boundary(void)
{
    drone *g = guarded("{\"drone\":{\"x\":150,\"y\":-80,\"z\":100,\"yaw\":30},"
                       "\"limits\":{\"geofence_radius\":200,\"min_z\":30,\"max_z\":150},"
                       "\"objects\":[]}");
    char err[256] = "";
    drone_pose home = {150, -80, 100, 30};
    /* 199, 200 and 201 cm from home along the heading (30 degrees). */
    drone_pose in = drone_pose_after(&home, DRONE_FORWARD, 199);
    drone_pose at = drone_pose_after(&home, DRONE_FORWARD, 200);
    drone_pose out = drone_pose_after(&home, DRONE_FORWARD, 201);
    drone_pose far = drone_pose_after(&home, DRONE_FORWARD, 250);
    CHECK(step(g, home, in, err, sizeof err) == 0, "%s", err);
    CHECK(step(g, in, at, err, sizeof err) == 0, "%s", err);
    CHECK(step(g, at, out, err, sizeof err) == -1, "a step to 201 cm passed");
    CHECK(strstr(err, "geofence") && strstr(err, "201 cm") && strstr(err, "'step'"), "%s", err);
    /* Outside already: back toward home passes, farther out does not. */
    CHECK(step(g, far, out, err, sizeof err) == 0, "%s", err);
    CHECK(step(g, out, far, err, sizeof err) == -1, "moved farther out");
    /* The altitude band, both edges. */
    drone_pose z = home;
    z.z = 150;
    drone_pose z1 = z, z0 = z;
    z1.z = 151;
    z0.z = 149;
    CHECK(step(g, z0, z, err, sizeof err) == 0, "%s", err);
    CHECK(step(g, z, z1, err, sizeof err) == -1, "a step to 151 cm passed");
    CHECK(strstr(err, "altitude") && strstr(err, "151"), "%s", err);
    z.z = 30, z1.z = 29, z0.z = 31;
    CHECK(step(g, z0, z, err, sizeof err) == 0, "%s", err);
    CHECK(step(g, z, z1, err, sizeof err) == -1, "a step to 29 cm passed");
    /* Above the band: coming down passes, going higher does not. */
    z.z = 200, z1.z = 180, z0.z = 210;
    CHECK(step(g, z, z1, err, sizeof err) == 0, "%s", err);
    CHECK(step(g, z, z0, err, sizeof err) == -1, "climbed above the band");
    /* A NaN anywhere is refused, never compared. */
    drone_pose nan_pose = home;
    nan_pose.x = NAN;
    CHECK(step(g, home, nan_pose, err, sizeof err) == -1 && strstr(err, "unknown position"), "%s",
          err);
    /* A step refusal alone (a pair may pass in its other order) is no
     * violation; the driver reports the motion's failure. */
    CHECK(!constraints_refused(g) && constraints_get_stats(g).refused == 0, "counted");
    g->ops->destroy(g);
}

int main(void)
{
    test_altitude_clamped_at_both_ends();
    test_geofence_refuses_and_allows_return();
    test_longest_move();
    test_battery_reserve();
    test_driver_failure_is_not_a_refusal();
    test_step_check_at_each_boundary();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_constraints: ok\n");
    return failures != 0;
}
