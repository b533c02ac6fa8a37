"""Missions flown at the same time into one database (SPEC §12): several
`aloft run` processes write one store while `aloft log` reads it; every run
finishes, none is refused or blocked, and each mission's recorded skill calls
are exactly its own run's calls (none lost, none mixed up)."""

import json
import os
import subprocess
import sys
import tempfile
import time

ALOFT = os.environ["ALOFT"]
RUNS = 4
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what, file=sys.stderr)


SCENE = {"limits": {"geofence_radius": 400}, "objects": []}

with tempfile.TemporaryDirectory() as tmp:
    scene = os.path.join(tmp, "scene.json")
    with open(scene, "w") as f:
        json.dump(SCENE, f)
    db = os.path.join(tmp, "shared.db")
    procs = []
    for i in range(RUNS):
        # Each run turns by its own angle, so a call in the wrong mission shows.
        plan = os.path.join(tmp, f"plan{i}.ms")
        with open(plan, "w") as f:
            f.write(f"1000{{tc({i + 1});tu({i + 1})}};l('run {i}')")
        out = open(os.path.join(tmp, f"run{i}.json"), "w")
        procs.append((subprocess.Popen([ALOFT, "run", "--scene", scene, "--plan", plan,
                                        "--db", db, "--json", "--time-scale", "0", "--quiet"],
                                       stdout=out, stderr=subprocess.PIPE, text=True), out))
    # A reader polls the list while they write: it is never refused.
    reads = 0
    deadline = time.monotonic() + 120
    while any(p.poll() is None for p, _ in procs) and time.monotonic() < deadline:
        if not os.path.exists(db):
            time.sleep(0.01)
            continue
        r = subprocess.run([ALOFT, "log", "--db", db, "--json"], capture_output=True, text=True,
                           timeout=60)
        check(r.returncode == 0, f"log while missions write: {r.stderr}")
        reads += 1
    runs = []
    for i, (p, out) in enumerate(procs):
        _, err = p.communicate(timeout=120)
        out.close()
        check(p.returncode == 0, f"run {i} exit {p.returncode}: {err}")
        with open(os.path.join(tmp, f"run{i}.json")) as f:
            runs.append(json.load(f))

    ids = [r["mission_id"] for r in runs]
    check(len(set(ids)) == RUNS, f"each run is its own mission: {ids}")
    lst = json.loads(subprocess.run([ALOFT, "log", "--db", db, "--json"], capture_output=True,
                                    text=True, timeout=60).stdout)
    check(sorted(m["id"] for m in lst) == sorted(ids) and
          all(m["status"] == "ok" for m in lst), f"all recorded as ok: {lst}")
    for i, run in enumerate(runs):
        r = subprocess.run([ALOFT, "log", "--db", db, "--json", str(run["mission_id"])],
                           capture_output=True, text=True, timeout=60)
        doc = json.loads(r.stdout)
        calls = [(e["skill"], e["args"], e["ret"]) for e in doc["events"] if e["kind"] == "call"]
        mine = [(c["skill"], c["args"], c["ret"]) for c in run["calls"]]
        check(len(mine) == 2001 and calls == mine,
              f"run {i}: {len(calls)} calls recorded, {len(mine)} made")
        check(all(e["done"] for e in doc["events"] if e["kind"] == "call"), f"run {i} all done")

if failures:
    print(f"{failures} check(s) failed", file=sys.stderr)
    sys.exit(1)
print(f"test_record_concurrent: all checks passed ({reads} reads during the runs)")
