/*
 * A MiniSpec mission flown on the Tello emulator the way `aloft run --drone
 * tello` flies one: the driver behind the constraint guard (mission world),
 * launched (connect, battery, takeoff), the plan run in the sandbox, then
 * closed with a landing. Also a mission cancelled mid-move.
 * labels: tello
 */
#include "loader/loader.h"
#include "mission/runner.h"
#include "tello_harness.h"

#include <math.h>
#include <pthread.h>

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static skill_registry *reg;

static void open_world(mission_world *w, emu_proc *p, const char *const *emu_args)
{
    emu_start(p, "mission", emu_args);
    tello_config cfg = harness_config(p, 3000);
    cfg.video = false;
    char err[256];
    if (mission_world_wrap(w, harness_drone(&cfg), NULL, err, sizeof err) < 0) {
        fprintf(stderr, "mission_world_wrap: %s\n", err);
        exit(1);
    }
    CHECK(mission_world_launch(w, err, sizeof err) == 0, "launch: %s", err);
}

static void a_plan_flies_the_exact_commands(void)
{
    emu_proc p;
    mission_world w;
    open_world(&w, &p, ARGS("--speed", "1000", "--turn-rate", "1440"));
    const char *plan = "mf(120);tc(90);mu(30);ml(10);tu(45);->True";
    runner_opts o = {.reg = reg, .world = &w, .plan = plan, .plan_len = strlen(plan)};
    cJSON *doc = runner_run(&o);
    cJSON *ok = cJSON_GetObjectItemCaseSensitive(doc, "ok");
    cJSON *error = cJSON_GetObjectItemCaseSensitive(doc, "error");
    CHECK(cJSON_IsTrue(ok), "plan failed: %s", cJSON_IsString(error) ? error->valuestring : "?");
    drone_pose pose = mission_world_pose(&w);
    CHECK(fabs(pose.x) < 1 && fabs(pose.y - 130) < 1 && fabs(pose.yaw - 45) < 1 &&
              fabs(pose.z - 110) < 2,
          "pose %.1f %.1f %.1f yaw %.1f", pose.x, pose.y, pose.z, pose.yaw);
    cJSON_Delete(doc);
    mission_world_close(&w, true);
    emu_stop(&p);
    char *seq = emu_lines(&p, "recv");
    /* The runner hovers (`stop`) after the plan and the world again before
     * landing: one or more stops, then land. */
    char *stops;
    while ((stops = strstr(seq, "stop|stop")) != NULL)
        memmove(stops, stops + 5, strlen(stops + 5) + 1);
    const char *want = "command|battery?|battery?|takeoff|forward 120|cw 90|up 30|right 20|"
                       "left 30|ccw 45|stop|land";
    CHECK(strcmp(seq, want) == 0, "sequence\n  got  %s\n  want %s", seq, want);
    free(seq);
}

static void a_move_out_of_the_geofence_never_reaches_the_drone(void)
{
    emu_proc p;
    mission_world w;
    open_world(&w, &p, ARGS("--speed", "1000"));
    const char *plan = "->mf(700)"; /* default geofence: 600 cm */
    runner_opts o = {.reg = reg, .world = &w, .plan = plan, .plan_len = strlen(plan)};
    cJSON *doc = runner_run(&o);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "violations")) == 1,
          "no violation recorded");
    cJSON_Delete(doc);
    mission_world_close(&w, true);
    emu_stop(&p);
    CHECK(emu_count(&p, "recv forward 500") == 0 && emu_count(&p, "recv forward 350") == 0,
          "the refused move was sent");
}

static void *cancel_later(void *arg)
{
    harness_sleep_ms(600);
    sandbox_cancel(arg);
    return NULL;
}

static pthread_t canceller;

/* The runner's sandbox hook: a thread cancels the sandbox a little later;
 * before the sandbox goes (the hook's NULL call) that thread is done. */
static void start_canceller(void *ud, sandbox *sb)
{
    (void)ud;
    if (sb)
        pthread_create(&canceller, NULL, cancel_later, sb);
    else
        pthread_join(canceller, NULL);
}

static void a_cancelled_mission_stops_and_lands(void)
{
    emu_proc p;
    mission_world w;
    open_world(&w, &p, ARGS("--speed", "100"));
    const char *plan = "mf(400);mf(400)";
    runner_outcome out;
    runner_opts o = {.reg = reg,
                     .world = &w,
                     .plan = plan,
                     .plan_len = strlen(plan),
                     .on_sandbox = start_canceller,
                     .outcome = &out};
    cJSON *doc = runner_run(&o);
    CHECK(out.status == RUNNER_CANCELLED, "status %d: %s", (int)out.status, out.reason);
    cJSON_Delete(doc);
    mission_world_close(&w, true);
    emu_stop(&p);
    CHECK(emu_count(&p, "interrupted forward 400") == 1, "the move was not interrupted");
    CHECK(emu_count(&p, "recv forward 400") == 1, "forward sent %d times",
          emu_count(&p, "recv forward 400"));
    CHECK(emu_count(&p, "recv land") == 1 && emu_count(&p, "done land") == 1, "did not land");
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    reg = loader_standard(NULL, 0, NULL, NULL);
    a_plan_flies_the_exact_commands();
    a_move_out_of_the_geofence_never_reaches_the_drone();
    a_cancelled_mission_stops_and_lands();
    registry_free(reg);
    return harness_report("test_tello_mission");
}
