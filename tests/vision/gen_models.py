#!/usr/bin/python3
"""Builds the small detection models the vision tests run.

Each model looks at a grid of square cells and reports a pure-coloured cell as
a COCO object: red -> apple (47), green -> broccoli (50), blue -> car (2).
The score of a class is a linear function of the cell's mean colour
(own channel minus the two others), so a block of (200, 0, 0) scores 0.784.
Every cell of the ONNX models has two predictions ("anchors"): the first is
the cell's exact box, the second a box 1.25x larger scoring 0.8x as much -- a
duplicate that non-maximum suppression must merge.

Usage: gen_models.py OUTDIR [--bench]
       gen_models.py --zero-weights CFG OUT   all-zero weights for a Darknet cfg

Writes OUTDIR/yolov5.onnx  ([1, N, 85]: cx cy w h obj classes..., obj = 0.9)
       OUTDIR/yolov8.onnx  ([1, 84, N]: cx cy w h classes...)
       OUTDIR/tiny.cfg + OUTDIR/tiny.weights (Darknet, one [yolo] layer)
       OUTDIR/tiny2.cfg + OUTDIR/tiny2.weights (Darknet, two [yolo] heads like
           YOLOv3-tiny: the second sees the same cells through a [route] and
           predicts a box twice the size, its class logits 1 lower)
With --bench also yolov5_640.onnx and yolov8_640.onnx (640 input, 32-pixel
cells), the input size of real exports, and, when Debian's darknet package is
installed, yolov3-tiny.cfg + .weights: the real network (its cfg from
/usr/share/darknet/cfg) with all-zero weights, which costs what the real model
costs per frame, for the benchmark.
"""
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NC = 80
COLOURS = {47: 0, 50: 1, 2: 2}  # class -> RGB channel index
DUP_SCORE, DUP_SIZE, OBJ = 0.8, 1.25, 0.9


def class_weights(scale):
    """Conv weights [NC, 3] and bias [NC]: own channel minus the others."""
    w = np.zeros((NC, 3), np.float32)
    b = np.full(NC, -1.0, np.float32)  # classes without a colour never fire
    for cls, ch in COLOURS.items():
        w[cls, :] = -scale
        w[cls, ch] = scale
        b[cls] = 0.0
    return w, b


def onnx_model(layout, size, cell, path):
    g = size // cell
    feats = 5 + NC if layout == "v5" else 4 + NC
    anchors = 2
    w = np.zeros((anchors * feats, 3, 1, 1), np.float32)
    b = np.zeros(anchors * feats, np.float32)
    boxes = np.zeros((1, anchors * feats, g, g), np.float32)
    centres = (np.arange(g, dtype=np.float32) + 0.5) * cell
    for a in range(anchors):
        base = a * feats
        side = cell * (1.0 if a == 0 else DUP_SIZE)
        boxes[0, base + 0] = centres[None, :]  # cx varies along columns
        boxes[0, base + 1] = centres[:, None]  # cy along rows
        boxes[0, base + 2] = side
        boxes[0, base + 3] = side
        cw, cb = class_weights(1.0 if a == 0 else DUP_SCORE)
        first = base + (5 if layout == "v5" else 4)
        if layout == "v5":
            b[base + 4] = OBJ
        w[first:first + NC, :, 0, 0] = cw
        b[first:first + NC] = cb
    n = anchors * g * g
    if layout == "v5":
        perm, shape = [0, 1, 3, 2], [1, n, feats]
    else:
        perm, shape = [0, 2, 1, 3], [1, feats, n]
    nodes = [
        helper.make_node("AveragePool", ["images"], ["pooled"],
                         kernel_shape=[cell, cell], strides=[cell, cell]),
        helper.make_node("Conv", ["pooled", "w", "b"], ["scores"], kernel_shape=[1, 1]),
        helper.make_node("Add", ["scores", "boxes"], ["raw"]),
        helper.make_node("Reshape", ["raw", "shape4"], ["split"]),
        helper.make_node("Transpose", ["split"], ["moved"], perm=perm),
        helper.make_node("Reshape", ["moved", "shape3"], ["output0"]),
    ]
    inits = [
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(b, "b"),
        numpy_helper.from_array(boxes, "boxes"),
        numpy_helper.from_array(np.array([1, anchors, feats, g * g], np.int64), "shape4"),
        numpy_helper.from_array(np.array(shape, np.int64), "shape3"),
    ]
    graph = helper.make_graph(
        nodes, "blocks_" + layout,
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, path)


