#!/usr/bin/env python3
# labels: sandbox safety waits
"""Hostile scripts against the sandbox, each run through `aloft lua --json`.

Every file in tests/hostile/ starts with `-- expect: ...`:
  limit=instructions|memory|timeout   the run ends on that limit
  error=TEXT                          the run fails with TEXT in its error
                                      (TEXT may be empty: any clear error)
  ok                                  the script runs to its end (it asserts
                                      the sandbox's behaviour itself)
  fail                                any clean failure: a limit or an error
                                      (where either is right, e.g. deep
                                      recursion may hit the stack or memory)
Optional header lines after it:
  -- contained: REASON                  a crash of Lua 5.4.4 itself that no
                                        check in the language can block
                                        (docs/lua-bugs.md): the worker process
                                        (SPEC §6) contains it. Run through
                                        `aloft lua` (the host reports
                                        limit=crashed with the signal, or the
                                        wrong result the bug gave this time),
                                        then as a user skill in `aloft run`
                                        with a store: the host ends the mission
                                        as recorded, crashed or failed, landed
  -- args: OPTIONS                      limits for this script, after the
                                        default ones (the last one counts)
  -- signal: SIGINT|SIGTERM             sent once the script printed its
                                        first line (for limit=cancelled)
A run must end on its own, exit 0/1 (never a signal, never a sanitizer
report), and print exactly one JSON document. The list of attacks is the file
names in tests/hostile/: infinite loops of every form, unbounded recursion,
the limit error caught by pcall/xpcall/coroutines/__close in a loop, looping
__close handlers of coroutines closed (coroutine.close, coroutine.wrap's error
path, nested) after the instruction limit, the time limit and a cancel, work
spread over coroutines, memory bombs, finalizers, pathological patterns, huge unpack/
select/table.move, C-stack bombs through metamethods, bytecode, every removed
global, writes to _G/library tables/the string metatable/skills, forged limit
messages and output floods, the known bugs of Lua 5.4.4 (lua_bug_*.lua,
docs/lua-bugs.md) and every way to the tables behind the read-only proxies.
Further cases below: the wall-clock limit,
cancellation by Ctrl-C, the output cap, a bytecode file, usage figures.
"""
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
HOSTILE = os.path.join(SRC, "tests", "hostile")
# The wall-clock limit here only guards against a run that never ends (the
# scripts that test it give their own): generous, because a script that works
# in C between hooks (string.rep, collections) on a loaded machine under the
# sanitizers can take a while, and past its limit the watchdog ends it as hung.
LIMITS = ["--max-instructions", "2000000", "--max-memory", "8M", "--timeout-ms", "60000"]
HANG_GUARD_S = 120  # only against hangs; never a performance assertion

failures = []
skipped = []


def fail(name, why):
    failures.append("%s: %s" % (name, why))


