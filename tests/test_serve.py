#!/usr/bin/python3
"""aloft serve over real HTTP with two simulated drones and the fake LLM:
the drone list, a mission's events (plan text, statements, skill calls,
end), stop, two missions at once, the errors, the camera stream, the store
and Ctrl-C."""

import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_llm_proc import Fake  # noqa: E402
from serve_proc import Events, Serve, mjpeg_frames  # noqa: E402

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", ".")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def wait_for(pred, what, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    check(False, what)
    return False


def run_mission(srv, drone, task):
    """Starts TASK, returns (run, every event of the run up to its end)."""
    status, doc = srv.post_json("/api/drones/%d/missions" % drone, {"task": task})
    check(status == 202, "mission accepted: %s %s" % (status, doc))
    ev = Events(srv, drone)
    seen = []
    try:
        ev.until("end", lambda d: d["run"] == doc["run"], seen)
    finally:
        ev.close()
    return doc["run"], seen


PLAN = "l('hello web');tc(90);mf(50);->True"
LONG = "l('waiting');mf(200);d(60000);->True"
SHORT = "l('both');d(3000);->True"

with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(k, None)
    db = os.path.join(tmp, "missions.db")
    office = os.path.join(SRC, "examples/scenes/office.json")
    spec = os.path.join(SRC, "examples/scenes/spec-example.json")

    # usage errors
    r = subprocess.run([ALOFT, "serve", "--help"], capture_output=True, text=True, env=env)
    check(r.returncode == 0 and "--drone" in r.stdout and "--port" in r.stdout, "serve --help")
    r = subprocess.run([ALOFT, "serve", "--drone", "sim:" + office], capture_output=True,
                       text=True, env=env, timeout=30)
    check(r.returncode == 2 and "model" in r.stderr, "no model: %r" % r.stderr)
    r = subprocess.run([ALOFT, "serve", "--model", "m", "--drone", "kite"], capture_output=True,
                       text=True, env=env, timeout=30)
    check(r.returncode == 1 and "kite" in r.stderr, "bad --drone: %r" % r.stderr)
    r = subprocess.run([ALOFT, "serve", "--model", "m", "--drone", "sim:/nonexistent.json"],
                       capture_output=True, text=True, env=env, timeout=30)
    check(r.returncode == 1 and "nonexistent" in r.stderr, "missing scene: %r" % r.stderr)
    r = subprocess.run([ALOFT, "serve", "--model", "m", "--scene", office, "--host", "localhost"],
                       capture_output=True, text=True, env=env, timeout=30)
    check(r.returncode == 2 and "IPv4 or IPv6" in r.stderr,
          "--host must be an address: %r" % r.stderr)
    r = subprocess.run([ALOFT, "serve", "--model", "m", "--scene", office, "--prompts",
                        os.path.join(tmp, "nowhere")], capture_output=True, text=True, env=env,
                       timeout=30)
    check(r.returncode == 2 and "--prompts" in r.stderr, "--prompts nowhere: %r" % r.stderr)

    fake = Fake(tmp, [{"content": PLAN}, {"content": LONG}, {"content": SHORT, "times": 2},
                      {"content": LONG, "times": 2}], rate=200)
    srv = Serve(["--drone", "sim:" + office, "--drone", "sim:" + spec, "--llm-url", fake.url,
                 "--model", "fake", "--db", db], env=env)
    try:
        check(srv.url.startswith("http://127.0.0.1:"), "binds 127.0.0.1: " + srv.url)

        # the drones
        drones = srv.drones()
        check([d["id"] for d in drones] == [0, 1], "two drones: %s" % drones)
        check(all(d["kind"] == "sim" and d["busy"] is False for d in drones), "idle sims")
        check(drones[0]["pose"] == {"x": 0, "y": 0, "z": 110, "yaw": 0},
              "drone 0 at the office's start pose: %s" % drones[0]["pose"])
        check("table_" in drones[0]["scene"] and "x:" in drones[0]["scene"],
              "drone 0's scene description: %r" % drones[0]["scene"])
        check("apple_1" in drones[1]["scene"], "drone 1 sees its scene: %r" % drones[1]["scene"])

        # a mission, followed through its events
        run, seen = run_mission(srv, 0, "Say hello, turn right and go forward.")
        kinds = [k for k, _ in seen]
        text = "".join(d["text"] for k, d in seen if k == "plan_text")
        check(text == PLAN, "the plan streamed in pieces: %r" % text)
        check(kinds.count("plan_text") > 1, "the plan came in more than one piece")
        stmts = [d["text"] for k, d in seen if k == "statement"]
        check(stmts[:3] == ["l('hello web')", "tc(90)", "mf(50)"], "statements: %s" % stmts)
        calls = [(d["skill"], d["args"]) for k, d in seen if k == "call"]
        check(calls == [("log", ["hello web"]), ("turn_cw", [90]), ("move_forward", [50])],
              "skill calls: %s" % calls)
        rets = [d for k, d in seen if k == "return"]
        check(len(rets) == 3 and all(d["ret"] is True for d in rets), "results: %s" % rets)
        check(("log", {"text": "hello web"}) in seen, "the log line")
        check(any(k == "scene" and "table_" in d["text"] for k, d in seen), "the scene sent")
        check(kinds.index("start") < kinds.index("plan_text") < kinds.index("statement") <
              kinds.index("call") < kinds.index("end"), "event order: %s" % kinds)
        # a statement runs while the plan is still arriving
        check(kinds.index("statement") < len(kinds) - 1 - kinds[::-1].index("plan_text"),
              "streaming: a statement before the last plan text")
        end = seen[-1][1]
        check(end["status"] == "ok" and end["error"] is None and end["result"] is True,
              "mission ended ok: %s" % end)
        check(end["logs"] == ["hello web"], "end logs: %s" % end["logs"])
        check(round(end["pose"]["x"]) == 50 and end["pose"]["yaw"] == 90, "pose: %s" % end)
        mission_id = end["mission_id"]
        d0 = srv.drones()[0]
        check(d0["busy"] is False and round(d0["pose"]["x"]) == 50 and d0["run"] == run,
              "after the mission: %s" % d0)

        # recorded in the store like every run
        r = subprocess.run([ALOFT, "log", "--db", db, "--json", str(mission_id)],
                           capture_output=True, text=True, env=env, timeout=30)
        check(r.returncode == 0, "aloft log: %s" % r.stderr)
        if r.returncode == 0:
            doc = json.loads(r.stdout)
            check(doc["mission"]["task"] == "Say hello, turn right and go forward." and
                  doc["mission"]["status"] == "ok", "recorded mission: %s" % doc["mission"])
            check([e["skill"] for e in doc["events"] if e["kind"] == "call"] ==
                  ["log", "turn_cw", "move_forward"], "recorded calls")

        # a long mission, stopped
        status, doc = srv.post_json("/api/drones/0/missions", {"task": "wait a minute"})
        check(status == 202, "long mission accepted")
        ev = Events(srv, 0)
        # the drone's pose (and its camera) follows the move as it happens
        ev.until("call", lambda d: d["skill"] == "move_forward")
        between, t_move = [], time.monotonic()
        while not between and time.monotonic() - t_move < 10:
            y = srv.drones()[0]["pose"]["y"]
            if 5 < y < 195:
                between.append(y)
            time.sleep(0.05)
        check(between, "no pose between the ends of a 200 cm move")
        ev.until("call", lambda d: d["skill"] == "delay")
        check(srv.drones()[0]["busy"] is True, "busy while flying")
        status, busy = srv.post_json("/api/drones/0/missions", {"task": "again"})
        check(status == 409, "a second mission on a busy drone: %s" % status)
        t0 = time.monotonic()
        status, st = srv.post_json("/api/drones/0/stop", {})
        check(status == 200 and st["stopped"] is True, "stop: %s %s" % (status, st))
        end = ev.until("end", lambda d: d["run"] == doc["run"])
        ev.close()
        check(end["status"] == "cancelled", "stopped mission ends cancelled: %s" % end)
        check(time.monotonic() - t0 < 20, "stop is prompt (not the minute's delay)")
        wait_for(lambda: srv.drones()[0]["busy"] is False, "not busy after stop")
        status, st = srv.post_json("/api/drones/0/stop", {})
        check(status == 200 and st["stopped"] is False, "stop when idle: %s" % st)

        # two drones at once
        starts = [srv.post_json("/api/drones/%d/missions" % i, {"task": "both"}) for i in (0, 1)]
        check(all(s == 202 for s, _ in starts), "both accepted: %s" % starts)
        check(wait_for(lambda: all(d["busy"] for d in srv.drones()), "both busy at once"),
              "concurrent")
        ends = []
        for i in (0, 1):
            ev = Events(srv, i)
            ends.append(ev.until("end", lambda d, i=i: d["run"] == starts[i][1]["run"]))
            ev.close()
        check([e["status"] for e in ends] == ["ok", "ok"], "both ended ok: %s" % ends)

        # errors
        status, doc = srv.post_json("/api/drones/9/missions", {"task": "x"})
        check(status == 404, "no drone 9: %s" % status)
        status, doc = srv.post_json("/api/drones/abc/missions", {"task": "x"})
        check(status == 404, "drone abc: %s" % status)
        status, doc = srv.request("POST", "/api/drones/0/missions", "{not json",
                                  {"Content-Type": "application/json"})
        check(status == 400 and "error" in doc, "bad JSON: %s" % status)
        for bad in ({"task": ""}, {"task": "   "}, {"task": 3}, {}, ["task"]):
            status, doc = srv.post_json("/api/drones/0/missions", bad)
            check(status == 400, "%s: %s" % (bad, status))
        status, doc = srv.request("POST", "/api/drones/0/missions", json.dumps({"task": "x"}),
                                  {"Content-Type": "text/plain"})
        check(status == 415, "a mission as text/plain: %s" % status)
        big = json.dumps({"task": "x" * 20000})
        status, doc = srv.request("POST", "/api/drones/0/missions", big,
                                  {"Content-Type": "application/json"})
        check(status == 413, "a 20 KB body: %s" % status)
        c = srv.conn()
        c.request("POST", "/api/drones/0/missions", body=iter([big.encode()[:9000]] * 3),
                  headers={"Content-Type": "application/json"}, encode_chunked=True)
        r = c.getresponse()
        r.read()
        c.close()
        check(r.status == 413, "a chunked body too large: %s" % r.status)
        status, _ = srv.request("GET", "/api/drones/0/missions")
        check(status == 405, "GET missions: %s" % status)
        status, _ = srv.request("GET", "/etc/passwd")
        check(status == 404, "other paths: %s" % status)
        status, _ = srv.request("GET", "/api/drones/0/../../x")
        check(status == 404, "dot paths: %s" % status)
        status, _ = srv.request("GET", "/api/drones", headers={"Host": "evil.example:%d" % srv.port})
        check(status == 403, "a foreign Host header (DNS rebinding): %s" % status)
        status, _ = srv.request("POST", "/api/drones/0/missions", json.dumps({"task": "x"}),
                                {"Content-Type": "application/json", "Host": "evil.example"})
        check(status == 403, "a mission from a foreign Host: %s" % status)
        status, _ = srv.request("GET", "/api/drones", headers={"Host": "localhost:%d" % srv.port})
        check(status == 200, "Host localhost: %s" % status)
        check(srv.drones()[0]["busy"] is False, "no mission started by the errors")

        # the page and its files
        status, page = srv.request("GET", "/")
        check(status == 200 and b"<html" in page and b"app.js" in page, "the page")
        status, js = srv.request("GET", "/app.js")
        check(status == 200 and b"EventSource" in js, "the script")

        # the camera; its thread ends when the client goes away
        threads = lambda: len(os.listdir("/proc/%d/task" % srv.proc.pid))  # noqa: E731
        before = threads()
        frames = mjpeg_frames(srv, 1, 2)
        check(len(frames) == 2, "two frames: %d" % len(frames))
        check(all(f[:3] == b"\xff\xd8\xff" and f[-2:] == b"\xff\xd9" for f in frames),
              "JPEG frames")
        check(srv.drones()[1]["busy"] is False, "the server still answers after the camera")
        wait_for(lambda: threads() <= before, "the camera stream ended with its client: %d "
                 "threads, %d before" % (threads(), before))

        # Ctrl-C during a mission: cancelled, recorded, exit 0
        status, doc = srv.post_json("/api/drones/1/missions", {"task": "wait at the end"})
        ev = Events(srv, 1)
        ev.until("call", lambda d: d["skill"] == "delay")
        ev.close()
        rc = srv.stop()
        check(rc == 0, "serve exits 0 after Ctrl-C: %s" % rc)
        r = subprocess.run([ALOFT, "log", "--db", db, "--json"], capture_output=True, text=True,
                           env=env, timeout=30)
        statuses = [m["status"] for m in json.loads(r.stdout)] if r.returncode == 0 else []
        check(statuses.count("cancelled") == 2 and "running" not in statuses,
              "the store after Ctrl-C: %s" % statuses)
    finally:
        srv.stop(9)
        fake.stop()

if failures:
    print("%d check(s) failed" % failures)
    sys.exit(1)
print("ok")
