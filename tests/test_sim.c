/* The simulator without the sandbox: scene files, kinematics, the camera,
 * noise, occlusion, battery and obstacles. */
#include "drone/scene.h"
#include "drone/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "check.h"

static scene *parse(const char *json, char *err, size_t errlen)
{
    scene *s = malloc(sizeof *s);
    if (scene_parse(s, json, strlen(json), err, errlen)) {
        free(s);
        return NULL;
    }
    return s;
}

static scene *must_parse(const char *json)
{
    char err[256];
    scene *s = parse(json, err, sizeof err);
    if (!s) {
        fprintf(stderr, "scene did not parse: %s\n%s\n", err, json);
        exit(1);
    }
    return s;
}

static drone *open_flying(const scene *s, double time_scale, unsigned long long seed)
{
    char err[256];
    sim_options o = {.time_scale = time_scale, .seed = seed, .picture_dir = NULL};
    drone *d = sim_open(s, &o, err, sizeof err);
    if (!d || d->ops->takeoff(d, err, sizeof err)) {
        fprintf(stderr, "open: %s\n", err);
        exit(1);
    }
    return d;
}

static const vision_object *seen(const vision_object *objs, int n, const char *name)
{
    return vision_find(objs, n, name);
}

static void test_scene_defaults_and_ids(void)
{
    scene *s = must_parse("{\"objects\":[{\"class\":\"apple\",\"x\":0,\"y\":250,\"w\":8,\"d\":8,"
                          "\"h\":9},{\"class\":\"apple\",\"id\":\"apple_1\",\"x\":10,\"y\":250,"
                          "\"w\":8,\"d\":8,\"h\":9},{\"class\":\"person\",\"x\":0,\"y\":-300,"
                          "\"w\":50,\"d\":30,\"h\":175}]}");
    CHECK(s->start.z == 100 && s->start.yaw == 0);
    CHECK(fabs(s->camera.hfov - 82.6) < 1e-9 && s->camera.range == 800);
    CHECK(s->limits.geofence_radius == 600 && s->limits.min_z == 30 && s->limits.max_z == 300);
    CHECK(s->nobjects == 3);
    /* The explicit apple_1 keeps its id; the unnamed apple gets the next. */
    CHECK(strcmp(s->objects[0].id, "apple_2") == 0);
    CHECK(strcmp(s->objects[1].id, "apple_1") == 0);
    CHECK(strcmp(s->objects[2].id, "person_1") == 0);
    free(s);
}

static void expect_error(const char *json, const char *needle)
{
    char err[256] = "";
    scene *s = parse(json, err, sizeof err);
    CHECK(s == NULL);
    if (!strstr(err, needle)) {
        fprintf(stderr, "error '%s' does not mention '%s'\n", err, needle);
        failures++;
    }
    free(s);
}

static void test_bad_scenes_name_the_key(void)
{
    expect_error("{\"objects\":[], \"camera\":{\"hfvo\":80}}", "camera.hfvo: unknown key");
    expect_error("{\"objects\":[], \"limits\":{\"max_z\":\"high\"}}",
                 "limits.max_z: expected a number");
    expect_error("{\"objects\":[{\"class\":\"cup\",\"x\":1,\"y\":2,\"w\":1,\"d\":1}]}",
                 "objects[0].h: missing");
    expect_error("{\"objects\":[{\"x\":1,\"y\":2,\"w\":1,\"d\":1,\"h\":1}]}",
                 "objects[0].class: missing");
    expect_error("{\"objects\":[{\"class\":\"cup\",\"x\":1,\"y\":2,\"w\":-1,\"d\":1,\"h\":1}]}",
                 "objects[0].w: must be greater than 0");
    expect_error("{\"objects\":[], \"planes\":[]}", "planes: unknown key");
    expect_error("{\"drone\":{\"x\":0}}", "objects: missing");
    expect_error("{\"objects\":[], \"noise\":{\"miss_rate\":2}}",
                 "noise.miss_rate: 2 is out of range");
    expect_error("{\"objects\":[], \"limits\":{\"min_z\":200,\"max_z\":100}}", "limits.min_z");
    expect_error("{\"objects\":[\n{\"class\":\"cup\" \"x\":1}]}", "2:");
    expect_error("{\"objects\":[{\"class\":\"cup\",\"id\":\"cup_1\",\"x\":1,\"y\":2,\"w\":1,\"d\":"
                 "1,\"h\":1},"
                 "{\"class\":\"cup\",\"id\":\"cup_1\",\"x\":1,\"y\":2,\"w\":1,\"d\":1,\"h\":1}]}",
                 "objects[1].id: 'cup_1' is already used");
}

