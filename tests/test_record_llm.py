"""An LLM mission recorded and replayed (SPEC §12). `aloft run --task`
against the fake OpenAI server records every exchange (plan, retry, a probe
asked while a streamed plan was arriving, replan), every plan with the
checker's verdict and every skill call. With the server gone,
`aloft run --replay ID` flies the task again from the recorded replies and
makes the same skill calls; a record whose replies were changed is caught."""

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

from fake_llm_proc import Fake

ALOFT = os.environ["ALOFT"]
SRC = os.environ.get("SRC", ".")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what, file=sys.stderr)


def env():
    e = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ALOFT_DB"):
        e.pop(k, None)
    return e


def aloft(*args):
    p = subprocess.run([ALOFT, *args], capture_output=True, text=True, env=env(), timeout=120)
    return p.returncode, p.stdout, p.stderr


def calls_of(doc):
    return [(c["skill"], c["args"], c["ret"]) for c in doc["calls"]]


def logged(db, mid):
    rc, out, err = aloft("log", "--db", db, "--json", str(mid))
    check(rc == 0, f"log {mid}: {err}")
    return json.loads(out) if rc == 0 else {"mission": {}, "plans": [], "events": [],
                                           "llm_calls": []}


SCENE = {"limits": {"geofence_radius": 400},
         "noise": {"position_cm": 10, "miss_rate": 0.2},
         "objects": [{"class": "apple", "x": 0, "y": 250, "z": 80, "w": 8, "d": 8, "h": 9,
                      "color": "red"},
                     {"class": "person", "x": 0, "y": -300, "w": 50, "d": 30, "h": 175}]}
REPLIES = [
    # plan: fails the checker -> retry
    {"content": "tc(45);turnleft(3)"},
    # retry: streamed; the probe is asked while it arrives, then a move the
    # geofence refuses -> replan
    {"content": "s('apple');_1=p('what colour is the apple?');l(_1);mf(500);l('never')"},
    # the probe's answer
    {"content": "red"},
    # replan
    {"content": "tc(90);iv('person');l('done');->True"},
]

