/*
 * What the guard does with a trip of the watch (watch.h, SPEC §10): hold,
 * then bring the drone back.
 *
 *   fence, band  straight back toward home (fence) or vertically (band),
 *                aiming WATCH_REARM_CM inside the limit, in moves each
 *                approved by the constraint check's step check
 *                (drone.check_step) before the driver gets it; repeated
 *                while the measured state is still short of the aim;
 *   battery      straight toward home, then land;
 *   failure      a move refused or failed, or two tries in a row that gained
 *                nothing (a wind stronger than the drone): land where it is.
 *
 * Runs on the thread that holds the driver (the guard's lock): the driver is
 * called directly, its abort callback still answers a cancel.
 */
#ifndef ALOFT_DRONE_WATCH_RETURN_H
#define ALOFT_DRONE_WATCH_RETURN_H

#include "drone/drone.h"
#include "drone/scene.h"
#include "drone/watch.h"

typedef enum watch_end {
    WATCH_BACK = 0,   /* back inside: the mission may replan */
    WATCH_LANDED,     /* landed as the rule wants (battery) */
    WATCH_LANDED_OUT, /* the return could not be made: landed where it was */
    WATCH_UP,         /* neither returned nor landed: the drone may be up */
} watch_end;

/* Handles TRIP on INNER (the driver behind the guard; W its watch, LIM and
 * HOME the guard's). Returns how it ended; WHY says it in words. */
watch_end watch_return(drone *inner, watch *w, const scene_limits *lim, const drone_pose *home,
                       const watch_trip *trip, char *why, size_t whylen);

#endif
