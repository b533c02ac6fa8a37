#!/usr/bin/python3
"""The watch on the measured state through `aloft run` (SPEC §2, §10): monitor
violations with their measured pose and excursion_cm in run --json and in the
store, the same report at any time scale, a replan with the watch's reason, the
watch during a slow LLM's stream, a wind too strong and a battery below the
reserve ending the mission with a landing.
labels: safety watch"""

import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_llm_proc import Fake  # noqa: E402

ALOFT = os.environ.get("ALOFT", "build/aloft")
failures = 0
BOUND_CM = 50  # SPEC §10: wind below half the drone's speed


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def env():
    e = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        e.pop(k, None)
    return e


def run(args, stdin=None):
    return subprocess.run([ALOFT, "run"] + args, capture_output=True, text=True, env=env(),
                          timeout=120, input=stdin)


def write(path, obj):
    with open(path, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


HOME = (120, -80)
R = 300


def scene(tmp, name, wind, **extra):
    s = {"drone": {"x": HOME[0], "y": HOME[1], "z": 100, "yaw": 30},
         "limits": {"geofence_radius": R, "min_z": 30, "max_z": 300}, "wind": wind,
         "objects": []}
    for k, v in extra.items():
        s[k].update(v) if k in s else s.__setitem__(k, v)
    return write(os.path.join(tmp, name + ".json"), s)


def from_home(p):
    return math.hypot(p["x"] - HOME[0], p["y"] - HOME[1])


def monitors(doc):
    return [v for v in doc["violations"] if v["skill"] == "monitor"]


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "aloft.db")
    windy = scene(tmp, "windy", {"speed": 45, "heading": 90, "gust": 8})

    # --- run --plan: a long delay at the edge, then small moves along it
    plan = write(os.path.join(tmp, "edge.ms"),
                 "mr(240);d(30000);" + "tc(5);mf(20);" * 12 + "d(20000)")
    base = ["--scene", windy, "--plan", plan, "--json", "--seed", "9", "--db", db]
    r = run(base)
    check(r.returncode == 0, "plan along the edge: exit %d %s" % (r.returncode, r.stderr[-500:]))
    doc = json.loads(r.stdout)
    mons = monitors(doc)
    check(len(mons) >= 2, "monitor violations: %r" % doc["violations"])
    for v in mons:
        p = v.get("pose", {})
        check(set(p) == {"x", "y", "z", "yaw"}, "a monitor violation's pose: %r" % v)
        check(p and from_home(p) > R, "the measured pose is outside the fence: %r" % v)
        check("geofence" in v["reason"] and "returned inside" in v["reason"],
              "the reason: %r" % v["reason"])
    ex = doc.get("excursion_cm")
    check(isinstance(ex, (int, float)) and 0 < ex <= BOUND_CM, "excursion_cm %r" % ex)
    worst = max(from_home(v["pose"]) - R for v in mons) if mons else 0
    check(ex >= worst - 1, "excursion_cm %r below a measured pose %.1f cm out" % (ex, worst))
    check(from_home(doc["pose"]) <= R, "ends inside: %r" % doc["pose"])

    # the store has them (aloft log)
    lg = subprocess.run([ALOFT, "log", "--db", db, "--json", str(doc["mission_id"])],
                        capture_output=True, text=True, env=env(), timeout=60)
    events = json.loads(lg.stdout)["events"] if lg.returncode == 0 else []
    stored = [e for e in events if e["kind"] == "violation" and e["skill"] == "monitor"]
    check(len(stored) == len(mons), "log has %d monitor violations, run %d: %s" %
          (len(stored), len(mons), lg.stderr))

    # the same seed: the same report, at time scale 0 and 40
    again = json.loads(run(base).stdout)
    scaled = json.loads(run(base + ["--time-scale", "40"]).stdout)
    for other, what in ((again, "again"), (scaled, "at 40x")):
        check(other["pose"] == doc["pose"] and other["violations"] == doc["violations"] and
              other["excursion_cm"] == doc["excursion_cm"],
              "%s: %r %r vs %r %r" % (what, other["pose"], other["excursion_cm"], doc["pose"],
                                      doc["excursion_cm"]))
    other = json.loads(run(base[:-4] + ["--seed", "10", "--db", db]).stdout)
    check(other["violations"] != doc["violations"], "another seed, other gusts")

    # one excursion_cm in every document, also one from a mission that never
    # started
    check(r.stdout.count('"excursion_cm"') == 1, "one excursion_cm: %s" % r.stdout[-300:])
    r = run(["--scene", os.path.join(tmp, "missing.json"), "--plan", plan, "--json"])
    check(r.returncode == 1 and r.stdout.count('"excursion_cm":0') == 1,
          "a mission that never started: %s" % r.stdout)

    # no wind: nothing watched happens
    calm = scene(tmp, "calm", {"speed": 0})
    r = run(["--scene", calm, "--plan", plan, "--json", "--db", db])
    d = json.loads(r.stdout)
    check(monitors(d) == [] and d["excursion_cm"] == 0, "calm: %r" % d["violations"])

    # --- a task: the watch stops the plan and the mission replans with its reason
    fake = Fake(tmp, [{"content": "mr(240);d(60000);->True"}, {"content": "l('back');->True"}])
    r = run(["--scene", windy, "--task", "hover at the east edge", "--llm-url", fake.url,
             "--model", "fake", "--json", "--db", db])
    reqs = fake.requests()
    fake.stop()
    d = json.loads(r.stdout)
    check(r.returncode == 0 and d["ok"] and d["replans"] == 1,
          "replanned once: %d %r %r" % (r.returncode, d.get("error"), d.get("replans")))
    check(len(monitors(d)) == 1, "one monitor violation: %r" % d["violations"])
    second = json.dumps(reqs[1]["body"]["messages"]) if len(reqs) > 1 else ""
    check("watch on the measured state" in second and "geofence" in second,
          "the replan prompt carries the watch's reason")

    # --- a slow LLM: the drone hovers at home while the plan streams in for
    # about 3 s (time scale 20: a minute of 45 cm/s wind); the watch thread
    # hovers it through the wait and brings it back each time it crosses the
    # fence; the plan hears of it when it ends, and the mission replans
    slow = "".join("l('still thinking %d');" % i for i in range(10)) + "->True"
    fake = Fake(tmp, [{"content": slow, "token_rate": 30},
                      {"content": "l('back');->True", "times": 4}])
    r = run(["--scene", windy, "--task", "wait", "--llm-url", fake.url,
             "--model", "fake", "--json", "--db", db, "--time-scale", "20"])
    fake.stop()
    d = json.loads(r.stdout)
    mons = monitors(d)
    check(len(mons) >= 1 and d["replans"] >= 1 and all(from_home(v["pose"]) > R for v in mons),
          "slow LLM: exit %d, violations %r, replans %r, error %r" %
          (r.returncode, d["violations"], d["replans"], d["error"]))
    check(0 < d["excursion_cm"] <= BOUND_CM, "slow LLM: excursion_cm %r" % d["excursion_cm"])
    check(from_home(d["pose"]) <= R + BOUND_CM, "slow LLM: ends at %r" % d["pose"])

    # --- a wind too strong to fly against: landed, the mission fails, says so
    gale = scene(tmp, "gale", {"speed": 160, "heading": 200})
    r = run(["--scene", gale, "--plan", "-", "--json", "--db", db], stdin="d(5000);mf(50)")
    d = json.loads(r.stdout)
    check(r.returncode == 1 and not d["ok"], "gale: exit %d" % r.returncode)
    check(d["error"] and "could not be made" in d["error"] and "landed" in d["error"],
          "gale: %r" % d["error"])
    check(d["pose"]["z"] == 0, "gale: landed, z %r" % d["pose"]["z"])

    # --- a battery below the reserve mid-plan: home, landed, the mission fails
    weak = scene(tmp, "weak", {"speed": 0}, drone={"battery": 12},
                 limits={"battery_reserve": 10})
    r = run(["--scene", weak, "--plan", "-", "--json", "--db", db],
            stdin="mr(200);d(40000);mf(50)")
    d = json.loads(r.stdout)
    check(r.returncode == 1 and d["error"] and "battery" in d["error"] and "landed" in d["error"],
          "battery: exit %d %r" % (r.returncode, d["error"]))
    check(from_home(d["pose"]) < 2 and d["pose"]["z"] == 0, "battery: home %r" % d["pose"])

print("failures:", failures)
sys.exit(1 if failures else 0)
