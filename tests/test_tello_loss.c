/*
 * The Tello driver on a lossy link (tests/tools/tello_emu drops packets):
 * missions complete under 30 % loss of commands or of replies and state, and
 * a lost reply never makes the drone fly a motion twice.
 * labels: waits
 */
#include "tello_harness.h"

#include <math.h>

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

typedef struct step {
    enum { MOVE, TURN } kind;
    drone_dir dir;
    int amount;
    const char *cmd; /* what the drone receives */
} step;

static const step mission[] = {
    {MOVE, DRONE_FORWARD, 100, "forward 100"},
    {TURN, 0, 90, "cw 90"},
    {MOVE, DRONE_RIGHT, 80, "right 80"},
    {MOVE, DRONE_UP, 30, "up 30"},
    {TURN, 0, -45, "ccw 45"},
    {MOVE, DRONE_BACK, 75, "back 75"},
    {MOVE, DRONE_DOWN, 20, "down 20"},
};
#define N_STEPS (int)(sizeof mission / sizeof mission[0])
/* Where the mission ends, from the take-off point facing north. */
static const double end_x = -75 * M_SQRT1_2, end_y = 20 - 75 * M_SQRT1_2, end_yaw = 45;

static tello_config lossy_config(const emu_proc *p)
{
    /* Short timeouts keep the test quick: a motion that outlasts one is
     * still judged right from the state stream. */
    tello_config cfg = harness_config(p, 600);
    cfg.takeoff_timeout_ms = 600;
    cfg.video = false;
    return cfg;
}

