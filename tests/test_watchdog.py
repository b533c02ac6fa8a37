#!/usr/bin/python3
# labels: watchdog safety waits
"""The watchdog of SPEC §6: a mission whose VM does not stop is ended from
outside the VM's thread.

A VM that no limit can stop needs a construct the sandbox cannot interrupt;
none is left in aloft, so these tests use build/aloft_stuck
(tests/tools/aloft_stuck.c): aloft plus one global, stuck_forever(), a C
function that never returns and polls nothing. Plans reach it through a
user skill file (--skills).

  - aloft lua: 2 s past the wall-clock limit, the script ends as hung (exit
    1, one JSON document); SIGINT and SIGTERM end it within 2 s.
  - aloft run: the mission ends as hung, recorded so in the store, with the
    drone landed (pose z 0) and one JSON document.
  - aloft serve: the drone whose mission hung (past its limit, or ignoring
    the stop button) is marked hung and refuses new missions; another drone
    still flies; a skill with looping __close handlers after the instruction
    limit ends with the limit (not hung); Ctrl-C ends the server.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_llm_proc import Fake  # noqa: E402
from serve_proc import Events, Serve  # noqa: E402

ALOFT = os.environ.get("ALOFT", "build/aloft")
BUILD = os.environ.get("BUILD", "build")
SRC = os.environ.get("SRC", ".")
STUCK = os.path.join(BUILD, "aloft_stuck")
OFFICE = os.path.join(SRC, "examples", "scenes", "office.json")
SPEC = os.path.join(SRC, "examples", "scenes", "spec-example.json")
HANG_GUARD_S = 30  # only against hangs; never a performance assertion
# SPEC §6: a signal ends the process within 2 s. The bound asserted is 4 s:
# the 2 s of the rule plus room for a loaded two-core test machine (process
# start, scheduling); the watchdog itself steps in 1 s after the signal.
SIGNAL_BOUND_S = 4.0
failures = 0

SKILLS = {
    "stuck.lua": """return {
  name = "stuck",
  description = "never returns (a test-only global no limit can stop)",
  args = {},
  returns = "bool",
  run = function() stuck_forever() return true end,
}
""",
    "closer.lua": """return {
  name = "closer",
  description = "closes coroutines with looping __close handlers after the limit",
  args = {},
  returns = "bool",
  run = function()
    while true do
      local co = coroutine.create(function()
        local guard <close> = setmetatable({}, {__close = function() while true do end end})
        while true do end
      end)
      coroutine.resume(co)
      coroutine.close(co)
    end
  end,
}
""",
}


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def one_json(out, what):
    """The single JSON document of OUT, or None (and a failure)."""
    try:
        return json.loads(out)
    except ValueError:
        check(False, "%s: stdout is not one JSON document: %r" % (what, out[:400]))
        return None


def lua_past_limit(tmp):
    script = os.path.join(tmp, "stuck.lua")
    with open(script, "w") as f:
        f.write("print('started')\nstuck_forever()\n")
    t0 = time.monotonic()
    p = subprocess.run([STUCK, "lua", "--json", "--timeout-ms", "300", script],
                       capture_output=True, text=True, timeout=HANG_GUARD_S)
    took = time.monotonic() - t0
    doc = one_json(p.stdout, "lua past its limit")
    check(p.returncode == 1, "lua past its limit: exit %d" % p.returncode)
    if doc:
        check(doc["ok"] is False and doc["limit"] == "hung" and
              doc["error"].startswith("hung:") and "wall-clock" in doc["error"],
              "lua past its limit ends as hung: %r" % doc)
    # the watchdog waits 2 s past the limit before it steps in
    check(took >= 2.3, "lua: the watchdog fired before limit + 2 s (%.2f s)" % took)


def lua_signal(tmp, sig, binary, script_text, what):
    script = os.path.join(tmp, "signalled.lua")
    with open(script, "w") as f:
        f.write(script_text)
    p = subprocess.Popen([binary, "lua", "--json", "--max-instructions", "100000000000", script],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stderr.readline()
    check("started" in first, "%s: the script started: %r" % (what, first))
    t0 = time.monotonic()
    p.send_signal(sig)
    try:
        out, _ = p.communicate(timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        check(False, "%s: still running %d s after the signal" % (what, HANG_GUARD_S))
        return None
    took = time.monotonic() - t0
    check(took < SIGNAL_BOUND_S, "%s: ended %.2f s after the signal" % (what, took))
    check(p.returncode == 1, "%s: exit %d" % (what, p.returncode))
    return one_json(out, what)


def lua_signals(tmp):
    for sig in (signal.SIGINT, signal.SIGTERM):
        name = "aloft lua, stuck, %s" % signal.Signals(sig).name
        doc = lua_signal(tmp, sig, STUCK, "print('started')\nstuck_forever()\n", name)
        if doc:
            check(doc["limit"] == "hung" and "cancelled" in doc["error"],
                  "%s: ends as hung after the cancel: %r" % (name, doc))
    # The reproduction of the issue, on aloft itself: the hook stays on, so
    # the cancel stops it (as cancelled, not hung).
    repro = ("print('started')\n"
             "local co = coroutine.create(function()\n"
             "  local x <close> = setmetatable({}, {__close=function() while true do end end})\n"
             "  while true do end\n"
             "end)\n"
             "while true do coroutine.resume(co) coroutine.close(co) end\n")
    doc = lua_signal(tmp, signal.SIGTERM, ALOFT, repro, "aloft lua, __close loop, SIGTERM")
    if doc:
        check(doc["limit"] == "cancelled", "__close loop, SIGTERM: cancelled: %r" % doc)


def run_hung(tmp, skills, db):
    plan = os.path.join(tmp, "stuck.plan")
    with open(plan, "w") as f:
        f.write("tc(90);stuck();->True\n")
    p = subprocess.run([STUCK, "run", "--json", "--scene", OFFICE, "--skills", skills, "--plan",
                        plan, "--timeout-ms", "500", "--db", db],
                       capture_output=True, text=True, timeout=HANG_GUARD_S)
    doc = one_json(p.stdout, "run hung")
    check(p.returncode == 1, "run hung: exit %d" % p.returncode)
    if not doc:
        return
    check(doc["ok"] is False and doc["error"].startswith("hung:") and
          "landed" in doc["error"], "run hung: the error: %r" % doc.get("error"))
    check(doc["pose"]["z"] == 0, "run hung: the drone landed: %r" % doc["pose"])
    r = subprocess.run([ALOFT, "log", "--db", db, "--json", str(doc["mission_id"])],
                       capture_output=True, text=True, timeout=HANG_GUARD_S)
    rec = one_json(r.stdout, "aloft log")
    if rec:
        m = rec["mission"]
        check(m["status"] == "hung" and m["error"] == doc["error"],
              "run hung: recorded as hung: %r" % m)


def end_of(srv, drone, task):
    """Starts TASK on DRONE and returns its end event."""
    status, doc = srv.post_json("/api/drones/%d/missions" % drone, {"task": task})
    check(status == 202, "mission on drone %d accepted: %s %s" % (drone, status, doc))
    if status != 202:
        return {}
    ev = Events(srv, drone, timeout=HANG_GUARD_S)
    try:
        return ev.until("end", lambda d: d["run"] == doc["run"], deadline_s=HANG_GUARD_S)
    finally:
        ev.close()


def serve(tmp, skills, db):
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(k, None)
    fake = Fake(tmp, [{"content": "closer();->True"}, {"content": "stuck();->True"},
                      {"content": "l('still flying');tc(90);->True"},
                      {"content": "stuck();->True"}])
    srv = Serve(["--drone", "sim:" + OFFICE, "--drone", "sim:" + SPEC, "--drone", "sim:" + OFFICE,
                 "--skills", skills, "--llm-url", fake.url, "--model", "fake", "--db", db,
                 "--max-instructions", "2000000", "--timeout-ms", "3000"], env=env, binary=STUCK)
    try:
        # looping __close handlers after the instruction limit: the limit
        end = end_of(srv, 0, "close coroutines")
        check(end.get("status") == "failed" and "instruction limit" in (end.get("error") or ""),
              "serve: __close loops end with the instruction limit: %r" % end)

        # past the wall-clock limit
        end = end_of(srv, 0, "get stuck")
        check(end.get("status") == "hung" and "wall-clock" in (end.get("error") or ""),
              "serve: the stuck mission ends as hung: %r" % end)
        drones = srv.drones()
        check(drones[0]["hung"] is True and drones[1]["hung"] is False,
              "serve: drone 0 is marked hung: %r" % drones)
        check(drones[0]["pose"]["z"] == 0, "serve: drone 0 landed: %r" % drones[0]["pose"])
        status, doc = srv.post_json("/api/drones/0/missions", {"task": "again"})
        check(status == 503 and "hung" in doc.get("error", ""),
              "serve: the hung drone refuses a mission: %s %r" % (status, doc))

        # another drone still flies
        end = end_of(srv, 1, "say something")
        check(end.get("status") == "ok" and end.get("logs") == ["still flying"],
              "serve: drone 1 flies after drone 0 hung: %r" % end)

        # the stop button on a stuck mission: hung once the cancel is ignored
        status, doc = srv.post_json("/api/drones/2/missions", {"task": "get stuck"})
        check(status == 202, "serve: drone 2's mission: %s" % status)
        ev = Events(srv, 2, timeout=HANG_GUARD_S)
        try:
            ev.until("call", lambda d: d["skill"] == "stuck", deadline_s=HANG_GUARD_S)
            srv.post_json("/api/drones/2/stop", {})
            end = ev.until("end", deadline_s=HANG_GUARD_S)
        finally:
            ev.close()
        check(end.get("status") == "hung" and "cancelled" in (end.get("error") or ""),
              "serve: a stop the VM ignores ends as hung: %r" % end)

        # Ctrl-C with two hung mission threads still stuck
        t0 = time.monotonic()
        rc = srv.stop()
        took = time.monotonic() - t0
        check(rc == 0, "serve: Ctrl-C ends the server: %r\n%s" % (rc, srv.stderr()[-2000:]))
        check(took < SIGNAL_BOUND_S, "serve: ended %.2f s after Ctrl-C" % took)

        r = subprocess.run([ALOFT, "log", "--db", db, "--json"], capture_output=True, text=True,
                           timeout=HANG_GUARD_S)
        lst = one_json(r.stdout, "aloft log")
        if lst:
            statuses = sorted(m["status"] for m in lst)
            check(statuses == ["failed", "hung", "hung", "ok"],
                  "serve: the missions as recorded: %r" % statuses)
    finally:
        srv.stop(9)
        fake.stop()


def main():
    if not os.path.exists(STUCK):
        print("FAIL: %s is missing (built from tests/tools/aloft_stuck.c)" % STUCK)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        skills = os.path.join(tmp, "skills")
        os.mkdir(skills)
        for name, text in SKILLS.items():
            with open(os.path.join(skills, name), "w") as f:
                f.write(text)
        for case, args in ((lua_past_limit, ()), (lua_signals, ()),
                           (run_hung, (skills, os.path.join(tmp, "run.db"))),
                           (serve, (skills, os.path.join(tmp, "serve.db")))):
            try:
                case(tmp, *args)
            except (subprocess.TimeoutExpired, TimeoutError, EOFError) as e:
                check(False, "%s: did not end: %s" % (case.__name__, e))
    print("%s" % ("ok" if not failures else "%d failure(s)" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
