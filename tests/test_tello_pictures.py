#!/usr/bin/python3
# labels: tello waits
"""take_picture saves the mission camera's frame: the Tello's (960x720, the
emulator's red block where it is drawn, found by `aloft detect` in the
picture), also without --detector; a clear failure with no frame yet, a
camera gone dark or sending garbage, or --no-video; in the simulator with
--source PHOTO, the photo's frame, not the simulator's drawing; `run
--json` lists each picture with its camera, size and pose. The stream
is received before `streamon` (its first keyframe is not missed) and `run
--json` reports its "frames"."""

import json
import os
import struct
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


def png_size(path):
    """(width, height) from a PNG file's header, or None."""
    try:
        with open(path, "rb") as f:
            head = f.read(24)
    except OSError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def apple_in(tmp, image):
    """The apple `aloft detect` finds in IMAGE with the test model, or None."""
    p = subprocess.run([ALOFT, "detect", "--detector", "yolo", "--model",
                        os.path.join(tmp, "yolov5.onnx"), "--json", image],
                       capture_output=True, text=True, timeout=60)
    try:
        objs = json.loads(p.stdout)[0]["objects"]
    except (ValueError, IndexError, KeyError):
        return None
    apples = [o for o in objs if o["class"] == "apple"]
    return apples[0] if apples else None


def check_picture(tmp, doc, what):
    """DOC's one log line is a picture of the emulator's camera: 960x720,
    the red block where it is drawn."""
    path = doc["logs"][0] if doc and len(doc["logs"]) == 1 else ""
    check(png_size(path) == (960, 720), "%s: a 960x720 PNG: %r %s" % (what, path, png_size(path)))
    pics = doc.get("pictures") if doc else None
    check(isinstance(pics, list) and len(pics) == 1 and pics[0]["path"] == path and
          pics[0]["camera"].startswith("tello:") and
          (pics[0]["width"], pics[0]["height"]) == (960, 720) and
          set(pics[0]["pose"]) == {"x", "y", "z", "yaw"},
          "%s: the picture's record: %s" % (what, pics))
    apple = apple_in(tmp, path) if path else None
    check(apple is not None and abs(apple["x"] - 0.5625) < 0.02 and
          abs(apple["y"] - 0.5833) < 0.02, "%s: the red block in the picture: %s" % (what, apple))


def check_frames(doc, what):
    """The report's "frames" (SPEC §2) are there and add up."""
    fr = doc.get("frames") if doc else None
    check(isinstance(fr, dict), "%s: frames in the report: %s" % (what, fr))
    if not isinstance(fr, dict):
        return
    for k in ("received", "dropped", "age_ms_mean", "age_ms_max", "used", "detected",
              "detect_fps", "first_frame_ms", "keyframe_to_frame_ms", "datagrams",
              "datagrams_dropped", "datagrams_skipped"):
        check(k in fr, "%s: frames.%s: %s" % (what, k, fr))
    check(fr["received"] > 0 and fr["used"] >= 1, "%s: frames received and used: %s" % (what, fr))
    check(0 <= fr["dropped"] <= fr["received"] and fr["detected"] <= fr["received"],
          "%s: dropped and detected within received: %s" % (what, fr))
    check(0 <= fr["age_ms_mean"] <= fr["age_ms_max"], "%s: ages: %s" % (what, fr))
    check(fr["datagrams"] >= fr["received"], "%s: datagrams: %s" % (what, fr))
    # SPEC §11: the first frame within 1 s of the first keyframe; 2 s of
    # slack for a loaded machine.
    check(fr["keyframe_to_frame_ms"] is not None and 0 <= fr["keyframe_to_frame_ms"] < 2000,
          "%s: first frame after the keyframe: %s" % (what, fr))
    check(fr["first_frame_ms"] is not None and fr["first_frame_ms"] > 0,
          "%s: first frame after streamon: %s" % (what, fr))
    # The emulator's stream starts with parameter sets at `streamon`: a
    # port bound before it skips nothing; one bound later starts mid-GOP.
    check(fr["datagrams_skipped"] == 0,
          "%s: the stream received from its start: %s" % (what, fr))


