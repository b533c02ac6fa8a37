/*
 * The Tello's command-line options and the splitting of motions into
 * SDK-legal steps.
 */
#include "drone/tello.h"
#include "drone/tello_steps.h"
#include "vision/options.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static void defaults_follow_the_spec(void)
{
    tello_config c;
    tello_config_init(&c);
    CHECK(strcmp(c.host, "192.168.10.1") == 0, "host %s", c.host);
    CHECK(c.port == 8889 && c.state_port == 8890 && c.video_port == 11111, "ports");
    CHECK(c.timeout_ms == 7000 && c.takeoff_timeout_ms == 20000 && c.retries == 3, "timeouts");
    CHECK(c.battery_min == 20 && c.video && c.land_at_end, "battery/video/land");
    CHECK(c.keepalive_ms > 0 && c.keepalive_ms < 15000, "keep-alive %d", c.keepalive_ms);
    char url[64];
    CHECK(strcmp(tello_video_source(&c, url, sizeof url), "tello:11111") == 0, "%s", url);
}

static void options_are_applied(void)
{
    tello_config c;
    tello_config_init(&c);
    char err[256] = "";
    CHECK(tello_config_option(&c, "drone", "tello", err, sizeof err) == 1, "%s", err);
    CHECK(strcmp(c.host, "192.168.10.1") == 0, "host %s", c.host);
    CHECK(tello_config_option(&c, "drone", "tello:10.0.0.7", err, sizeof err) == 1, "%s", err);
    CHECK(strcmp(c.host, "10.0.0.7") == 0, "host %s", c.host);
    CHECK(tello_config_option(&c, "tello-port", "9000", err, sizeof err) == 1, "%s", err);
    CHECK(tello_config_option(&c, "tello-state-port", "9001", err, sizeof err) == 1, "%s", err);
    CHECK(tello_config_option(&c, "tello-video-port", "9002", err, sizeof err) == 1, "%s", err);
    CHECK(tello_config_option(&c, "tello-timeout-ms", "250", err, sizeof err) == 1, "%s", err);
    CHECK(tello_config_option(&c, "no-video", NULL, err, sizeof err) == 1, "%s", err);
    CHECK(tello_config_option(&c, "no-land", NULL, err, sizeof err) == 1, "%s", err);
    CHECK(c.port == 9000 && c.state_port == 9001 && c.video_port == 9002, "ports");
    CHECK(c.timeout_ms == 250 && !c.video && !c.land_at_end, "timeout/video/land");
    char url[64];
    CHECK(strcmp(tello_video_source(&c, url, sizeof url), "tello:9002") == 0, "%s", url);
}

static void other_options_are_not_ours(void)
{
    tello_config c;
    tello_config_init(&c);
    char err[256] = "";
    CHECK(tello_config_option(&c, "drone", "sim", err, sizeof err) == 0, "sim taken");
    CHECK(tello_config_option(&c, "drone", "telloX", err, sizeof err) == 0, "telloX taken");
    CHECK(tello_config_option(&c, "scene", "a.json", err, sizeof err) == 0, "scene taken");
}

static void bad_values_get_clear_errors(void)
{
    tello_config c;
    tello_config_init(&c);
    char err[256] = "";
    CHECK(tello_config_option(&c, "drone", "tello:", err, sizeof err) < 0, "empty host");
    CHECK(strstr(err, "tello:HOST") != NULL, "message: %s", err);
    CHECK(tello_config_option(&c, "tello-port", "0", err, sizeof err) < 0, "port 0");
    CHECK(strstr(err, "--tello-port") && strstr(err, "1-65535"), "message: %s", err);
    CHECK(tello_config_option(&c, "tello-port", "70000", err, sizeof err) < 0, "port 70000");
    CHECK(tello_config_option(&c, "tello-state-port", "88x", err, sizeof err) < 0, "88x");
    CHECK(tello_config_option(&c, "tello-timeout-ms", "-5", err, sizeof err) < 0, "-5");
    CHECK(tello_config_option(&c, "tello-timeout-ms", "", err, sizeof err) < 0, "empty");
    /* A number is digits only, as for the MAVLink options: no sign, no
     * white space that strtol would skip. */
    CHECK(tello_config_option(&c, "tello-port", "+9000", err, sizeof err) < 0, "+9000");
    CHECK(strstr(err, "--tello-port '+9000'") != NULL, "message: %s", err);
    CHECK(tello_config_option(&c, "tello-port", " 9000", err, sizeof err) < 0, "' 9000'");
    CHECK(tello_config_option(&c, "tello-port", "9000 ", err, sizeof err) < 0, "'9000 '");
    CHECK(tello_config_option(&c, "tello-timeout-ms", "600000", err, sizeof err) == 1, "%s", err);
    CHECK(tello_config_option(&c, "tello-timeout-ms", "600001", err, sizeof err) < 0, "600001");
    CHECK(tello_config_option(&c, "tello-timeout-ms", "7000", err, sizeof err) == 1, "%s", err);
    CHECK(c.port == 8889 && c.timeout_ms == 7000, "a bad value changed the config");
}

