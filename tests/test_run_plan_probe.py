#!/usr/bin/python3
"""aloft run --plan: probe (q, p, sa) asks the configured LLM (--llm-url,
--model or the environment) with the question and the scene the drone sees,
as a --task mission does; without a model it fails with a clear error."""

import json
import os
import subprocess
import sys
import tempfile

from fake_llm_proc import Fake

ALOFT = os.environ.get("ALOFT", "build/aloft")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def run(args, env_extra=None):
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(k, None)
    env.update(env_extra or {})
    r = subprocess.run([ALOFT, "run", "--json", "--quiet"] + args, capture_output=True,
                       text=True, env=env, timeout=120)
    try:
        return r, json.loads(r.stdout)
    except ValueError:
        return r, {}


with tempfile.TemporaryDirectory() as tmp:
    scene = os.path.join(tmp, "room.json")
    with open(scene, "w") as f:
        json.dump({"objects": [{"class": "apple", "x": 0, "y": 250, "z": 80, "w": 8, "d": 8,
                                "h": 9, "color": "red"}]}, f)
    plan = os.path.join(tmp, "plan.ms")
    with open(plan, "w") as f:
        f.write("_1=q,'what fruit is this?';l,_1;?p('how many?')==2{l('two')}")
    db = ["--db", os.path.join(tmp, "a.db")]

    # --llm-url and --model: both probes asked, answers coerced and logged
    fake = Fake(tmp, [{"content": "  apple\n"}, {"content": "2"}])
    r, doc = run(["--scene", scene, "--plan", plan, "--llm-url", fake.url, "--model", "m"] + db)
    reqs = fake.requests()
    fake.stop()
    check(r.returncode == 0 and doc.get("ok"), "probe with --plan: %s %s" % (doc.get("error"),
                                                                            r.stderr))
    check(doc.get("logs") == ["apple", "two"], "logs: %s" % doc.get("logs"))
    check(doc.get("llm_calls") == 2, "llm_calls %s" % doc.get("llm_calls"))
    check(len(reqs) == 2, "the LLM got %d requests" % len(reqs))
    if reqs:
        body = reqs[0]["body"]
        text = json.dumps(body["messages"])
        check(body.get("model") == "m", "model sent: %s" % body.get("model"))
        check("what fruit is this?" in text, "the question reaches the LLM: %s" % text[:300])
        check("apple" in text, "the scene reaches the LLM: %s" % text[:300])
        check(not body.get("stream"), "a probe is asked without streaming")
    # the exchanges are recorded with the mission
    lg = subprocess.run([ALOFT, "log", "--json", str(doc.get("mission_id"))] + db,
                        capture_output=True, text=True, timeout=60)
    try:
        calls = json.loads(lg.stdout).get("llm_calls", [])
    except ValueError:
        calls = []
    check([c.get("kind") for c in calls] == ["probe", "probe"] and calls[0].get("response") ==
          "  apple\n" and "what fruit is this?" in calls[0].get("prompt", ""),
          "recorded exchanges: %s" % calls)

    # the environment names the server and the model
    fake = Fake(tmp, [{"content": "pear"}, {"content": "3"}])
    r, doc = run(["--scene", scene, "--plan", plan] + db,
                 {"OPENAI_BASE_URL": fake.url, "ALOFT_MODEL": "env-model"})
    reqs = fake.requests()
    fake.stop()
    check(doc.get("ok") and doc.get("logs") == ["pear"], "probe from the environment: %s %s"
          % (doc.get("error"), doc.get("logs")))
    check(reqs and reqs[0]["body"].get("model") == "env-model", "ALOFT_MODEL is the model")

    # no model: the plan fails at the probe, saying what to give
    r, doc = run(["--scene", scene, "--plan", plan] + db)
    check(r.returncode == 1 and not doc.get("ok") and "--model" in (doc.get("error") or ""),
          "no model: %s" % doc.get("error"))

    # the LLM refuses: the error says so, with the server's reason
    fake = Fake(tmp, [{"fault": "401"}])
    r, doc = run(["--scene", scene, "--plan", plan, "--llm-url", fake.url, "--model", "m"] + db)
    fake.stop()
    check(r.returncode == 1 and "the LLM did not answer" in (doc.get("error") or ""),
          "LLM refuses: %s" % doc.get("error"))

    # a plan without probe needs no LLM at all
    with open(plan, "w") as f:
        f.write("o,apple;p")
    r, doc = run(["--scene", scene, "--plan", plan] + db)
    check(doc.get("ok") and doc.get("llm_calls") == 0 and
          [c["skill"] for c in doc.get("calls", [])][-1:] == ["take_picture"],
          "p alone takes a picture without an LLM: %s" % doc.get("error"))

sys.exit(1 if failures else 0)
