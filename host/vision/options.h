/*
 * Vision command-line options, shared by `aloft detect` and `aloft run`, so
 * that both spell and check them the same way:
 *
 *   --detector yolo|hog|sim   which detector (run: default sim with a scene)
 *   --model F / --detector-model F
 *                             yolo model: .onnx, or Darknet .cfg/.weights
 *                             (`run` uses --detector-model: its --model names
 *                             the LLM)
 *   --weights F               Darknet weights when not beside the .cfg
 *   --names F                 class names file (default: COCO, built in)
 *   --source S                the camera: an image or video file, webcam:N,
 *                             udp://HOST:PORT, tello[:PORT]
 *   --conf X, --nms X         thresholds (0.25, 0.45)
 *   --input-size N            network input side for models that leave it open
 *   --frame-timeout-ms N      how long a vision skill waits for a fresh frame
 */
#ifndef ALOFT_VISION_OPTIONS_H
#define ALOFT_VISION_OPTIONS_H

#include "vision/detector.h"

#include <getopt.h>
#include <stdbool.h>

/* Long-option codes, clear of host/cmd/cli.h's (1000..) and commands' (1100..). */
enum {
    VISION_OPT_DETECTOR = 1400,
    VISION_OPT_MODEL,
    VISION_OPT_WEIGHTS,
    VISION_OPT_NAMES,
    VISION_OPT_SOURCE,
    VISION_OPT_CONF,
    VISION_OPT_NMS,
    VISION_OPT_INPUT_SIZE,
    VISION_OPT_FRAME_TIMEOUT,
};

#define VISION_COMMON_OPTIONS                                                                      \
    {"detector", required_argument, 0, VISION_OPT_DETECTOR},                                       \
        {"weights", required_argument, 0, VISION_OPT_WEIGHTS},                                     \
        {"names", required_argument, 0, VISION_OPT_NAMES},                                         \
        {"conf", required_argument, 0, VISION_OPT_CONF},                                           \
        {"nms", required_argument, 0, VISION_OPT_NMS},                                             \
    {                                                                                              \
        "input-size", required_argument, 0, VISION_OPT_INPUT_SIZE                                  \
    }

/* For getopt_long tables: `aloft detect` and `aloft run`. */
#define VISION_DETECT_OPTIONS                                                                      \
    VISION_COMMON_OPTIONS,                                                                         \
    {                                                                                              \
        "model", required_argument, 0, VISION_OPT_MODEL                                            \
    }
#define VISION_RUN_OPTIONS                                                                         \
    VISION_COMMON_OPTIONS, {"detector-model", required_argument, 0, VISION_OPT_MODEL},             \
        {"source", required_argument, 0, VISION_OPT_SOURCE},                                       \
    {                                                                                              \
        "frame-timeout-ms", required_argument, 0, VISION_OPT_FRAME_TIMEOUT                         \
    }

/* Help text lines for the options above. */
#define VISION_DETECT_HELP                                                                         \
    "  --detector yolo|hog   detector (yolo needs --model)\n"                                      \
    "  --model FILE          .onnx (YOLOv5/v8 layout) or Darknet .cfg/.weights\n"                  \
    "  --weights FILE        Darknet weights when not beside the .cfg\n"                           \
    "  --names FILE          class names, one a line (default: the 80 COCO classes)\n"             \
    "  --conf X              confidence threshold (default 0.25)\n"                                \
    "  --nms X               NMS IoU threshold (default 0.45)\n"                                   \
    "  --input-size N        network input side if the model does not fix it (default 640)\n"
#define VISION_RUN_HELP                                                                            \
    "  --detector yolo|hog|sim  the mission's eyes (default sim)\n"                                \
    "  --detector-model FILE    yolo model: .onnx or Darknet .cfg/.weights\n"                      \
    "  --weights FILE, --names FILE, --conf X, --nms X, --input-size N  as for detect\n"           \
    "  --source SRC             camera: image/video file, webcam:N, udp://HOST:PORT, "             \
    "tello[:PORT]\n"                                                                               \
    "  --frame-timeout-ms N     wait for a fresh frame after a motion (default 5000)\n"

typedef struct vision_options {
    vision_detector_config det; /* kind, model, weights, names, conf, nms, input_size */
    bool detector_given;
    const char *source;   /* NULL: none (sim), or the Tello stream with --drone tello */
    int frame_timeout_ms; /* 0: 5000 */
} vision_options;

/* Zero options: sim detector, defaults everywhere. */
void vision_options_init(vision_options *o);

/* Stores one option. Returns 1 if OPT is a vision option (stored), 0 if it
 * is not one, -1 with a message for a bad value. */
int vision_options_parse(vision_options *o, int opt, const char *arg, char *err, size_t errlen);

/* Checks the combination once all options are in (a model for yolo, no
 * model for hog/sim). Returns 0, or -1 with a message. */
int vision_options_check(const vision_options *o, char *err, size_t errlen);

#endif
