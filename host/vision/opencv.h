/*
 * The OpenCV parts of vision behind a C interface: image decoding, video
 * capture, letterboxing, the DNN module and the HOG people detector. OpenCV
 * 4.6 has no C API for these, so host/vision/opencv.cpp is the one C++ file of
 * the project; everything else in vision is C and sees only this header.
 *
 * No function here throws: OpenCV exceptions become -1/NULL with a message.
 */
#ifndef ALOFT_VISION_OPENCV_H
#define ALOFT_VISION_OPENCV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One camera frame: 8-bit BGR, rows of STRIDE bytes. */
typedef struct vision_frame {
    int w, h, stride;
    unsigned char *bgr; /* malloc'd, owned by the frame */
    double t_ms;        /* capture time on the clock_now_ms clock */
    long seq;           /* frame number within its source, from 1 */
} vision_frame;

/* Frees the pixels of F (not F itself) and zeroes it. */
void vision_frame_clear(vision_frame *f);

/* Copies SRC into DST (reusing DST's buffer when it is large enough).
 * Returns 0, or -1 if out of memory. */
int vision_frame_copy(vision_frame *dst, const vision_frame *src);

/* Decodes an image file into OUT. Returns 0, or -1 with a message
 * ("not an image", "cannot read"). */
int vision_image_read(const char *path, vision_frame *out, char *err, size_t errlen);

/* Encodes F as JPEG (quality 0..100) into a malloc'd buffer; NULL on
 * failure. */
unsigned char *vision_jpeg_encode(const vision_frame *f, int quality, size_t *len);

/* A box to draw: normalised centre and size, and its label. */
typedef struct vision_mark {
    float x, y, w, h;
    const char *label;
} vision_mark;

/* vision_jpeg_encode of F with the N boxes drawn on it and labelled (for the
 * web UI's live view). F is not changed. */
unsigned char *vision_jpeg_encode_marked(const vision_frame *f, const vision_mark *marks, int n,
                                         int quality, size_t *len);

/* Where a frame went in the network input: input = frame * scale + pad. */
typedef struct vision_letterbox {
    int in_w, in_h; /* network input size */
    float scale;
    int pad_x, pad_y;
} vision_letterbox;

/* Scales F to fit IN_W x IN_H keeping its aspect ratio, centres it on grey
 * (114) padding and writes the network input to BLOB as planar RGB floats in
 * 0..1 (3 * in_w * in_h of them). Fills LB. Returns 0, or -1 with a message. */
int vision_letterbox_frame(const vision_frame *f, int in_w, int in_h, float *blob,
                           vision_letterbox *lb, char *err, size_t errlen);

/* A network output tensor (float, row-major). */
typedef struct vision_tensor {
    int ndims;
    int dims[4];
    const float *data; /* owned by the net, valid until its next forward */
} vision_tensor;

typedef struct vision_net vision_net;

/* Loads an ONNX model (WEIGHTS NULL) or a Darknet cfg + weights pair.
 * Returns NULL with a message if a file is missing or the model does not load. */
vision_net *vision_net_load(const char *model, const char *weights, char *err, size_t errlen);

/* Runs the net on a letterboxed BLOB of IN_W x IN_H. Fills up to MAX output
 * tensors and returns how many, or -1 with a message. */
int vision_net_forward(vision_net *net, const float *blob, int in_w, int in_h, vision_tensor *outs,
                       int max, char *err, size_t errlen);

void vision_net_free(vision_net *net);

/* A detection box in frame pixels. */
typedef struct vision_box {
    float x0, y0, x1, y1;
    float score;
    int cls;
} vision_box;

/* OpenCV's default HOG people detector over F. Fills up to MAX boxes (class
 * 0) with score = SVM margin, returns how many, or -1 with a message. */
int vision_hog_detect(const vision_frame *f, vision_box *out, int max, char *err, size_t errlen);

/* A video file, webcam ("webcam:N" or a bare index) or network stream
 * ("udp://..." etc., through FFmpeg), or "pipe:FD": raw H.264 that starts
 * with its parameter sets, read from file descriptor FD with the shortest
 * probe (vision/h264_feed.h writes such a pipe). */
typedef struct vision_capture vision_capture;

vision_capture *vision_capture_open(const char *uri, char *err, size_t errlen);

/* Reads the next frame into OUT (pixels reused when possible; t_ms and seq
 * are left to the caller). Returns 1, 0 at the end of the stream, or -1. */
int vision_capture_read(vision_capture *c, vision_frame *out, char *err, size_t errlen);

/* Frames per second the source declares, or 0 if unknown. */
double vision_capture_fps(vision_capture *c);

void vision_capture_close(vision_capture *c);

/* Writes N frames (all of one size) at FPS: a raw H.264 stream (the Tello's
 * format) if PATH ends in .h264, else a Motion-JPEG AVI. For tests and
 * recordings. Returns 0, or -1 with a message. */
int vision_video_write(const char *path, const vision_frame *frames, int n, double fps, char *err,
                       size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
