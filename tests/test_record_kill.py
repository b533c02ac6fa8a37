"""A mission killed with SIGKILL mid-flight (SPEC §12): `aloft run
--time-scale 1` of a long plan is killed after it showed some completed skill
calls. The database then passes `PRAGMA integrity_check`, holds every call
that progress showed as completed (progress shows a call only after it is
recorded) with its result, and the next open marks the mission interrupted
while keeping everything it did. A mission stopped with Ctrl-C instead ends
as cancelled, with its calls so far."""

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

ALOFT = os.environ["ALOFT"]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what, file=sys.stderr)


SCENE = {"limits": {"geofence_radius": 400}, "objects": []}
TURNS = 40  # a second each at time scale 1: far longer than the test waits
KILL_AFTER = 4
PLAN = ";".join(["tc(90)"] * TURNS)
done_line = re.compile(r"^\[ *([0-9.]+)s\] turn_cw\(90\) -> True$")

with tempfile.TemporaryDirectory() as tmp:
    scene = os.path.join(tmp, "scene.json")
    with open(scene, "w") as f:
        json.dump(SCENE, f)
    plan = os.path.join(tmp, "plan.ms")
    with open(plan, "w") as f:
        f.write(PLAN)
    db = os.path.join(tmp, "missions.db")

    p = subprocess.Popen([ALOFT, "run", "--scene", scene, "--plan", plan, "--db", db,
                          "--time-scale", "1"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    shown = 0
    mid = None
    deadline = time.monotonic() + 120
    for line in p.stderr:
        line = line.rstrip("\n")
        m = re.match(r"^mission (\d+) \(recorded in ", line)
        if m:
            mid = int(m.group(1))
        if done_line.match(line):
            shown += 1
            if shown == KILL_AFTER:
                os.kill(p.pid, signal.SIGKILL)
                break
        if time.monotonic() > deadline:
            break
    p.kill()
    p.wait()
    check(p.returncode == -signal.SIGKILL, f"killed by SIGKILL, got {p.returncode}")
    check(shown == KILL_AFTER and mid is not None,
          f"progress showed the mission ({mid}) and {shown} completed calls before the kill")

    # The file as the kill left it, before aloft opens it again.
    c = sqlite3.connect(db)
    check(c.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "integrity_check")
    status = c.execute("SELECT status FROM missions WHERE id = ?", (mid,)).fetchone()
    check(status == ("running",), f"left running by the killed process: {status}")
    rows = c.execute("SELECT skill, args, ret, done FROM skill_calls WHERE mission_id = ?"
                     " ORDER BY seq", (mid,)).fetchall()
    c.close()
    done = [r for r in rows if r[3]]
    check(len(done) >= KILL_AFTER, f"every call shown as completed is recorded: {rows}")
    check(all(r[:3] == ("turn_cw", "[90]", "true") for r in done), f"calls: {done}")
    check(len(rows) - len(done) <= 1 and len(rows) < TURNS,
          f"at most the call under way is not done, and the mission did not finish: {rows}")

    # The next open marks it interrupted and keeps its events.
    rc = subprocess.run([ALOFT, "log", "--db", db, "--json"], capture_output=True, text=True,
                        timeout=60)
    lst = json.loads(rc.stdout) if rc.returncode == 0 else []
    check([m["status"] for m in lst if m["id"] == mid] == ["interrupted"],
          f"interrupted at the next open: {lst} {rc.stderr}")
    rc = subprocess.run([ALOFT, "log", "--db", db, "--json", str(mid)], capture_output=True,
                        text=True, timeout=60)
    doc = json.loads(rc.stdout) if rc.returncode == 0 else {"events": [], "plans": []}
    calls = [e for e in doc["events"] if e["kind"] == "call"]
    check(len(calls) == len(rows) and sum(1 for e in calls if e["done"]) == len(done),
          f"the log keeps every call: {len(calls)} vs {len(rows)}")
    check(all("pose" in e for e in calls if e["done"]), "completed calls keep their pose")
    check(doc["plans"] == [PLAN], "the plan is kept")
    stmts = [e for e in doc["events"] if e["kind"] == "statement"]
    check(len(stmts) >= len(done), f"statements that started are kept: {len(stmts)}")
    # A completed call's yaw is 90 degrees on from the one before.
    yaws = [e["pose"]["yaw"] % 360 for e in calls if e["done"]]
    check(all(abs((b - a) % 360 - 90) < 1 for a, b in zip(yaws, yaws[1:])),
          f"poses after each call: {yaws}")

    # Ctrl-C: the mission stops at once and is recorded as cancelled.
    p = subprocess.Popen([ALOFT, "run", "--scene", scene, "--plan", plan, "--db", db,
                          "--time-scale", "1", "--json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    shown = 0
    for line in p.stderr:
        if done_line.match(line.rstrip("\n")):
            shown += 1
            if shown == 2:
                p.send_signal(signal.SIGINT)
                break
    out, _ = p.communicate(timeout=60)
    run = json.loads(out) if out else {}
    check(p.returncode == 1 and run.get("ok") is False, f"Ctrl-C: {p.returncode} {out}")
    rc = subprocess.run([ALOFT, "log", "--db", db, "--json", str(run.get("mission_id"))],
                        capture_output=True, text=True, timeout=60)
    doc = json.loads(rc.stdout) if rc.returncode == 0 else {"mission": {}, "events": []}
    check(doc["mission"].get("status") == "cancelled" and
          "cancel" in (doc["mission"].get("error") or ""), f"cancelled: {doc['mission']}")
    calls = [(e["skill"], e["args"], e["ret"]) for e in doc["events"] if e["kind"] == "call"]
    check(calls == [(c["skill"], c["args"], c["ret"]) for c in run.get("calls", [])] and
          len(calls) >= 2, f"the calls so far: {calls}")

if failures:
    print(f"{failures} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("test_record_kill: all checks passed")
