/*
 * aloft detect: runs a detector over image files (SPEC §2) and prints each
 * image's objects and scene description. The images are taken as frames of
 * one sequence, so an object keeps its id (person_1) from image to image.
 */
#include "cmd/cli.h"
#include "vision/detector.h"
#include "vision/options.h"
#include "vision/track.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "Usage: aloft detect --detector yolo|hog [--model F] [--names F] [--json] IMAGE...\n"
    "\n"
    "Run vision on images and print the objects found and the scene description.\n"
    "\n" VISION_DETECT_HELP "  --json                one JSON document:\n"
    "                        [{\"image\",\"objects\":[{\"class\",\"id\",\"x\",\"y\",\"w\",\"h\","
    "\"conf\",\"color\"}],\"scene\"}]\n"
    "  --help                this text\n"
    "\n"
    "Exit status: 0, 1 an image or model could not be read, 2 usage error.\n";

static double round4(double v)
{
    return round(v * 1e4) / 1e4;
}

static cJSON *image_json(const char *path, const vision_object *objs, int n, const char *scene)
{
    cJSON *img = cJSON_CreateObject();
    cJSON_AddStringToObject(img, "image", path);
    cJSON *arr = cJSON_AddArrayToObject(img, "objects");
    for (int i = 0; i < n; i++) {
        const vision_object *o = &objs[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "class", o->cls);
        cJSON_AddStringToObject(j, "id", o->name);
        cJSON_AddNumberToObject(j, "x", round4(o->x));
        cJSON_AddNumberToObject(j, "y", round4(o->y));
        cJSON_AddNumberToObject(j, "w", round4(o->w));
        cJSON_AddNumberToObject(j, "h", round4(o->h));
        cJSON_AddNumberToObject(j, "conf", round4(o->conf));
        cJSON_AddStringToObject(j, "color", o->color);
        cJSON_AddItemToArray(arr, j);
    }
    cJSON_AddStringToObject(img, "scene", scene);
    return img;
}

/* The vision options (the shared ones are cli_parse_options's). */
static int detect_option(void *ud, int opt, const char *arg)
{
    char err[512];
    int r = vision_options_parse(ud, opt, arg, err, sizeof err);
    if (r < 0) return cli_usage_error("detect", "%s", err);
    if (r == 0) return cli_usage_error("detect", "unknown option");
    return 0;
}

int cmd_detect(int argc, char **argv)
{
    static const struct option opts[] = {VISION_DETECT_OPTIONS, CLI_COMMON_OPTIONS, {0, 0, 0, 0}};
    cli_common common = {.cmd = "detect"};
    vision_options vo;
    vision_options_init(&vo);
    char err[512];
    int parsed = cli_parse_options(&common, argc, argv, opts, usage, detect_option, &vo);
    if (parsed >= 0) return parsed;
    if (!vo.detector_given) return cli_usage_error("detect", "--detector yolo|hog is required");
    if (vo.det.kind == VISION_DETECTOR_SIM)
        return cli_usage_error("detect",
                               "the sim detector sees scenes, not images: use yolo or hog");
    if (vision_options_check(&vo, err, sizeof err) != 0)
        return cli_usage_error("detect", "%s", err);
    if (optind >= argc) return cli_usage_error("detect", "no image given");

    vision_detector *det = vision_detector_new(&vo.det, err, sizeof err);
    if (!det) return cli_fail("detect", "%s", err);
    vision_tracker *tracker = vision_tracker_new(0);
    cJSON *doc = common.json ? cJSON_CreateArray() : NULL;
    vision_frame frame = {0};
    static vision_object objs[VISION_MAX_OBJECTS];
    static char scene[VISION_MAX_OBJECTS * 128];
    int rc = CLI_OK;
    for (int i = optind; i < argc && rc == CLI_OK; i++) {
        if (vision_image_read(argv[i], &frame, err, sizeof err) != 0) {
            rc = cli_fail("detect", "%s", err);
            break;
        }
        int n = vision_detector_run(det, &frame, objs, VISION_MAX_OBJECTS, err, sizeof err);
        if (n < 0) {
            rc = cli_fail("detect", "%s: %s", argv[i], err);
            break;
        }
        if (tracker) vision_tracker_update(tracker, objs, n);
        vision_describe(objs, n, scene, sizeof scene);
        if (doc) {
            cJSON_AddItemToArray(doc, image_json(argv[i], objs, n, scene));
        } else {
            printf("%s: %d object%s (%s)\n%s", argv[i], n, n == 1 ? "" : "s",
                   vision_detector_describe(det), scene);
            fflush(stdout);
        }
    }
    if (doc) {
        if (rc == CLI_OK)
            rc = cli_print_json(doc);
        else
            cJSON_Delete(doc);
    }
    vision_frame_clear(&frame);
    vision_tracker_free(tracker);
    vision_detector_free(det);
    return rc;
}
