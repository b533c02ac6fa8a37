#!/usr/bin/python3
# labels: web store
"""The records of missions flying together in one aloft serve survive its
shutdown (SPEC §12, §13): 24 missions started back to back, each in its
5 s delay, then SIGTERM (and, in a second server, SIGINT). The server
exits by itself, and its store holds every mission once, none left
running, each with its own LLM exchange, its plan, its finished turn (its
own angle), the delay it was in, and the scene it asked the LLM with;
`aloft log` shows each of them."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_llm_proc import Fake  # noqa: E402
from serve_proc import Serve  # noqa: E402

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
FLYING = 24
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def task(i):
    return "turn as drone #%03d# does" % i


def in_delay(db, n):
    """How many missions have begun their delay call."""
    try:
        c = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=10)
        try:
            return c.execute("SELECT count(DISTINCT mission_id) FROM skill_calls"
                             " WHERE skill = 'delay'").fetchone()[0]
        finally:
            c.close()
    except sqlite3.Error:
        return 0


def flight(tmp, fake, env, office, sig):
    db = os.path.join(tmp, "m-%d.db" % sig)
    args = ["--max-drones", str(FLYING), "--llm-url", fake.url, "--model", "fake", "--db", db,
            "--time-scale", "1", "--scene", office] + ["--drone", "sim"] * FLYING
    srv = Serve(args, env=env)
    for i in range(FLYING):
        status, doc = srv.post_json("/api/drones/%d/missions" % i, {"task": task(i)})
        check(status == 202, "mission %d accepted: %s %s" % (i, status, doc))
    # each mission is in its 5 s delay: its turn is done and recorded
    deadline = time.monotonic() + 60
    while in_delay(db, FLYING) < FLYING and time.monotonic() < deadline:
        time.sleep(0.05)
    check(in_delay(db, FLYING) == FLYING, "all %d missions reached their delay" % FLYING)
    rc = srv.stop(sig)
    check(rc == 0, "signal %d: the server exits by itself (status %s): %s" %
          (sig, rc, srv.stderr()[-400:]))

    c = sqlite3.connect(db)
    rows = c.execute("SELECT id, task, status FROM missions ORDER BY id").fetchall()
    check(len(rows) == FLYING, "signal %d: %d missions recorded" % (sig, len(rows)))
    check(sorted(r[1] for r in rows) == sorted(task(i) for i in range(FLYING)),
          "signal %d: each task once" % sig)
    check(all(r[2] != "running" for r in rows),
          "signal %d: none left running: %s" % (sig, [r[2] for r in rows]))
    for mid, t, status in rows:
        i = int(t.split("#")[1])
        llm = c.execute("SELECT count(*) FROM llm_exchanges WHERE mission_id = ?",
                        (mid,)).fetchone()[0]
        plans = c.execute("SELECT text FROM plans WHERE mission_id = ?", (mid,)).fetchall()
        calls = c.execute("SELECT skill, args, done FROM skill_calls WHERE mission_id = ?"
                          " AND depth = 0 ORDER BY seq", (mid,)).fetchall()
        scenes = c.execute("SELECT count(*) FROM scene_snapshots WHERE mission_id = ?",
                           (mid,)).fetchone()[0]
        # the plan as far as it had streamed in when the server stopped
        check(llm == 1 and len(plans) == 1 and
              plans[0][0].startswith("tc(%d);d(5000);" % (i + 1)),
              "mission %d: its exchange and its own plan: %d %s" % (mid, llm, plans))
        check(len(calls) >= 2 and calls[0] == ("turn_cw", "[%d]" % (i + 1), 1) and
              calls[1][0] == "delay",
              "mission %d: its finished turn, then the delay: %s" % (mid, calls))
        check(scenes >= 1, "mission %d: the scene it planned with" % mid)
    c.close()
    r = subprocess.run([ALOFT, "log", "--db", db, "--json", str(rows[-1][0])],
                       capture_output=True, text=True, env=env, timeout=60)
    doc = json.loads(r.stdout) if r.returncode == 0 else {}
    check(any(e.get("skill") == "turn_cw" for e in doc.get("events", [])),
          "aloft log shows the last mission's turn: %s" % r.stderr[-300:])


with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ALOFT_TOKEN", "ALOFT_DB"):
        env.pop(k, None)
    office = os.path.join(SRC, "examples/scenes/office.json")
    # each task its own plan: the angle says whose plan a mission flew
    fake = Fake(tmp, [{"match": "#%03d#" % i, "content": "tc(%d);d(5000);->True" % (i + 1)}
                      for i in range(FLYING)])
    try:
        flight(tmp, fake, env, office, signal.SIGTERM)
        flight(tmp, fake, env, office, signal.SIGINT)
    finally:
        fake.stop()

if failures:
    print("%d check(s) failed" % failures)
    sys.exit(1)
print("test_serve_store_shutdown: all checks passed")
