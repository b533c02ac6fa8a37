#include "vision/options.h"

#include "number.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vision_options_init(vision_options *o)
{
    memset(o, 0, sizeof *o);
    o->det.kind = VISION_DETECTOR_SIM;
}

static int parse_unit(const char *arg, float *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (errno || end == arg || *end || !(v > 0 && v <= 1)) return -1;
    *out = (float)v;
    return 0;
}

int vision_options_parse(vision_options *o, int opt, const char *arg, char *err, size_t errlen)
{
    switch (opt) {
    case VISION_OPT_DETECTOR:
        if (vision_detector_kind_parse(arg, &o->det.kind) != 0) {
            snprintf(err, errlen, "--detector: '%s' is not yolo, hog or sim", arg);
            return -1;
        }
        o->detector_given = true;
        return 1;
    case VISION_OPT_MODEL: o->det.model = arg; return 1;
    case VISION_OPT_WEIGHTS: o->det.weights = arg; return 1;
    case VISION_OPT_NAMES: o->det.names = arg; return 1;
    case VISION_OPT_SOURCE: o->source = arg; return 1;
    case VISION_OPT_CONF:
        if (parse_unit(arg, &o->det.conf) == 0) return 1;
        snprintf(err, errlen, "--conf: '%s' is not a number in (0, 1]", arg);
        return -1;
    case VISION_OPT_NMS:
        if (parse_unit(arg, &o->det.nms) == 0) return 1;
        snprintf(err, errlen, "--nms: '%s' is not a number in (0, 1]", arg);
        return -1;
    case VISION_OPT_INPUT_SIZE:
        if (number_parse_int(arg, 32, 4096, &o->det.input_size) == 0) return 1;
        snprintf(err, errlen, "--input-size: '%s' is not a size in 32..4096", arg);
        return -1;
    case VISION_OPT_FRAME_TIMEOUT:
        if (number_parse_int(arg, 1, 3600000, &o->frame_timeout_ms) == 0) return 1;
        snprintf(err, errlen, "--frame-timeout-ms: '%s' is not a positive number", arg);
        return -1;
    default: return 0;
    }
}

int vision_options_check(const vision_options *o, char *err, size_t errlen)
{
    if (o->det.kind == VISION_DETECTOR_YOLO && !o->det.model) {
        snprintf(err, errlen, "--detector yolo needs a model file");
        return -1;
    }
    if (o->det.kind != VISION_DETECTOR_YOLO && (o->det.model || o->det.weights || o->det.names)) {
        snprintf(err, errlen,
                 "a model, weights or names file only makes sense with --detector yolo");
        return -1;
    }
    if (o->det.kind == VISION_DETECTOR_SIM && o->source) {
        snprintf(err, errlen,
                 "--source needs --detector yolo or hog (sim sees the simulated world)");
        return -1;
    }
    if (o->source && !*o->source) {
        snprintf(err, errlen, "--source is empty");
        return -1;
    }
    return 0;
}