static void start_emu(emu_proc *p, const char *name, const char *const *extra)
{
    /* The Tello's top SDK speed, 100 cm/s: a horizontal move of the mission
     * spans 7 or more state packets, enough to see it with 30 % lost. */
    const char *args[32] = {"--speed", "100", "--turn-rate", "360"};
    int n = 4;
    for (int i = 0; extra && extra[i]; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    emu_start(p, name, args);
}

/* Flies the whole mission; checks that it completed, that every motion
 * reached the drone and ran exactly once, and where the drone ended. */
static void fly_mission(const char *name, const char *const *extra)
{
    emu_proc p;
    start_emu(&p, name, extra);
    tello_config cfg = lossy_config(&p);
    drone *d = harness_drone(&cfg);
    char err[256] = "";
    int ok = d->ops->connect(d, err, sizeof err) == 0 && d->ops->takeoff(d, err, sizeof err) == 0;
    CHECK(ok, "%s: %s", name, err);
    for (int i = 0; ok && i < N_STEPS; i++) {
        const step *s = &mission[i];
        int rc = s->kind == MOVE ? d->ops->move(d, s->dir, s->amount, err, sizeof err)
                                 : d->ops->turn(d, s->amount, err, sizeof err);
        CHECK(rc == 0, "%s: %s: %s", name, s->cmd, err);
        ok = rc == 0;
    }
    drone_state st;
    d->ops->get_state(d, &st);
    if (ok) CHECK(d->ops->land(d, err, sizeof err) == 0, "%s: land: %s", name, err);
    d->ops->destroy(d);
    emu_stop(&p);
    if (!ok) return;
    for (int i = 0; i < N_STEPS; i++) {
        char line[64];
        snprintf(line, sizeof line, "done %s", mission[i].cmd);
        int done = emu_count(&p, line);
        snprintf(line, sizeof line, "recv %s", mission[i].cmd);
        int recv = emu_count(&p, line);
        CHECK(done == 1 && recv == 1, "%s: '%s' received %d times, flown %d times", name,
              mission[i].cmd, recv, done);
    }
    double x, y, z, yaw;
    CHECK(emu_last_pose(&p, &x, &y, &z, &yaw) == 0, "%s: no pose", name);
    CHECK(fabs(x - end_x) < 1 && fabs(y - end_y) < 1 && fabs(yaw - end_yaw) < 1 && z == 0,
          "%s: the drone ended at %.1f,%.1f,%.1f yaw %.1f", name, x, y, z, yaw);
    CHECK(fabs(st.pose.x - end_x) < 1 && fabs(st.pose.y - end_y) < 1 &&
              fabs(st.pose.yaw - end_yaw) < 2,
          "%s: the driver thinks %.1f,%.1f yaw %.1f", name, st.pose.x, st.pose.y, st.pose.yaw);
    CHECK(emu_count(&p, "recv takeoff") == 1, "%s: %d takeoffs", name,
          emu_count(&p, "recv takeoff"));
}

/*
 * The losses are seeded, so each mission below meets the same losses every
 * run. With 3 retries a command fails only when 4 sends in a row are lost
 * (0.3^4 = 0.8 % at 30 %); over the ~13 exchanges of this mission that is
 * about one mission in ten: seeds 1 and 4 are such missions (see --scan),
 * and the seeds here are ones where no command meets four losses in a row.
 */
static void missions_complete_with_30_percent_command_loss(void)
{
    fly_mission("in2", ARGS("--loss-in", "30", "--seed", "2"));
    fly_mission("in3", ARGS("--loss-in", "30", "--seed", "3"));
}

static void missions_complete_with_30_percent_reply_and_state_loss(void)
{
    fly_mission("out1", ARGS("--loss-out", "30", "--loss-state", "30", "--seed", "1"));
    fly_mission("out2", ARGS("--loss-out", "30", "--loss-state", "30", "--seed", "2"));
}

/* One forward move after takeoff under the emulator options EXTRA. */
static int one_forward(const char *name, const char *const *extra, emu_proc *p, char *err,
                       size_t errlen)
{
    start_emu(p, name, extra);
    tello_config cfg = lossy_config(p);
    drone *d = harness_drone(&cfg);
    int rc = -1;
    if (d->ops->connect(d, err, errlen) == 0 && d->ops->takeoff(d, err, errlen) == 0)
        rc = d->ops->move(d, DRONE_FORWARD, 100, err, errlen);
    d->ops->destroy(d);
    emu_stop(p);
    return rc;
}

static void a_lost_ok_does_not_move_the_drone_twice(void)
{
    emu_proc p;
    char err[256] = "";
    CHECK(one_forward("lostok", ARGS("--drop-reply", "forward"), &p, err, sizeof err) == 0, "%s",
          err);
    CHECK(emu_count(&p, "lost-out ok") == 1, "the reply was not dropped");
    CHECK(emu_count(&p, "recv forward 100") == 1, "forward sent %d times",
          emu_count(&p, "recv forward 100"));
    CHECK(emu_count(&p, "done forward 100") == 1, "flown %d times",
          emu_count(&p, "done forward 100"));
}

static void a_lost_command_is_sent_again(void)
{
    emu_proc p;
    char err[256] = "";
    CHECK(one_forward("lostcmd", ARGS("--drop-cmd", "forward"), &p, err, sizeof err) == 0, "%s",
          err);
    CHECK(emu_count(&p, "lost-in forward 100") == 1, "the command was not dropped");
    CHECK(emu_count(&p, "done forward 100") == 1, "flown %d times",
          emu_count(&p, "done forward 100"));
}

static void without_state_a_lost_ok_fails_rather_than_risk_a_second_move(void)
{
    emu_proc p;
    char err[256] = "";
    CHECK(one_forward("nostate", ARGS("--drop-reply", "forward", "--loss-state", "100"), &p, err,
                      sizeof err) < 0,
          "succeeded without knowing");
    CHECK(strstr(err, "forward 100") && strstr(err, "may have moved"), "message: %s", err);
    CHECK(emu_count(&p, "recv forward 100") == 1, "forward sent %d times",
          emu_count(&p, "recv forward 100"));
}

static void a_lost_turn_reply_is_judged_by_the_yaw(void)
{
    emu_proc p;
    start_emu(&p, "lostturn", ARGS("--drop-reply", "cw:3", "--drop-cmd", "ccw"));
    tello_config cfg = lossy_config(&p);
    drone *d = harness_drone(&cfg);
    char err[256] = "";
    CHECK(d->ops->connect(d, err, sizeof err) == 0 && d->ops->takeoff(d, err, sizeof err) == 0,
          "%s", err);
    CHECK(d->ops->turn(d, 5, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->turn(d, 120, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->turn(d, -30, err, sizeof err) == 0, "%s", err);
    /* A full turn ends where it started: only the yaw seen on the way tells. */
    CHECK(d->ops->turn(d, 360, err, sizeof err) == 0, "%s", err);
    CHECK(d->ops->land(d, err, sizeof err) == 0, "%s", err);
    d->ops->destroy(d);
    emu_stop(&p);
    CHECK(emu_count(&p, "recv cw 5") == 1 && emu_count(&p, "recv cw 120") == 1 &&
              emu_count(&p, "recv cw 360") == 1,
          "cw sent %d, %d and %d times", emu_count(&p, "recv cw 5"), emu_count(&p, "recv cw 120"),
          emu_count(&p, "recv cw 360"));
    CHECK(emu_count(&p, "lost-out ok") == 3, "%d replies dropped", emu_count(&p, "lost-out ok"));
    CHECK(emu_count(&p, "lost-in ccw 30") == 1 && emu_count(&p, "done ccw 30") == 1,
          "lost ccw not re-sent once");
    double x, y, z, yaw;
    CHECK(emu_last_pose(&p, &x, &y, &z, &yaw) == 0 && fabs(yaw - 95) < 1, "yaw %.1f", yaw);
}

/* test_tello_loss --scan N: flies N seeds per direction and reports how many
 * missions completed (not part of the test run). */
static int scan(int n)
{
    for (int dir = 0; dir < 2; dir++) {
        int failed_before = harness_failures;
        for (int seed = 1; seed <= n; seed++) {
            char s[16];
            snprintf(s, sizeof s, "%d", seed);
            int before = harness_failures;
            if (dir == 0)
                fly_mission("scan", ARGS("--loss-in", "30", "--seed", s));
            else
                fly_mission("scan", ARGS("--loss-out", "30", "--loss-state", "30", "--seed", s));
            if (harness_failures > before) printf("seed %d failed\n", seed);
        }
        printf("%s loss 30%%: %d of %d missions had a failed check\n",
               dir == 0 ? "command" : "reply+state", harness_failures - failed_before, n);
    }
    return 0;
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc == 3 && strcmp(argv[1], "--scan") == 0) return scan(atoi(argv[2]));
    a_lost_ok_does_not_move_the_drone_twice();
    a_lost_command_is_sent_again();
    without_state_a_lost_ok_fails_rather_than_risk_a_second_move();
    a_lost_turn_reply_is_judged_by_the_yaw();
    missions_complete_with_30_percent_command_loss();
    missions_complete_with_30_percent_reply_and_state_loss();
    return harness_report("test_tello_loss");
}
