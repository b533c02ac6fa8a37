/*
 * The input size an ONNX model declares. OpenCV 4.6 does not expose it, and
 * a model exported at 320 or 416 fails at any other size, so the declared
 * shape is read from the file itself: just enough protobuf wire format to
 * walk ModelProto.graph.input[0].type.tensor_type.shape.
 */
#ifndef ALOFT_VISION_ONNX_SHAPE_H
#define ALOFT_VISION_ONNX_SHAPE_H

#include <stddef.h>

/* Fills W and H from the first graph input of the ONNX file PATH when it is
 * a fixed [N, C, H, W] shape. Returns 0, or -1 (unreadable file, dynamic or
 * missing shape). */
int vision_onnx_input_size(const char *path, int *w, int *h);

/* The same for a model already in memory (LEN bytes at DATA); never reads
 * outside them, whatever the bytes. */
int vision_onnx_input_size_mem(const unsigned char *data, size_t len, int *w, int *h);

#endif