def darknet_model(size, cell, cfg_path, weights_path):
    """One strided convolution averages each cell and scores it; the [yolo]
    layer turns logits into boxes (tx = ty = tw = th = 0 -> the anchor box
    centred in the cell). Logits: 10 * (own - others) - 3."""
    feats = 5 + NC
    cfg = f"""[net]
width={size}
height={size}
channels=3

[convolutional]
filters={feats}
size={cell}
stride={cell}
pad=0
activation=linear

[yolo]
mask=0
anchors={cell},{cell}
classes={NC}
num=1
"""
    with open(cfg_path, "w") as f:
        f.write(cfg)
    k = np.zeros((feats, 3), np.float32)
    bias = np.full(feats, -10.0, np.float32)  # classes without a colour never fire
    bias[0:4] = 0.0  # tx ty tw th = 0: the anchor box centred in its cell
    bias[4] = 8.0  # every cell is an object; the class score decides
    cw, _ = class_weights(10.0)
    for cls in COLOURS:
        k[5 + cls] = cw[cls]
        bias[5 + cls] = -3.0
    weights = np.repeat(k[:, :, None, None], cell * cell, axis=2).reshape(feats, 3, cell, cell)
    weights = weights / float(cell * cell)
    with open(weights_path, "wb") as f:
        f.write(struct.pack("<iiiQ", 0, 2, 0, 0))
        f.write(bias.astype("<f4").tobytes())
        f.write(weights.astype("<f4").tobytes())


def darknet_two_heads(size, cell, cfg_path, weights_path):
    feats = 5 + NC
    cfg = f"""[net]
width={size}
height={size}
channels=3

[convolutional]
filters={feats}
size={cell}
stride={cell}
pad=0
activation=linear

[yolo]
mask=0
anchors={cell},{cell}, {2 * cell},{2 * cell}
classes={NC}
num=2

[route]
layers=-2

[convolutional]
filters={feats}
size=1
stride=1
pad=0
activation=linear

[yolo]
mask=1
anchors={cell},{cell}, {2 * cell},{2 * cell}
classes={NC}
num=2
"""
    with open(cfg_path, "w") as f:
        f.write(cfg)
    # The first convolution is tiny.cfg's; the second passes its logits on,
    # class logits lowered by 1.
    tmp = weights_path + ".first"
    darknet_model(size, cell, cfg_path + ".unused", tmp)
    with open(tmp, "rb") as f:
        first = f.read()
    os.remove(tmp)
    os.remove(cfg_path + ".unused")
    bias = np.zeros(feats, np.float32)
    bias[5:] = -1.0
    ident = np.eye(feats, dtype=np.float32)
    with open(weights_path, "wb") as f:
        f.write(first)
        f.write(bias.astype("<f4").tobytes())
        f.write(ident.astype("<f4").tobytes())


def zero_weights(cfg_path, out_path):
    """Weights of the right size for any Darknet cfg built from convolutional,
    maxpool, route, upsample, shortcut and yolo layers: zero everywhere but
    batch-norm scales and variances (1), so the real network loads and runs."""
    sections, cur = [], None
    for line in open(cfg_path):
        line = line.split("#")[0].strip()
        if line.startswith("["):
            cur = {"type": line.strip("[]")}
            sections.append(cur)
        elif "=" in line and cur is not None:
            k, v = line.split("=", 1)
            cur[k.strip()] = v.strip()
    net, layers = sections[0], sections[1:]
    chans, out = [], [struct.pack("<iiiQ", 0, 2, 0, 0)]
    prev = int(net.get("channels", 3))
    for i, l in enumerate(layers):
        t = l["type"]
        if t == "convolutional":
            f, k = int(l["filters"]), int(l["size"])
            bn = int(l.get("batch_normalize", 0))
            parts = [np.zeros(f)] + ([np.ones(f), np.zeros(f), np.ones(f)] if bn else [])
            parts.append(np.zeros(f * prev * k * k))
            out += [np.concatenate(parts).astype("<f4").tobytes()]
            prev = f
        elif t == "route":
            refs = [int(x) for x in l["layers"].split(",")]
            prev = sum(chans[r if r >= 0 else i + r] for r in refs)
        chans.append(prev)
    with open(out_path, "wb") as f:
        f.write(b"".join(out))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--zero-weights":
        zero_weights(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "--bench"):
        sys.exit("usage: gen_models.py OUTDIR [--bench]")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    onnx_model("v5", 128, 16, os.path.join(out, "yolov5.onnx"))
    onnx_model("v8", 160, 32, os.path.join(out, "yolov8.onnx"))
    darknet_model(64, 16, os.path.join(out, "tiny.cfg"), os.path.join(out, "tiny.weights"))
    darknet_two_heads(64, 16, os.path.join(out, "tiny2.cfg"), os.path.join(out, "tiny2.weights"))
    if len(sys.argv) == 3:
        onnx_model("v5", 640, 32, os.path.join(out, "yolov5_640.onnx"))
        onnx_model("v8", 640, 32, os.path.join(out, "yolov8_640.onnx"))
        real = "/usr/share/darknet/cfg/yolov3-tiny.cfg"
        if os.path.exists(real):
            cfg = os.path.join(out, "yolov3-tiny.cfg")
            with open(real) as src, open(cfg, "w") as dst:
                dst.write(src.read())
            zero_weights(cfg, os.path.join(out, "yolov3-tiny.weights"))


if __name__ == "__main__":
    main()
