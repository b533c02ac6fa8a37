#include "vision/names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const vision_coco_names[VISION_COCO_CLASSES] = {
    "person",        "bicycle",      "car",
    "motorcycle",    "airplane",     "bus",
    "train",         "truck",        "boat",
    "traffic_light", "fire_hydrant", "stop_sign",
    "parking_meter", "bench",        "bird",
    "cat",           "dog",          "horse",
    "sheep",         "cow",          "elephant",
    "bear",          "zebra",        "giraffe",
    "backpack",      "umbrella",     "handbag",
    "tie",           "suitcase",     "frisbee",
    "skis",          "snowboard",    "sports_ball",
    "kite",          "baseball_bat", "baseball_glove",
    "skateboard",    "surfboard",    "tennis_racket",
    "bottle",        "wine_glass",   "cup",
    "fork",          "knife",        "spoon",
    "bowl",          "banana",       "apple",
    "sandwich",      "orange",       "broccoli",
    "carrot",        "hot_dog",      "pizza",
    "donut",         "cake",         "chair",
    "couch",         "potted_plant", "bed",
    "dining_table",  "toilet",       "tv",
    "laptop",        "mouse",        "remote",
    "keyboard",      "cell_phone",   "microwave",
    "oven",          "toaster",      "sink",
    "refrigerator",  "book",         "clock",
    "vase",          "scissors",     "teddy_bear",
    "hair_drier",    "toothbrush",
};

void vision_names_free(vision_names *names)
{
    for (int i = 0; i < names->n && names->v; i++)
        free(names->v[i]);
    free(names->v);
    names->v = NULL;
    names->n = 0;
}

int vision_names_load(vision_names *names, const char *path, char *err, size_t errlen)
{
    names->v = NULL;
    names->n = VISION_COCO_CLASSES;
    if (!path) return 0;
    names->n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open names file: %s", path, strerror(errno));
        return -1;
    }
    char line[256];
    int cap = 0;
    while (fgets(line, sizeof line, f)) {
        size_t len = strcspn(line, "\r\n");
        line[len] = '\0';
        while (len && (line[len - 1] == ' ' || line[len - 1] == '\t'))
            line[--len] = '\0';
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s) continue;
        for (char *p = s; *p; p++)
            if (*p == ' ' || *p == '\t') *p = '_';
        if (names->n == cap) {
            cap = cap ? cap * 2 : 64;
            char **v = realloc(names->v, (size_t)cap * sizeof *v);
            if (!v) goto oom;
            names->v = v;
        }
        if (!(names->v[names->n] = strdup(s))) goto oom;
        names->n++;
    }
    fclose(f);
    if (names->n == 0) {
        snprintf(err, errlen, "%s: names file lists no classes", path);
        vision_names_free(names);
        return -1;
    }
    return 0;
oom:
    fclose(f);
    vision_names_free(names);
    snprintf(err, errlen, "out of memory");
    return -1;
}

const char *vision_names_get(const vision_names *names, int i, char *buf, size_t buflen)
{
    if (i >= 0 && i < names->n) return names->v ? names->v[i] : vision_coco_names[i];
    snprintf(buf, buflen, "class_%d", i);
    return buf;
}