static void long_options_dispatch_by_name(void)
{
    enum { OPT_TELLO = 1200 };
    static const struct option opts[] = {TELLO_LONG_OPTIONS(OPT_TELLO), {0, 0, 0, 0}};
    char *argv[] = {"run", "--tello-port", "7000", "--no-land", "--tello-timeout-ms=900", NULL};
    tello_config c;
    tello_config_init(&c);
    char err[256] = "";
    int idx, opt, applied = 0;
    optind = 1;
    while ((opt = getopt_long(5, argv, "", opts, &idx)) != -1) {
        CHECK(opt == OPT_TELLO, "code %d", opt);
        applied += tello_config_option(&c, opts[idx].name, optarg, err, sizeof err) == 1;
    }
    CHECK(applied == 3 && c.port == 7000 && !c.land_at_end && c.timeout_ms == 900, "applied %d",
          applied);
}

/* The signed sum of STEPS, and whether each is legal. */
static int move_sum(const tello_step *steps, int n, int *legal)
{
    int sum = 0;
    *legal = 1;
    for (int i = 0; i < n; i++) {
        sum += steps[i].reverse ? -steps[i].amount : steps[i].amount;
        if (steps[i].amount < TELLO_MOVE_MIN || steps[i].amount > TELLO_MOVE_MAX) *legal = 0;
    }
    return sum;
}

static void moves_split_into_legal_steps(void)
{
    tello_step s[TELLO_MAX_STEPS];
    int legal;
    for (int cm = 1; cm <= 5000; cm++) {
        int n = tello_split_move(cm, false, s, TELLO_MAX_STEPS);
        if (n <= 0 || move_sum(s, n, &legal) != cm || !legal) {
            CHECK(0, "%d cm: %d steps", cm, n);
            break;
        }
    }
    CHECK(tello_split_move(0, false, s, TELLO_MAX_STEPS) == 0, "0 cm");
    CHECK(tello_split_move(-1, false, s, TELLO_MAX_STEPS) < 0, "-1 cm");
    int n = tello_split_move(1000, false, s, TELLO_MAX_STEPS);
    CHECK(n == 2 && s[0].amount == 500 && s[1].amount == 500, "1000 cm: %d steps", n);
    n = tello_split_move(1001, false, s, TELLO_MAX_STEPS);
    CHECK(n == 3 && s[0].amount == 334 && s[2].amount == 333, "1001 cm");
    /* Short moves never pass the target, unless asked to overshoot. */
    n = tello_split_move(7, false, s, TELLO_MAX_STEPS);
    CHECK(n == 2 && s[0].reverse && s[0].amount == 20 && !s[1].reverse && s[1].amount == 27,
          "7 cm");
    n = tello_split_move(7, true, s, TELLO_MAX_STEPS);
    CHECK(n == 2 && !s[0].reverse && s[0].amount == 27 && s[1].reverse && s[1].amount == 20,
          "7 cm overshoot");
    CHECK(tello_split_move(500 * 65, false, s, TELLO_MAX_STEPS) < 0, "too many steps");
}

static void turns_split_into_legal_steps(void)
{
    int s[TELLO_MAX_STEPS];
    for (int deg = 1; deg <= 3600; deg++) {
        int n = tello_split_turn(deg, s, TELLO_MAX_STEPS), sum = 0, legal = n > 0;
        for (int i = 0; i < n; i++) {
            sum += s[i];
            legal &= s[i] >= 1 && s[i] <= TELLO_TURN_MAX;
        }
        if (sum != deg || !legal) {
            CHECK(0, "%d degrees", deg);
            break;
        }
    }
    CHECK(tello_split_turn(0, s, TELLO_MAX_STEPS) == 0, "0 degrees");
    int n = tello_split_turn(400, s, TELLO_MAX_STEPS);
    CHECK(n == 2 && s[0] == 200 && s[1] == 200, "400 degrees");
}

int main(void)
{
    defaults_follow_the_spec();
    options_are_applied();
    other_options_are_not_ours();
    bad_values_get_clear_errors();
    long_options_dispatch_by_name();
    moves_split_into_legal_steps();
    turns_split_into_legal_steps();
    if (failures) {
        fprintf(stderr, "test_tello_config: %d check(s) failed\n", failures);
        return 1;
    }
    puts("test_tello_config: all checks passed");
    return 0;
}
