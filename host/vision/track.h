/*
 * Stable instance ids across frames: "person_3" stays person_3 while it
 * moves. Each frame's objects are matched to the tracks of the frames before
 * by class and overlap (or nearness, for an object that moved further than
 * its size); unmatched objects start new tracks with the next number of
 * their class, and tracks unseen for a while are forgotten.
 *
 * Not thread-safe: one tracker per vision thread.
 */
#ifndef ALOFT_VISION_TRACK_H
#define ALOFT_VISION_TRACK_H

#include "vision/objects.h"

typedef struct vision_tracker vision_tracker;

/* A tracker that forgets a track after MAX_MISSED frames without it (0: 15).
 * NULL if out of memory. */
vision_tracker *vision_tracker_new(int max_missed);

/* Names the N objects of one frame (sets their `name`). Objects that already
 * have a name (the simulator names its own) are left as they are. */
void vision_tracker_update(vision_tracker *t, vision_object *objs, int n);

/* Forgets every track and restarts numbering. */
void vision_tracker_reset(vision_tracker *t);

void vision_tracker_free(vision_tracker *t);

#endif
