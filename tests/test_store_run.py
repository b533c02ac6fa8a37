"""Every `aloft run` is recorded (SPEC §2, §12): the mission that
`aloft log --json ID` shows holds the same plans, skill calls (skill, args,
ret, t_ms, in order), violations, statements and final pose as the run's own
--json output, and the run says which mission it is ("mission_id"). The
store is found by --db, else $ALOFT_DB, else $XDG_DATA_HOME/aloft/aloft.db;
a store that cannot be opened stops the run before it flies."""

import json
import os
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


def aloft(*args, env=None):
    e = dict(os.environ)
    e.pop("ALOFT_DB", None)
    e.update(env or {})
    p = subprocess.run([ALOFT, *args], capture_output=True, text=True, env=e, timeout=120)
    return p.returncode, p.stdout, p.stderr


def mission(db, mid):
    rc, out, err = aloft("log", "--db", db, "--json", str(mid))
    check(rc == 0, f"log shows mission {mid}: {err}")
    return json.loads(out) if rc == 0 else {"mission": {}, "plans": [], "events": [],
                                           "llm_calls": []}


SCENE = {
    "drone": {"x": 0, "y": 0, "z": 100, "yaw": 0},
    "limits": {"geofence_radius": 300, "min_z": 30, "max_z": 300},
    "objects": [{"class": "apple", "x": 0, "y": 250, "z": 80, "w": 8, "d": 8, "h": 9,
                 "color": "red"}],
}
# Turns, moves (one refused by the geofence), a vision call, a high-level
# skill with inner calls, a condition whose block is skipped, and a log;
# nothing that would make the mission ask an LLM for a replan.
PLAN = ("tc(90);tu(90);mf(50);mf(500);iv('apple');?iv('banana'){tc(5)};"
        "s('apple');l('done')")


def compare(db, run, plan_text):
    """The recorded mission of RUN against RUN itself."""
    mid = run.get("mission_id")
    check(isinstance(mid, int), f"run --json names its mission: {run.get('mission_id')}")
    doc = mission(db, mid)
    m = doc["mission"]
    check(m.get("status") == ("ok" if run["ok"] else "failed"),
          f"status matches ok={run['ok']}: {m.get('status')}")
    check(m.get("error") == run["error"], f"error {m.get('error')} vs {run['error']}")
    check(m.get("result") == run["result"], f"result {m.get('result')} vs {run['result']}")
    check(m.get("scene") == SCENE, "the scene is recorded for replay")
    check(doc["plans"] == run["plans"] == [plan_text], f"plans: {doc['plans']} vs {run['plans']}")
    ev = doc["events"]
    calls = [e for e in ev if e["kind"] == "call"]
    check(len(calls) == len(run["calls"]),
          f"{len(calls)} calls recorded, run reported {len(run['calls'])}")
    for i, (a, b) in enumerate(zip(calls, run["calls"])):
        check((a["skill"], a["args"], a["ret"]) == (b["skill"], b["args"], b["ret"]),
              f"call {i}: {a} vs {b}")
        check(abs(a["t_ms"] - b["t_ms"]) < 0.5, f"call {i} t_ms {a['t_ms']} vs {b['t_ms']}")
        check(a["done"] and "pose" in a and a["wall_ms"] >= 0 and a["sim_ms"] >= 0,
              f"call {i} completed with pose and times: {a}")
    if calls:
        last = calls[-1]["pose"]
        check(all(abs(last[k] - run["pose"][k]) < 0.1 for k in ("x", "y", "z", "yaw")),
              f"pose after the last call {last} vs the run's {run['pose']}")
    viol = [e for e in ev if e["kind"] == "violation"]
    check([(v["skill"], v["reason"]) for v in viol] ==
          [(v["skill"], v["reason"]) for v in run["violations"]],
          f"violations: {viol} vs {run['violations']}")
    check(len(doc["llm_calls"]) == run["llm_calls"], "llm calls")
    plans = [e for e in ev if e["kind"] == "plan"]
    check(len(plans) == 1 and plans[0]["ok"] == (run["error"] is None or bool(run["calls"])),
          f"the plan with the checker's verdict: {plans}")
    return doc


