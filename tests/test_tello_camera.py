#!/usr/bin/python3
# labels: tello
"""A Tello's own camera, end to end: the emulator streams H.264 after
`streamon` as a Tello does (tests/tools/tello_video.h), and `aloft run
--drone tello --detector yolo` sees through it, with no photo file: the
generated test model finds the emulator's red block as an apple exactly
where it is drawn. FFmpeg's decoder warnings stay off the terminal. A camera
that never sends a frame ends the mission with a clear error, a JSON
report and the drone landed. Pictures: test_tello_pictures.py."""

import json
import os
import subprocess
import sys
import tempfile

from tello_emu_proc import Emu

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def fly(emu, tmp, plan, *extra, detector=True):
    eyes = ["--detector", "yolo", "--detector-model",
            os.path.join(tmp, "yolov5.onnx")] if detector else []
    args = [ALOFT, "run"] + emu.args() + eyes + [
        "--db", os.path.join(tmp, "m.db"), "--pictures", tmp, "--json", "--plan",
        "-"] + list(extra)
    p = subprocess.run(args, input=plan, capture_output=True, text=True, timeout=120)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = None
    return p.returncode, doc, p.stderr


def main():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests/vision/gen_models.py"), tmp],
                       check=True)

        # The camera streams: the apple is seen where the emulator drew it,
        # cell [480, 600) x [360, 480) of 960 x 720.
        emu = Emu(tmp, camera=True)
        try:
            rc, doc, err = fly(emu, tmp, "?iv('apple'){l(ox('apple'));l(oy('apple'))}")
        finally:
            emu.stop()
        check(rc == 0 and doc is not None and doc["ok"], "flown with the camera: %s %s" % (rc, err))
        if doc and len(doc["logs"]) == 2:
            x, y = float(doc["logs"][0]), float(doc["logs"][1])
            check(abs(x - 0.5625) < 0.01 and abs(y - 0.5833) < 0.01,
                  "the apple at (%.4f, %.4f), drawn at (0.5625, 0.5833)" % (x, y))
        else:
            check(False, "two logs: %s" % (doc and doc["logs"]))
        check("streamon" in emu.sent(), "the camera was switched on: %s" % emu.sent())
        video = emu.lines("video")
        check(video and int(video[-1].split()[0]) > 0, "the emulator sent frames: %s" % video)
        check("[h264 @" not in err and "FFMPEG" not in err,
              "no decoder chatter on stderr: %r" % err[-400:])

        # A camera that never sends: the mission ends with a clear error, one
        # JSON report, and the drone on the ground.
        emu = Emu(tmp, "--video-start-ms", "100000", camera=True)
        try:
            rc, doc, err = fly(emu, tmp, "?iv('apple'){l('seen')}")
        finally:
            emu.stop()
        check(rc == 1, "no frames: exit %s" % rc)
        check(doc is not None and doc["ok"] is False and "tello" in (doc["error"] or ""),
              "a JSON report naming the camera: %s" % (doc and doc["error"]))
        check(not emu.lines("recv") or emu.sent()[-1] in ("land", "streamoff") or
              "land" in emu.sent(), "landed: %s" % emu.sent())
        check(doc is not None and doc["logs"] == [], "nothing seen: %s" % (doc and doc["logs"]))
    print("ok" if failures == 0 else "%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
