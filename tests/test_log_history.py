"""What `aloft log` tells of past missions (SPEC §12), from real runs in the
simulator: a --plan mission is listed by its plan file and first statement
(not a bare "(plan given)"); a failed LLM call is recorded as the exchange
with its error, never as an empty plan; objects seen in different scene
files are remembered in separate worlds (one per scene file, whatever its
path)."""

import json
import os
import subprocess
import sys
import tempfile

from fake_llm_proc import Fake

ALOFT = os.environ["ALOFT"]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what, file=sys.stderr)


def aloft(*args, stdin=None):
    e = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ALOFT_DB"):
        e.pop(k, None)
    p = subprocess.run([ALOFT, *args], capture_output=True, text=True, env=e, timeout=120,
                       input=stdin)
    return p.returncode, p.stdout, p.stderr


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def list_rows(db):
    """The readable list's rows: {id: task column}."""
    rc, out, err = aloft("log", "--db", db)
    check(rc == 0, f"log: {err}")
    rows = {}
    for line in out.splitlines()[1:]:
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[0].isdigit():
            rows[int(parts[0])] = parts[5]
    return rows


def mission_id(err):
    # "mission N (recorded in DB)" on stderr
    for line in err.splitlines():
        if line.startswith("mission ") and "recorded in" in line:
            return int(line.split()[1])
    return None


