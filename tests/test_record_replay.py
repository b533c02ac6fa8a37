"""`aloft run --replay ID` (SPEC §12): a recorded --plan mission flies again
in the simulator with its recorded scene, seed and plan, is recorded as a new
mission that names the one it replays, and reports whether the skill calls
(skill, args, results, in order) match. They do for an unchanged record even
with sensor noise; they do not once the recorded world is changed or the
seed is overridden, and then the run exits 1 and says where they part."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

ALOFT = os.environ["ALOFT"]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what, file=sys.stderr)


PICTURES = tempfile.mkdtemp()


def aloft(*args, stdin=None):
    if args[0] == "run":
        args = (*args, "--pictures", PICTURES)
    p = subprocess.run([ALOFT, *args], capture_output=True, text=True, timeout=120, input=stdin)
    return p.returncode, p.stdout, p.stderr


SCENE = {
    "limits": {"geofence_radius": 400},
    "noise": {"position_cm": 20, "miss_rate": 0.3},
    "objects": [{"class": "apple", "x": 0, "y": 250, "z": 80, "w": 8, "d": 8, "h": 9,
                 "color": "red"},
                {"class": "person", "x": 0, "y": -300, "w": 50, "d": 30, "h": 175}],
}
# Noisy sightings decide what the plan does next, so any change of seed or
# world shows in the calls.
PLAN = "12{?iv('apple'){l(ox('apple'))}};tp;s('person');o('person');tp;->True"

with tempfile.TemporaryDirectory() as tmp:
    scene = os.path.join(tmp, "scene.json")
    with open(scene, "w") as f:
        json.dump(SCENE, f)
    plan = os.path.join(tmp, "plan.ms")
    with open(plan, "w") as f:
        f.write(PLAN)
    db = os.path.join(tmp, "missions.db")

    rc, out, err = aloft("run", "--scene", scene, "--plan", plan, "--db", db, "--json",
                         "--seed", "7", "--max-instructions", "5000000")
    check(rc == 0, f"the recorded mission: {err}")
    first = json.loads(out)
    mid = first["mission_id"]

    rc, out, err = aloft("run", "--replay", str(mid), "--db", db, "--json")
    check(rc == 0, f"replay exits 0 when the calls match: {err}")
    rep = json.loads(out)
    check(rep.get("replay") == {"of": mid, "match": True, "difference": None},
          f"replay report: {rep.get('replay')}")
    check(rep["mission_id"] != mid, "the replay is a mission of its own")
    same = lambda c: (c["skill"], c["args"], c["ret"] if c["skill"] != "take_picture" else "")
    check([same(c) for c in rep["calls"]] == [same(c) for c in first["calls"]] and
          rep["result"] == first["result"] and rep["plans"] == [PLAN],
          "the replay made the same calls to the same result")
    pics = [c["ret"] for c in rep["calls"] + first["calls"] if c["skill"] == "take_picture"]
    check(len(pics) == 4 and len(set(pics)) == 4 and all(os.path.exists(p) for p in pics),
          f"each run kept its own pictures: {pics}")
    check(all(p.startswith(PICTURES) for p in pics), "pictures where --pictures says")
    check(f"replay of mission {mid}: the skill calls match" in err, f"progress says so: {err}")
    rc, out, _ = aloft("log", "--db", db, "--json", str(rep["mission_id"]))
    m = json.loads(out)["mission"]
    check(m["replay_of"] == mid and m["seed"] == 7 and m["params"]["max_instructions"] == 5000000,
          f"recorded as a replay, with the recorded seed and limits: {m}")

    # Another seed: the noise differs, so do the calls.
    rc, out, err = aloft("run", "--replay", str(mid), "--db", db, "--json", "--seed", "8")
    rep = json.loads(out) if out else {}
    check(rc == 1 and rep.get("replay", {}).get("match") is False and
          "call" in (rep["replay"].get("difference") or ""),
          f"another seed differs: rc={rc} {rep.get('replay')}")

    # A changed record: the apple moved in the recorded scene.
    c = sqlite3.connect(db)
    moved = dict(SCENE, noise={"position_cm": 0, "miss_rate": 0},
                 objects=[dict(SCENE["objects"][0], y=-250), SCENE["objects"][1]])
    c.execute("UPDATE missions SET scene = ? WHERE id = ?", (json.dumps(moved), mid))
    c.commit()
    c.close()
    rc, out, err = aloft("run", "--replay", str(mid), "--db", db, "--json")
    rep = json.loads(out) if out else {}
    check(rc == 1 and rep.get("replay", {}).get("match") is False,
          f"a changed world differs: rc={rc} {rep.get('replay')}")
    check("the skill calls differ: " in err, f"progress says where: {err}")

    # Errors: unknown mission, missing store, replay with a plan.
    rc, out, err = aloft("run", "--replay", "999", "--db", db)
    check(rc == 1 and "no mission 999" in err, f"unknown mission: {rc} {err}")
    rc, out, err = aloft("run", "--replay", "1", "--db", os.path.join(tmp, "none.db"))
    check(rc == 1 and "no mission database" in err and not os.path.exists(
        os.path.join(tmp, "none.db")), f"missing store: {rc} {err}")
    rc, out, err = aloft("run", "--replay", str(mid), "--db", db, "--plan", plan)
    check(rc == 2, f"--replay with --plan is a usage error: {rc} {err}")
    rc, out, err = aloft("run", "--replay", "x1", "--db", db)
    check(rc == 2, f"a bad id is a usage error: {rc} {err}")

shutil.rmtree(PICTURES)
if failures:
    print(f"{failures} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("test_record_replay: all checks passed")