with tempfile.TemporaryDirectory() as tmp:
    scene = os.path.join(tmp, "scene.json")
    with open(scene, "w") as f:
        json.dump(SCENE, f)
    plan = os.path.join(tmp, "plan.txt")
    with open(plan, "w") as f:
        f.write(PLAN)
    db = os.path.join(tmp, "runs.db")

    rc, out, err = aloft("run", "--scene", scene, "--plan", plan, "--json", "--db", db,
                         "--time-scale", "0")
    check(rc in (0, 1), f"run exits 0 or 1, got {rc}: {err}")
    run = json.loads(out)
    check(run["ok"], f"the plan runs: {run['error']}")
    check(f"mission {run.get('mission_id')} (recorded in {db})" in err,
          f"progress names the mission: {err}")

    rc, out, err = aloft("log", "--db", db, "--json")
    check(rc == 0, f"log lists the run: {err}")
    missions = json.loads(out) if rc == 0 else []
    check(len(missions) == 1, f"one mission recorded: {out}")
    check(missions and missions[0]["id"] == run["mission_id"], "the listed id is the run's")
    doc = compare(db, run, PLAN)
    calls = [e for e in doc["events"] if e["kind"] == "call"]
    viol = [e for e in doc["events"] if e["kind"] == "violation"]
    check(len(viol) == 1 and viol[0]["args"] == [500], f"the refused move and its args: {viol}")
    check([c["depth"] for c in calls if c["skill"] == "scan"] == [0] and
          any(c["depth"] == 1 for c in calls), "calls inside scan are recorded one level down")
    # Statements as they started, in plan order; the skipped block's never.
    stmts = [e["text"] for e in doc["events"] if e["kind"] == "statement"]
    check(stmts == ["tc(90)", "tu(90)", "mf(50)", "mf(500)", "iv('apple')", "?iv('banana'){",
                    "s('apple')", "l('done')"], f"statements: {stmts}")
    # The timeline: each statement comes before the calls it made.
    kinds = [(e["kind"], e.get("text") or e.get("skill")) for e in doc["events"]]
    i = kinds.index(("statement", "mf(500)"))
    check(kinds[i + 1] == ("call", "move_forward") and kinds[i + 2][0] == "violation",
          f"statement, call, violation in order: {kinds[i:i + 3]}")

    # A plan the checker rejects is recorded with its diagnostics; the
    # mission failed without a call.
    bad = subprocess.run([ALOFT, "run", "--scene", scene, "--plan", "-", "--json", "--db", db,
                          "--time-scale", "0"], input="tc(45);turnleft(3)", capture_output=True,
                         text=True, timeout=60)
    check(bad.returncode == 1, f"rejected plan exits 1: {bad.stderr}")
    run = json.loads(bad.stdout)
    doc = mission(db, run["mission_id"])
    plans = [e for e in doc["events"] if e["kind"] == "plan"]
    check(doc["mission"]["status"] == "failed" and len(plans) == 1 and not plans[0]["ok"] and
          plans[0]["diagnostics"] == run["error"], f"rejected plan recorded: {plans}")
    check(not [e for e in doc["events"] if e["kind"] == "call"], "no call recorded")

    # ALOFT_DB is where runs go when --db is not given; --db overrides it.
    env_db = os.path.join(tmp, "env", "aloft.db")
    rc, out, err = aloft("run", "--scene", scene, "--plan", plan, "--json", "--time-scale", "0",
                         env={"ALOFT_DB": env_db})
    check(rc == 0 and os.path.exists(env_db), f"ALOFT_DB receives the run: {err}")
    rc, out, err = aloft("run", "--scene", scene, "--plan", plan, "--json", "--time-scale", "0",
                         "--db", db, env={"ALOFT_DB": env_db})
    check(len(json.loads(aloft("log", "--db", env_db, "--json")[1])) == 1,
          "--db overrides ALOFT_DB")
    # Without either: $XDG_DATA_HOME/aloft/aloft.db.
    xdg = os.path.join(tmp, "xdg")
    rc, out, err = aloft("run", "--scene", scene, "--plan", plan, "--json", "--time-scale", "0",
                         env={"XDG_DATA_HOME": xdg})
    check(rc == 0 and os.path.exists(os.path.join(xdg, "aloft", "aloft.db")),
          f"the default store under XDG_DATA_HOME: {err}")

    # A store that cannot be opened stops the run before it flies: exit 1, a
    # clear message, no drone output.
    junk = os.path.join(tmp, "junk.db")
    with open(junk, "wb") as f:
        f.write(b"this is not a database, just some text\n" * 100)
    rc, out, err = aloft("run", "--scene", scene, "--plan", plan, "--db", junk, "--time-scale", "0")
    check(rc == 1 and "cannot record the mission" in err and "not" in err and
          "turn_cw" not in err and "done" not in out, f"corrupt store: rc={rc} {err}")
    newer = os.path.join(tmp, "newer.db")
    c = sqlite3.connect(db)
    c.execute("VACUUM INTO ?", (newer,))
    c.close()
    c = sqlite3.connect(newer)
    c.execute("PRAGMA user_version = 99")
    c.commit()
    c.close()
    rc, out, err = aloft("run", "--scene", scene, "--plan", plan, "--db", newer,
                         "--time-scale", "0")
    check(rc == 1 and "newer" in err and "turn_cw" not in err, f"newer schema: rc={rc} {err}")
    rc, out, err = aloft("run", "--scene", scene, "--plan", plan, "--db",
                         os.path.join(plan, "x.db"), "--time-scale", "0")
    check(rc == 1 and "cannot record the mission" in err and "turn_cw" not in err,
          f"unusable path: rc={rc} {err}")

if failures:
    print(f"{failures} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("test_store_run: all checks passed")
