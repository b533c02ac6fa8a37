#include "drone/tello_steps.h"

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
