/* The Tello's step rules (host/drone/tello_steps.c) at their boundaries:
 * moves of 20-500 cm, turns of 1-360 degrees, at most TELLO_MAX_STEPS
 * steps, a short move flown as a pair in whichever order keeps to the
 * constraint check, and the refusal's text.
 * labels: tello safety */
#include "drone/tello_steps.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

static void test_move_boundaries(void)
{
    tello_step s[TELLO_MAX_STEPS + 8];
    struct {
        int cm, max, n, first, second;
    } cases[] = {
        {TELLO_MOVE_MIN - 1, 2, 2, -TELLO_MOVE_MIN, 2 * TELLO_MOVE_MIN - 1}, /* a pair */
        {TELLO_MOVE_MIN - 1, 1, -1, 0, 0},                                   /* no room for it */
        {TELLO_MOVE_MIN, 1, 1, TELLO_MOVE_MIN, 0},
        {TELLO_MOVE_MAX, 1, 1, TELLO_MOVE_MAX, 0},
        {TELLO_MOVE_MAX + 1, 2, 2, 251, 250},
        {TELLO_MOVE_MAX + 1, 1, -1, 0, 0},
        {TELLO_MOVE_MAX * TELLO_MAX_STEPS, TELLO_MAX_STEPS + 8, TELLO_MAX_STEPS, TELLO_MOVE_MAX, 0},
        {TELLO_MOVE_MAX * TELLO_MAX_STEPS + 1, TELLO_MAX_STEPS + 8, -1, 0, 0},
        {-1, 2, -1, 0, 0},
        {0, 2, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int n = tello_split_move(cases[i].cm, false, s, cases[i].max);
        CHECK(n == cases[i].n, "Tello move steps: %d cm in at most %d steps gave %d, expected %d",
              cases[i].cm, cases[i].max, n, cases[i].n);
        if (n < 1 || n != cases[i].n) continue;
        int first = s[0].reverse ? -s[0].amount : s[0].amount;
        CHECK(first == cases[i].first, "Tello move steps: %d cm: first step %d, expected %d",
              cases[i].cm, first, cases[i].first);
        if (n == 2)
            CHECK(!s[1].reverse && s[1].amount == cases[i].second,
                  "Tello move steps: %d cm: second step %d", cases[i].cm, s[1].amount);
        for (int k = 0; k < n; k++)
            CHECK(s[k].amount >= TELLO_MOVE_MIN && s[k].amount <= TELLO_MOVE_MAX,
                  "Tello move steps: %d cm: a step of %d cm is outside the SDK's range",
                  cases[i].cm, s[k].amount);
    }
}

static void test_turn_boundaries(void)
{
    int s[TELLO_MAX_STEPS + 8];
    struct {
        int deg, max, n, first;
    } cases[] = {
        {1, 1, 1, 1},
        {TELLO_TURN_MAX, 1, 1, TELLO_TURN_MAX},
        {TELLO_TURN_MAX + 1, 2, 2, 181},
        {TELLO_TURN_MAX + 1, 1, -1, 0},
        {TELLO_TURN_MAX * TELLO_MAX_STEPS, TELLO_MAX_STEPS + 8, TELLO_MAX_STEPS, TELLO_TURN_MAX},
        {TELLO_TURN_MAX * TELLO_MAX_STEPS + 1, TELLO_MAX_STEPS + 8, -1, 0},
        {-1, 2, -1, 0},
        {0, 2, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int n = tello_split_turn(cases[i].deg, s, cases[i].max);
        CHECK(n == cases[i].n,
              "Tello turn steps: %d degrees in at most %d steps gave %d, "
              "expected %d",
              cases[i].deg, cases[i].max, n, cases[i].n);
        if (n >= 1 && n == cases[i].n)
            CHECK(s[0] == cases[i].first, "Tello turn steps: %d degrees: first step %d",
                  cases[i].deg, s[0]);
    }
}

static void test_commands(void)
{
    const char *fwd[] = {"forward", "back", "left", "right", "up", "down"};
    const char *rev[] = {"back", "forward", "right", "left", "down", "up"};
    char buf[32], want[32];
    for (int d = DRONE_FORWARD; d <= DRONE_DOWN; d++) {
        tello_step a = {false, 20}, b = {true, 35};
        snprintf(want, sizeof want, "%s 20", fwd[d]);
        CHECK(strcmp(tello_step_command((drone_dir)d, &a, buf, sizeof buf), want) == 0, "%s", buf);
        snprintf(want, sizeof want, "%s 35", rev[d]);
        CHECK(strcmp(tello_step_command((drone_dir)d, &b, buf, sizeof buf), want) == 0, "%s", buf);
    }
    /* a direction out of range is never sent as such */
    tello_step a = {false, 20};
    CHECK(strcmp(tello_step_command((drone_dir)99, &a, buf, sizeof buf), "forward 20") == 0, "%s",
          buf);
}

/* The check: the drone must stay within y in [lo, hi] (a fence line). */
typedef struct band {
    double lo, hi;
    int asked;
} band;

static int in_band(void *ud, const drone_pose *from, const drone_pose *to, const char *what,
                   char *err, size_t errlen)
{
    band *b = ud;
    (void)from;
    b->asked++;
    if (to->y >= b->lo - 1e-9 && to->y <= b->hi + 1e-9) return 0;
    snprintf(err, errlen, "%s would end at y %.0f", what, to->y);
    return -1;
}

static void test_plan_move(void)
{
    tello_step s[TELLO_MAX_STEPS];
    char err[512] = "";
    drone_pose at = {.x = 0, .y = 5, .z = 100, .yaw = 0}; /* facing +y */

    /* the detour behind would leave the band: flown ahead first */
    band b = {0, 100, 0};
    int n =
        tello_plan_move(DRONE_FORWARD, 7, &at, in_band, &b, s, TELLO_MAX_STEPS, err, sizeof err);
    CHECK(n == 2 && !s[0].reverse && s[0].amount == 27 && s[1].reverse && s[1].amount == 20,
          "Tello pair order: near the band's edge behind, 7 cm forward must fly forward 27, back "
          "20 (n=%d: %s)",
          n, err);
    CHECK(b.asked == 3, "the check was asked %d times", b.asked);

    /* neither order fits: the preferred order's refusal, and why two steps */
    band tight = {0, 20, 0};
    n = tello_plan_move(DRONE_FORWARD, 7, &at, in_band, &tight, s, TELLO_MAX_STEPS, err,
                        sizeof err);
    CHECK(n == -1);
    CHECK(strcmp(err, "back 20 would end at y -15 (a move under 20 cm is flown as two steps, and "
                      "neither order keeps to the limits)") == 0,
          "%s", err);
    /* no room for the text at all: nothing is written */
    char none[1] = {'x'};
    CHECK(tello_plan_move(DRONE_FORWARD, 7, &at, in_band, &tight, s, TELLO_MAX_STEPS, none, 0) ==
          -1);
    CHECK(none[0] == 'x');

    /* a long move that leaves the band is refused at the step that does,
     * with no other order to try */
    band wide = {0, 1000, 0};
    n = tello_plan_move(DRONE_FORWARD, 1200, &at, in_band, &wide, s, TELLO_MAX_STEPS, err,
                        sizeof err);
    CHECK(n == -1 && strcmp(err, "forward 400 would end at y 1205") == 0, "n=%d: %s", n, err);
    CHECK(wide.asked == 3, "the check was asked %d times", wide.asked);

    /* a pair of long steps is not a short move's pair: no other order */
    band mid = {0, 400, 0};
    n = tello_plan_move(DRONE_FORWARD, 600, &at, in_band, &mid, s, TELLO_MAX_STEPS, err,
                        sizeof err);
    CHECK(n == -1 && strcmp(err, "forward 300 would end at y 605") == 0, "n=%d: %s", n, err);
    CHECK(mid.asked == 2, "the check was asked %d times", mid.asked);

    /* too long, and no check at all */
    n = tello_plan_move(DRONE_FORWARD, 600, &at, in_band, &wide, s, 1, err, sizeof err);
    CHECK(n == -1 && strcmp(err, "a move of 600 cm cannot be flown in at most 1 steps") == 0, "%s",
          err);
    CHECK(tello_plan_move(DRONE_UP, 7, &at, NULL, NULL, s, TELLO_MAX_STEPS, err, sizeof err) == 2 &&
              !s[0].reverse && s[0].amount == 27,
          "up: the detour is above");
}

int main(void)
{
    test_move_boundaries();
    test_turn_boundaries();
    test_commands();
    test_plan_move();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_tello_steps: all checks passed\n");
    return failures ? 1 : 0;
}