def run(args, name, stdin=None, sig=None, worker_may_report=False):
    if sig:
        p = run_signalled(args, name, sig)
        if p is None:
            return None, None
    else:
        try:
            p = subprocess.run([ALOFT, "lua", "--json"] + args, input=stdin, capture_output=True,
                               timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            fail(name, "did not end within %d s" % HANG_GUARD_S)
            return None, None
    if p.returncode not in (0, 1):
        fail(name, "exit status %d\nstderr: %s" % (p.returncode, p.stderr.decode()[-2000:]))
        return None, None
    # A contained bug is a memory error in the worker: under the sanitizers
    # the worker's own report is the bug caught, not a fault of the host.
    if not worker_may_report and (b"Sanitizer" in p.stderr or b"runtime error" in p.stderr):
        fail(name, "sanitizer report:\n" + p.stderr.decode()[-3000:])
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        fail(name, "stdout is not one JSON document: %r" % p.stdout[:300])
        return p.returncode, None
    return p.returncode, doc


def run_signalled(args, name, sig):
    """Runs the script, sends SIG once it printed its first line (stderr, as
    lua --json echoes output there); the completed process, or None."""
    p = subprocess.Popen([ALOFT, "lua", "--json"] + args, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    line = p.stderr.readline()
    p.send_signal(getattr(signal, sig))
    try:
        out, err = p.communicate(timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        fail(name, "did not end within %d s of %s (first line %r)" % (HANG_GUARD_S, sig, line))
        return None
    return subprocess.CompletedProcess(p.args, p.returncode, out, line + err)


def header(path):
    """(expect, extra args, signal, contained) from the script's first lines."""
    expect, args, sig, contained = None, [], None, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("-- expect: "):
                expect = line[len("-- expect: "):]
            elif line.startswith("-- args: "):
                args = line[len("-- args: "):].split()
            elif line.startswith("-- signal: "):
                sig = line[len("-- signal: "):]
            elif line.startswith("-- contained: "):
                contained = line[len("-- contained: "):]
            else:
                break
    return expect, args, sig, contained


def check_case(fname):
    path = os.path.join(HOSTILE, fname)
    expect, args, sig, contained = header(path)
    assert expect, fname
    if contained:
        check_contained(fname, path, args)
        return
    rc, doc = run(LIMITS + args + [path], fname, sig=sig)
    if doc is None:
        return
    if expect == "ok":
        if rc != 0 or not doc["ok"]:
            fail(fname, "expected success, got %s" % doc.get("error"))
        return
    if rc != 1 or doc["ok"]:
        fail(fname, "expected failure, got exit %d ok=%s" % (rc, doc["ok"]))
        return
    if expect == "fail":
        if not doc.get("error"):
            fail(fname, "failed without an error message")
        return
    kind, _, value = expect.partition("=")
    if kind == "limit":
        if doc.get("limit") != value:
            fail(fname, "expected limit %s, got limit=%s error=%s" %
                 (value, doc.get("limit"), doc.get("error")))
    else:
        if doc.get("limit") is not None:
            fail(fname, "expected a plain error, got limit %s" % doc["limit"])
        if not doc.get("error") or value not in doc["error"]:
            fail(fname, "expected an error containing %r, got %r" % (value, doc.get("error")))


# The scripts that crash Lua 5.4.4 every time in these shapes: for them the
# host must report the crash itself; the others may show their bug as a
# wrong result instead, depending on the layout of memory.
ALWAYS_CRASHES = {"lua_bug_concat_grows_stack.lua"}


def crash_reported(doc):
    """True when the host reported the worker's death with how it died. In
    the ASan build a crash shows as SIGSYS: the sanitizer's report of the
    fault needs calls the worker's confinement forbids."""
    err = doc.get("error") or ""
    return "worker process" in err and ("signal" in err or "exited" in err or
                                        "killed by SIGSYS" in err)


def check_contained(fname, path, args):
    rc, doc = run(LIMITS + args + [path], fname, worker_may_report=True)
    if doc is None:
        return
    if rc != 1 or doc["ok"]:
        fail(fname, "expected a failure, got exit %d ok=%s" % (rc, doc["ok"]))
    elif doc.get("limit") == "crashed":
        if not crash_reported(doc):
            fail(fname, "crash reported without how the worker died: %r" % doc.get("error"))
    elif fname in ALWAYS_CRASHES:
        fail(fname, "expected the worker's crash, got %r" % doc)
    check_contained_flight(fname, path)


def check_contained_flight(fname, path):
    """The script as a user skill, in a simulated flight with a store."""
    name = fname + " as a skill in flight"
    with open(path) as f:
        body = f.read()
    with tempfile.TemporaryDirectory() as d:
        skills = os.path.join(d, "skills")
        os.mkdir(skills)
        with open(os.path.join(skills, "hostile_case.lua"), "w") as f:
            # inside pcall: the bug must get past the language's own error
            # handling, and a function body is where a skill's code runs
            f.write("return {name = 'hostile_case', description = 'a hostile script', "
                    "args = {}, returns = 'bool', run = function()\n"
                    "pcall(function()\n%s\nend)\nreturn true\nend}\n" % body)
        plan = os.path.join(d, "p.ms")
        with open(plan, "w") as f:
            f.write("tc(10);hostile_case();tc(10)\n")
        db = os.path.join(d, "m.db")
        try:
            p = subprocess.run([ALOFT, "run", "--json", "--scene",
                                os.path.join(SRC, "examples/scenes/office.json"), "--skills",
                                skills, "--plan", plan, "--db", db] + LIMITS,
                               capture_output=True, timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            fail(name, "did not end within %d s" % HANG_GUARD_S)
            return
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            fail(name, "exit %d, stdout is not one JSON document: %r %s" %
                 (p.returncode, p.stdout[:300], p.stderr.decode()[-1000:]))
            return
        log = subprocess.run([ALOFT, "log", "--db", db, "--json"], capture_output=True)
        missions = json.loads(log.stdout) if log.returncode == 0 else []
        status = missions[0]["status"] if len(missions) == 1 else None
        # A landing that fails makes the mission 'failed' with the reason
        # (mission/flight.c): 'crashed' says the drone landed.
        # A script whose bug showed as a wrong value this time ran on (the
        # pcall took its error): then the flight ends as any other.
        quiet = fname not in ALWAYS_CRASHES and doc["ok"] and status == "ok"
        if quiet and p.returncode == 0:
            return
        if p.returncode != 1 or doc["ok"] or "landing failed" in (doc.get("error") or ""):
            fail(name, "expected a failed mission, landed: exit %d %r" % (p.returncode, doc))
        elif status not in ("crashed", "failed"):
            fail(name, "recorded as %r (%s)" % (status, log.stderr.decode()))
        elif status == "crashed" and not crash_reported(doc):
            fail(name, "crashed without how: %r" % doc.get("error"))
        elif fname in ALWAYS_CRASHES and status != "crashed":
            fail(name, "expected crashed, recorded %r: %r" % (status, doc.get("error")))


def check_timeout():
    rc, doc = run(["--max-instructions", "100000000000", "--timeout-ms", "300", "-"],
                  "wall-clock limit", stdin=b"while true do end")
    if doc and doc.get("limit") != "timeout":
        fail("wall-clock limit", "got %r" % doc)


def check_timeout_with_pcall():
    rc, doc = run(["--max-instructions", "100000000000", "--timeout-ms", "300", "-"],
                  "wall-clock limit under pcall",
                  stdin=b"while true do pcall(function() while true do end end) end")
    if doc and doc.get("limit") != "timeout":
        fail("wall-clock limit under pcall", "got %r" % doc)


def check_cancel():
    name = "Ctrl-C cancels"
    p = subprocess.Popen([ALOFT, "lua", "--json", "--max-instructions", "100000000000", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(b"print('started')\nwhile true do pcall(function() while true do end end) end")
    p.stdin.close()
    p.stdin = None
    # wait until the script runs, then interrupt it
    line = p.stderr.readline()
    if b"started" not in line:
        fail(name, "script did not start: %r" % line)
    p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        p.kill()
        fail(name, "did not stop after SIGINT")
        return
    doc = json.loads(out)
    if p.returncode != 1 or doc.get("limit") != "cancelled" or doc["logs"] != ["started"]:
        fail(name, "exit %d, %r" % (p.returncode, doc))


def check_output_cap():
    name = "output capped at 64 KiB"
    rc, doc = run(["-"], name, stdin=b"for i = 1, 5000 do print(string.rep('x', 99)) end")
    if not doc:
        return
    total = sum(len(l) + 1 for l in doc["logs"])
    if not doc["ok"] or doc["logs"][-1] != "[output truncated]" or total > 65536 + 64:
        fail(name, "ok=%s lines=%d total=%d" % (doc["ok"], len(doc["logs"]), total))


def check_bytecode_file():
    name = "bytecode file refused"
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "x.lua")
        out = os.path.join(d, "x.luac")
        with open(src, "w") as f:
            f.write("print('bytecode ran')\n")
        subprocess.run(["luac5.4", "-o", out, src], check=True)
        rc, doc = run([out], name)
        if doc and (doc["ok"] or "binary chunk" not in doc["error"] or doc["logs"]):
            fail(name, "got %r" % doc)


def check_usage_figures():
    name = "usage figures"
    rc, doc = run(["-"], name, stdin=b"local t = {}\nfor i = 1, 100000 do t[i] = i end")
    if doc and not (doc["ok"] and doc["instructions"] >= 100000 and
                    doc["memory_peak"] > 100000 * 8):
        fail(name, "got %r" % doc)


def check_long_chain():
    """Lua 5.4.4 bug 7923dbbf at the size that hangs or crashes it: refused
    at load, at the default budgets, with a clear error."""
    name = "chain of 300000 field accesses"
    code = ("local a = setmetatable({}, {__index = function(t) return t end})\n"
            "local x = a" + ".b" * 300000 + ".c + 1\n").encode()
    rc, doc = run(["-"], name, stdin=code)
    if doc and (rc != 1 or doc.get("limit") is not None or
                "field accesses chained" not in (doc.get("error") or "")):
        fail(name, "got %r" % doc)


def main():
    files = sorted(f for f in os.listdir(HOSTILE) if f.endswith(".lua"))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(check_case, files))
    for check in (check_timeout, check_timeout_with_pcall, check_cancel, check_output_cap,
                  check_bytecode_file, check_usage_figures, check_long_chain):
        check()
    total = len(files) + 7
    for f in sorted(skipped):
        print("SKIP", f)
    for f in failures:
        print("FAIL", f)
    print("%d passed, %d failed, %d skipped" %
          (total - len(failures) - len(skipped), len(failures), len(skipped)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
