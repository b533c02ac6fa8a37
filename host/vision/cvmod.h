/*
 * The OpenCV module: every function of vision/opencv.h and vision/view.h
 * is built into a shared object of its own, aloft-opencv.so, which the
 * program opens the first time one of them is called (host/vision/cvmod.c).
 * OpenCV pulls in some 250 shared libraries whose loading and initialisers
 * cost a process about 150 ms; a command or mission that uses no camera,
 * detector or JPEG never pays it.
 *
 * The module exports one symbol, aloft_opencv_api, returning this table;
 * everything else in it is hidden, so its functions never clash with the
 * program's forwarders of the same names.
 */
#ifndef ALOFT_VISION_CVMOD_H
#define ALOFT_VISION_CVMOD_H

#include "vision/objects.h"
#include "vision/opencv.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever the table changes: a module of another build is refused. */
#define VISION_CV_ABI 1

typedef struct vision_cv_api {
    int abi;
    size_t size; /* sizeof(vision_cv_api) of the module's build */
    int (*image_read)(const char *path, vision_frame *out, char *err, size_t errlen);
    unsigned char *(*jpeg_encode)(const vision_frame *f, int quality, size_t *len);
    unsigned char *(*jpeg_encode_marked)(const vision_frame *f, const vision_mark *marks, int n,
                                         int quality, size_t *len);
    int (*letterbox_frame)(const vision_frame *f, int in_w, int in_h, float *blob,
                           vision_letterbox *lb, char *err, size_t errlen);
    vision_net *(*net_load)(const char *model, const char *weights, char *err, size_t errlen);
    int (*net_forward)(vision_net *net, const float *blob, int in_w, int in_h, vision_tensor *outs,
                       int max, char *err, size_t errlen);
    void (*net_free)(vision_net *net);
    int (*hog_detect)(const vision_frame *f, vision_box *out, int max, char *err, size_t errlen);
    vision_capture *(*capture_open)(const char *uri, char *err, size_t errlen);
    int (*capture_read)(vision_capture *c, vision_frame *out, char *err, size_t errlen);
    double (*capture_fps)(vision_capture *c);
    void (*capture_close)(vision_capture *c);
    int (*video_write)(const char *path, const vision_frame *frames, int n, double fps, char *err,
                       size_t errlen);
    unsigned char *(*vision_view_jpeg)(int width, int height, const vision_object *objs, int n,
                                       const char *caption, size_t *len, char *err, size_t errlen);
} vision_cv_api;

typedef const vision_cv_api *(*vision_cv_api_fn)(void);

/* Whether the module is loaded (or loads now): 0, or -1 with the reason
 * (which file was tried, and why it failed). For a clear error before a
 * mission starts. */
int vision_cv_available(char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
