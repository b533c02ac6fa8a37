"""`aloft log` on databases written by store_writer (tests/tools): the JSON
of SPEC §2 for the list and for one mission, the readable timeline, where the
database is looked for, interrupted missions, and clear errors."""

import json
import os
import signal
import subprocess
import sys
import tempfile

ALOFT = os.environ["ALOFT"]
WRITER = os.path.join(os.environ["BUILD"], "store_writer")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what, file=sys.stderr)


def log(*args, env=None):
    e = dict(os.environ)
    for k in ("ALOFT_DB", "XDG_DATA_HOME"):
        e.pop(k, None)
    e.update(env or {})
    p = subprocess.run([ALOFT, "log", *args], capture_output=True, text=True, env=e, timeout=60)
    return p.returncode, p.stdout, p.stderr


def write_mission(db, events):
    out = subprocess.run([WRITER, "--db", db, "--events", str(events)], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    return int(out.split()[1])


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "a.db")
    first = write_mission(db, 5)
    second = write_mission(db, 2)

    rc, out, err = log("--db", db, "--json")
    check(rc == 0, f"list exits 0: {err}")
    missions = json.loads(out)
    check([m["id"] for m in missions] == [first, second], f"both missions listed: {out}")
    for m in missions:
        check(set(m) == {"id", "task", "status", "started", "duration_ms"},
              f"list keys are SPEC §2's: {sorted(m)}")
        check(m["status"] == "ok" and m["task"] == "turn in place", f"list row: {m}")
        check(m["started"].endswith("Z") and "T" in m["started"], f"ISO-8601 UTC: {m}")
        check(isinstance(m["duration_ms"], (int, float)), "duration is a number")

    # Options after the positional argument (GNU permutation).
    rc, out, err = log(str(first), "--json", "--db", db)
    check(rc == 0, f"show exits 0: {err}")
    doc = json.loads(out)
    check(set(doc) >= {"mission", "plans", "events", "llm_calls"}, f"mission keys: {sorted(doc)}")
    check(doc["mission"]["id"] == first and doc["mission"]["status"] == "ok", "mission row")
    check(doc["plans"] == ["5{tc(1)}"], f"plans: {doc['plans']}")
    for e in doc["events"]:
        check({"t_ms", "kind", "skill", "args", "ret"} <= set(e), f"event keys: {e}")
    calls = [e for e in doc["events"] if e["kind"] == "call"]
    check([(c["skill"], c["args"], c["ret"]) for c in calls] ==
          [("turn_cw", [i], True) for i in range(5)], f"calls: {calls}")
    times = [e["t_ms"] for e in doc["events"]]
    check(times == sorted(times), "events in time order")
    check(len(doc["llm_calls"]) == 1, "one LLM call")
    llm = doc["llm_calls"][0]
    check((llm["kind"], llm["latency_ms"], llm["prompt_tokens"], llm["completion_tokens"]) ==
          ("plan", 12.5, 100, 8), f"llm call: {llm}")

    rc, out, err = log("--db", db, str(first))
    check(rc == 0 and "turn_cw(4) -> true" in out and "plan 1" in out and
          "llm plan" in out, f"readable timeline:\n{out}{err}")
    rc, out, err = log("--db", db)
    check(rc == 0 and "turn in place" in out and "STATUS" in out, f"readable list:\n{out}")

    # The object memory, merged across both missions.
    rc, out, err = log("--db", db, "--objects", "--json")
    objs = json.loads(out) if rc == 0 else []
    check(len(objs) == 1 and objs[0]["class"] == "apple" and objs[0]["sightings"] == 2 and
          objs[0]["last_mission"] == second, f"objects: {out}{err}")
    rc, out, _ = log("--db", db, "--objects")
    check(rc == 0 and "apple" in out, f"readable objects:\n{out}")
    rc, _, _ = log("--db", db, "--objects", "1")
    check(rc == 2, "--objects with an ID is a usage error")

    # Where the database is found: ALOFT_DB, then XDG_DATA_HOME.
    rc, out, _ = log("--json", env={"ALOFT_DB": db})
    check(rc == 0 and len(json.loads(out)) == 2, "ALOFT_DB is used")
    xdg = os.path.join(tmp, "xdg")
    rc, out, _ = log("--json", env={"XDG_DATA_HOME": xdg})
    check(rc == 0 and json.loads(out) == [], "nothing recorded yet is an empty list")
    os.makedirs(os.path.join(xdg, "aloft"))
    write_mission(os.path.join(xdg, "aloft", "aloft.db"), 1)
    rc, out, _ = log("--json", env={"XDG_DATA_HOME": xdg})
    check(rc == 0 and len(json.loads(out)) == 1, "XDG_DATA_HOME/aloft/aloft.db is used")

    # A mission whose process was killed shows as interrupted, with its calls.
    kdb = os.path.join(tmp, "k.db")
    w = subprocess.Popen([WRITER, "--db", kdb, "--events", "1000000"], stdout=subprocess.PIPE,
                         text=True)
    mid = int(w.stdout.readline().split()[1])
    for _ in range(20):
        w.stdout.readline()
    w.send_signal(signal.SIGKILL)
    w.wait()
    w.stdout.close()
    rc, out, err = log("--db", kdb, "--json", str(mid))
    doc = json.loads(out) if rc == 0 else {}
    check(doc.get("mission", {}).get("status") == "interrupted", f"killed -> interrupted: {err}")
    check(len([e for e in doc.get("events", []) if e["kind"] == "call" and e["done"]]) >= 20,
          "the killed mission keeps its calls")

    # Errors.
    rc, _, err = log("--db", os.path.join(tmp, "nope.db"))
    check(rc == 1 and "no mission database" in err, f"missing --db: {rc} {err}")
    rc, _, err = log("--db", db, "abc")
    check(rc == 2, f"bad ID is a usage error: {rc} {err}")
    rc, _, err = log("--db", db, "99")
    check(rc == 1 and "no mission 99" in err, f"unknown ID: {rc} {err}")
    rc, _, _ = log("--db", db, "1", "2")
    check(rc == 2, "two IDs are a usage error")
    garbage = os.path.join(tmp, "garbage.db")
    with open(garbage, "wb") as f:
        f.write(os.urandom(8192))
    rc, out, err = log("--db", garbage, "--json")
    check(rc == 1 and "not an aloft database" in err and out == "", f"garbage: {rc} {err}")
    subprocess.run(["/usr/bin/python3", "-c",
                    "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]);"
                    "c.execute('PRAGMA user_version = 42'); c.commit()", db], check=True)
    rc, _, err = log("--db", db, "--json")
    check(rc == 1 and "newer aloft" in err, f"newer schema: {rc} {err}")
    rc, out, _ = log("--help")
    check(rc == 0 and "Usage: aloft log" in out, "--help")

if failures:
    print(f"{failures} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("test_store_log: all checks passed")
