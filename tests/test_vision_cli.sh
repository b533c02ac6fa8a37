#!/bin/bash
# aloft detect (SPEC §2): JSON output, ids across images, HOG on a real photo,
# Darknet models, and exit codes for usage errors (2) and bad input (1).
set -u
ALOFT=${ALOFT:?} SRC=${SRC:?} BUILD=${BUILD:-/tmp}
PY=/usr/bin/python3
work=$(mktemp -d "$BUILD/vision_cli_XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# expect_exit CODE DESCRIPTION CMD... : runs CMD, checks its exit status.
expect_exit() {
    local want=$1 what=$2
    shift 2
    "$@" >"$work/out" 2>"$work/err"
    local got=$?
    [ "$got" -eq "$want" ] || fail "$what: exit $got, want $want ($(cat "$work/err"))"
}

$PY "$SRC/tests/vision/gen_models.py" "$work" || { echo "cannot generate models" >&2; exit 1; }

# Frames with coloured blocks, as PPM (the 128-pixel YOLOv5 model sees 16-pixel cells).
$PY - "$work" <<'PYEOF'
import sys
out = sys.argv[1]
def ppm(name, w, h, blocks):
    px = bytearray(w * h * 3)
    for (x0, y0, x1, y1, rgb) in blocks:
        for y in range(y0, y1):
            for x in range(x0, x1):
                px[(y * w + x) * 3:(y * w + x) * 3 + 3] = bytes(rgb)
    with open(f"{out}/{name}", "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (w, h) + bytes(px))
ppm("a.ppm", 128, 128, [(16, 32, 32, 48, (200, 0, 0)), (96, 96, 112, 112, (0, 0, 240))])
ppm("b.ppm", 128, 128, [(32, 32, 48, 48, (200, 0, 0)), (96, 96, 112, 112, (0, 0, 240))])
ppm("wide.ppm", 320, 160, [(64, 48, 128, 112, (0, 220, 0))])  # cell (1,2) of the 160 model
PYEOF
# A node OpenCV 4.6 cannot build, as in YOLOv8/YOLO11 exports.
$PY - "$work" <<'PYEOF'
import sys
from onnx import TensorProto, helper, save
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8])
g = helper.make_graph([helper.make_node("NonMaxSuppression", ["x", "x"], ["y"])], "g", [x], [y])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1] + "/newer.onnx")
PYEOF
printf 'not a picture\n' >"$work/text.jpg"
printf 'garbage' >"$work/corrupt.onnx"

expect_exit 0 "--help" "$ALOFT" detect --help
grep -q -- "--detector" "$work/out" || fail "--help text"
expect_exit 2 "no --detector" "$ALOFT" detect "$work/a.ppm"
expect_exit 2 "unknown detector" "$ALOFT" detect --detector ssd "$work/a.ppm"
expect_exit 2 "yolo without model" "$ALOFT" detect --detector yolo "$work/a.ppm"
expect_exit 2 "no image" "$ALOFT" detect --detector hog
expect_exit 2 "bad --conf" "$ALOFT" detect --detector hog --conf 7 "$work/a.ppm"
expect_exit 1 "missing model" "$ALOFT" detect --detector yolo --model "$work/none.onnx" "$work/a.ppm"
grep -q "not found" "$work/err" || fail "missing model message: $(cat "$work/err")"
expect_exit 1 "corrupt model" "$ALOFT" detect --detector yolo --model "$work/corrupt.onnx" "$work/a.ppm"
grep -q "cannot load model" "$work/err" || fail "corrupt model message: $(cat "$work/err")"
grep -q "OpenCV 4.7" "$work/err" && fail "a corrupt file is not a newer export: $(cat "$work/err")"
# A model OpenCV cannot build: one line naming the file, what needs a newer
# OpenCV and what works instead; none of OpenCV's internals.
expect_exit 1 "unbuildable model" "$ALOFT" detect --detector yolo --model "$work/newer.onnx" "$work/a.ppm"
[ "$(wc -l <"$work/err")" -eq 1 ] || fail "one line, got: $(cat "$work/err")"
grep -q "newer.onnx: cannot load model: .*NonMaxSuppression.*need OpenCV 4.7 or newer.*YOLOv5 ONNX export at opset 12.*Darknet tiny" \
    "$work/err" || fail "unbuildable model message: $(cat "$work/err")"
