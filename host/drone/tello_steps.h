/*
 * Splitting motions into commands the Tello accepts: moves of 20–500 cm,
 * turns of 1–360 degrees (SDK 2.0). Pure functions, no I/O.
 */
#ifndef ALOFT_DRONE_TELLO_STEPS_H
#define ALOFT_DRONE_TELLO_STEPS_H

#include "drone/drone.h"

#include <stdbool.h>
#include <stddef.h>

#define TELLO_MOVE_MIN 20
#define TELLO_MOVE_MAX 500
#define TELLO_TURN_MAX 360
#define TELLO_MAX_STEPS 64

/* One SDK motion: AMOUNT in the requested direction, or the opposite one
 * when REVERSE. */
typedef struct tello_step {
    bool reverse;
    int amount;
} tello_step;

/*
 * Splits a move of CM centimetres (>= 0) into at most MAX legal steps whose
 * signed sum is CM. Up to 500 cm: one step. Longer: equal steps of at most
 * 500 cm. Shorter than 20 cm the drone never gets an illegal value: it
 * goes 20 cm the other way, then CM + 20 cm, so it never passes the target;
 * with OVERSHOOT the order is reversed (CM + 20 cm, then 20 cm back), which
 * the driver uses for `up` so that the detour is away from the ground.
 * 0: no steps. Returns the number of steps, or -1 if CM is negative or
 * needs more than MAX steps.
 */
int tello_split_move(int cm, bool overshoot, tello_step *steps, int max);

/* Writes the SDK command of STEP of a move in direction DIR ("back 20")
 * into BUF and returns BUF. */
const char *tello_step_command(drone_dir dir, const tello_step *step, char *buf, size_t len);

/*
 * Plans a move of CM centimetres (>= 0) in direction DIR from FROM (world
 * frame): the steps of tello_split_move, every one submitted to CHECK (may
 * be NULL) from where it starts to where it ends, before anything is sent.
 * A pair (a move under 20 cm) is tried in its preferred order first (for
 * `up` the detour above, else the detour behind), then in the other one:
 * at the geofence's edge the drone goes back before it goes forward, under
 * the ceiling it goes down before it goes up. Returns the number of steps,
 * or -1 with the reason in ERR: no order passes the check (the preferred
 * order's refusal is given), or the move is negative or too long.
 */
int tello_plan_move(drone_dir dir, int cm, const drone_pose *from, drone_step_check check,
                    void *check_ud, tello_step *steps, int max, char *err, size_t errlen);

/* Splits a turn of DEG degrees (>= 0) into at most MAX equal steps of
 * 1–360 degrees. Returns the count (0 for 0), or -1 as above. */
int tello_split_turn(int deg, int *steps, int max);

#endif