static const char *apple_ahead =
    "{\"objects\":[{\"class\":\"apple\",\"x\":0,\"y\":250,\"z\":80,\"w\":8,\"d\":8,\"h\":9,"
    "\"color\":\"red\"},{\"class\":\"person\",\"x\":0,\"y\":-300,\"z\":0,\"w\":50,\"d\":30,"
    "\"h\":175}]}";

static void test_camera_projection(void)
{
    scene *s = must_parse(apple_ahead);
    drone *d = open_flying(s, 0, 1);
    vision_object objs[16];
    int n = sim_observe(d, objs, 16);
    const vision_object *a = seen(objs, n, "apple");
    CHECK(a != NULL);
    CHECK(seen(objs, n, "person") == NULL); /* behind the drone */
    if (a) {
        CHECK(fabs(a->x - 0.5) < 0.02); /* straight ahead */
        CHECK(a->y > 0.5);              /* below the camera (apple top at 89 cm) */
        CHECK(a->w > 0 && a->w < 0.1);
        CHECK(strcmp(a->name, "apple_1") == 0 && strcmp(a->color, "red") == 0);
    }
    /* Turned 30 degrees right, the apple moves to the left of the view. */
    char err[128];
    CHECK(d->ops->turn(d, 30, err, sizeof err) == 0);
    n = sim_observe(d, objs, 16);
    a = seen(objs, n, "apple");
    CHECK(a && a->x < 0.3);
    /* 60 degrees right: outside the 82.6 degree field of view. */
    CHECK(d->ops->turn(d, 30, err, sizeof err) == 0);
    n = sim_observe(d, objs, 16);
    CHECK(seen(objs, n, "apple") == NULL);
    /* Turning to face the person (180) makes it visible. */
    CHECK(d->ops->turn(d, 120, err, sizeof err) == 0);
    n = sim_observe(d, objs, 16);
    CHECK(seen(objs, n, "person_1") != NULL);
    drone_state st;
    d->ops->get_state(d, &st);
    CHECK(fabs(st.pose.yaw - 180) < 1e-6);
    d->ops->destroy(d);
    free(s);
}

static void test_range(void)
{
    scene *s = must_parse("{\"camera\":{\"range\":200},\"objects\":[{\"class\":\"cup\",\"x\":0,"
                          "\"y\":300,\"z\":90,\"w\":10,\"d\":10,\"h\":10}]}");
    drone *d = open_flying(s, 0, 1);
    vision_object objs[4];
    char err[128];
    CHECK(sim_observe(d, objs, 4) == 0);
    CHECK(d->ops->move(d, DRONE_FORWARD, 120, err, sizeof err) == 0);
    CHECK(sim_observe(d, objs, 4) == 1);
    d->ops->destroy(d);
    free(s);
}

static void test_kinematics(void)
{
    scene *s = must_parse("{\"objects\":[]}");
    drone *d = open_flying(s, 0, 1);
    char err[128];
    drone_state st;
    d->ops->get_state(d, &st);
    CHECK(st.flying && st.pose.z == 100);
    double t0 = sim_time_ms(d);
    CHECK(d->ops->turn(d, 90, err, sizeof err) == 0); /* face east (+x) */
    CHECK(fabs(sim_time_ms(d) - t0 - 1000) < 1e-6);   /* 90 deg/s */
    CHECK(d->ops->move(d, DRONE_FORWARD, 100, err, sizeof err) == 0);
    CHECK(fabs(sim_time_ms(d) - t0 - 2000) < 1e-6);               /* 100 cm/s */
    CHECK(d->ops->move(d, DRONE_LEFT, 50, err, sizeof err) == 0); /* left of east is north */
    CHECK(d->ops->move(d, DRONE_UP, 20, err, sizeof err) == 0);
    d->ops->get_state(d, &st);
    CHECK(fabs(st.pose.x - 100) < 1e-6 && fabs(st.pose.y - 50) < 1e-6 &&
          fabs(st.pose.z - 120) < 1e-6);
    CHECK(d->ops->turn(d, -180, err, sizeof err) == 0);
    d->ops->get_state(d, &st);
    CHECK(fabs(st.pose.yaw - 270) < 1e-6);
    CHECK(d->ops->wait(d, 1500, err, sizeof err) == 0);
    CHECK(d->ops->move(d, DRONE_DOWN, 500, err, sizeof err) == -1 && strstr(err, "ground"));
    CHECK(d->ops->land(d, err, sizeof err) == 0);
    d->ops->get_state(d, &st);
    CHECK(!st.flying && st.pose.z == 0);
    CHECK(d->ops->move(d, DRONE_FORWARD, 10, err, sizeof err) == -1 && strstr(err, "not flying"));
    d->ops->destroy(d);
    free(s);
}

