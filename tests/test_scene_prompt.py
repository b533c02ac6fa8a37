#!/usr/bin/python3
"""The scene in the LLM's prompts on a crowded view (59 objects
in view): the
planning prompt lists the objects the task concerns first and leaves the
rest out beyond the cap, saying how many; probe's prompt keeps the full
view."""

import json
import os
import re
import subprocess
import sys
import tempfile

from fake_llm_proc import Fake

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCENE = os.path.join(SRC, "tests", "bench", "crowded.scene.json")
OBJECT_LINE = re.compile(r"^\w+ x:[0-9.]+ y:[0-9.]+ width:", re.M)
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


with tempfile.TemporaryDirectory() as tmp:
    fake = Fake(tmp, [{"content": "_1=p('What is on the floor?');l(_1)"},
                      {"content": "vases and an apple"}])
    env = dict(os.environ)
    env.pop("ALOFT_MODEL", None)
    r = subprocess.run([ALOFT, "run", "--scene", SCENE, "--task",
                        "Could you find an apple? If so, go to it.", "--llm-url", fake.url,
                        "--model", "fake", "--json", "--no-stream"],
                       capture_output=True, text=True, env=env, timeout=120)
    reqs = fake.requests()
    fake.stop()
    check(r.returncode == 0, "run: exit %d %s" % (r.returncode, r.stderr))
    check(len(reqs) == 2, "a plan and a probe request: %d" % len(reqs))
    if len(reqs) == 2:
        # the user messages: the system prompt's examples have scenes too
        plan = "\n".join(m["content"] for m in reqs[0]["body"]["messages"] if m["role"] == "user")
        probe = "\n".join(m["content"] for m in reqs[1]["body"]["messages"] if m["role"] == "user")
        listed = OBJECT_LINE.findall(plan)
        check(len(listed) == 12, "the plan prompt lists 12 objects: %d" % len(listed))
        first = OBJECT_LINE.search(plan)
        check(first and plan[first.start():].startswith("apple_1 x:"),
              "the apple comes first: %s" % plan[first.start():first.start() + 40]
              if first else "no object line")
        seen = len(OBJECT_LINE.findall(probe))
        check(seen > 50 and "not listed" not in probe, "probe sees the full view: %d" % seen)
        check("(%d more objects in view not listed)" % (seen - 12) in plan,
              "the plan prompt counts the rest")

if failures:
    print("%d failure(s)" % failures)
    sys.exit(1)
print("ok")
