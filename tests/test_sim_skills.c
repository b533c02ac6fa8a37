/* Every built-in skill's semantics against the simulator, through the real
 * sandbox and skill dispatch (Lua scripts; MiniSpec plans are covered by
 * test_run.sh and test_benchmark_suite.sh).
 * labels: constraints */
#include "clock.h"
#include "drone/constraints.h"
#include "mission/runner.h"
#include "loader/loader.h"
#include "skills/registry.h"
#include "skills/skills.h"

#include <lauxlib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static skill_registry *reg;

/* One mission: a world from scene JSON, a sandbox with every skill bound. */
typedef struct mission {
    mission_world world;
    sandbox *sb;
    skill_ctx ctx;
    char err[1024];
    char path[64];
} mission;

static void mission_open_probe(mission *m, const char *scene_json, unsigned long long seed,
                               int (*probe)(void *, const char *, char *, size_t, char *, size_t));

static void mission_open(mission *m, const char *scene_json, unsigned long long seed)
{
    mission_open_probe(m, scene_json, seed, NULL);
}

static void mission_open_probe(mission *m, const char *scene_json, unsigned long long seed,
                               int (*probe)(void *, const char *, char *, size_t, char *, size_t))
{
    memset(m, 0, sizeof *m);
    snprintf(m->path, sizeof m->path, "/tmp/aloft-test-scene-%d.json", (int)getpid());
    FILE *f = fopen(m->path, "w");
    fputs(scene_json, f);
    fclose(f);
    sim_options so = {.time_scale = 0, .seed = seed, .picture_dir = NULL};
    if (mission_world_sim(&m->world, m->path, &so, m->err, sizeof m->err)) {
        fprintf(stderr, "world: %s\n", m->err);
        exit(1);
    }
    remove(m->path);
    sandbox_limits lim = {0, 0, 0, 0};
    m->sb = sandbox_new(&lim, m->err, sizeof m->err);
    m->ctx.reg = reg;
    m->ctx.sb = m->sb;
    m->ctx.probe = probe;
    m->ctx.probe_ud = m;
    mission_world_attach(&m->world, &m->ctx);
    if (skills_bind(&m->ctx, m->err, sizeof m->err)) {
        fprintf(stderr, "bind: %s\n", m->err);
        exit(1);
    }
}

