#!/usr/bin/python3
"""aloft run --drone tello --verify against the Tello emulator
(tests/tools/tello_emu): a plan that fails verification sends the drone
nothing, not even takeoff; one that passes flies."""

import json
import os
import shutil
import subprocess
import tempfile

from tello_emu_proc import Emu

ALOFT = os.environ.get("ALOFT", "build/aloft")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def fly(tmp, plan, scene):
    """Runs PLAN with --verify on a fresh emulator; returns (rc, report, the
    commands the emulator received, stderr)."""
    emu = Emu(tmp, "--speed", "1000", "--turn-rate", "1440")
    try:
        args = emu.args() + ["--no-video", "--verify", "5", "--scene", scene, "--plan", "-",
                             "--json", "--db", os.path.join(tmp, "m.db")]
        p = subprocess.run([ALOFT, "run"] + args, input=plan, capture_output=True, text=True,
                           timeout=120)
    finally:
        emu.stop()
    doc = json.loads(p.stdout) if p.stdout.strip() else {}
    return p.returncode, doc, emu.lines("recv"), p.stderr


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
