#!/usr/bin/python3
# labels: mission
"""`aloft run` and `aloft serve` start their flights through one lifecycle
(SPEC §7 "Front ends"): the same task, flown with the same LLM replies
through both, is recorded the same way in the store: status, error, result,
task, drone, model, seed, scene, the recorded parameters, the plans with the
checker's verdict, the skill calls (skill, args, ret), the violations, the
log lines, the statements and the LLM exchanges (kind, reply, error)."""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_llm_proc import Fake  # noqa: E402
from serve_proc import Events, Serve  # noqa: E402

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


# Each case: a task and the replies the fake LLM gives to it (a plan, a
# replan after a refused move, a probe answered by the LLM) and the status
# both front ends must record.
CASES = [
    ("say hello, turn and move", ["l('hello');tc(90);mf(50);->True"], "ok"),
    # the geofence refuses the move: the replan flies the second plan
    ("go far, then come back", ["mf(50);mf(900);->True", "l('back');tu(45);->True"], "ok"),
    # a plan that never passes the checker: every try fails
    ("fly badly", ["zz(1)", "zz(2)"], "failed"),
    # a replan that asks too often
    ("keep asking", ["l('once');rp", "l('twice');rp"], "failed"),
]


def recorded(db, mid, env):
    r = subprocess.run([ALOFT, "log", "--db", db, "--json", str(mid)], capture_output=True,
                       text=True, env=env, timeout=60)
    check(r.returncode == 0, "aloft log %s: %s" % (mid, r.stderr))
    return json.loads(r.stdout) if r.returncode == 0 else None


def comparable(doc):
    """What must agree between two flights of the same task and replies:
    everything but ids, clocks and the prompts' timings."""
    m = dict(doc["mission"])
    for k in ("id", "started", "ended", "duration_ms"):
        m.pop(k, None)
    events = []
    for e in doc["events"]:
        e = {k: v for k, v in e.items()
             if k not in ("id", "t_ms", "wall_ms", "sim_ms", "end_ms", "pose")}
        events.append(e)
    llm = [{k: c.get(k) for k in ("kind", "response", "error", "model")}
           for c in doc.get("llm_calls", [])]
    return {"mission": m, "plans": doc.get("plans"), "events": events, "llm": llm}


def diff(a, b, path=""):
    """The first difference between A and B, or None."""
    if type(a) is not type(b):
        return "%s: %r vs %r" % (path, a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s: only in %s" % (path, k, "run" if k in a else "serve")
            d = diff(a[k], b[k], path + "." + k)
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d vs %d entries (%r vs %r)" % (path, len(a), len(b), a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            d = diff(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r vs %r" % (path, a, b)


with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ALOFT_DB"):
        env.pop(k, None)
    db = os.path.join(tmp, "missions.db")
    scene = os.path.join(SRC, "examples/scenes/spec-example.json")
    common = ["--model", "fake", "--db", db, "--seed", "7", "--time-scale", "0",
              "--max-tries", "2", "--max-replans", "1", "--max-instructions", "5000000",
              "--timeout-ms", "60000"]

    # The run side: one fake LLM per case, its replies in order.
    run_ids, run_docs = [], []
    for task, replies, _ in CASES:
        fake = Fake(tmp, [{"content": r} for r in replies])
        try:
            p = subprocess.run([ALOFT, "run", "--scene", scene, "--task", task, "--json",
                                "--quiet", "--llm-url", fake.url] + common,
                               capture_output=True, text=True, env=env, timeout=120)
        finally:
            fake.stop()
        doc = json.loads(p.stdout) if p.stdout.strip() else {}
        run_docs.append(doc)
        run_ids.append(doc.get("mission_id"))

    # The serve side: the same replies, case after case, on one drone.
    serve_ids, ends = [], []
    fake = Fake(tmp, [{"content": r} for _, replies, _ in CASES for r in replies])
    srv = Serve(["--drone", "sim:" + scene, "--llm-url", fake.url] + common, env=env)
    try:
        for task, _, _ in CASES:
            ev = Events(srv, 0)
            status, doc = srv.post_json("/api/drones/0/missions", {"task": task})
            check(status == 202, "serve took %r: %s %s" % (task, status, doc))
            end = ev.until("end", lambda d: d["run"] == doc.get("run"))
            ev.close()
            ends.append(end)
            serve_ids.append(end.get("mission_id"))
    finally:
        srv.stop()
        fake.stop()

    for (task, _, status), rid, sid, rdoc, end in zip(CASES, run_ids, serve_ids, run_docs, ends):
        check(isinstance(rid, int) and isinstance(sid, int),
              "%r: both recorded (%s, %s)" % (task, rid, sid))
        if not (isinstance(rid, int) and isinstance(sid, int)):
            continue
        a, b = recorded(db, rid, env), recorded(db, sid, env)
        if not (a and b):
            continue
        check(a["mission"]["status"] == status,
              "%r: run recorded %s, expected %s" % (task, a["mission"]["status"], status))
        # the recorded missions agree with each other ...
        d = diff(comparable(a), comparable(b))
        check(d is None, "%r: run and serve recorded differently: %s" % (task, d))
        # ... and each front end reports what its mission recorded
        check(rdoc.get("ok") == (status == "ok") and rdoc.get("error") == a["mission"]["error"],
              "%r: run --json says ok=%s error=%r" % (task, rdoc.get("ok"), rdoc.get("error")))
        check(end.get("status") == b["mission"]["status"] and
              end.get("error") == b["mission"]["error"] and
              end.get("result") == b["mission"]["result"],
              "%r: serve's end event %s vs recorded %s" % (task, end, b["mission"]))
        check(end.get("logs") == rdoc.get("logs") and end.get("plans") == rdoc.get("plans") and
              end.get("tries") == rdoc.get("tries") and end.get("replans") == rdoc.get("replans"),
              "%r: serve's end %s vs run's report logs=%s plans=%s" %
              (task, end, rdoc.get("logs"), rdoc.get("plans")))

print("%d failure(s)" % failures)
sys.exit(1 if failures else 0)
