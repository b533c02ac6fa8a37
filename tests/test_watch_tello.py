#!/usr/bin/python3
"""The watch on a Tello's measured state (SPEC §10): the emulator reports a
height above the scene's max_z (its sensor reads 250 cm high); the watch, at
a telemetry update, stops the plan and brings the drone down into the band
before the plan's next motion, and records a monitor violation with the
measured height. The same flight with an honest sensor is left alone.
labels: safety watch tello"""

import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tello_emu_proc import ALOFT, Emu  # noqa: E402

failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def fly(emu, scene, db, plan):
    p = subprocess.run([ALOFT, "run"] + emu.args() + ["--no-video", "--scene", scene, "--plan",
                                                      "-", "--json", "--db", db],
                       input=plan, capture_output=True, text=True, timeout=120)
    return p.returncode, json.loads(p.stdout), p.stderr


def true_heights(emu):
    """The emulator's true height after each motion ("pose X Y Z YAW")."""
    return [float(l.split()[2]) for l in emu.lines("pose")]


tmp = tempfile.mkdtemp()
db = os.path.join(tmp, "aloft.db")
scene = os.path.join(tmp, "limits.json")
with open(scene, "w") as f:
    json.dump({"limits": {"geofence_radius": 500, "min_z": 30, "max_z": 300}, "objects": []}, f)
fast = ("--speed", "200", "--turn-rate", "720")

# The sensor reads 250 cm high: 80 cm after takeoff is reported as 330.
emu = Emu(tmp, "--height-offset", "250", *fast)
rc, doc, err = fly(emu, scene, db, "d(3000);mf(30)")
sent = emu.sent()
emu.stop()
mons = [v for v in doc["violations"] if v["skill"] == "monitor"]
check(rc == 0, "exit %d: %s" % (rc, err[-400:]))
check(len(mons) == 1, "one monitor violation: %r" % doc["violations"])
if mons:
    check(mons[0]["pose"]["z"] > 300 and "above the altitude band" in mons[0]["reason"],
          "the measured height: %r" % mons[0])
downs = [c for c in sent if re.fullmatch(r"down \d+", c)]
check(downs and sent.index(downs[0]) < sent.index("forward 30"),
      "brought down before the next motion: %r" % sent)
# The emulator's true height after the descent, as the drone would report it.
check(any(z + 250 <= 300 for z in true_heights(emu)), "never inside the band: %r" %
      true_heights(emu))
check(0 < doc["excursion_cm"] <= 60, "excursion_cm %r" % doc["excursion_cm"])

# An honest sensor: nothing to do.
emu = Emu(tmp, *fast)
rc, doc, err = fly(emu, scene, db, "d(3000);mf(30)")
sent = emu.sent()
emu.stop()
check(rc == 0 and doc["violations"] == [] and doc["excursion_cm"] == 0,
      "honest sensor: %d %r" % (rc, doc["violations"]))
check(not any(c.startswith("down") for c in sent), "honest sensor sent %r" % sent)

print("failures:", failures)
sys.exit(1 if failures else 0)
