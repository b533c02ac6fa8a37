/*
 * Task-relevant scene descriptions: the planning prompt lists the objects a
 * task concerns first and leaves out the rest beyond a cap, so that a
 * crowded view does not cost hundreds of prompt tokens the plan never uses.
 * An object concerns the task when the task names its class (or a synonym,
 * or the last word of a two-word class: "table" for "dining table"), names
 * a category it belongs to ("eat" for the edible classes, "people" for
 * person, ...), or names its colour. Words such as "item", "object" or
 * "largest" make every object relevant. probe keeps the full view.
 */
#ifndef ALOFT_VISION_RELEVANCE_H
#define ALOFT_VISION_RELEVANCE_H

#include "vision/objects.h"

#include <stdbool.h>
#include <stddef.h>

/* Objects a planning prompt lists beyond the relevant ones. */
#define VISION_PROMPT_CAP 12

/* True when TASK concerns object O. */
bool vision_relevant(const vision_object *o, const char *task);

/* Orders OBJS so that the objects TASK concerns come first, each group in
 * its previous order. Returns how many a prompt should list: every relevant
 * object, and the others while fewer than CAP are listed. */
int vision_relevant_first(vision_object *objs, int n, const char *task, int cap);

/* The scene description for planning TASK (SPEC §11 lines, relevant objects
 * first, capped as above, then "(N more objects in view not listed)" when
 * some were left out). Reorders OBJS. Returns the length it needed (like
 * snprintf). */
size_t vision_describe_for_task(vision_object *objs, int n, const char *task, char *out,
                                size_t outlen);

#endif
