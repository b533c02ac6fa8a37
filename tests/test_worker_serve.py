#!/usr/bin/env python3
# labels: safety web mission waits
"""`aloft serve` with two drones (SPEC §6): the worker process running one
drone's mission is killed (kill -9) mid-flight; that mission ends as
crashed, recorded, with the signal, while the other drone's mission (in
the other worker of a pool of two) flies on to its end; the drone whose
worker died flies its next mission in a fresh worker. Then with a pool of
one worker hosting both missions: both end as crashed, and both drones fly
again."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from fake_llm_proc import Fake
from serve_proc import Events, Serve
from worker_proc import busy_workers, workers_of

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def new_worker(pid, known, timeout=60):
    """A worker of PID hosting a mission, not in KNOWN, once there is one."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        fresh = [w for w in busy_workers(pid) if w not in known]
        if fresh:
            return fresh[0]
        time.sleep(0.01)
    return None


def serve_env(workers):
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ALOFT_TOKEN",
              "ALOFT_TEST_WORKER"):
        env.pop(k, None)
    env["ALOFT_WORKERS"] = str(workers)
    return env


def recorded(db):
    p = subprocess.run([ALOFT, "log", "--db", db, "--json"], capture_output=True, text=True,
                       timeout=60)
    return sorted(m["status"] for m in json.loads(p.stdout)) if p.returncode == 0 else p.stderr


def check_shared():
    """One worker hosts both drones' missions: killing it ends both."""
    office = os.path.join(SRC, "examples/scenes/office.json")
    with tempfile.TemporaryDirectory() as tmp:
        fake = Fake(tmp, [{"content": "l('a');d(60000);->True"},
                          {"content": "l('b');d(60000);->True"},
                          {"content": "tc(45);->True"}, {"content": "tc(45);->True"}])
        db = os.path.join(tmp, "m.db")
        srv = Serve(["--drone", "sim:" + office, "--drone", "sim:" + office, "--llm-url",
                     fake.url, "--model", "fake", "--db", db], env=serve_env(1))
        try:
            evs = [Events(srv, 0, timeout=120), Events(srv, 1, timeout=120)]
            for i in (0, 1):
                status, _ = srv.post_json("/api/drones/%d/missions" % i, {"task": "x"})
                evs[i].until("call", lambda d: d["skill"] == "delay")
            workers = workers_of(srv.proc.pid)
            check(len(workers) == 1, "shared: one worker for both: %s" % workers)
            for w in workers:
                os.kill(w, signal.SIGKILL)
            for i in (0, 1):
                end = evs[i].until("end")
                check(end.get("status") == "crashed", "shared: drone %d: %r" % (i, end))
            for i in (0, 1):
                status, _ = srv.post_json("/api/drones/%d/missions" % i, {"task": "again"})
                end = evs[i].until("end")
                check(end.get("status") == "ok", "shared: drone %d again: %r" % (i, end))
            for e in evs:
                e.close()
        finally:
            check(srv.stop() == 0, "shared: server exit status")
            fake.stop()
        check(recorded(db) == ["crashed", "crashed", "ok", "ok"], "shared: recorded %s" %
              recorded(db))


def main():
    office = os.path.join(SRC, "examples/scenes/office.json")
    with tempfile.TemporaryDirectory() as tmp:
        env = serve_env(2)
        fake = Fake(tmp, [{"content": "l('other');d(3000);tc(90);->True"},
                          {"content": "l('doomed');d(60000);->True"},
                          {"content": "tc(45);->True"}])
        srv = Serve(["--drone", "sim:" + office, "--drone", "sim:" + office, "--llm-url",
                     fake.url, "--model", "fake", "--db", os.path.join(tmp, "m.db")], env=env)
        try:
            ev1 = Events(srv, 1, timeout=120)
            ev0 = Events(srv, 0, timeout=120)
            status, _ = srv.post_json("/api/drones/1/missions", {"task": "other"})
            check(status == 202, "drone 1's mission accepted: %s" % status)
            ev1.until("call", lambda d: d["skill"] == "delay")
            other = busy_workers(srv.proc.pid)
            status, _ = srv.post_json("/api/drones/0/missions", {"task": "doomed"})
            check(status == 202, "drone 0's mission accepted: %s" % status)
            ev0.until("call", lambda d: d["skill"] == "delay")
            doomed = new_worker(srv.proc.pid, other)
            check(doomed is not None, "drone 0's worker found")
            if doomed:
                os.kill(doomed, signal.SIGKILL)
            end0 = ev0.until("end")
            check(end0.get("status") == "crashed" and "SIGKILL" in (end0.get("error") or ""),
                  "drone 0's mission crashed: %r" % end0)
            end1 = ev1.until("end")
            check(end1.get("status") == "ok" and end1.get("result") is True,
                  "drone 1's mission flew on to its end: %r" % end1)
            # the server goes on: drone 0 flies again, in a fresh worker
            status, _ = srv.post_json("/api/drones/0/missions", {"task": "again"})
            check(status == 202, "drone 0's next mission accepted: %s" % status)
            again = ev0.until("end")
            check(again.get("status") == "ok", "drone 0's next mission: %r" % again)
            ev0.close()
            ev1.close()
        finally:
            check(srv.stop() == 0, "server exit status")
            fake.stop()
        statuses = recorded(os.path.join(tmp, "m.db"))
        check(statuses == ["crashed", "ok", "ok"], "recorded: %s" % statuses)
    check_shared()
    if failures:
        print("%d check(s) failed" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
