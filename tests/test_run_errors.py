#!/usr/bin/python3
"""A plan's runtime errors in its author's terms: "LINE:COL: skill: why" at
the statement that failed, never the position of the project's own Lua
(lua/minispec.lua:35:) or of the Lua a statement compiled to; a user skill
file's own line is kept, since that line is the user's."""

import json
import os
import subprocess
import sys
import tempfile

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
SCENE = os.path.join(SRC, "examples/scenes/office.json")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def error_of(plan, tmp, *extra):
    env = dict(os.environ)
    env.pop("ALOFT_MODEL", None)
    p = subprocess.run([ALOFT, "run", "--scene", SCENE, "--db", os.path.join(tmp, "m.db"),
                        "--json", "--plan", "-"] + list(extra), input=plan,
                       capture_output=True, text=True, timeout=60, env=env)
    doc = json.loads(p.stdout)
    check(p.returncode == 1 and doc["ok"] is False, "%r fails: %s" % (plan, p.returncode))
    return doc["error"] or ""


def main():
    with tempfile.TemporaryDirectory() as tmp:
        e = error_of("l('a');?p('what?')=='x'{l('b')}", tmp)
        check(e.startswith("1:8: probe: no LLM"), "probe at its statement: %r" % e)
        check(".lua:" not in e, "no project file in %r" % e)

        e = error_of("l(1)\n2{\n  l(1/0)}", tmp)
        check(e == "3:3: division by zero", "an error inside a loop, line 3: %r" % e)

        e = error_of("tc(10);a('apple', -5)", tmp)
        check(e.startswith("1:8: approach: distance must be"), "a built-in skill: %r" % e)

        e = error_of("_1=0;?_1<'b'{l(1)}", tmp)
        check(e.startswith("1:6: cannot compare"), "a condition's error at its '?': %r" % e)

        skills = os.path.join(tmp, "skills")
        os.mkdir(skills)
        with open(os.path.join(skills, "wobble.lua"), "w") as f:
            f.write('return {name = "wobble", description = "fails", args = {}, returns = "bool",\n'
                    '  run = function()\n'
                    '    error("wobble: the rotor is loose")\n'
                    '  end}\n')
        e = error_of("l('x');wobble()", tmp, "--skills", skills)
        check(e.startswith("1:8: ") and "wobble.lua:3: wobble: the rotor is loose" in e,
              "a user skill keeps its own line: %r" % e)
    print("ok" if failures == 0 else "%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
