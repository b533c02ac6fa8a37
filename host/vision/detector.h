/*
 * Detectors (SPEC §11): what turns one camera frame into vision_objects.
 *
 *   yolo  an ONNX model (YOLOv5 [1,N,5+nc] or YOLOv8/11 [1,4+nc,N], told
 *         apart by the output shape) or a Darknet cfg + weights pair (YOLOv3
 *         / v4-tiny), run by OpenCV's DNN module on a letterboxed frame;
 *   hog   OpenCV's default HOG people detector (no model file);
 *   sim   any observe-style callback, e.g. the simulator's projection, which
 *         sees the world without pixels.
 *
 * A detector fills cls, the normalised box, conf and colour of each object;
 * instance ids are the tracker's job (vision/track.h). A detector is used by
 * one thread at a time.
 */
#ifndef ALOFT_VISION_DETECTOR_H
#define ALOFT_VISION_DETECTOR_H

#include "vision/objects.h"
#include "vision/opencv.h"

#include <stdbool.h>

#define VISION_DEFAULT_CONF 0.25f
#define VISION_DEFAULT_NMS 0.45f
#define VISION_DEFAULT_INPUT 640

typedef enum vision_detector_kind {
    VISION_DETECTOR_YOLO,
    VISION_DETECTOR_HOG,
    VISION_DETECTOR_SIM,
} vision_detector_kind;

/* An observe-style callback (the shape of skill_ctx.observe). */
typedef int (*vision_observe_fn)(void *ud, vision_object *out, int max, char *err, size_t errlen);

typedef struct vision_detector_config {
    vision_detector_kind kind;
    const char *model;         /* yolo: .onnx, or a Darknet .cfg (or its .weights) */
    const char *weights;       /* Darknet weights; NULL: the .cfg's name with .weights */
    const char *names;         /* class names file; NULL: COCO */
    float conf;                /* confidence threshold; 0: 0.25 */
    float nms;                 /* NMS IoU threshold; 0: 0.45 */
    int input_size;            /* network input side; 0: what the model says, else 640 */
    vision_observe_fn observe; /* sim */
    void *observe_ud;
} vision_detector_config;

typedef struct vision_detector vision_detector;

/* Parses "yolo", "hog" or "sim". Returns 0, or -1 for anything else. */
int vision_detector_kind_parse(const char *s, vision_detector_kind *kind);

/* Loads a detector. Returns NULL with a message for a missing or corrupt
 * model, a names file that cannot be read, or an output layout it does not
 * know (the model is tried once on a blank input so that this shows now
 * rather than at the first frame). */
vision_detector *vision_detector_new(const vision_detector_config *cfg, char *err, size_t errlen);

/* A sim detector over an observe-style callback: it ignores frames and
 * returns what FN reports. Shorthand for vision_detector_new with kind sim. */
vision_detector *vision_detector_from_observe(vision_observe_fn fn, void *ud, char *err,
                                              size_t errlen);

/* True if the detector needs camera frames (yolo, hog); false for sim. */
bool vision_detector_needs_frames(const vision_detector *d);

/* What the detector runs: "yolov5", "yolov8", "darknet", "hog" or "sim". */
const char *vision_detector_describe(const vision_detector *d);

/* The network input size (0 for hog and sim). */
void vision_detector_input_size(const vision_detector *d, int *w, int *h);

/* Detects objects in F (may be NULL for sim) into OUT (at most MAX), best
 * first, with class, box, confidence and colour; names left empty except
 * what a sim callback sets. Returns how many, or -1 with a message. */
int vision_detector_run(vision_detector *d, const vision_frame *f, vision_object *out, int max,
                        char *err, size_t errlen);

/* Milliseconds the last run spent inside the network (or HOG), the rest
 * being pre- and post-processing. */
double vision_detector_last_inference_ms(const vision_detector *d);

void vision_detector_free(vision_detector *d);

#endif
