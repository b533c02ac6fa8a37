/*
 * The Tello driver's private parts, shared by tello.c (commands, the drone
 * operations) and tello_telemetry.c (the state listener). See tello.c for
 * how they work together.
 */
#ifndef ALOFT_DRONE_TELLO_INTERNAL_H
#define ALOFT_DRONE_TELLO_INTERNAL_H

#include "drone/heading.h"
#include "drone/tello.h"
#include "drone/tello_link.h"
#include "drone/tello_state.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>

typedef enum motion_kind {
    MOTION_NONE,
    MOTION_HORIZ,
    MOTION_VERT,
    MOTION_TURN,
    MOTION_TAKEOFF,
    MOTION_LAND
} motion_kind;

/* What a control command does to the pose, for the lost-reply check. */
typedef struct motion {
    motion_kind kind;
    double amount; /* cm or degrees */
} motion;

/* Telemetry at one moment, compared before/after a command. */
typedef struct telemetry {
    bool have;
    double at_ms; /* when the last packet came */
    double h, yaw;
    double odo_h, odo_v; /* cm flown, integrated from the speeds */
    double odo_yaw;      /* degrees turned, either way */
    long packets, moving;
    long still_run; /* packets in a row without motion */
} telemetry;

typedef enum ctrl_result { CTRL_OK, CTRL_FAILED, CTRL_CANCELLED } ctrl_result;

typedef struct tello {
    drone base;
    tello_config cfg;
    tello_link link; /* commands and their answers */
    int state_fd;    /* the state string */

    pthread_mutex_t cmd_lock; /* one command in flight */
    pthread_mutex_t lock;     /* guards everything below */
    pthread_cond_t wake;
    pthread_t state_thread, keepalive_thread;
    bool stopping;

    tello_sdk_state sdk;
    telemetry tm;
    double yaw_ref;
    bool have_yaw_ref; /* a valid yaw arrived: yaw_ref holds the first one */
    /* The last value the drone sent for these was not valid (not finite or
     * out of range, tello_state_validate): that part of the state is
     * unknown until a valid one comes (drone_state.known). */
    bool yaw_bad, h_bad, bat_bad;

    bool connected, flying;
    int battery;          /* -1 until known; always a checked 0-100 */
    double x, y, z;       /* pose: x/y dead-reckoned, z from h */
    double yaw;           /* compass heading */
    bool in_motion;       /* a motion command is under way */
    double motion_end_ms; /* when the last motion command ended */
    double settled_ms;    /* state after this shows the last motion's result */
    double heard_ms;      /* send time of the last command that was answered */
    double keepalive_retry_ms;
    double streamon_ms; /* when `streamon` was sent, -1 before */
} tello;

/* The state listener's thread (tello_telemetry.c): reads the state port,
 * validates each packet and folds it into T until T->stopping. */
void *tello_state_main(void *arg);

/* A copy of the telemetry now. */
telemetry tello_telemetry_now(tello *t);

#endif
