#!/usr/bin/python3
"""Verification sees the wind (SPEC §14): `check --verify` in a windy scene
draws each world's wind and gusts, and reports the worlds in which the watch
on the measured state had to act, as kind "watch" with the branch taken; a
calm scene or a plan that keeps clear of the fence passes; the report
repeats per seed.
labels: safety watch verify"""

import json
import os
import subprocess
import sys
import tempfile

ALOFT = os.environ.get("ALOFT", "build/aloft")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def verify(scene, plan, n=12):
    args = [ALOFT, "check", "--verify", str(n), "--scene", scene, "--json", "-"]
    p = subprocess.run(args, input=plan, capture_output=True, text=True, timeout=120)
    return p.returncode, json.loads(p.stdout)["verify"]


tmp = tempfile.mkdtemp()


def scene(name, wind):
    path = os.path.join(tmp, name + ".json")
    with open(path, "w") as f:
        json.dump({"drone": {"x": 120, "y": -80, "z": 100, "yaw": 30},
                   "limits": {"geofence_radius": 300}, "wind": wind, "objects": []}, f)
    return path


windy = scene("windy", {"speed": 40, "heading": 90, "gust": 10})
calm = scene("calm", {"speed": 0})
# To the east edge, then a branch (always taken) that waits there.
edge = "mr(240);_1=0;?_1<1{d(20000)};mf(20)"

rc, rep = verify(windy, edge)
watch = [w for w in rep["failed"] if w["kind"] == "watch"]
check(rc == 1 and len(watch) == rep["worlds"] == 12, "every world at the windy edge: %r" %
      [(w["world"], w["kind"]) for w in rep["failed"]])
for w in watch:
    check("the watch on the measured state acted" in w["reason"] and "geofence" in w["reason"],
          "world %d reason: %s" % (w["world"], w["reason"]))
    check(any(b.endswith("d(20000)") for b in w["branch"]), "world %d branch %r" %
          (w["world"], w["branch"]))
    check(0 < w.get("excursion_cm", -1) <= 50, "world %d excursion %r" %
          (w["world"], w.get("excursion_cm")))
    if w["world"] > 0:
        check(any(c.startswith("wind ") for c in w["changes"]), "world %d changes %r" %
              (w["world"], w["changes"]))
reasons = {w["reason"] for w in watch}
check(len(reasons) > 6, "the gusts differ from world to world: %d reasons" % len(reasons))

rc2, rep2 = verify(windy, edge)
check(rep2 == rep, "the same worlds again")

rc, rep = verify(calm, edge)
check(rc == 0 and rep["failed"] == [], "calm: %r" % rep["failed"][:1])
rc, rep = verify(windy, "mr(20);d(1000);ml(20)")
check(rc == 0 and rep["failed"] == [], "clear of the fence: %r" % rep["failed"][:1])

print("failures:", failures)
sys.exit(1 if failures else 0)