static void test_battery_drains(void)
{
    scene *s = must_parse("{\"drone\":{\"battery\":50},\"objects\":[]}");
    drone *d = open_flying(s, 0, 1);
    char err[128];
    drone_state st;
    CHECK(d->ops->wait(d, 100000, err, sizeof err) == 0); /* 100 s of hovering */
    d->ops->get_state(d, &st);
    CHECK(st.battery < 50 && st.battery > 0);
    d->ops->destroy(d);
    free(s);
}

static void test_obstacles_refused(void)
{
    scene *s = must_parse("{\"objects\":[{\"class\":\"wall\",\"x\":0,\"y\":200,\"w\":400,\"d\":"
                          "20,\"h\":300}]}");
    drone *d = open_flying(s, 0, 1);
    char err[160];
    drone_state st;
    CHECK(d->ops->move(d, DRONE_FORWARD, 300, err, sizeof err) == -1);
    CHECK(strstr(err, "wall_1") != NULL);
    d->ops->get_state(d, &st);
    CHECK(st.pose.y == 0);                                            /* refused before moving */
    CHECK(d->ops->move(d, DRONE_FORWARD, 150, err, sizeof err) == 0); /* stops short */
    CHECK(d->ops->move(d, DRONE_FORWARD, 30, err, sizeof err) == -1); /* within the margin */
    CHECK(d->ops->move(d, DRONE_BACK, 100, err, sizeof err) == 0);
    d->ops->destroy(d);
    free(s);
}

static void test_time_scale(void)
{
    scene *s = must_parse("{\"objects\":[]}");
    drone *d = open_flying(s, 20, 1); /* 20x: a 100 cm move takes 50 ms */
    char err[128];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    CHECK(d->ops->move(d, DRONE_FORWARD, 100, err, sizeof err) == 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
    CHECK(ms >= 45); /* never faster than asked (no upper bound: loaded machines) */
    d->ops->destroy(d);
    free(s);
}

static bool abort_now(void *ud)
{
    return *(int *)ud != 0;
}

static void test_abort_stops_a_move(void)
{
    scene *s = must_parse("{\"objects\":[]}");
    drone *d = open_flying(s, 1, 1);
    int stop = 1;
    d->abort = abort_now;
    d->abort_ud = &stop;
    char err[128];
    CHECK(d->ops->move(d, DRONE_FORWARD, 300, err, sizeof err) == -1);
    CHECK(strcmp(err, "cancelled") == 0);
    d->ops->destroy(d);
    free(s);
}

static const char *noisy =
    "{\"noise\":{\"position_cm\":15,\"miss_rate\":0.3},\"objects\":["
    "{\"class\":\"cup\",\"x\":-100,\"y\":300,\"z\":80,\"w\":10,\"d\":10,\"h\":12},"
    "{\"class\":\"cup\",\"x\":50,\"y\":400,\"z\":80,\"w\":10,\"d\":10,\"h\":12},"
    "{\"class\":\"person\",\"x\":100,\"y\":500,\"w\":50,\"d\":30,\"h\":175}]}";

static int observe_many(unsigned long long seed, float *trace, int max)
{
    scene *s = must_parse(noisy);
    drone *d = open_flying(s, 0, seed);
    int k = 0, misses = 0;
    for (int i = 0; i < 50; i++) {
        vision_object objs[8];
        int n = sim_observe(d, objs, 8);
        misses += 3 - n;
        for (int j = 0; j < n && k < max; j++)
            trace[k++] = objs[j].x + objs[j].y * 7;
    }
    d->ops->destroy(d);
    free(s);
    CHECK(misses > 0 && misses < 150);
    return k;
}

static void test_noise_is_seeded(void)
{
    float a[256], b[256], c[256];
    int na = observe_many(7, a, 256), nb = observe_many(7, b, 256), nc = observe_many(8, c, 256);
    CHECK(na == nb && memcmp(a, b, sizeof(float) * na) == 0);
    CHECK(na != nc || memcmp(a, c, sizeof(float) * na) != 0);
    /* With noise the positions vary between frames. */
    bool varies = false;
    for (int i = 1; i < na; i++)
        varies |= a[i] != a[0];
    CHECK(varies);
}

static void test_occlusion(void)
{
    const char *json =
        "{\"camera\":{\"occlusion\":%s},\"objects\":["
        "{\"class\":\"box\",\"x\":0,\"y\":150,\"z\":0,\"w\":100,\"d\":20,\"h\":200},"
        "{\"class\":\"cup\",\"x\":0,\"y\":300,\"z\":90,\"w\":10,\"d\":10,\"h\":12}]}";
    char buf[512];
    for (int on = 0; on < 2; on++) {
        snprintf(buf, sizeof buf, json, on ? "true" : "false");
        scene *s = must_parse(buf);
        drone *d = open_flying(s, 0, 1);
        vision_object objs[4];
        int n = sim_observe(d, objs, 4);
        CHECK(seen(objs, n, "box") != NULL);
        CHECK((seen(objs, n, "cup") != NULL) == !on);
        d->ops->destroy(d);
        free(s);
    }
}

static void test_picture(void)
{
    scene *s = must_parse(apple_ahead);
    char dir[] = "/tmp/aloft-test-sim-XXXXXX";
    if (!mkdtemp(dir)) {
        failures++;
        return;
    }
    sim_options o = {.time_scale = 0, .seed = 1, .picture_dir = dir};
    char err[256], path[512];
    drone *d = sim_open(s, &o, err, sizeof err);
    d->ops->takeoff(d, err, sizeof err);
    CHECK(sim_take_picture(d, path, sizeof path, err, sizeof err) == 0);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size > 100);
    FILE *f = fopen(path, "rb");
    unsigned char sig[8] = {0};
    if (f) {
        CHECK(fread(sig, 1, 8, f) == 8);
        fclose(f);
    }
    CHECK(memcmp(sig, "\x89PNG", 4) == 0);
    remove(path);
    remove(dir);
    d->ops->destroy(d);
    free(s);
}

