#!/usr/bin/python3
"""Object memory in the planning prompt, end to end (aloft run --task with
the fake LLM): what a mission saw in this world and is not in view now is
listed in the next mission's planning prompt with where it is from the
drone's heading; what is in view is not repeated; another world's objects
never appear; a fresh world's prompt has no memory block at all."""

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


def env_without_model():
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(k, None)
    return env


with tempfile.TemporaryDirectory() as tmp:
    def scene_file(name, objects):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            json.dump({"drone": {"x": 0, "y": 0, "z": 100, "yaw": 0}, "objects": objects}, f)
        return path

    # a person ahead (in view from the start), a chair to the right (seen
    # only once the drone turned)
    room = scene_file("room.json", [
        {"class": "person", "x": 0, "y": 400, "z": 0, "w": 50, "d": 30, "h": 170},
        {"class": "chair", "x": 300, "y": 0, "z": 0, "w": 45, "d": 45, "h": 90}])
    other = scene_file("other.json", [
        {"class": "person", "x": 0, "y": 450, "z": 0, "w": 50, "d": 30, "h": 170}])
    db = os.path.join(tmp, "aloft.db")

    def prompt_of(scene, reply, task, extra=()):
        fake = Fake(tmp, [{"content": reply}])
        r = subprocess.run([ALOFT, "run", "--scene", scene, "--task", task, "--llm-url",
                            fake.url, "--model", "m", "--json", "--db", db] + list(extra),
                           capture_output=True, text=True, env=env_without_model(), timeout=120)
        reqs = fake.requests()
        fake.stop()
        check(r.returncode == 0, "%s: exit %d %s" % (task, r.returncode, r.stderr[-300:]))
        return reqs[0]["body"]["messages"][-1]["content"] if reqs else ""

    first = prompt_of(room, "tc(90);iv('chair')", "look to the right")
    check("Remembered" not in first, "a fresh world has no memory: %s" % first)

    second = prompt_of(room, "tc(1)", "what is around?")
    check("chair #" in second and "to the right" in second.split("chair #")[1].split("\n")[0],
          "the chair seen before is remembered to the right: %s" % second)
    check("person #" not in second, "the person in view is repeated: %s" % second)
    mem = second[second.find("Remembered"):second.find("Task:")]
    check(mem.count("\n") >= 2 and "seen" in mem and " m " in mem, "the block: %r" % mem)
    check(second.index("Remembered") < second.index("Task:"), "memory after the task")

    # --no-memory: the same mission's prompt without the block
    nomem = prompt_of(room, "tc(1)", "what is around?", ["--no-memory"])
    check("Remembered" not in nomem and "chair #" not in nomem,
          "--no-memory still lists the memory: %s" % nomem)

    third = prompt_of(other, "tc(1)", "anything?")
    check("chair" not in third and "Remembered" not in third,
          "another world's objects appear: %s" % third)

sys.exit(1 if failures else 0)
