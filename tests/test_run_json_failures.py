"""`aloft run --json` prints exactly one JSON document on every path
(SPEC §2), also when the mission could not start: then "ok" is false,
"error" says why (the same reason stderr gives), and the report's other
fields are there at their empty values. Each failure path of the command
is listed below and flown once."""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tello_emu_proc import Emu  # noqa: E402

ALOFT = os.environ["ALOFT"]
failures = 0
FIELDS = ["ok", "result", "error", "logs", "pose", "calls", "violations", "plans", "tries",
          "replans", "llm_calls", "plan_ms", "first_action_ms", "exec_ms", "total_ms", "tokens"]


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what, file=sys.stderr)


def run(*args, want_rc=1, contains=None, said=True):
    """Runs `aloft run --json ARGS`; checks one failure document on stdout
    (whose error stderr gives too, when SAID)."""
    name = " ".join(args)
    e = dict(os.environ)
    e.pop("ALOFT_DB", None)
    p = subprocess.run([ALOFT, "run", "--json", *args], capture_output=True, env=e,
                       timeout=120)
    check(p.returncode == want_rc, f"{name}: exit {p.returncode}, want {want_rc}: {p.stderr}")
    text = p.stdout.decode("utf-8")  # strict: invalid UTF-8 raises
    lines = text.splitlines()
    check(len(lines) == 1, f"{name}: one document on one line, got {len(lines)}: {text!r}")
    try:
        doc = json.loads(text)
    except ValueError as ex:
        check(False, f"{name}: stdout is not one JSON document ({ex}): {text!r}")
        return {}
    check(isinstance(doc, dict), f"{name}: an object")
    for k in FIELDS:
        check(k in doc, f"{name}: field {k} present")
    check(doc.get("ok") is False, f"{name}: ok false")
    err = doc.get("error")
    check(isinstance(err, str) and err, f"{name}: an error: {err!r}")
    if contains and isinstance(err, str):
        check(contains in err, f"{name}: error {err!r} says {contains!r}")
    if said and isinstance(err, str) and err:
        check(err in p.stderr.decode("utf-8", "replace"), f"{name}: stderr says it too")
    return doc


def main():
    tmp = tempfile.mkdtemp(prefix="aloft-json-fail-")
    db = os.path.join(tmp, "m.db")
    scene = os.path.join(tmp, "scene.json")
    with open(scene, "w") as f:
        json.dump({"drone": {"x": 0, "y": 0, "z": 100, "yaw": 0}, "objects": []}, f)
    plan = os.path.join(tmp, "plan.ms")
    with open(plan, "w") as f:
        f.write("tc(90)\n")
    bad_scene = os.path.join(tmp, "bad.json")
    with open(bad_scene, "w") as f:
        f.write("{not json")
    common = ["--db", db]

    # 1. usage errors: exit 2, still one document (--json after the error too)
    run("--scene", scene, "--plan", plan, "--no-such-option", want_rc=2)
    run("--scene", scene, want_rc=2, contains="--plan")
    # 2. the plan cannot be read
    run("--scene", scene, "--plan", os.path.join(tmp, "none.ms"), *common, contains="none.ms")
    # 3. the scene cannot be read, or is not a scene
    run("--scene", os.path.join(tmp, "none.json"), "--plan", plan, *common, contains="none.json")
    run("--scene", bad_scene, "--plan", plan, *common, contains="bad.json")
    # 4. the store refuses to open (its directory cannot be made; a directory)
    run("--scene", scene, "--plan", plan, "--db", "/proc/no/such/dir/m.db",
        contains="cannot record the mission")
    run("--scene", scene, "--plan", plan, "--db", tmp, contains="cannot record the mission")
    # 5. --replay of a mission that does not exist
    subprocess.run([ALOFT, "run", "--scene", scene, "--plan", plan, "--quiet", *common],
                   capture_output=True, timeout=60)
    run("--replay", "999", *common, contains="999")
    # 6. no drone answers
    emu = Emu(tmp, "--silent")
    try:
        doc = run(*emu.args(), "--tello-timeout-ms", "200", "--plan", plan, *common,
                  contains="no reply")
        check(isinstance(doc.get("mission_id"), int), "no drone: the mission was recorded")
    finally:
        emu.stop()
    # 7. the battery is too low to take off
    emu = Emu(tmp, "--battery", "5")
    try:
        run(*emu.args(), "--plan", plan, *common, contains="battery")
        check("takeoff" not in emu.sent(), "low battery: no takeoff sent")
    finally:
        emu.stop()
    # 8. takeoff fails
    emu = Emu(tmp, "--reply", "takeoff=error")
    try:
        run(*emu.args(), "--plan", plan, *common, contains="takeoff")
    finally:
        emu.stop()
    # 9. the LLM cannot be reached (nothing listens on port 9 of loopback)
    run("--scene", scene, "--task", "turn", "--model", "m", "--llm-url", "http://127.0.0.1:9/v1",
        "--llm-timeout-ms", "1000", *common, contains="LLM")
    # 10. the plan is refused by the checker, and --verify refuses to fly it
    with open(plan, "w") as f:
        f.write("no_such_skill(1)\n")
    run("--scene", scene, "--plan", plan, *common, said=False)
    with open(plan, "w") as f:
        f.write("mf(10000)\n")
    run("--scene", scene, "--plan", plan, "--verify", "2", *common, said=False)
    # 11. the prompts directory is not one
    run("--scene", scene, "--task", "x", "--model", "m", "--prompts", plan, *common, want_rc=2)
    return failures


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