def check_pictures(tmp):
    # The picture is the Tello camera's frame, with a detector ...
    emu = Emu(tmp, camera=True)
    try:
        rc, doc, err = fly(emu, tmp, "?iv('apple'){l(tp())}")
    finally:
        emu.stop()
    check(rc == 0 and doc and doc["ok"], "tp with the camera: %s %s" % (rc, err[-300:]))
    check_picture(tmp, doc, "tp after a detection")
    check_frames(doc, "tp after a detection")
    sent = emu.sent()
    check("streamon" in sent and "takeoff" in sent and
          sent.index("streamon") < sent.index("takeoff"), "streamon before takeoff: %s" % sent)

    # ... and without one: the camera is there for pictures.
    emu = Emu(tmp, camera=True)
    try:
        rc, doc, err = fly(emu, tmp, "l(tp())", detector=False)
    finally:
        emu.stop()
    check(rc == 0 and doc and doc["ok"], "tp without a detector: %s %s" % (rc, err[-300:]))
    check_picture(tmp, doc, "tp without a detector")

    # No frame yet (the camera starts late): a clear failure, the drone lands.
    emu = Emu(tmp, "--video-start-ms", "100000", camera=True)
    try:
        rc, doc, err = fly(emu, tmp, "l(tp())", "--frame-timeout-ms", "1500", detector=False)
    finally:
        emu.stop()
    msg = (doc and doc["error"]) or ""
    check(rc == 1 and "take_picture" in msg and "no video arrived" in msg and "tello" in msg,
          "tp with no frame: %s %r" % (rc, msg))
    check("land" in emu.sent(), "landed after the failed picture: %s" % emu.sent())

    # A camera that goes dark mid-flight: the next detection fails saying so.
    emu = Emu(tmp, "--video-dark-ms", "300", camera=True)
    try:
        rc, doc, err = fly(emu, tmp, "d(1500);?iv('apple'){l('seen')}", "--frame-timeout-ms",
                           "1500")
    finally:
        emu.stop()
    msg = (doc and doc["error"]) or ""
    check(rc == 1 and "went dark" in msg and "is_visible" in msg,
          "a camera gone dark: %s %r" % (rc, msg))

    # A camera that sends garbage: no picture, and the reason.
    emu = Emu(tmp, "--video-garbage", camera=True)
    try:
        rc, doc, err = fly(emu, tmp, "l(tp())", "--frame-timeout-ms", "1000", detector=False)
    finally:
        emu.stop()
    msg = (doc and doc["error"]) or ""
    check(rc == 1 and "no H.264 parameter sets" in msg, "a camera of garbage: %s %r" % (rc, msg))

    # --no-video: the error names the option.
    emu = Emu(tmp, camera=True)
    try:
        rc, doc, err = fly(emu, tmp, "l(tp())", "--no-video", detector=False)
    finally:
        emu.stop()
    msg = (doc and doc["error"]) or ""
    check(rc == 1 and "take_picture" in msg and "--no-video" in msg,
          "tp with --no-video: %s %r" % (rc, msg))
    check("frames" not in (doc or {}), "no frames without a camera: %s" % doc)

    # The simulator with a photo as its camera: the photo is the picture.
    photo = os.path.join(tmp, "photo.ppm")
    with open(photo, "wb") as f:
        f.write(b"P6\n320 240\n255\n" + bytes([40, 90, 200]) * (320 * 240))
    p = subprocess.run([ALOFT, "run", "--scene", os.path.join(SRC, "examples/scenes/office.json"),
                        "--detector", "hog", "--source", photo, "--db",
                        os.path.join(tmp, "m.db"), "--pictures", tmp, "--json", "--plan", "-"],
                       input="l(tp())", capture_output=True, text=True, timeout=60)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = None
    path = doc["logs"][0] if doc and doc["logs"] else ""
    check(p.returncode == 0 and png_size(path) == (320, 240),
          "sim with --source: the photo's 320x240 frame: %s %s %s" % (p.returncode, path,
                                                                      p.stderr[-300:]))
    pics = doc.get("pictures") if doc else None
    check(pics and pics[0]["camera"] == photo and pics[0]["path"] == path and
          (pics[0]["width"], pics[0]["height"]) == (320, 240),
          "sim with --source: the picture's record: %s" % pics)
    check_frames_sim = doc and doc.get("frames")
    check(check_frames_sim and check_frames_sim["received"] > 0,
          "sim with --source: frames: %s" % check_frames_sim)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests/vision/gen_models.py"), tmp],
                       check=True)
        check_pictures(tmp)
    print("ok" if failures == 0 else "%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
