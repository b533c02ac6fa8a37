#!/usr/bin/python3
"""aloft run --task --verify against the fake OpenAI server: each plan is
verified before it runs; one that fails verification never flies and counts
as a failed try whose retry prompt says why."""

import json
import os
import subprocess
import tempfile

from fake_llm_proc import Fake

ALOFT = os.environ.get("ALOFT", "build/aloft")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def run(args):
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(k, None)
    return subprocess.run([ALOFT, "run"] + args, capture_output=True, text=True, env=env,
                          timeout=120)


with tempfile.TemporaryDirectory() as tmp:
    scene = os.path.join(tmp, "low.json")
    with open(scene, "w") as f:
        json.dump({"limits": {"geofence_radius": 600, "max_z": 150},
                   "objects": [{"class": "apple", "x": 0, "y": 250, "z": 80, "w": 8, "d": 8,
                                "h": 9}]}, f)
    db = os.path.join(tmp, "m.db")
    base = ["--scene", scene, "--task", "Look around.", "--model", "fake", "--json",
            "--db", db, "--verify", "6"]

    # The first plan climbs through the ceiling: refused before it runs; the
    # second is safe and flies.
    fake = Fake(tmp, [{"content": "mu(500);tc(90)"}, {"content": "tc(90);->True"}])
    r = run(base + ["--llm-url", fake.url])
    reqs = fake.requests()
    fake.stop()
    check(r.returncode == 0, "safe second plan: exit %d %s" % (r.returncode, r.stderr))
    doc = json.loads(r.stdout) if r.stdout.strip() else {}
    check(doc.get("plans") == ["mu(500);tc(90)", "tc(90);->True"], "plans: %r" % doc.get("plans"))
    check([c["skill"] for c in doc.get("calls", [])] == ["turn_cw"],
          "only the verified plan flew: %r" % doc.get("calls"))
    check(doc.get("tries") == 2, "tries: %r" % doc.get("tries"))
    v = doc.get("verify", [])
    check(len(v) == 2 and len(v[0]["failed"]) == 6 and v[1]["passed"] == 6,
          "verify reports: %r" % v)
    check(len(reqs) == 2, "two plan requests: %d" % len(reqs))
    body = json.dumps(reqs[1]) if len(reqs) > 1 else ""
    check("verification" in body and "altitude band" in body,
          "the retry prompt says why: %s" % body[:2000])
    # ... in the words of the first failing world of the report (the worlds
    # flew in workers: the summary the gate reads came through them)
    if len(v) == 2 and v[0]["failed"]:
        first = v[0]["failed"][0]
        why = "verification: 6 of 6 sampled worlds failed; world %d: %s: %s" % (
            first["world"], first["kind"], first["reason"])
        check(json.dumps(why)[1:-1] in body, "the retry prompt names world %d: %s"
              % (first["world"], body[:2000]))
    check(all(not q.get("body", q).get("stream", False) for q in reqs),
          "--verify asks for whole plans (no streaming)")

    # Every plan fails verification: the mission fails without flying.
    fake = Fake(tmp, [{"content": "mu(500)"}, {"content": "mu(400)"}])
    r = run(base + ["--llm-url", fake.url, "--max-tries", "2"])
    fake.stop()
    check(r.returncode == 1, "no plan passed: exit %d" % r.returncode)
    doc = json.loads(r.stdout) if r.stdout.strip() else {}
    check(doc.get("ok") is False and doc.get("calls") == [], "nothing flew: %r" % doc)

print("FAILED" if failures else "all verify task tests passed")
raise SystemExit(1 if failures else 0)
