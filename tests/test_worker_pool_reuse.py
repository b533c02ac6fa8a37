#!/usr/bin/env python3
# labels: sandbox pool waits
"""The pool places a mission in an idle worker before it starts a new one
(SPEC §6, host/worker/vm_pool.c).

`aloft run --skills DIR` reads the skill files in a worker process; once
they are read that worker is idle, and the mission runs in it: the run
starts one worker, not two, even with room for several (ALOFT_WORKERS=4,
so that the check does not hang on the machine's core count).

The reused worker carries nothing from the read into the mission: the
skill file's top-level chunk, run once by the reader and once more by the
mission's VM, leaves a global behind and, at its second run, reports
whether it found one. A fresh Lua state per job finds none. (Missions
that run at once still get workers of their own: test_worker_serve.)
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

from worker_proc import workers_of

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
SCENE = os.path.join(SRC, "examples/scenes/office.json")
GUARD_S = 60  # only against a host that never ends
failures = 0

# The chunk runs in the reader's sandbox, then again in the mission's when
# the plan first calls the skill: `before` is what the second run found.
LEFTOVER = ('local before = leftover\n'
            'leftover = "from an earlier run of this chunk"\n'
            'return {name="fresh", description="whether the chunk ran in a fresh state",\n'
            '        args={}, returns="bool", run=function() return before == nil end}\n')


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def run_counting(tmp, plan):
    """Runs PLAN with the skill file; while it runs (its delay holds it in
    the air once the skill answered), the worker processes aloft has.
    Returns (the JSON result or None, the set of worker pids seen)."""
    skills = os.path.join(tmp, "skills")
    os.makedirs(skills, exist_ok=True)
    with open(os.path.join(skills, "fresh.lua"), "w") as f:
        f.write(LEFTOVER)
    env = dict(os.environ, ALOFT_WORKERS="4")
    env.pop("ALOFT_MODEL", None)
    p = subprocess.Popen([ALOFT, "run", "--scene", SCENE, "--db", os.path.join(tmp, "m.db"),
                          "--json", "--time-scale", "1", "--plan", "-", "--skills", skills],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    timer = threading.Timer(GUARD_S, p.kill)
    timer.start()
    p.stdin.write(plan)
    p.stdin.close()
    seen = set()
    # progress goes to stderr as it happens: once the skill answered, the
    # mission's VM is in its worker, and every worker the run started lives
    # (the pool keeps them until aloft ends)
    for line in p.stderr:
        if "fresh() -> " in line:
            seen.update(workers_of(p.pid))
            break
    for _ in range(5):
        seen.update(workers_of(p.pid))
        time.sleep(0.05)
    p.stderr.read()
    out = p.stdout.read()
    p.wait()
    timer.cancel()
    try:
        return json.loads(out), seen
    except ValueError:
        print("not JSON:", out)
        return None, seen


def main():
    with tempfile.TemporaryDirectory() as tmp:
        doc, seen = run_counting(tmp, "l(fresh());d(1500)\n")
        check(doc is not None and doc["ok"] is True, "the run flies: %s" % doc)
        # exactly one: zero would mean the count missed the run altogether
        check(len(seen) == 1, "one worker reads the skills and runs the mission: %s" % seen)
        logs = doc["logs"] if doc else None
        check(logs == ["True"], "the mission's chunk ran in a fresh Lua state: %s" % logs)
    if failures:
        print("%d failure(s)" % failures)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
