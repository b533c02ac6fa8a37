#!/usr/bin/python3
# labels: tello web waits
"""The web UI's card of a Tello shows the Tello's own camera: `aloft serve
--drone tello` against the emulator, whose H.264 stream the MJPEG endpoint
serves as the Tello's 960x720 frames while a mission flies (the emulator's
red block found in a served frame by `aloft detect`, where it is drawn), and
a 640x480 placeholder that says why when there is no video: before any
mission, with --no-video, and after the camera went dark (--video-dark-ms).
The endpoint always answers with frames, never hangs."""

import json
import os
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_llm_proc import Fake  # noqa: E402
from serve_proc import Events, Serve, mjpeg_frames  # noqa: E402
from tello_emu_proc import Emu  # noqa: E402

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
failures = 0

# The mission hovers long enough to look at its camera.
PLAN = "l('up');d(6000);->True"


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def jpeg_size(data):
    """(width, height) from a JPEG's start-of-frame marker, or None."""
    if not data or data[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return (w, h)
        i += 2 + length
    return None


def sizes(srv, count=3):
    """The sizes of the next COUNT frames of drone 0's camera; the timeout
    is for a hang only (frames come five or more a second)."""
    return [jpeg_size(f) for f in mjpeg_frames(srv, 0, count, timeout=20)]


def wait_sizes(srv, want, deadline_s=15):
    """Reads frames until one has size WANT; the sizes seen."""
    seen = []
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        seen += sizes(srv, 2)
        if want in seen:
            break
    return seen


def serve(tmp, emu, fake, *extra):
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(k, None)
    args = ["--drone", "tello:127.0.0.1", "--tello-port", str(emu.port),
            "--tello-state-port", str(emu.state_port), "--tello-video-port",
            str(emu.video_port), "--llm-url", fake.url, "--model", "fake",
            "--db", os.path.join(tmp, "m.db")] + list(extra)
    return Serve(args, env=env)


def start(srv):
    status, doc = srv.post_json("/api/drones/0/missions", {"task": "hover and look"})
    check(status == 202, "mission accepted: %s %s" % (status, doc))
    return doc.get("run") if isinstance(doc, dict) else None


def wait_end(srv, run):
    ev = Events(srv, 0)
    try:
        return ev.until("end", lambda d: d["run"] == run, deadline_s=60)
    finally:
        ev.close()


def detect_apple(tmp, jpeg):
    path = os.path.join(tmp, "served.jpg")
    with open(path, "wb") as f:
        f.write(jpeg)
    p = subprocess.run([ALOFT, "detect", "--detector", "yolo", "--model",
                        os.path.join(tmp, "yolov5.onnx"), "--json", path],
                       capture_output=True, text=True, timeout=60)
    try:
        objs = json.loads(p.stdout)[0]["objects"]
    except (ValueError, IndexError, KeyError):
        return None
    apples = [o for o in objs if o["class"] == "apple"]
    return apples[0] if apples else None


def main():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["/usr/bin/python3", os.path.join(SRC, "tests/vision/gen_models.py"),
                        tmp], check=True)
        fake = Fake(tmp, [{"content": PLAN, "times": 10}])
        placeholder = (640, 480)

        # The camera streams while a mission flies.
        emu = Emu(tmp, camera=True)
        srv = serve(tmp, emu, fake)
        try:
            check(set(sizes(srv)) == {placeholder},
                  "before a mission: the placeholder, not a hang")
            run = start(srv)
            seen = wait_sizes(srv, (960, 720))
            check((960, 720) in seen, "the Tello's frames on the card: %s" % seen)
            frames = [f for f in mjpeg_frames(srv, 0, 3, timeout=20)
                      if jpeg_size(f) == (960, 720)]
            apple = detect_apple(tmp, frames[-1]) if frames else None
            check(apple is not None and abs(apple["x"] - 0.5625) < 0.02 and
                  abs(apple["y"] - 0.5833) < 0.02,
                  "the emulator's red block in a served frame: %s" % apple)
            end = wait_end(srv, run)
            check(end["status"] == "ok", "the mission flew: %s" % end)
            check(set(sizes(srv)) == {placeholder}, "after the mission: the placeholder")
        finally:
            srv.stop()
            emu.stop()
        check("streamon" in emu.sent(), "the camera was switched on: %s" % emu.sent())

        # --no-video: the placeholder all along, the mission flies.
        emu = Emu(tmp, camera=True)
        srv = serve(tmp, emu, fake, "--no-video")
        try:
            run = start(srv)
            time.sleep(1.0)
            check(set(sizes(srv)) == {placeholder}, "--no-video: the placeholder")
            end = wait_end(srv, run)
            check(end["status"] == "ok", "flew without video: %s" % end)
        finally:
            srv.stop()
            emu.stop()
        check("streamon" not in emu.sent(), "no streamon: %s" % emu.sent())

        # The camera goes dark 1 s into its stream: frames, then the
        # placeholder ("video lost"), still answered.
        emu = Emu(tmp, "--video-dark-ms", "1000", camera=True)
        srv = serve(tmp, emu, fake)
        try:
            run = start(srv)
            seen = wait_sizes(srv, (960, 720))
            check((960, 720) in seen, "frames before the dark: %s" % seen)
            seen = wait_sizes(srv, placeholder)
            busy = srv.drones()[0]["busy"]
            # while the mission still flies (the card of a finished one
            # shows the placeholder anyway)
            check(seen and seen[-1] == placeholder and busy,
                  "the placeholder after the dark, in flight: %s busy=%s" % (seen, busy))
            wait_end(srv, run)
        finally:
            srv.stop()
            emu.stop()
        fake.stop()
    print("ok" if failures == 0 else "%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
