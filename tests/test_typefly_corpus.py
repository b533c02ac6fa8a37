#!/usr/bin/python3
"""TypeFly's published plans (tests/typefly/corpus.json, each with its
source) check and fly in aloft unchanged: `aloft check` accepts each, then
`aloft run --plan` flies it in a simulated scene holding the objects it
names, probe answered by the fake LLM. High-level skill definitions load
from a skill file and fly called on an object. Entries that aloft cannot
run carry the reason in the corpus; they are counted, and each must still
be refused by the checker (so that the reason is the real one)."""

import json
import os
import re
import subprocess
import sys
import tempfile

from fake_llm_proc import Fake

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def env_without_llm():
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(k, None)
    return env


def aloft(args):
    return subprocess.run([ALOFT] + args, capture_output=True, text=True, env=env_without_llm(),
                          timeout=300)


def scene_for(objects, path):
    """A scene with every named object in view ahead of the drone, side by
    side: `chair_13` is a chair with that id, `sports ball` the class
    sports_ball."""
    objs = []
    for i, name in enumerate(objects):
        m = re.fullmatch(r"(.+)_(\d+)", name)
        o = {"class": (m.group(1) if m else name).replace(" ", "_"),
             "x": -90 + 60 * (i % 4), "y": 260 + 40 * (i // 4), "z": 40, "w": 20, "d": 20,
             "h": 30}
        if m:
            o["id"] = name
        objs.append(o)
    with open(path, "w") as f:
        json.dump({"limits": {"geofence_radius": 800}, "objects": objs}, f)


def args_of(definition):
    n = max([int(x) for x in re.findall(r"\$(\d+)", definition)] or [0])
    return n


with open(os.path.join(SRC, "tests", "typefly", "corpus.json")) as f:
    corpus = json.load(f)["plans"]

flown = skipped = 0
with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "aloft.db")
    for i, e in enumerate(corpus):
        what = "%s %r (%s)" % (e["kind"], e["plan"], e["source"])
        d = os.path.join(tmp, "p%d" % i)
        os.mkdir(d)
        extra = []
        plan = e["plan"]
        if e["kind"] == "skill":
            # the definition as a skill file; the plan calls it on an object
            name = "tf_" + e["name"]
            n = args_of(e["plan"])
            sdir = os.path.join(d, "skills")
            os.mkdir(sdir)
            with open(os.path.join(sdir, name + ".lua"), "w") as f:
                f.write("return {name = %s, description = 'TypeFly: %s', args = {%s},\n"
                        "  returns = 'any', minispec = %s}\n"
                        % (json.dumps(name), e["name"],
                           ", ".join("{name = 'a%d', type = 'str'}" % k for k in range(1, n + 1)),
                           json.dumps(e["plan"])))
            extra = ["--skills", sdir]
            plan = "->%s(%s)" % (name, ",".join(["'%s'" % e["objects"][0]] * n))
        pfile = os.path.join(d, "plan.ms")
        with open(pfile, "w") as f:
            f.write(plan)
        r = aloft(["check", "--json", pfile] + extra)
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            doc = {"ok": False, "errors": [r.stderr]}
        if "skip" in e:
            skipped += 1
            check(not doc["ok"], "%s is listed as not runnable (%s) but checks" % (what, e["skip"]))
            continue
        check(doc["ok"], "check refuses %s: %s %s" % (what, doc.get("errors"), r.stderr.strip()))
        if not doc["ok"]:
            continue
        scene = os.path.join(d, "scene.json")
        scene_for(e["objects"], scene)
        fake = None
        if "answer" in e:
            fake = Fake(d, [{"content": e["answer"], "times": 1000}])
            extra += ["--llm-url", fake.url, "--model", "fake"]
        r = aloft(["run", "--scene", scene, "--plan", pfile, "--json", "--quiet", "--db", db]
                  + extra)
        if fake:
            asked = len(fake.requests())
            fake.stop()
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            doc = {"ok": False, "error": r.stderr.strip()}
        check(doc["ok"] and doc.get("error") is None,
              "%s did not fly: %s" % (what, doc.get("error")))
        if fake and doc["ok"]:
            check(doc["llm_calls"] == asked, "%s: llm_calls %s, the LLM was asked %d times"
                  % (what, doc["llm_calls"], asked))
        flown += 1

print("TypeFly corpus: %d entries, %d checked and flown, %d not runnable (reasons in "
      "tests/typefly/corpus.json)" % (len(corpus), flown, skipped))
for e in corpus:
    if "skip" in e:
        print("  not runnable: %r (%s): %s" % (e["plan"], e["source"], e["skip"]))
if failures:
    print("%d failure(s)" % failures)
sys.exit(1 if failures else 0)