grep -Eq "\.cpp|\.hpp|in function|OpenCV\(" "$work/err" && fail "OpenCV internals shown: $(cat "$work/err")"
expect_exit 1 "non-image" "$ALOFT" detect --detector hog "$work/text.jpg"
grep -q "not an image" "$work/err" || fail "non-image message: $(cat "$work/err")"
expect_exit 1 "missing image" "$ALOFT" detect --detector hog "$work/none.png"

# Two frames of one sequence (options after the images, GNU style): the apple
# moves one cell and keeps its id; the scene lines follow SPEC §11.
expect_exit 0 "yolov5 json" "$ALOFT" detect "$work/a.ppm" "$work/b.ppm" --detector yolo \
    --model "$work/yolov5.onnx" --json
$PY - "$work/out" <<'PYEOF' || fail "yolov5 json content"
import json, re, sys
doc = json.load(open(sys.argv[1]))
assert isinstance(doc, list) and len(doc) == 2, doc
for img, ax in zip(doc, (24 / 128, 40 / 128)):
    objs = {o["class"]: o for o in img["objects"]}
    assert set(objs) == {"apple", "car"}, objs
    a, c = objs["apple"], objs["car"]
    assert a["id"] == "apple_1" and c["id"] == "car_1", (a, c)
    assert a["color"] == "red" and c["color"] == "blue", (a, c)
    assert abs(a["x"] - ax) < 0.01 and abs(a["y"] - 40 / 128) < 0.01, a
    assert abs(a["w"] - 0.125) < 0.01 and abs(a["h"] - 0.125) < 0.01, a
    assert abs(a["conf"] - 0.9 * 200 / 255) < 0.01, a
    assert set(a) == {"class", "id", "x", "y", "w", "h", "conf", "color"}, a
    lines = img["scene"].splitlines()
    assert len(lines) == 2, lines
    for line in lines:
        m = re.fullmatch(r"(\w+) x:(\d\.\d\d) y:(\d\.\d\d) width:(\d\.\d\d) height:(\d\.\d\d) color:(\w+)", line)
        assert m, line
        o = next(o for o in img["objects"] if o["id"] == m.group(1))
        for k, v in zip("xywh", m.group(2, 3, 4, 5)):
            assert abs(float(v) - o[k]) <= 0.0051, (line, o)
        assert m.group(6) == o["color"], line
PYEOF

# YOLOv8 layout, a wide image (letterboxed), plain-text output.
expect_exit 0 "yolov8 text" "$ALOFT" detect --detector yolo --model "$work/yolov8.onnx" "$work/wide.ppm"
grep -Eq "^broccoli_1 x:0\.[0-9]{2} y:0\.[0-9]{2} width:0\.[0-9]{2} height:0\.[0-9]{2} color:green$" \
    "$work/out" || fail "yolov8 text output: $(cat "$work/out")"

# Darknet cfg + weights (the weights found beside the cfg).
expect_exit 0 "darknet" "$ALOFT" detect --detector yolo --model "$work/tiny.cfg" --json "$work/a.ppm"
$PY -c '
import json, sys
doc = json.load(open(sys.argv[1]))
classes = sorted(o["class"] for o in doc[0]["objects"])
assert classes == ["apple", "car"], classes
' "$work/out" || fail "darknet output: $(cat "$work/out")"

# HOG finds the woman in Debian darknet's person.jpg (she stands at x ~0.30-0.42).
expect_exit 0 "hog" "$ALOFT" detect --detector hog --json /usr/share/darknet/data/person.jpg
$PY -c '
import json, sys
objs = json.load(open(sys.argv[1]))[0]["objects"]
people = [o for o in objs if o["class"] == "person" and 0.26 < o["x"] < 0.46 and o["h"] > 0.4]
assert people, objs
' "$work/out" || fail "hog person: $(cat "$work/out")"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)" >&2; exit 1; }
echo "ok"