with tempfile.TemporaryDirectory() as tmp:
    scene = write(os.path.join(tmp, "scene.json"), json.dumps({"objects": []}))
    db = os.path.join(tmp, "m.db")

    # ---- --plan missions: file name and first statement -------------------
    plans = {
        "square.ms": ("4{mf(10);tc(90)};l('done')", "square.ms: 4{mf(10);tc(90)}"),
        # a ';' inside a string does not end the statement
        "quoted.ms": ("  l(\"a;b\");tc(1)", "quoted.ms: l(\"a;b\")"),
        # the first line ends the first statement
        "lines.ms": ("tc(1)\ntc(2)", "lines.ms: tc(1)"),
        # 60 bytes of statement are kept, then "..."
        "long.ms": ("l('" + "x" * 80 + "')", "long.ms: l('" + "x" * 57 + "..."),
    }
    ids = {}
    for name, (text, _) in plans.items():
        rc, out, err = aloft("run", "--scene", scene, "--plan", write(os.path.join(tmp, name), text), "--time-scale", "0",
                             "--db", db)
        check(rc == 0, f"run --plan {name}: {rc} {err}")
        ids[name] = mission_id(err)
    rc, out, err = aloft("run", "--scene", scene, "--plan", "-", "--time-scale", "0", "--db", db,
                         stdin="tc(3);tc(4)")
    check(rc == 0, f"run --plan -: {rc} {err}")
    ids["-"] = mission_id(err)

    rows = list_rows(db)
    for name, (_, label) in plans.items():
        want = "plan " + os.path.join(tmp, name)[: -len(name)] + label
        check(rows.get(ids[name]) == want, f"list row of {name}: {rows.get(ids[name])!r} != {want!r}")
    check(rows.get(ids["-"]) == "plan stdin: tc(3)", f"list row of stdin: {rows.get(ids['-'])!r}")
    check(not any("(plan given)" in r for r in rows.values()), f"no bare '(plan given)': {rows}")

    rc, out, err = aloft("log", "--db", db, str(ids["square.ms"]))
    first = out.splitlines()[0] if out else ""
    check(rc == 0 and first.startswith(f"mission {ids['square.ms']}: plan ") and
          first.endswith("square.ms: 4{mf(10);tc(90)}"), f"mission view: {first!r} {err}")

    # The JSON list keeps SPEC §2's keys: a --plan mission's task is null.
    rc, out, err = aloft("log", "--db", db, "--json")
    lst = json.loads(out) if rc == 0 else []
    check(all(set(m) == {"id", "task", "status", "started", "duration_ms"} and m["task"] is None
              for m in lst), f"JSON list unchanged: {lst}")

    # ---- a failed LLM call records no plan --------------------------------
    fdb = os.path.join(tmp, "f.db")
    fake = Fake(tmp, [{"fault": "401"}])
    try:
        rc, out, err = aloft("run", "--scene", scene, "--task", "turn around", "--llm-url",
                             fake.url, "--model", "fake-model", "--db", fdb)
    finally:
        fake.stop()
    check(rc == 1 and "401" in err, f"a refused LLM call fails the run: {rc} {err}")
    mid = mission_id(err)
    rc, out, err = aloft("log", "--db", fdb, "--json", str(mid))
    doc = json.loads(out) if rc == 0 else {"plans": None, "events": [], "llm_calls": []}
    check(doc["plans"] == [], f"no plan recorded for a failed call: {doc['plans']}")
    check(not [e for e in doc["events"] if e["kind"] == "plan"],
          f"no plan event: {[e['kind'] for e in doc['events']]}")
    calls = doc["llm_calls"]
    check(len(calls) == 1 and "401" in (calls[0].get("error") or ""),
          f"the exchange is recorded with its error: {calls}")
    check("401" in (doc.get("mission", {}).get("error") or ""), "the mission's error names it")
    rc, out, err = aloft("log", "--db", fdb, str(mid))
    check(rc == 0 and "plan 1" not in out, f"readable timeline shows no plan:\n{out}")

    # ---- objects: one world per scene file --------------------------------
    odb = os.path.join(tmp, "o.db")
    apple = {"class": "apple", "x": 0, "y": 250, "z": 80, "w": 8, "d": 8, "h": 9, "color": "red"}
    orchard = write(os.path.join(tmp, "orchard.json"), json.dumps({"objects": [apple]}))
    # the same text under another path is the same scene file's world
    orchard2 = write(os.path.join(tmp, "orchard-copy.json"), json.dumps({"objects": [apple]}))
    # another scene, whose apple stands at the same coordinates
    kitchen = write(os.path.join(tmp, "kitchen.json"),
                    json.dumps({"objects": [apple, dict(apple, **{"class": "cup", "y": 260})]}))
    look = write(os.path.join(tmp, "look.ms"), "iv('apple');iv('cup')")
    for s in (orchard, kitchen, orchard2):
        rc, out, err = aloft("run", "--scene", s, "--plan", look, "--time-scale", "0", "--db", odb)
        check(rc == 0, f"look in {s}: {rc} {err}")
    rc, out, err = aloft("log", "--db", odb, "--objects", "--json")
    objs = json.loads(out) if rc == 0 else []
    apples = sorted((o for o in objs if o["class"] == "apple"), key=lambda o: o["sightings"])
    check(len(apples) == 2, f"an apple per world, not one merged apple: {objs}")
    if len(apples) == 2:
        # Each run looks the same way (no noise): the orchard's apple, seen in
        # two runs (same text, two paths), has twice the kitchen's sightings.
        check(apples[0]["sightings"] >= 1 and apples[1]["sightings"] == 2 * apples[0]["sightings"]
              and apples[1]["last_mission"] == 3 and apples[0]["last_mission"] == 2,
              f"the orchard's apple seen in runs 1 and 3, the kitchen's in run 2: {apples}")
        check(apples[0]["world"] != apples[1]["world"] and
              all(str(a["world"]).startswith("scene:") for a in apples),
              f"named by their scene: {[a['world'] for a in apples]}")
        cups = [o for o in objs if o["class"] == "cup"]
        check(len(cups) == 1 and cups[0]["world"] == apples[0]["world"],
              f"the cup is in the kitchen's world: {cups}")
    rc, out, err = aloft("log", "--db", odb, "--objects")
    check(rc == 0 and "WORLD" in out and out.count("scene:") == len(objs),
          f"readable objects name their world:\n{out}")

if failures:
    print(f"{failures} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("ok")