typedef struct pose_log {
    int n;
    double y[4096];
    double last_y;
} pose_log;

static void log_pose(void *ud, const drone_pose *p)
{
    pose_log *l = ud;
    if (l->n < 4096) l->y[l->n++] = p->y;
    l->last_y = p->y;
}

/* The pose hook follows a motion as it happens: several growing poses
 * during a real-time move, the end pose last; one call at time scale 0. */
static void test_pose_hook(void)
{
    scene *s = must_parse("{\"objects\": []}");
    char err[256];
    for (int k = 0; k < 2; k++) {
        pose_log log = {0};
        /* 100 cm at 100 cm/s, 4x real time: about 250 ms */
        sim_options o = {
            .time_scale = k ? 4 : 0, .seed = 1, .on_pose = log_pose, .on_pose_ud = &log};
        drone *d = sim_open(s, &o, err, sizeof err);
        CHECK(d && d->ops->takeoff(d, err, sizeof err) == 0, "%s", err);
        if (!d) continue;
        log.n = 0;
        CHECK(d->ops->move(d, DRONE_FORWARD, 100, err, sizeof err) == 0, "%s", err);
        CHECK(fabs(log.last_y - 100) < 1e-6, "time scale %d: last pose y %.1f", k ? 4 : 0,
              log.last_y);
        if (k) {
            bool growing = true;
            for (int i = 1; i < log.n; i++)
                growing &= log.y[i] >= log.y[i - 1];
            CHECK(log.n >= 5 && growing && log.y[0] < 100,
                  "real-time move: %d poses, first y %.1f, growing %d", log.n, log.y[0], growing);
        } else {
            CHECK(log.n == 1, "instant move: %d poses", log.n);
        }
        d->ops->destroy(d);
    }
    free(s);
}

int main(void)
{
    test_scene_defaults_and_ids();
    test_pose_hook();
    test_bad_scenes_name_the_key();
    test_camera_projection();
    test_range();
    test_kinematics();
    test_battery_drains();
    test_obstacles_refused();
    test_time_scale();
    test_abort_stops_a_move();
    test_noise_is_seeded();
    test_occlusion();
    test_picture();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_sim: ok\n");
    return failures != 0;
}
