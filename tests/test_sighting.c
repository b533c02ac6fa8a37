/*
 * The object memory fed by missions: positions estimated from camera views
 * (mission/sighting.h) against the simulator's ground truth, and a
 * recorded mission's sightings merged into the store across missions.
 */
#include "drone/sim.h"
#include "loader/loader.h"
#include "mission/record.h"
#include "mission/runner.h"
#include "mission/sighting.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Objects whose sizes are their classes' usual ones, around the start. */
static const char *scene_json(double yaw, char *out, size_t outlen)
{
    snprintf(out, outlen,
             "{\"drone\": {\"x\": 0, \"y\": 0, \"z\": 100, \"yaw\": %g},"
             " \"objects\": ["
             "{\"class\": \"person\", \"x\": 0, \"y\": 400, \"z\": 0, \"w\": 50, \"d\": 30, "
             "\"h\": 170},"
             "{\"class\": \"chair\", \"x\": 250, \"y\": 250, \"z\": 0, \"w\": 45, \"d\": 45, "
             "\"h\": 90},"
             "{\"class\": \"apple\", \"x\": 150, \"y\": -150, \"z\": 70, \"w\": 8, \"d\": 8, "
             "\"h\": 8},"
             "{\"class\": \"banana\", \"x\": -200, \"y\": 0, \"z\": 80, \"w\": 8, \"d\": 20, "
             "\"h\": 6}]}",
             yaw);
    return out;
}

static void test_positions_from_views(void)
{
    int located = 0;
    for (int yaw = 0; yaw < 360; yaw += 15) {
        char json[2048], err[256];
        scene sc;
        scene_json(yaw, json, sizeof json);
        CHECK(scene_parse(&sc, json, strlen(json), err, sizeof err) == 0, "%s", err);
        sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = NULL};
        drone *d = sim_open(&sc, &so, err, sizeof err);
        CHECK(d && d->ops->takeoff(d, err, sizeof err) == 0, "%s", err);
        if (!d) return;
        drone_pose pose = {0, 0, 100, yaw};
        vision_object objs[VISION_MAX_OBJECTS];
        int n = sim_observe(d, objs, VISION_MAX_OBJECTS);
        for (int i = 0; i < n; i++) {
            const scene_object *truth = NULL;
            for (int k = 0; k < sc.nobjects; k++)
                if (strcmp(sc.objects[k].id, objs[i].name) == 0) truth = &sc.objects[k];
            double pos[3];
            if (!truth || !sighting_locate(&pose, &sc.camera, &objs[i], pos)) continue;
            located++;
            double tx = truth->x, ty = truth->y, tz = truth->z + truth->h / 2;
            double dist = hypot(tx, ty), est = hypot(pos[0], pos[1]);
            /* The bearing is what the box centre says: within a few degrees. */
            double bearing = atan2(tx, ty) * 180 / M_PI, got = atan2(pos[0], pos[1]) * 180 / M_PI;
            double off = fabs(fmod(bearing - got + 540, 360) - 180);
            CHECK(off < 4, "yaw %d, %s: bearing %.1f, estimated %.1f", yaw, objs[i].name, bearing,
                  got);
            /* The distance is a guess from the size: within a third. */
            CHECK(fabs(est - dist) < dist / 3, "yaw %d, %s: distance %.0f, estimated %.0f", yaw,
                  objs[i].name, dist, est);
            CHECK(fabs(pos[2] - tz) < 40, "yaw %d, %s: height %.0f, estimated %.0f", yaw,
                  objs[i].name, tz, pos[2]);
        }
        d->ops->destroy(d);
    }
    /* Each object is in full view from several headings. */
    CHECK(located >= 8, "only %d sightings located", located);
}

