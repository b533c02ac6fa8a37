/*
 * Class names of a detector: the 80 COCO classes built into the binary, or a
 * names file (one class per line, as Darknet and Ultralytics ship them).
 */
#ifndef ALOFT_VISION_NAMES_H
#define ALOFT_VISION_NAMES_H

#include <stddef.h>

#define VISION_COCO_CLASSES 80

/* The COCO class names in model order ("person", "bicycle", ...). */
extern const char *const vision_coco_names[VISION_COCO_CLASSES];

typedef struct vision_names {
    char **v; /* NULL: the COCO names */
    int n;
} vision_names;

/* Loads names from PATH, or the COCO names when PATH is NULL. Blank lines
 * end nothing and are skipped; spaces become '_' so that a name is one word
 * in a scene description. Returns 0, or -1 with a message. */
int vision_names_load(vision_names *names, const char *path, char *err, size_t errlen);

/* The name of class I; "class_I" (in BUF) for classes beyond the list. */
const char *vision_names_get(const vision_names *names, int i, char *buf, size_t buflen);

void vision_names_free(vision_names *names);

#endif
