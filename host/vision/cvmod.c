/*
 * Opens the OpenCV module on first use (vision/cvmod.h) and forwards every
 * function of vision/opencv.h and vision/view.h to it.
 *
 * Where it is looked for, in order: $ALOFT_OPENCV_MODULE (then nowhere
 * else: the user asked for that file), beside the program (the build
 * directory), and in ../lib/aloft/ from the program (`make install`).
 */
#include "vision/cvmod.h"
#include "vision/view.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MODULE_NAME "aloft-opencv.so"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const vision_cv_api *api;
static char why[1200];

/* Opens PATH and checks its table; appends the reason to WHY on failure. */
static const vision_cv_api *open_module(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const char *reason = NULL;
    const vision_cv_api *t = NULL;
    if (!h) {
        reason = dlerror();
    } else {
        vision_cv_api_fn get = (vision_cv_api_fn)(uintptr_t)dlsym(h, "aloft_opencv_api");
        t = get ? get() : NULL;
        if (!t) {
            reason = "not aloft's OpenCV module (no aloft_opencv_api)";
        } else if (t->abi != VISION_CV_ABI || t->size != sizeof(vision_cv_api)) {
            reason = "built for another version of aloft";
            t = NULL;
        }
        if (!t) dlclose(h);
    }
    if (!t) {
        /* dlerror's text names the file already */
        size_t n = strlen(why);
        if (!h)
            snprintf(why + n, sizeof why - n, "%s%s", n ? "; " : "", reason ? reason : path);
        else
            snprintf(why + n, sizeof why - n, "%s%s: %s", n ? "; " : "", path, reason);
    }
    return t;
}

static void load(void)
{
    const char *env = getenv("ALOFT_OPENCV_MODULE");
    if (env && *env) {
        api = open_module(env);
        return;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(why, sizeof why, "cannot find the program's directory to look for %s",
                 MODULE_NAME);
        return;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    static const char *const where[] = {"", "/../lib/aloft"};
    for (size_t i = 0; i < sizeof where / sizeof *where && !api; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s%s/%s", exe, where[i], MODULE_NAME);
        api = open_module(path);
    }
}

/* FFmpeg's own decoder warnings ("[h264 @ 0x...] non-existing PPS 0
 * referenced" while a stream starts mid-GOP) would reach the user's
 * terminal: OpenCV reads this level when it first opens a video. Set at
 * start-up, before any thread, since setenv is not safe beside getenv;
 * a level the user set is kept (OPENCV_FFMPEG_LOGLEVEL=24 shows them). */
__attribute__((constructor)) static void quiet_ffmpeg(void)
{
    setenv("OPENCV_FFMPEG_LOGLEVEL", "-8", 0);
    /* OpenCV's own default when the variable is unset; set now so that a
     * pipe's options later replace a value (vision_capture_open) instead of
     * adding a variable while other threads may read the environment. */
    setenv("OPENCV_FFMPEG_CAPTURE_OPTIONS", "rtsp_transport;tcp", 0);
}

static const vision_cv_api *cv(char *err, size_t errlen)
{
    pthread_once(&once, load);
    if (!api && err && errlen)
        snprintf(err, errlen, "vision needs aloft's OpenCV module, which did not load (%s)", why);
    return api;
}

int vision_cv_available(char *err, size_t errlen)
{
    return cv(err, errlen) ? 0 : -1;
}

int vision_image_read(const char *path, vision_frame *out, char *err, size_t errlen)
{
    const vision_cv_api *m = cv(err, errlen);
    return m ? m->image_read(path, out, err, errlen) : -1;
}

unsigned char *vision_jpeg_encode(const vision_frame *f, int quality, size_t *len)
{
    const vision_cv_api *m = cv(NULL, 0);
    return m ? m->jpeg_encode(f, quality, len) : NULL;
}

unsigned char *vision_jpeg_encode_marked(const vision_frame *f, const vision_mark *marks, int n,
                                         int quality, size_t *len)
{
    const vision_cv_api *m = cv(NULL, 0);
    return m ? m->jpeg_encode_marked(f, marks, n, quality, len) : NULL;
}

int vision_letterbox_frame(const vision_frame *f, int in_w, int in_h, float *blob,
                           vision_letterbox *lb, char *err, size_t errlen)
{
    const vision_cv_api *m = cv(err, errlen);
    return m ? m->letterbox_frame(f, in_w, in_h, blob, lb, err, errlen) : -1;
}

vision_net *vision_net_load(const char *model, const char *weights, char *err, size_t errlen)
{
    const vision_cv_api *m = cv(err, errlen);
    return m ? m->net_load(model, weights, err, errlen) : NULL;
}

int vision_net_forward(vision_net *net, const float *blob, int in_w, int in_h, vision_tensor *outs,
                       int max, char *err, size_t errlen)
{
    const vision_cv_api *m = cv(err, errlen);
    return m ? m->net_forward(net, blob, in_w, in_h, outs, max, err, errlen) : -1;
}

void vision_net_free(vision_net *net)
{
    /* A net exists only if the module loaded it. */
    if (net) api->net_free(net);
}

int vision_hog_detect(const vision_frame *f, vision_box *out, int max, char *err, size_t errlen)
{
    const vision_cv_api *m = cv(err, errlen);
    return m ? m->hog_detect(f, out, max, err, errlen) : -1;
}

vision_capture *vision_capture_open(const char *uri, char *err, size_t errlen)
{
    const vision_cv_api *m = cv(err, errlen);
    return m ? m->capture_open(uri, err, errlen) : NULL;
}

/* A capture, like a net, exists only if the module opened it: API is set. */
int vision_capture_read(vision_capture *c, vision_frame *out, char *err, size_t errlen)
{
    return api->capture_read(c, out, err, errlen);
}

double vision_capture_fps(vision_capture *c)
{
    return api->capture_fps(c);
}

void vision_capture_close(vision_capture *c)
{
    if (c) api->capture_close(c);
}

int vision_video_write(const char *path, const vision_frame *frames, int n, double fps, char *err,
                       size_t errlen)
{
    const vision_cv_api *m = cv(err, errlen);
    return m ? m->video_write(path, frames, n, fps, err, errlen) : -1;
}

unsigned char *vision_view_jpeg(int width, int height, const vision_object *objs, int n,
                                const char *caption, size_t *len, char *err, size_t errlen)
{
    const vision_cv_api *m = cv(err, errlen);
    return m ? m->vision_view_jpeg(width, height, objs, n, caption, len, err, errlen) : NULL;
}
