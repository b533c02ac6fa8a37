/*
 * The Tello driver against tests/tools/tello_emu over real UDP on loopback:
 * the exact command sequence of a mission, the battery check, error
 * replies, a silent drone, keep-alive during a pause, the state stream and
 * cancellation.
 * labels: tello
 */
#include "tello_harness.h"

#include <math.h>

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static int fly(drone *d, char *err, size_t errlen)
{
    if (d->ops->connect(d, err, errlen) < 0) return -1;
    return d->ops->takeoff(d, err, errlen);
}

static void mission_sends_the_exact_command_sequence(void)
{
    emu_proc p;
    emu_start(&p, "sequence", ARGS("--speed", "1000", "--turn-rate", "1440"));
    tello_config cfg = harness_config(&p, 3000);
    drone *d = harness_drone(&cfg);
    char err[256] = "";
    CHECK(fly(d, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->move(d, DRONE_FORWARD, 1000, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->move(d, DRONE_LEFT, 10, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->move(d, DRONE_UP, 5, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->move(d, DRONE_DOWN, 0, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->turn(d, 90, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->move(d, DRONE_FORWARD, 30, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->turn(d, -400, err, sizeof err) == 0, "%s", err);

    drone_state s;
    d->ops->get_state(d, &s);
    double x, y, z, yaw;
    CHECK(emu_last_pose(&p, &x, &y, &z, &yaw) == 0, "no pose in the log");
    /* Dead reckoning agrees with where the emulator really is. */
    CHECK(fabs(s.pose.x - x) < 1 && fabs(s.pose.y - y) < 1, "driver %.1f,%.1f emulator %.1f,%.1f",
          s.pose.x, s.pose.y, x, y);
    CHECK(fabs(s.pose.x - 20) < 1 && fabs(s.pose.y - 1000) < 1, "pose %.1f,%.1f", s.pose.x,
          s.pose.y);
    CHECK(fabs(s.pose.yaw - 50) < 2, "yaw %.1f", s.pose.yaw);
    CHECK(s.flying, "not flying");

    CHECK(d->ops->land(d, err, sizeof err) == 0, "%s", err);
    d->ops->destroy(d);
    emu_stop(&p);
    char *seq = emu_lines(&p, "recv");
    const char *want = "command|battery?|streamon|battery?|takeoff|forward 500|forward 500|"
                       "right 20|left 30|up 25|down 20|cw 90|forward 30|ccw 200|ccw 200|land|"
                       "streamoff";
    CHECK(strcmp(seq, want) == 0, "sequence\n  got  %s\n  want %s", seq, want);
    free(seq);
}

static void no_video_sends_no_streamon(void)
{
    emu_proc p;
    emu_start(&p, "novideo", NULL);
    tello_config cfg = harness_config(&p, 3000);
    char err[256] = "";
    CHECK(tello_config_option(&cfg, "no-video", NULL, err, sizeof err) == 1, "%s", err);
    drone *d = harness_drone(&cfg);
    CHECK(d->ops->connect(d, err, sizeof err) == 0, "%s", err);
    d->ops->destroy(d);
    emu_stop(&p);
    char *seq = emu_lines(&p, "recv");
    CHECK(strcmp(seq, "command|battery?") == 0, "got %s", seq);
    free(seq);
}

static void low_battery_refuses_takeoff(void)
{
    emu_proc p;
    emu_start(&p, "battery", ARGS("--battery", "15"));
    tello_config cfg = harness_config(&p, 3000);
    cfg.video = false;
    drone *d = harness_drone(&cfg);
    char err[256] = "";
    CHECK(d->ops->connect(d, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->takeoff(d, err, sizeof err) < 0, "took off at 15%%");
    CHECK(strstr(err, "15%") && strstr(err, "20%"), "message: %s", err);
    drone_state s;
    d->ops->get_state(d, &s);
    CHECK(s.battery == 15 && !s.flying, "battery %d flying %d", s.battery, s.flying);
    d->ops->destroy(d);
    emu_stop(&p);
    CHECK(emu_count(&p, "recv takeoff") == 0, "takeoff was sent");
}

static void error_replies_fail_with_the_drones_text(void)
{
    emu_proc p;
    emu_start(&p, "errors", ARGS("--speed", "1000", "--reply", "forward=error Not joystick"));
    tello_config cfg = harness_config(&p, 3000);
    cfg.video = false;
    drone *d = harness_drone(&cfg);
    char err[256] = "";
    /* A move before takeoff: the drone's own "error Motor stop". */
    CHECK(d->ops->connect(d, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->move(d, DRONE_BACK, 50, err, sizeof err) < 0, "moved on the ground");
    CHECK(strstr(err, "error Motor stop") && strstr(err, "back 50"), "message: %s", err);
    CHECK(d->ops->takeoff(d, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->move(d, DRONE_FORWARD, 50, err, sizeof err) < 0, "forward succeeded");
    CHECK(strstr(err, "error Not joystick") != NULL, "message: %s", err);
    CHECK(d->ops->move(d, DRONE_RIGHT, 50, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->land(d, err, sizeof err) == 0, "%s", err);
    d->ops->destroy(d);
    emu_stop(&p);
    /* An error reply is an answer: it is not retried. */
    CHECK(emu_count(&p, "recv forward 50") == 1, "forward sent %d times",
          emu_count(&p, "recv forward 50"));
}

static void silent_drone_fails_in_bounded_time(void)
{
    emu_proc p;
    emu_start(&p, "silent", ARGS("--silent"));
    tello_config cfg = harness_config(&p, 200);
    drone *d = harness_drone(&cfg);
    char err[256] = "";
    double t0 = harness_now_ms();
    CHECK(d->ops->connect(d, err, sizeof err) < 0, "connected to a silent drone");
    double took = harness_now_ms() - t0;
    CHECK(strstr(err, "no reply") && strstr(err, "'command'") && strstr(err, "4 tries") &&
              strstr(err, "Wi-Fi"),
          "message: %s", err);
    /* 4 tries of 200 ms; the bound only guards against hanging. */
    CHECK(took < 30000, "took %.0f ms", took);
    d->ops->destroy(d);
    emu_stop(&p);
    CHECK(emu_count(&p, "recv command") == 4, "%d handshakes", emu_count(&p, "recv command"));
}

/* Flies, pauses PAUSE_MS, then tries to move; returns the move's result. */
static int pause_then_move(int keepalive_ms, int *autolands)
{
    emu_proc p;
    emu_start(&p, "keepalive", ARGS("--speed", "1000", "--autoland-ms", "1000"));
    tello_config cfg = harness_config(&p, 3000);
    cfg.video = false;
    cfg.keepalive_ms = keepalive_ms;
    drone *d = harness_drone(&cfg);
    char err[256] = "";
    CHECK(fly(d, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->wait(d, 2500, err, sizeof err) == 0, "%s", err);
    int rc = d->ops->move(d, DRONE_FORWARD, 50, err, sizeof err);
    d->ops->land(d, err, sizeof err);
    d->ops->destroy(d);
    emu_stop(&p);
    *autolands = emu_count(&p, "autoland");
    return rc;
}

static void keepalive_keeps_a_paused_mission_airborne(void)
{
    int autolands;
    CHECK(pause_then_move(300, &autolands) == 0, "move after the pause failed");
    CHECK(autolands == 0, "the drone auto-landed %d times", autolands);
    /* Without keep-alive the same pause lands the drone: the test can fail. */
    CHECK(pause_then_move(0, &autolands) < 0, "moved after an auto-land");
    CHECK(autolands == 1, "auto-landed %d times", autolands);
}

static int settled_at_57(const drone_state *s, void *ud)
{
    (void)ud;
    return fabs(s->pose.yaw - 57) < 0.5 && s->vx == 0 && s->vy == 0 && s->vz == 0;
}

static int state_ready(const drone_state *s, void *ud)
{
    (void)ud;
    return s->battery == 63 && s->tof_cm > 0;
}

static void state_string_is_parsed(int sdk3)
{
    emu_proc p;
    emu_start(&p, sdk3 ? "state3" : "state2",
              sdk3 ? ARGS("--battery", "63", "--speed", "1000", "--turn-error", "3", "--sdk3")
                   : ARGS("--battery", "63", "--speed", "1000", "--turn-error", "3"));
    tello_config cfg = harness_config(&p, 3000);
    cfg.video = false;
    cfg.start.yaw = 90; /* the take-off point faces east */
    drone *d = harness_drone(&cfg);
    char err[256] = "";
    CHECK(fly(d, err, sizeof err) == 0, "%s", err);
    CHECK(harness_wait_state(d, 5000, state_ready, NULL) == 0, "no state received");
    CHECK(d->ops->turn(d, -30, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->move(d, DRONE_UP, 40, err, sizeof err) == 0, "%s", err);
    /* Once the drone is still, the pose takes its own yaw (it turned 33
     * degrees, not the 30 asked) and height. */
    CHECK(harness_wait_state(d, 5000, settled_at_57, NULL) == 0, "the state yaw never showed");
    drone_state s;
    d->ops->get_state(d, &s);
    CHECK(fabs(s.pose.z - 120) < 2, "z %.1f (h from the state string)", s.pose.z);
    CHECK(fabs(s.tof_cm - 130) < 2, "tof %.1f", s.tof_cm);
    CHECK(fabs(s.pose.yaw - 57) < 0.5, "yaw %.1f (from the state string)", s.pose.yaw);
    CHECK(fabs(s.baro_cm - 10120) < 2, "baro %.1f cm", s.baro_cm);
    CHECK(s.battery == 63, "battery %d", s.battery);
    CHECK(s.vx == 0 && s.vy == 0 && s.vz == 0, "speeds %g %g %g", s.vx, s.vy, s.vz);
    d->ops->land(d, err, sizeof err);
    d->ops->destroy(d);
    emu_stop(&p);
}

static bool abort_after(void *ud)
{
    return harness_now_ms() >= *(double *)ud;
}

static void cancel_sends_stop_and_leaves_the_drone_hovering(void)
{
    emu_proc p;
    emu_start(&p, "cancel", ARGS("--speed", "100"));
    tello_config cfg = harness_config(&p, 10000);
    cfg.video = false;
    drone *d = harness_drone(&cfg);
    char err[256] = "";
    CHECK(fly(d, err, sizeof err) == 0, "%s", err);
    double when = harness_now_ms() + 500;
    d->abort = abort_after;
    d->abort_ud = &when;
    CHECK(d->ops->move(d, DRONE_FORWARD, 500, err, sizeof err) < 0, "a 5 s move was not cut");
    CHECK(strcmp(err, "cancelled") == 0, "message: %s", err);
    drone_state s;
    d->ops->get_state(d, &s);
    /* Some of the move, not all of it: where in its 5 s the cut landed
     * depends on the machine's load, so no tighter bound. */
    CHECK(s.pose.y > 0 && s.pose.y < 500, "dead-reckoned %.1f cm of the cut move", s.pose.y);
    /* Landing works while the abort flag is still up. */
    CHECK(d->ops->land(d, err, sizeof err) == 0, "%s", err);
    d->ops->destroy(d);
    emu_stop(&p);
    CHECK(emu_count(&p, "recv stop") == 1, "stop sent %d times", emu_count(&p, "recv stop"));
    CHECK(emu_count(&p, "interrupted forward 500") == 1, "the move was not interrupted");
    CHECK(emu_count(&p, "recv emergency") == 0, "emergency without a request");
}

static int on_the_ground(const drone_state *s, void *ud)
{
    (void)ud;
    return s->tof_cm > 0 && s->tof_cm <= 10; /* the emulator's tof is h + 10 */
}

static void emergency_stops_the_motors_when_asked(void)
{
    emu_proc p;
    emu_start(&p, "emergency", ARGS("--speed", "1000"));
    tello_config cfg = harness_config(&p, 3000);
    cfg.video = false;
    drone *d = harness_drone(&cfg);
    char err[256] = "";
    CHECK(fly(d, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->emergency(d) == 0, "emergency failed");
    drone_state s;
    d->ops->get_state(d, &s);
    CHECK(!s.flying && s.pose.z == 0, "flying %d at z %.1f", s.flying, s.pose.z);
    CHECK(harness_wait_state(d, 5000, on_the_ground, NULL) == 0, "the state never showed h 0");
    d->ops->destroy(d);
    emu_stop(&p);
    CHECK(emu_count(&p, "recv emergency") >= 1, "no emergency received");
}

static void late_replies_are_dropped(void)
{
    /* Every reply comes 300 ms late. The handshake's tries share the 400 ms
     * timeout (100 ms each): `command` is answered during its fourth try,
     * and the stale answers to the others arrive while `battery?` waits;
     * they are never taken for its answer (an "ok" is not a battery
     * level). */
    emu_proc p;
    emu_start(&p, "late", ARGS("--delay-ms", "300", "--battery", "77"));
    tello_config cfg = harness_config(&p, 400);
    drone *d = harness_drone(&cfg);
    char err[256] = "";
    CHECK(d->ops->connect(d, err, sizeof err) == 0, "%s", err);
    drone_state s;
    d->ops->get_state(d, &s);
    CHECK(s.battery == 77, "battery %d", s.battery);
    d->ops->destroy(d);
    emu_stop(&p);
}

static void a_taken_state_port_is_a_clear_error(void)
{
    emu_proc p;
    emu_start(&p, "port", NULL);
    tello_config cfg = harness_config(&p, 3000);
    drone *d = harness_drone(&cfg);
    char err[256] = "";
    CHECK(tello_new(&cfg, err, sizeof err) == NULL, "two drivers on one state port");
    char want[64];
    snprintf(want, sizeof want, "UDP port %d", cfg.state_port);
    CHECK(strstr(err, want) && strstr(err, "state"), "message: %s", err);
    d->ops->destroy(d);
    emu_stop(&p);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    mission_sends_the_exact_command_sequence();
    no_video_sends_no_streamon();
    low_battery_refuses_takeoff();
    error_replies_fail_with_the_drones_text();
    silent_drone_fails_in_bounded_time();
    keepalive_keeps_a_paused_mission_airborne();
    state_string_is_parsed(0);
    state_string_is_parsed(1);
    cancel_sends_stop_and_leaves_the_drone_hovering();
    emergency_stops_the_motors_when_asked();
    late_replies_are_dropped();
    a_taken_state_port_is_a_clear_error();
    return harness_report("test_tello_flight");
}
