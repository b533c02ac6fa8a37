/*
 * What vision reports: objects in the current camera view, in normalised
 * image coordinates (x, y = box centre, w, h = box size, all in 0..1; x grows
 * to the right, y downwards). Shared by the simulator's camera, YOLO and HOG.
 */
#ifndef ALOFT_VISION_OBJECTS_H
#define ALOFT_VISION_OBJECTS_H

#include <stddef.h>

#define VISION_NAME_MAX 48
#define VISION_MAX_OBJECTS 128

typedef struct vision_object {
    char name[VISION_NAME_MAX]; /* instance id, e.g. "apple_2" */
    char cls[VISION_NAME_MAX];  /* class, e.g. "apple" */
    float x, y, w, h;
    float conf;
    char color[16]; /* dominant colour name, or "" */
} vision_object;

/* Appends the SPEC §11 scene description of OBJS to OUT, one object per line:
 * "apple_2 x:0.21 y:0.34 width:0.37 height:0.56 color:red". Returns the length
 * it needed (like snprintf). */
size_t vision_describe(const vision_object *objs, int n, char *out, size_t outlen);

/* The object a skill argument names: an instance id ("apple_2") matches that
 * object; a class ("apple") matches the largest object of that class; a
 * class with an x ("apple[0.3]", TypeFly 2024) the one nearest that x in the
 * view. ' ' and '_' match alike ("sports ball", sports_ball). NULL if none
 * is visible. */
const vision_object *vision_find(const vision_object *objs, int n, const char *name);

#endif
