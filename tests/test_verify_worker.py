#!/usr/bin/env python3
"""Plan verification in worker processes (SPEC §6, §14): the worlds fly
wholly inside workers, and the report is the one `--in-process` makes for
the same seed, however many workers share the worlds (ALOFT_WORKERS). A
plan that crashes the worker's VM, a worker that sends a verdict it may not
(the test-only modes of verify/verify_worker.h) and one that never answers
end the verification with a clear error: exit 1, no plan flown, the host
well and no worker left behind.
labels: safety sandbox verify"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from worker_proc import orphan_workers, workers_of

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
OFFICE = os.path.join(SRC, "examples/scenes/office.json")
GUARD_S = 120  # only against a host that never ends
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


tmp = tempfile.mkdtemp()


def write(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def verify(scene, plan, n, workers=None, in_process=False, extra=(), env_extra=None):
    """(exit status, stdout, stderr) of check --verify N --json."""
    args = [ALOFT, "check", "--json", "--verify", str(n), "--seed", "11", "--scene", scene]
    args += list(extra) + (["--in-process"] if in_process else []) + [plan]
    env = dict(os.environ)
    env.pop("ALOFT_TEST_WORKER", None)
    if workers:
        env["ALOFT_WORKERS"] = str(workers)
    env.update(env_extra or {})
    p = subprocess.run(args, capture_output=True, text=True, timeout=GUARD_S, env=env)
    return p.returncode, p.stdout, p.stderr


# ---- the same report in workers as in process ------------------------------

low = write("low.json", json.dumps({
    "limits": {"geofence_radius": 600, "min_z": 30, "max_z": 150},
    "objects": [{"class": "apple", "x": 0, "y": 250, "z": 80, "w": 8, "d": 8, "h": 9},
                {"class": "person", "x": 0, "y": -300, "w": 50, "d": 30, "h": 175}]}))
windy = write("windy.json", json.dumps({
    "drone": {"x": 120, "y": -80, "z": 100, "yaw": 30}, "limits": {"geofence_radius": 300},
    "wind": {"speed": 40, "heading": 90, "gust": 10}, "objects": []}))
skills = os.path.join(tmp, "skills")
os.mkdir(skills)
# A user skill whose outcome depends on the world: its text travels to the
# worker in the request (a confined worker cannot open the file).
with open(os.path.join(skills, "picky.lua"), "w") as f:
    f.write("return {name = 'picky', description = 'errors when it sees an apple', args = {},\n"
            "returns = 'bool', run = function()\n"
            "  if not is_visible('person') then error('nobody here') end\n"
            "  local n = 0\n"
            "  while true do n = n + 1 end\n"
            "  return true end}\n")
cases = [
    ("branch", low, write("branch.ms", "?iv('apple')==True{mf(700)};->True"), []),
    ("watch", windy, write("edge.ms", "mr(240);_1=0;?_1<1{d(20000)};mf(20)"), []),
    ("skill", low, write("picky.ms", "tu(180);picky();->True"),
     ["--skills", skills, "--max-instructions", "200000"]),
    # user skills written in MiniSpec, compiled again inside the worker
    ("minispec skill", OFFICE, write("sweep.ms", "_1=sweeping('apple');?_1==True{mf(900)};->_1"),
     ["--skills", os.path.join(SRC, "examples/skills")]),
]
for name, scene, plan, extra in cases:
    rc, want, err = verify(scene, plan, 40, in_process=True, extra=extra)
    try:
        kinds = {w["kind"] for w in json.loads(want)["verify"]["failed"]}
    except (ValueError, KeyError, TypeError):
        check(False, "%s: in process, exit %d: %r %r" % (name, rc, want[:300], err[-300:]))
        continue
    check(kinds, "%s: no world failed in process: the comparison would be empty" % name)
    for workers in (1, 2, 3):
        rc2, got, err2 = verify(scene, plan, 40, workers=workers, extra=extra)
        check(rc2 == rc and got == want,
              "%s, %d workers: exit %d (in process %d), report differs:\n%s\n%s\n%s" %
              (name, workers, rc2, rc, got[:400], want[:400], err2[-400:]))
    # fewer worlds than workers, and one world alone
    for n in (1, 2):
        _, want_n, _ = verify(scene, plan, n, in_process=True, extra=extra)
        _, got_n, _ = verify(scene, plan, n, workers=3, extra=extra)
        check(got_n == want_n, "%s, %d worlds: %r vs %r" % (name, n, got_n[:300], want_n[:300]))
rc, out, _ = verify(low, os.path.join(tmp, "picky.ms"), 40, extra=["--skills", skills,
                                                                    "--max-instructions",
                                                                    "200000"])
kinds = {w["kind"] for w in json.loads(out)["verify"]["failed"]} if rc == 1 else set()
check({"error", "budget"} <= kinds, "the skill's errors and budgets reported: %r" % kinds)

# ---- a crash, a wrong verdict, silence -------------------------------------

hostile = open(os.path.join(SRC, "tests/hostile/lua_bug_concat_grows_stack.lua")).read()
crash_skills = os.path.join(tmp, "crash_skills")
os.mkdir(crash_skills)
with open(os.path.join(crash_skills, "boom.lua"), "w") as f:
    # the upstream bug 603b2c64 (docs/lua-bugs.md: contained, not blocked)
    f.write("return {name = 'boom', description = 'a hostile script', args = {},\n"
            "returns = 'bool', run = function()\npcall(function()\n%s\nend)\n"
            "return true\nend}\n" % hostile)
boom = write("boom.ms", "tc(10);boom();tc(10)")


def failed_cleanly(name, rc, out, err, words):
    check(rc == 1, "%s: exit %s, not 1: %r" % (name, rc, err[-400:]))
    try:
        doc = json.loads(out)
    except ValueError:
        check(False, "%s: not one JSON document: %r" % (name, out[:300]))
        doc = {}
    check(doc.get("verify") is None, "%s: a report after all: %r" % (name, out[:300]))
    for w in words:
        check(w in err, "%s: %r not in %r" % (name, w, err[-400:]))
    check(orphan_workers(ALOFT) == [], "%s: workers left behind" % name)


rc, out, err = verify(OFFICE, boom, 6, workers=2, extra=["--skills", crash_skills])
# how it died: SIGSEGV, or under the sanitizers SIGSYS (their report needs
# calls the filter forbids)
failed_cleanly("crash", rc, out, err,
               ["verification failed: the worker crashed (killed by ", "while flying world"])

# run --verify: the plan does not fly, one JSON report saying why
with tempfile.TemporaryDirectory() as d:
    p = subprocess.run([ALOFT, "run", "--json", "--verify", "4", "--scene", OFFICE, "--skills",
                        crash_skills, "--plan", boom, "--db", os.path.join(d, "m.db")],
                       capture_output=True, text=True, timeout=GUARD_S)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {}
    check(p.returncode == 1 and not doc.get("ok", True) and doc.get("calls") == [] and
          "verification failed: the worker crashed" in (doc.get("error") or ""),
          "run --verify with a crashing plan: exit %d %r" % (p.returncode, p.stdout[:400]))

safe = write("safe.ms", "tc(90);->True")
for mode, words in [("verify-world", ["where world", "was due: cut off"]),
                    ("verify-kind", ["an unknown verdict 99: cut off"]),
                    ("verify-extra", ["a passing world with details: cut off"])]:
    rc, out, err = verify(OFFICE, safe, 5, workers=2, env_extra={"ALOFT_TEST_WORKER": mode})
    failed_cleanly(mode, rc, out, err, ["verification failed: the worker sent "] + words)

# Silence: the host kills the worker 2 s past a world's wall-clock limit.
t0 = time.monotonic()
rc, out, err = verify(OFFICE, safe, 3, extra=["--timeout-ms", "300"],
                      env_extra={"ALOFT_TEST_WORKER": "hang"})
took = time.monotonic() - t0
failed_cleanly("hang", rc, out, err, ["verification failed: the worker hung", "killed"])
# 0.3 s + 2 s of grace; the slack is for a loaded machine
check(took < 10, "hang: noticed after %.1f s" % took)

# Ctrl-C stops the workers' worlds: a report of the worlds flown so far.
# Each world spins a while, so that 10,000 of them take far longer than
# the half second before the signal.
with open(os.path.join(skills, "spin.lua"), "w") as f:
    f.write("return {name = 'spin', description = 'takes its time', args = {},\n"
            "returns = 'bool', run = function()\n"
            "  local n = 0 for i = 1, 300000 do n = n + i end return true end}\n")
spin = write("spin.ms", "spin();tc(90);->True")
args = [ALOFT, "check", "--json", "--verify", "10000", "--scene", OFFICE, "--skills", skills,
        spin]
p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
# the signal once the workers fly (they start after aloft's handler is set)
deadline = time.monotonic() + GUARD_S
while not workers_of(p.pid) and p.poll() is None and time.monotonic() < deadline:
    time.sleep(0.02)
time.sleep(0.3)
t0 = time.monotonic()
p.send_signal(signal.SIGINT)
out, err = p.communicate(timeout=GUARD_S)
took = time.monotonic() - t0
try:
    rep = json.loads(out)["verify"]
except (ValueError, KeyError):
    rep = {}
# (no world may have ended yet on a loaded machine: then "worlds" is 0)
check(p.returncode == 1 and rep.get("cancelled") is True and 0 <= rep.get("worlds", -1) < 10000 and
      rep.get("passed") == rep.get("worlds"),
      "Ctrl-C: exit %d %r %r" % (p.returncode, out[:300], err[-300:]))
check(took < 2, "Ctrl-C: ended %.1f s after the signal (SPEC §7: within 1 s)" % took)
check(orphan_workers(ALOFT) == [], "Ctrl-C: workers left behind")

print("failures:", failures)
sys.exit(1 if failures else 0)
