#!/usr/bin/python3
"""aloft run --drone tello --verify against the Tello emulator
(tests/tools/tello_emu): a plan that fails verification sends the drone
nothing, not even takeoff; one that passes flies."""

import json
import os
import shutil
import socket
import subprocess
import tempfile

ALOFT = os.environ.get("ALOFT", "build/aloft")
BUILD = os.environ.get("BUILD", os.path.dirname(ALOFT) or ".")
EMU = os.path.join(BUILD, "tello_emu")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def fly(tmp, plan, scene):
    """Runs PLAN with --verify on a fresh emulator; returns (rc, report, the
    commands the emulator received)."""
    state_port = free_udp_port()
    fd, log = tempfile.mkstemp(dir=tmp, suffix=".log")
    os.close(fd)
    emu = subprocess.Popen([EMU, "--port", "0", "--state-port", str(state_port), "--log", log,
                            "--max-runtime-s", "120", "--speed", "1000", "--turn-rate", "1440"],
                           stdout=subprocess.PIPE, text=True)
    try:
        line = emu.stdout.readline()
        check(line.startswith("port "), "tello_emu started: %r" % line)
        args = ["--drone", "tello:127.0.0.1", "--tello-port", line.split()[1],
                "--tello-state-port", str(state_port),
                "--tello-video-port", str(free_udp_port()), "--no-video", "--verify", "5",
                "--scene", scene, "--plan", "-", "--json", "--db", os.path.join(tmp, "m.db")]
        p = subprocess.run([ALOFT, "run"] + args, input=plan, capture_output=True, text=True,
                           timeout=120)
    finally:
        emu.terminate()
        emu.wait()
    with open(log) as f:
        sent = [l.split(" ", 1)[1].strip() for l in f if l.startswith("recv ")]
    doc = json.loads(p.stdout) if p.stdout.strip() else {}
    return p.returncode, doc, sent, p.stderr


tmp = tempfile.mkdtemp()
try:
    scene = os.path.join(tmp, "low.json")
    with open(scene, "w") as f:
        json.dump({"limits": {"geofence_radius": 600, "max_z": 150}, "objects": []}, f)

    rc, doc, sent, err = fly(tmp, "mu(500)", scene)
    check(rc == 1, "failed verification: exit %d %s" % (rc, err))
    check(sent == [], "nothing was sent to the drone: %r" % sent)
    check(doc.get("calls") == [] and len(doc.get("verify", [{}])[0].get("failed", [])) == 5,
          "report: %r" % doc)

    rc, doc, sent, err = fly(tmp, "tc(90);->True", scene)
    check(rc == 0, "passed verification: exit %d %s" % (rc, err))
    check("takeoff" in sent and "cw 90" in sent and "land" in sent, "it flew: %r" % sent)
    check(doc.get("verify", [{}])[0].get("passed") == 5, "report: %r" % doc.get("verify"))
finally:
    shutil.rmtree(tmp)

print("FAILED" if failures else "all verify tello tests passed")
raise SystemExit(1 if failures else 0)
