/*
 * Splitting motions into the Tello's SDK ranges, and ordering the steps so
 * that each one keeps to the constraint check (see tello_steps.h).
 */
#include "drone/tello_steps.h"

#include <stdio.h>

/* Writes TOTAL as N near-equal parts (the first ones one larger). */
static void split_even(int total, int n, int *parts)
{
    for (int i = 0; i < n; i++)
        parts[i] = total / n + (i < total % n ? 1 : 0);
}

int tello_split_move(int cm, bool overshoot, tello_step *steps, int max)
{
    if (cm < 0) return -1;
    if (cm == 0) return 0;
    if (cm < TELLO_MOVE_MIN) {
        if (max < 2) return -1;
        tello_step back = {.reverse = true, .amount = TELLO_MOVE_MIN};
        tello_step ahead = {.reverse = false, .amount = cm + TELLO_MOVE_MIN};
        steps[0] = overshoot ? ahead : back;
        steps[1] = overshoot ? back : ahead;
        return 2;
    }
    int n = (cm + TELLO_MOVE_MAX - 1) / TELLO_MOVE_MAX;
    if (n > max || n > TELLO_MAX_STEPS) return -1;
    int parts[TELLO_MAX_STEPS];
    split_even(cm, n, parts);
    for (int i = 0; i < n; i++)
        steps[i] = (tello_step){.reverse = false, .amount = parts[i]};
    return n;
}

int tello_split_turn(int deg, int *steps, int max)
{
    if (deg < 0) return -1;
    if (deg == 0) return 0;
    int n = (deg + TELLO_TURN_MAX - 1) / TELLO_TURN_MAX;
    if (n > max || n > TELLO_MAX_STEPS) return -1;
    split_even(deg, n, steps);
    return n;
}

const char *tello_step_command(drone_dir dir, const tello_step *step, char *buf, size_t len)
{
    static const char *const words[] = {"forward", "back", "left", "right", "up", "down"};
    static const drone_dir opposite[] = {DRONE_BACK, DRONE_FORWARD, DRONE_RIGHT,
                                         DRONE_LEFT, DRONE_DOWN,    DRONE_UP};
    if ((unsigned)dir > DRONE_DOWN) dir = DRONE_FORWARD;
    snprintf(buf, len, "%s %d", words[step->reverse ? opposite[dir] : dir], step->amount);
    return buf;
}

/* Submits the N steps to CHECK, each from where the one before ended. */
static int check_steps(drone_dir dir, const drone_pose *from, const tello_step *steps, int n,
                       drone_step_check check, void *ud, char *err, size_t errlen)
{
    drone_pose at = *from;
    for (int i = 0; i < n && check; i++) {
        char what[32];
        double cm = steps[i].reverse ? -steps[i].amount : steps[i].amount;
        drone_pose to = drone_pose_after(&at, dir, cm);
        if (check(ud, &at, &to, tello_step_command(dir, &steps[i], what, sizeof what), err, errlen))
            return -1;
        at = to;
    }
    return 0;
}

int tello_plan_move(drone_dir dir, int cm, const drone_pose *from, drone_step_check check,
                    void *check_ud, tello_step *steps, int max, char *err, size_t errlen)
{
    int n = tello_split_move(cm, dir == DRONE_UP, steps, max);
    if (n < 0) {
        snprintf(err, errlen, "a move of %d cm cannot be flown in at most %d steps", cm, max);
        return -1;
    }
    if (check_steps(dir, from, steps, n, check, check_ud, err, errlen) == 0) return n;
    if (n != 2 || cm >= TELLO_MOVE_MIN) return -1;
    /* The other order of the pair; the first refusal is the one reported. */
    tello_step other[2] = {steps[1], steps[0]};
    char why[256];
    if (check_steps(dir, from, other, 2, check, check_ud, why, sizeof why) < 0) {
        size_t used = 0;
        while (used < errlen && err[used])
            used++;
        if (used < errlen)
            snprintf(err + used, errlen - used,
                     " (a move under %d cm is flown as two steps, and neither order keeps to the "
                     "limits)",
                     TELLO_MOVE_MIN);
        return -1;
    }
    steps[0] = other[0];
    steps[1] = other[1];
    return 2;
}