/* Runs CODE; returns its result as a string in OUT ("true", "0.5", ...). */
static sandbox_status mission_run(mission *m, const char *code, char *out, size_t outlen)
{
    lua_State *L = sandbox_lua(m->sb);
    sandbox_status st = sandbox_load(m->sb, code, strlen(code), "=test", m->err, sizeof m->err);
    if (st == SANDBOX_OK) st = sandbox_call(m->sb, 0, 1, m->err, sizeof m->err);
    if (st != SANDBOX_OK) {
        if (out) snprintf(out, outlen, "%s", m->err);
        return st;
    }
    if (out) {
        snprintf(out, outlen, "%s", luaL_tolstring(L, -1, NULL));
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return st;
}

static void mission_close(mission *m)
{
    skills_release(&m->ctx);
    sandbox_free(m->sb);
    mission_world_close(&m->world, true);
}

static bool result_is(mission *m, const char *code, const char *want)
{
    char out[1024];
    mission_run(m, code, out, sizeof out);
    if (strcmp(out, want) == 0) return true;
    fprintf(stderr, "  %s\n  gave '%s', want '%s'\n", code, out, want);
    return false;
}

static const char *room =
    "{\"objects\":["
    "{\"class\":\"apple\",\"x\":0,\"y\":250,\"z\":80,\"w\":8,\"d\":8,\"h\":9,\"color\":\"red\"},"
    "{\"class\":\"apple\",\"x\":60,\"y\":250,\"z\":80,\"w\":10,\"d\":10,\"h\":10},"
    "{\"class\":\"person\",\"x\":80,\"y\":-300,\"w\":50,\"d\":30,\"h\":175},"
    "{\"class\":\"chair\",\"x\":-300,\"y\":-20,\"w\":50,\"d\":50,\"h\":90}]}";

static void test_vision_skills(void)
{
    mission m;
    mission_open(&m, room, 1);
    CHECK(result_is(&m, "return is_visible('apple')", "true"));
    CHECK(result_is(&m, "return is_visible('apple_1')", "true"));
    CHECK(result_is(&m, "return is_visible('person')", "false")); /* behind */
    CHECK(result_is(&m, "return object_x('person')", "false"));
    CHECK(result_is(&m, "return object_width('chair_1')", "false"));
    CHECK(result_is(&m, "return is_visible('banana')", "false"));
    /* apple_1 is straight ahead, apple_2 to its right. */
    CHECK(result_is(&m, "return math.abs(object_x('apple_1') - 0.5) < 0.01", "true"));
    CHECK(result_is(&m, "return object_x('apple_2') > 0.55", "true"));
    CHECK(result_is(&m, "return object_y('apple_1') > 0.5 and object_y('apple_1') < 1", "true"));
    /* A class names its largest instance: apple_2 is bigger in view. */
    CHECK(result_is(&m, "return object_x('apple') == object_x('apple_2')", "true"));
    CHECK(result_is(&m, "return object_height('apple_1') > 0 and object_width('apple_1') < 0.1",
                    "true"));
    mission_close(&m);
}

static void test_motion_skills(void)
{
    mission m;
    mission_open(&m, "{\"objects\":[]}", 1);
    CHECK(result_is(&m, "return move_forward(100)", "true"));
    CHECK(result_is(&m, "return turn_cw(90)", "true"));
    CHECK(result_is(&m, "return move_right(50)", "true")); /* facing east: right is south */
    CHECK(result_is(&m, "return move_left(20)", "true"));
    CHECK(result_is(&m, "return move_backward(30)", "true"));
    CHECK(result_is(&m, "return turn_ccw(135)", "true"));
    CHECK(result_is(&m, "return move_up(40)", "true"));
    CHECK(result_is(&m, "return move_down(10)", "true"));
    CHECK(result_is(&m, "return delay(2500)", "true"));
    drone_pose p = mission_world_pose(&m.world);
    CHECK(fabs(p.x - (-30)) < 1e-6 && fabs(p.y - (100 - 30)) < 1e-6);
    CHECK(fabs(p.z - 130) < 1e-6);
    CHECK(fabs(p.yaw - 315) < 1e-6);
    /* 100+50+20+30+40+10 cm at 100 cm/s, 225 degrees at 90/s, 2.5 s delay */
    CHECK(fabs(mission_world_sim_s(&m.world) - (2.5 + 2.5 + 2.5)) < 1e-6);
    CHECK(result_is(&m, "return move_forward(-5)", "false"));
    CHECK(m.ctx.journal.nviolations == 1);
    mission_close(&m);
}

static void test_log_and_picture(void)
{
    mission m;
    mission_open(&m, room, 1);
    CHECK(result_is(&m, "return log('hello')", "true"));
    size_t len;
    const char *out = sandbox_output(m.sb, &len);
    CHECK(len == 6 && memcmp(out, "hello\n", 6) == 0);
    char path[1024];
    CHECK(mission_run(&m, "return take_picture()", path, sizeof path) == SANDBOX_OK);
    struct stat st;
    CHECK(stat(path, &st) == 0 && st.st_size > 100 && strstr(path, ".png"));
    remove(path);
    /* probe fails clearly without an LLM. */
    char err[1024];
    CHECK(mission_run(&m, "return probe('what is it?')", err, sizeof err) == SANDBOX_ERROR);
    CHECK(strstr(err, "no LLM") != NULL);
    mission_close(&m);
}

static void test_scan_finds_objects_behind(void)
{
    mission m;
    mission_open(&m, room, 1);
    CHECK(result_is(&m, "return scan('person')", "true"));
    CHECK(result_is(&m, "return is_visible('person')", "true"));
    drone_pose p = mission_world_pose(&m.world);
    CHECK(p.yaw > 90 && p.yaw < 270);
    CHECK(result_is(&m, "return scan('chair')", "true"));
    CHECK(result_is(&m, "return scan('banana')", "false"));
    mission_close(&m);
}

static void test_orienting_centres(void)
{
    mission m;
    mission_open(&m,
                 "{\"objects\":[{\"class\":\"bottle\",\"x\":150,\"y\":250,\"z\":70,\"w\":8,"
                 "\"d\":8,\"h\":25}]}",
                 1);
    CHECK(result_is(&m, "return object_x('bottle') > 0.75", "true"));
    CHECK(result_is(&m, "return orienting('bottle')", "true"));
    CHECK(result_is(&m, "local x = object_x('bottle') return x >= 0.4 and x <= 0.6", "true"));
    drone_pose p = mission_world_pose(&m.world);
    double want = atan2(150, 250) * 180 / M_PI; /* about 31 degrees */
    CHECK(fabs(p.yaw - want) < 10);
    CHECK(result_is(&m, "return orienting('cup')", "false"));
    mission_close(&m);
}

static void test_approach_stops_near(void)
{
    mission m;
    mission_open(&m, room, 1);
    CHECK(result_is(&m, "return scan('person') and orienting('person') and approach('person')",
                    "true"));
    double d = sim_distance_to(m.world.sim, "person_1");
    CHECK(d > 15 && d < 120);
    CHECK(result_is(&m, "return approach('banana')", "false"));
    mission_close(&m);
    /* goto = orienting + approach; approach without an object flies 1 m. */
    mission_open(&m, room, 1);
    CHECK(result_is(&m, "return turn_cw(10) and _ENV['goto']('apple_1')", "true"));
    d = sim_distance_to(m.world.sim, "apple_1");
    CHECK(d > 15 && d < 120);
    drone_pose before = mission_world_pose(&m.world);
    CHECK(result_is(&m, "return turn_cw(180) and approach()", "true"));
    drone_pose after = mission_world_pose(&m.world);
    CHECK(fabs(hypot(after.x - before.x, after.y - before.y) - 100) < 1e-6);
    mission_close(&m);
}

static void test_refusals_are_violations(void)
{
    mission m;
    mission_open(
        &m,
        "{\"limits\":{\"geofence_radius\":300,\"min_z\":40,\"max_z\":200},"
        "\"objects\":[{\"class\":\"wall\",\"x\":0,\"y\":-150,\"w\":400,\"d\":20,\"h\":300}]}",
        1);
    CHECK(result_is(&m, "return move_forward(400)", "false"));  /* geofence */
    CHECK(result_is(&m, "return move_backward(200)", "false")); /* the wall */
    CHECK(result_is(&m, "return move_up(500)", "true"));        /* clamped to 200 */
    CHECK(fabs(mission_world_pose(&m.world).z - 200) < 1e-6);
    CHECK(result_is(&m, "return move_down(500)", "true")); /* clamped to 40 */
    CHECK(fabs(mission_world_pose(&m.world).z - 40) < 1e-6);
    CHECK(m.ctx.journal.nviolations == 2);
    const skill_violation *v0 = &m.ctx.journal.violations[0], *v1 = &m.ctx.journal.violations[1];
    CHECK(strcmp(v0->skill, "move_forward") == 0);
    CHECK(strstr(v0->reason, "geofence") != NULL);
    CHECK(strstr(v1->reason, "wall_1") != NULL);
    drone_pose p = mission_world_pose(&m.world);
    CHECK(p.x == 0 && p.y == 0);
    mission_close(&m);
}

static void test_thousand_turns_are_instant(void)
{
    mission m;
    mission_open(&m, "{\"objects\":[]}", 1);
    double t0 = clock_now_ms();
    CHECK(result_is(&m, "for i = 1, 1000 do turn_cw(9) end return true", "true"));
    CHECK(fabs(mission_world_sim_s(&m.world) - 100) < 1e-6);
    /* Simulated 100 s; generous bound so a loaded machine cannot fail it. */
    CHECK(clock_now_ms() - t0 < 30000);
    mission_close(&m);
}

static void trace_of(unsigned long long seed, char *out, size_t outlen)
{
    mission m;
    mission_open(&m,
                 "{\"noise\":{\"position_cm\":20,\"miss_rate\":0.3},\"objects\":["
                 "{\"class\":\"apple\",\"x\":30,\"y\":250,\"z\":80,\"w\":8,\"d\":8,\"h\":9},"
                 "{\"class\":\"person\",\"x\":80,\"y\":-300,\"w\":50,\"d\":30,\"h\":175}]}",
                 seed);
    mission_run(&m,
                "local t = {} for i = 1, 20 do t[#t+1] = tostring(object_x('apple')) end "
                "t[#t+1] = tostring(scan('person')) t[#t+1] = tostring(orienting('person')) "
                "return table.concat(t, ',')",
                out, outlen);
    drone_pose p = mission_world_pose(&m.world);
    size_t n = strlen(out);
    snprintf(out + n, outlen - n, "|%.6f", p.yaw);
    mission_close(&m);
}

static void test_same_seed_same_results(void)
{
    char a[4096], b[4096], c[4096];
    trace_of(42, a, sizeof a);
    trace_of(42, b, sizeof b);
    trace_of(43, c, sizeof c);
    CHECK(strcmp(a, b) == 0);
    CHECK(strcmp(a, c) != 0);
    CHECK(strstr(a, "false") != NULL); /* misses happened */
}

/* A stand-in for the LLM: answers with what it is shown, like the real probe
 * does from the scene description of the current view. */
static int probe_scissors(void *ud, const char *question, char *out, size_t outlen, char *err,
                          size_t errlen)
{
    mission *m = ud;
    (void)question, (void)err, (void)errlen;
    vision_object objs[VISION_MAX_OBJECTS];
    int n = m->ctx.observe(m->ctx.observe_ud, objs, VISION_MAX_OBJECTS, NULL, 0);
    const vision_object *o = vision_find(objs, n, "scissors");
    snprintf(out, outlen, "%s", o ? o->name : "False");
    return 0;
}

static void test_scan_abstract_probes_each_view(void)
{
    mission m;
    mission_open_probe(&m,
                       "{\"objects\":[{\"class\":\"scissors\",\"x\":-250,\"y\":10,\"z\":75,"
                       "\"w\":15,\"d\":8,\"h\":2}]}",
                       1, probe_scissors);
    CHECK(result_is(&m, "return scan_abstract('what can cut paper?')", "scissors_1"));
    drone_pose p = mission_world_pose(&m.world);
    CHECK(fabs(p.yaw - 270) < 1e-6); /* found after six 45 degree turns */
    mission_close(&m);
    mission_open_probe(&m, "{\"objects\":[]}", 1, probe_scissors);
    CHECK(result_is(&m, "return scan_abstract('what can cut paper?')", "false"));
    mission_close(&m);
}

int main(void)
{
    reg = loader_standard(NULL, 0, NULL, NULL);
    if (!reg) return 1;
    test_vision_skills();
    test_motion_skills();
    test_log_and_picture();
    test_scan_finds_objects_behind();
    test_scan_abstract_probes_each_view();
    test_orienting_centres();
    test_approach_stops_near();
    test_refusals_are_violations();
    test_thousand_turns_are_instant();
    test_same_seed_same_results();
    registry_free(reg);
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_sim_skills: ok\n");
    return failures != 0;
}
