/*
 * Turning YOLO network outputs into boxes: the output layout, decoding with a
 * confidence threshold, mapping back through the letterbox, and non-maximum
 * suppression. Pure C so that it can be measured and tested without a net.
 */
#ifndef ALOFT_VISION_YOLO_H
#define ALOFT_VISION_YOLO_H

#include "vision/opencv.h"

typedef enum vision_layout {
    VISION_LAYOUT_V5,      /* [1, N, 5+nc]: cx cy w h (input pixels), objectness, scores */
    VISION_LAYOUT_V8,      /* [1, 4+nc, N]: cx cy w h (input pixels), scores (YOLOv8/11) */
    VISION_LAYOUT_DARKNET, /* [rows, 5+nc] per output: cx cy w h (0..1), obj, obj*score */
} vision_layout;

/* The name of a layout ("yolov5", "yolov8", "darknet"). */
const char *vision_layout_name(vision_layout l);

/* Works out the layout of an ONNX model's output tensor T from its shape:
 * [1, N, 5+nc] is YOLOv5, [1, 4+nc, N] is YOLOv8/11. NC_HINT (the number of
 * class names, 0 if unknown) settles shapes that fit both. Sets *NC.
 * Returns 0, or -1 with a message for a shape that is neither. */
int vision_yolo_layout(const vision_tensor *t, int nc_hint, vision_layout *layout, int *nc,
                       char *err, size_t errlen);

/* A growable list of boxes. */
typedef struct vision_boxes {
    vision_box *v;
    int n, cap;
} vision_boxes;

void vision_boxes_free(vision_boxes *b);

/* Appends to OUT every prediction of the NT tensors scoring at least CONF
 * (v5: objectness x class score; v8: class score; Darknet: its score) with
 * its box mapped from network input back to a FRAME_W x FRAME_H frame and
 * clipped to it. Returns 0, or -1 if out of memory or a tensor does not fit
 * the layout. */
int vision_yolo_decode(vision_layout layout, const vision_tensor *ts, int nt, int nc,
                       const vision_letterbox *lb, int frame_w, int frame_h, float conf,
                       vision_boxes *out, char *err, size_t errlen);

/* Intersection over union of two boxes (0 if either is empty). */
float vision_iou(const vision_box *a, const vision_box *b);

/* Greedy per-class non-maximum suppression in place: keeps the best box of
 * every group overlapping by more than IOU, best first. Returns how many. */
int vision_nms(vision_box *boxes, int n, float iou);

#endif