static void test_cut_off_boxes_are_left_out(void)
{
    scene_camera cam = {.hfov = 82.6, .vfov = 62, .width = 960, .height = 720, .range = 1000};
    drone_pose pose = {0, 0, 100, 0};
    vision_object o = {.name = "person_1",
                       .cls = "person",
                       .x = 0.05f,
                       .y = 0.5f,
                       .w = 0.1f,
                       .h = 0.5f,
                       .conf = 0.9f};
    double pos[3];
    CHECK(!sighting_locate(&pose, &cam, &o, pos), "a box at the left border was located");
    o.x = 0.5f;
    o.h = 1.0f;
    CHECK(!sighting_locate(&pose, &cam, &o, pos), "a box filling the height was located");
    o.h = 0.5f;
    CHECK(sighting_locate(&pose, &cam, &o, pos) && pos[1] > 0 && fabs(pos[0]) < 1,
          "a centred box: (%.0f, %.0f)", pos[0], pos[1]);
    o.h = 0;
    CHECK(!sighting_locate(&pose, &cam, &o, pos), "an empty box was located");
}

/* A recorded mission of the apple task: the apple is remembered near where
 * it is, and a second mission adds sightings to the same objects. */
static void test_missions_feed_the_object_memory(const char *src)
{
    char dir[] = "/tmp/aloft-test-sighting-XXXXXX";
    if (!mkdtemp(dir)) return;
    char db[128], scene_path[600], err[512];
    snprintf(db, sizeof db, "%s/m.db", dir);
    snprintf(scene_path, sizeof scene_path, "%s/examples/benchmark/08-find-apple/scene.json", src);
    skill_registry *reg = loader_standard(NULL, 0, NULL, NULL);
    const char *plan = "?s('apple'){g('apple')}";
    int64_t sightings[2] = {0, 0};
    int nobjects[2] = {0, 0};
    for (int run = 0; run < 2; run++) {
        mission_world w;
        sim_options so = {.time_scale = 0, .seed = 1, .picture_dir = dir};
        if (mission_world_sim(&w, scene_path, &so, err, sizeof err)) {
            CHECK(false, "%s", err);
            break;
        }
        store_mission_info info = {.drone = "sim", .seed = 1};
        mission_record *rec = mission_record_open(db, &info, &w, err, sizeof err);
        CHECK(rec, "%s", err);
        if (!rec) break;
        runner_outcome out;
        runner_opts o = {.reg = reg,
                         .world = &w,
                         .plan = plan,
                         .plan_len = strlen(plan),
                         .outcome = &out,
                         .record = rec,
                         .t0_ms = mission_record_t0_ms(rec)};
        cJSON *doc = runner_run(&o);
        CHECK(cJSON_IsTrue(cJSON_GetObjectItem(doc, "ok")), "mission %d failed", run + 1);
        mission_world_close(&w, true);
        CHECK(mission_record_close(rec, runner_store_status(out.status), NULL, NULL, err,
                                   sizeof err) == 0,
              "%s", err);
        cJSON_Delete(doc);

        store *s = store_open(db, STORE_OPEN_EXISTING, err, sizeof err);
        CHECK(s, "%s", err);
        if (!s) break;
        store_object objs[16];
        nobjects[run] = store_objects(s, NULL, objs, 16, err, sizeof err);
        const store_object *apple = NULL;
        for (int i = 0; i < nobjects[run]; i++)
            if (strcmp(objs[i].cls, "apple") == 0) apple = &objs[i];
        CHECK(apple, "no apple remembered after mission %d", run + 1);
        if (apple) {
            /* The scene's apple stands at (180, -180), 250 cm from the start. */
            double miss = hypot(apple->x - 180, apple->y - 180 * -1);
            CHECK(miss < 100, "apple remembered at (%.0f, %.0f), %.0f cm off", apple->x, apple->y,
                  miss);
            CHECK(apple->last_mission == run + 1 && apple->conf > 0.3,
                  "apple: last mission %lld, conf %.2f", (long long)apple->last_mission,
                  apple->conf);
            sightings[run] = apple->sightings;
        }
        store_close(s);
    }
    CHECK(nobjects[0] > 0 && nobjects[1] == nobjects[0],
          "%d objects after one mission, %d after two (the same objects should merge)", nobjects[0],
          nobjects[1]);
    CHECK(sightings[0] >= 1 && sightings[1] > sightings[0], "apple sightings %lld then %lld",
          (long long)sightings[0], (long long)sightings[1]);
    registry_free(reg);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
    const char *src = getenv("SRC") ? getenv("SRC") : ".";
    test_positions_from_views();
    test_cut_off_boxes_are_left_out();
    test_missions_feed_the_object_memory(src);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
