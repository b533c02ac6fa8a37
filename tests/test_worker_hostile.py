#!/usr/bin/env python3
# labels: safety sandbox
"""A worker process that misbehaves on the socket (SPEC §6): the host reads
its frames as untrusted input. The test-only modes of the worker
(ALOFT_TEST_WORKER, host/worker/worker.h) answer the start of a mission
with a flood of frames, with a frame header that is not one or with a frame
for a mission it does not run, then silence; the host
cuts the worker off (kills it), ends the run as crashed, and stays well:
one JSON document, exit 1, the mission recorded, the drone landed. A worker
that tries open, socket or execve after its confinement is killed by the
kernel (SIGSYS) and the host names the call."""
import json
import os
import subprocess
import sys
import tempfile
import time

from worker_proc import orphan_workers, workers_of

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
SCENE = os.path.join(SRC, "examples/scenes/office.json")
GUARD_S = 60  # only against a host that never cuts the worker off
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def run(mode, args, stdin):
    env = dict(os.environ, ALOFT_TEST_WORKER=mode)
    p = subprocess.Popen([ALOFT] + args, env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = p.communicate(stdin, timeout=GUARD_S)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return None, out, err, []
    return p.returncode, out, err, workers_of(p.pid)


def check_mode(mode, what):
    rc, out, err, left = run(mode, ["lua", "--json", "-"], b"print('never')")
    name = "%s (aloft lua)" % mode
    try:
        doc = json.loads(out)
    except ValueError:
        check(False, "%s: exit %s, not one JSON document: %r %r" % (name, rc, out[:200],
                                                                     err[-500:]))
        return
    error = doc.get("error") or ""
    check(rc == 1 and doc.get("limit") == "crashed" and what in error and "cut off" in error and
          "SIGKILL" in error,
          "%s: exit %s, %r" % (name, rc, str(doc)[:500]))

    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "m.db")
        rc, out, err, left = run(mode, ["run", "--json", "--scene", SCENE, "--plan", "-",
                                        "--db", db], b"tc(90)")
        name = "%s (aloft run)" % mode
        try:
            doc = json.loads(out)
        except ValueError:
            check(False, "%s: exit %s, not one JSON document: %r" % (name, rc, out[:200]))
            return
        check(rc == 1 and what in (doc.get("error") or "") and doc.get("calls") == [],
              "%s: exit %s, %r" % (name, rc, str(doc)[:500]))
        p = subprocess.run([ALOFT, "log", "--db", db, "--json"], capture_output=True,
                           text=True)
        status = [m["status"] for m in json.loads(p.stdout)] if p.returncode == 0 else None
        # 'crashed', not 'failed': the landing went well (mission/flight.c)
        check(status == ["crashed"], "%s: recorded %s" % (name, status))


def check_hang():
    """A worker that goes silent: the watchdog (2 s past the VM's deadline)
    lands the drone, records the mission as hung and kills the worker."""
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "m.db")
        t0 = time.monotonic()
        rc, out, err, left = run("hang", ["run", "--json", "--scene", SCENE, "--plan", "-",
                                          "--db", db, "--timeout-ms", "500"], b"tc(90)")
        took = time.monotonic() - t0
        doc = json.loads(out) if out else {}
        error = doc.get("error") or ""
        check(rc == 1 and error.startswith("hung:") and "landed" in error and
              doc.get("pose", {}).get("z") == 0, "hang: exit %s, %r" % (rc, str(doc)[:500]))
        p = subprocess.run([ALOFT, "log", "--db", db, "--json"], capture_output=True,
                           text=True)
        status = [m["status"] for m in json.loads(p.stdout)] if p.returncode == 0 else None
        check(status == ["hung"], "hang: recorded %s" % status)
        # 0.5 s + 2 s, then the landing; only a bound against never ending
        check(took < 30, "hang: took %.1f s" % took)
    rc, out, err, left = run("hang", ["lua", "--json", "--timeout-ms", "300", "-"], b"")
    doc = json.loads(out) if out else {}
    check(rc == 1 and doc.get("limit") == "hung", "hang (aloft lua): %s %r" % (rc, doc))


def check_escape(mode, call):
    """A confined worker that reaches for the world (a file, the network, a
    program) dies of SIGSYS before the call runs; the host says which call
    and ends the mission as crashed (its landing: test_worker_kill.py)."""
    rc, out, err, left = run(mode, ["lua", "--json", "-"], b"print('never')")
    doc = json.loads(out) if out else {}
    want = "killed by SIGSYS: a forbidden system call (%s)" % call
    check(rc == 1 and doc.get("limit") == "crashed" and want in (doc.get("error") or ""),
          "%s (aloft lua): exit %s, %r" % (mode, rc, doc))
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "m.db")
        rc, out, err, left = run(mode, ["run", "--json", "--scene", SCENE, "--plan", "-",
                                        "--db", db], b"tc(90)")
        doc = json.loads(out) if out else {}
        check(rc == 1 and want in (doc.get("error") or "") and doc.get("calls") == [],
              "%s (aloft run): exit %s, %r" % (mode, rc, str(doc)[:500]))
        p = subprocess.run([ALOFT, "log", "--db", db, "--json"], capture_output=True,
                           text=True)
        status = [m["status"] for m in json.loads(p.stdout)] if p.returncode == 0 else None
        check(status == ["crashed"], "%s (aloft run): recorded %s" % (mode, status))


def check_normal_worker_ends():
    """A run leaves no worker behind."""
    rc, out, err, left = run("", ["lua", "--json", "-"], b"print('hi')")
    doc = json.loads(out) if out else {}
    check(rc == 0 and doc.get("logs") == ["hi"], "plain run: %s %r" % (rc, doc))


def main():
    check_mode("flood", "a flood of")
    check_mode("malformed", "a frame header that is not one")
    check_mode("stray", "a frame for no mission of its")
    check_hang()
    for mode, call in (("open", "openat"), ("socket", "socket"), ("execve", "execve")):
        check_escape(mode, call)
    check_normal_worker_ends()
    # every worker ends with its host (a second for the last to go)
    deadline = time.monotonic() + 5
    while orphan_workers(ALOFT) and time.monotonic() < deadline:
        time.sleep(0.1)
    check(not orphan_workers(ALOFT), "workers outlived their host: %s" % orphan_workers(ALOFT))
    if failures:
        print("%d check(s) failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
