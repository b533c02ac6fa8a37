/*
 * Object memory in the planning prompt: the objects of this world that the
 * store remembers (SPEC §12) and the camera does not see now, as short
 * lines the LLM can plan with:
 *
 *   apple #12: about 3 m behind, seen 2 min ago
 *
 * The direction is relative to the drone's heading now (ahead, right,
 * behind, left; above or below when it is nearly straight up or down), the
 * distance in whole metres, the age rounded to seconds, minutes, hours or
 * days. Nearest first, and among objects at the same rounded distance the
 * most recently seen first. Capped by a number of lines and a token budget,
 * so that a large memory never crowds the prompt; what is left out is
 * counted in one closing line. An object in view now is described by the
 * scene already and is not repeated.
 */
#ifndef ALOFT_MISSION_MEMORY_H
#define ALOFT_MISSION_MEMORY_H

#include "drone/drone.h"
#include "drone/scene.h"
#include "store/store.h"
#include "vision/objects.h"

#include <stddef.h>

#define MEMORY_PROMPT_LINES 8    /* remembered objects listed at most */
#define MEMORY_PROMPT_TOKENS 128 /* their block's budget (about 4 bytes a token) */
#define MEMORY_RECALL_MAX 64     /* the most recent ones read from the store */
/* A remembered object this close (cm) to where an object of its class in
 * view is estimated to be is that object: monocular estimates are rough. */
#define MEMORY_SAME_CM 100.0

/* Where remembered objects come from: up to MAX of this world's, most
 * recently seen first, into OUT with their ages in seconds into AGE_S.
 * Returns how many, or -1 (then the prompt simply lists none). */
typedef struct mission_memory {
    int (*recall)(void *ud, store_object *out, double *age_s, int max);
    void *ud;
} mission_memory;

typedef struct memory_limits {
    int max_lines;  /* <= 0: MEMORY_PROMPT_LINES */
    int max_tokens; /* <= 0: MEMORY_PROMPT_TOKENS */
} memory_limits;

/* The memory block for a planning prompt from the N remembered objects
 * OBJS (ages AGE_S) seen from POSE with camera CAM (may be NULL), leaving
 * out those matching one of the NVIEW objects in VIEW: a heading line,
 * then one line per object within LIM, then "(K more ...)" when some were
 * left out. "" when nothing is to be said. Returns the length it needed
 * (like snprintf). */
size_t memory_describe(const store_object *objs, const double *age_s, int n, const drone_pose *pose,
                       const scene_camera *cam, const vision_object *view, int nview,
                       const memory_limits *lim, char *out, size_t outlen);

#endif