with tempfile.TemporaryDirectory() as tmp:
    scene = os.path.join(tmp, "scene.json")
    with open(scene, "w") as f:
        json.dump(SCENE, f)
    db = os.path.join(tmp, "missions.db")

    fake = Fake(tmp, REPLIES, rate=2000)
    rc, out, err = aloft("run", "--scene", scene, "--task", "Look at the apple, then turn.",
                         "--llm-url", fake.url, "--model", "fake-model", "--db", db, "--json",
                         "--seed", "3")
    reqs = fake.requests()
    fake.stop()
    check(rc == 0, f"the LLM mission: {rc} {err}")
    run = json.loads(out)
    check(len(reqs) == 4 and run["llm_calls"] == 4 and run["tries"] == 2 and
          run["replans"] == 1, f"plan, retry, probe, replan: {run['llm_calls']} {len(reqs)}")
    check(run["logs"] == ["red", "done"], f"logs: {run['logs']}")
    mid = run["mission_id"]

    # The record: task, model, exchanges, plans with verdicts, calls.
    doc = logged(db, mid)
    m = doc["mission"]
    check(m["task"] == "Look at the apple, then turn." and m["model"] == "fake-model" and
          m["status"] == "ok" and m["seed"] == 3, f"mission: {m}")
    llm = doc["llm_calls"]
    check(sorted(x["kind"] for x in llm) == ["plan", "probe", "replan", "retry"],
          f"exchange kinds: {[x['kind'] for x in llm]}")
    by_kind = {x["kind"]: x for x in llm}
    check(by_kind.get("probe", {}).get("response") == "red", "the probe's reply")
    check(all(x["latency_ms"] > 0 and x["model"] == "fake-model" for x in llm),
          f"latency and model: {llm}")
    check(by_kind.get("replan", {}).get("prompt_tokens", 0) > 0 and
          by_kind.get("replan", {}).get("completion_tokens", 0) > 0, "usage")
    # The streamed plans the mission stopped early (checker, refusal) ended
    # the transfer itself: recorded as such, with what had arrived.
    check((by_kind.get("retry", {}).get("error") or "").startswith("aborted:") and
          by_kind["retry"]["response"].startswith("s('apple');_1=p("),
          f"the cut-short retry: {by_kind.get('retry', {}).get('error')}")
    prompt = json.loads(by_kind.get("plan", {}).get("prompt", "[]"))
    check(any(p["role"] == "user" and "Look at the apple" in p["content"] for p in prompt),
          "the request's messages are kept")
    check(doc["plans"] == run["plans"], f"plans {doc['plans']} vs {run['plans']}")
    verdicts = [e["ok"] for e in doc["events"] if e["kind"] == "plan"]
    check(verdicts == [False, True, True], f"checker verdicts: {verdicts}")
    recorded = [(e["skill"], e["args"], e["ret"]) for e in doc["events"] if e["kind"] == "call"]
    check(recorded == calls_of(run), f"calls {recorded} vs {calls_of(run)}")
    viol = [e for e in doc["events"] if e["kind"] == "violation"]
    check([(v["skill"], v["args"]) for v in viol] == [("move_forward", [500])],
          f"the refusal: {viol}")
    scenes = [e for e in doc["events"] if e["kind"] == "scene"]
    check(len(scenes) >= 3, f"a scene snapshot for each planning prompt: {len(scenes)}")
    stmts = [(e["plan"], e["text"]) for e in doc["events"] if e["kind"] == "statement"]
    check((2, "mf(500)") in stmts and (3, "tc(90)") in stmts and
          not any(t == "l('never')" for _, t in stmts),
          f"statements name their plan; nothing after the refusal: {stmts}")

    # Replay with no LLM anywhere: the server is gone, no URL, no model.
    rc, out, err = aloft("run", "--replay", str(mid), "--db", db, "--json")
    check(rc == 0, f"replay: {rc} {err}")
    rep = json.loads(out) if out else {"calls": [], "plans": []}
    check(rep.get("replay") == {"of": mid, "match": True, "difference": None},
          f"replay report: {rep.get('replay')}")
    check(calls_of(rep) == calls_of(run) and rep["plans"] == run["plans"] and
          rep["logs"] == run["logs"] and rep["llm_calls"] == 4,
          "the replay made the same calls from the same plans")
    again = logged(db, rep["mission_id"])
    check(again["mission"]["replay_of"] == mid and again["mission"]["task"] == m["task"] and
          [x["response"] for x in again["llm_calls"]] == [x["response"] for x in llm],
          "the replay is recorded with the replies it used")

    # A batch (--no-stream) mission replays in batch mode.
    fake = Fake(tmp, [{"content": "s('person');g('person');->True"}], rate=2000)
    rc, out, err = aloft("run", "--scene", scene, "--task", "Go to the person.", "--no-stream",
                         "--llm-url", fake.url, "--model", "fake-model", "--db", db, "--json")
    fake.stop()
    batch = json.loads(out)
    check(rc == 0 and batch["ok"], f"batch mission: {err}")
    rc, out, err = aloft("run", "--replay", str(batch["mission_id"]), "--db", db, "--json")
    check(rc == 0 and calls_of(json.loads(out)) == calls_of(batch), f"batch replay: {err}")
    rc, out, _ = aloft("log", "--db", db, "--json", str(json.loads(out)["mission_id"]))
    check(json.loads(out)["mission"]["params"].get("stream") is False, "replayed in batch mode")

    # A changed reply: the replan now turns the other way. Calls differ.
    c = sqlite3.connect(db)
    c.execute("UPDATE llm_exchanges SET response = ? WHERE mission_id = ? AND kind = 'replan'",
              ("tu(90);iv('person');l('done');->True", mid))
    c.commit()
    rc, out, err = aloft("run", "--replay", str(mid), "--db", db, "--json")
    rep = json.loads(out) if out else {}
    check(rc == 1 and rep.get("replay", {}).get("match") is False and
          "turn" in (rep["replay"].get("difference") or ""), f"changed reply: {rep.get('replay')}")

    # A lost reply: the probe has nothing to answer it; the replay says so.
    c.execute("DELETE FROM llm_exchanges WHERE mission_id = ? AND kind = 'probe'", (mid,))
    c.commit()
    c.close()
    rc, out, err = aloft("run", "--replay", str(mid), "--db", db, "--json")
    rep = json.loads(out) if out else {}
    check(rc == 1 and rep.get("replay", {}).get("match") is False and
          "replay diverged" in (rep.get("error") or ""), f"lost reply: {rc} {rep.get('error')}")

if failures:
    print(f"{failures} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("test_record_llm: all checks passed")
