/*
 * Where a detected object is in the world, estimated from one camera view:
 * the drone's pose, the camera's fields of view and the object's box. The
 * bearing comes from the box centre; the distance from the box's size and
 * the usual size of the object's class (a person ~170 cm, a cup ~10 cm).
 * A monocular guess: good to tens of percent at best, which is what the
 * object memory of the store (SPEC §12) keeps as "seen about here".
 */
#ifndef ALOFT_MISSION_SIGHTING_H
#define ALOFT_MISSION_SIGHTING_H

#include "drone/drone.h"
#include "drone/scene.h"
#include "vision/objects.h"

#include <stdbool.h>

/* The usual largest dimension in cm of an object of class CLS (COCO names
 * and a few more); a middling default for unknown classes. */
double sighting_class_size_cm(const char *cls);

/* Estimates the world position (cm, the centre of the object) of O seen
 * from POSE with camera CAM. False when the view gives no fair estimate:
 * the box touches the image border (cut off, so its size says nothing)
 * or is degenerate. */
bool sighting_locate(const drone_pose *pose, const scene_camera *cam, const vision_object *o,
                     double pos[3]);

#endif
