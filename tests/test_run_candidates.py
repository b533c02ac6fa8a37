#!/usr/bin/python3
"""aloft run --task --candidates K against the fake LLM (SPEC §7): K plans
asked in one request with `n` (or one request each when the server answers
`n` with one reply or refuses it); the checker's rejects (a wrong skill,
prose, a reply cut short) never fly; with --verify a plan failing sampled
worlds never flies; of the rest the one with the fewest tokens flies and is
recorded as chosen; all rejected is a failed try that retries; K outside
1..8 is a usage error."""

import json
import os
import subprocess
import sys
import tempfile

from fake_llm_proc import Fake

ALOFT = os.environ.get("ALOFT", "build/aloft")
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def env_without_model():
    env = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(k, None)
    return env


with tempfile.TemporaryDirectory() as tmp:
    scene = os.path.join(tmp, "room.json")
    with open(scene, "w") as f:
        json.dump({"limits": {"geofence_radius": 400}, "objects": []}, f)
    db = os.path.join(tmp, "aloft.db")

    def run(url, extra=()):
        r = subprocess.run([ALOFT, "run", "--scene", scene, "--task", "turn around",
                            "--llm-url", url, "--model", "m", "--json", "--db", db] + list(extra),
                           capture_output=True, text=True, env=env_without_model(), timeout=120)
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            doc = None
        return r, doc

    def flown(responses, extra):
        fake = Fake(tmp, responses)
        r, doc = run(fake.url, extra)
        reqs = [q["body"] for q in fake.requests()]
        fake.stop()
        return r, doc, reqs

    def skills(doc):
        return [(c["skill"], c["args"]) for c in doc["calls"]] if doc else None

    def log_of(doc):
        r = subprocess.run([ALOFT, "log", "--db", db, "--json", str(doc["mission_id"])],
                           capture_output=True, text=True, timeout=60)
        return json.loads(r.stdout)

    # right, wrong (the checker rejects it), right but longer, prose, cut:
    # the shortest right one flies, in one request with n = 5, not streamed
    five = ["tc(90);tc(90);tc(90)", "turnleft(90)", "tc(45)", "I cannot help with that.",
            {"content": "tc(4", "finish_reason": "length"}]
    r, doc, reqs = flown([{"choices": five}], ["--candidates", "5"])
    check(r.returncode == 0 and doc and doc["ok"], "five: exit %d %s" % (r.returncode,
                                                                          r.stderr[-400:]))
    check(skills(doc) == [("turn_cw", [45])], "five: calls %s" % skills(doc))
    check(len(reqs) == 1 and reqs[0].get("n") == 5 and reqs[0].get("stream") is False,
          "five: requests %s" % [(q.get("n"), q.get("stream")) for q in reqs])
    cands = doc["candidates"] if doc else []
    check([c["accepted"] for c in cands] == [True, False, True, False, False],
          "five: accepted %s" % [c["accepted"] for c in cands])
    check([c["chosen"] for c in cands] == [False, False, True, False, False],
          "five: chosen %s" % [c["chosen"] for c in cands])
    check(len(cands) == 5 and "unknown skill 'turnleft'" in (cands[1]["diagnostics"] or ""),
          "five: wrong one's diagnostics %s" % cands[1:2])
    check(len(cands) == 5 and "no MiniSpec plan" in (cands[3]["diagnostics"] or ""),
          "five: prose %s" % cands[3:4])
    check(len(cands) == 5 and "cut" in (cands[4]["diagnostics"] or ""), "five: cut %s" % cands[4:])
    check(all(c["verify"] is None for c in cands), "five: verified without --verify")
    check(len(cands) == 5 and cands[0]["tokens"] > cands[2]["tokens"] > 0,
          "five: tokens %s" % [c["tokens"] for c in cands])
    cost = doc["candidates_cost"] if doc else {}
    check(cost.get("mode") == "n" and cost.get("requests") == 1 and cost.get("k") == 5 and
          cost.get("received") == 5 and cost.get("unflown_completion_tokens", 0) > 0,
          "five: cost %s" % cost)
    # the chosen one is recorded and is the plan flown
    if doc:
        log = log_of(doc)
        check([c["chosen"] for c in log["candidates"]] == [False, False, True, False, False] and
              log["candidates"][2]["text"] == "tc(45)" and log["plans"] == ["tc(45)"],
              "five: recorded %s %s" % (log["candidates"], log["plans"]))

    # and the readable log lists them, the flown one marked
    if doc:
        lg = subprocess.run([ALOFT, "log", "--db", db, str(doc["mission_id"])],
                            capture_output=True, text=True, timeout=60)
        tail = lg.stdout[lg.stdout.find("candidate plans"):]
        check("candidate plans" in lg.stdout and "#2  flown" in tail and
              tail.count("rejected") == 3 and "unknown skill 'turnleft'" in tail,
              "five: readable log %s" % lg.stdout[-800:])

    # the mission flies again from the store: the same five candidates, the
    # same one chosen, the same calls (no LLM asked)
    if doc:
        rp = subprocess.run([ALOFT, "run", "--replay", str(doc["mission_id"]), "--db", db,
                             "--json"], capture_output=True, text=True, timeout=60,
                            env=env_without_model())
        again = json.loads(rp.stdout) if rp.stdout else {}
        check(rp.returncode == 0 and again.get("replay", {}).get("match") and
              [c["chosen"] for c in again.get("candidates", [])] ==
              [False, False, True, False, False], "five: replay %d %s %s" % (
                  rp.returncode, again.get("replay"), rp.stderr[-300:]))

    # the server's index orders the candidates; a repeated index is dropped
    r, doc, reqs = flown([{"choices": [{"content": "tc(33)", "index": 2},
                                       {"content": "tc(31);tc(1)", "index": 0},
                                       {"content": "tc(7)", "index": 0},
                                       {"content": "tc(32)", "index": 1}]}],
                         ["--candidates", "4"])
    check(doc and [c["plan"] for c in doc["candidates"]] == ["tc(31);tc(1)", "tc(32)", "tc(33)"],
          "index order: %s" % (doc and [c["plan"] for c in doc["candidates"]]))

    # K = 1: one request without n, its one candidate flown
    r, doc, reqs = flown([{"content": "tc(30)"}], ["--candidates", "1"])
    check(r.returncode == 0 and skills(doc) == [("turn_cw", [30])], "k1: %s" % skills(doc))
    check(len(reqs) == 1 and "n" not in reqs[0], "k1: n sent %s" % reqs)
    check(doc and len(doc["candidates"]) == 1 and doc["candidates"][0]["chosen"],
          "k1: %s" % (doc and doc["candidates"]))

    # K = 8, the most: all eight asked for in one request
    r, doc, reqs = flown([{"choices": ["tc(%d)" % (10 + i) for i in range(8)]}],
                         ["--candidates", "8"])
    check(r.returncode == 0 and len(reqs) == 1 and reqs[0].get("n") == 8,
          "k8: exit %d %s" % (r.returncode, r.stderr[-300:]))
    check(doc and len(doc["candidates"]) == 8, "k8: %s" % (doc and doc.get("candidates")))

    # K = 9 and K = 0: usage errors that say the range, nothing asked
    for k in ("9", "0", "x", "-1"):
        fake = Fake(tmp, [{"content": "tc(30)"}])
        r, doc = run(fake.url, ["--candidates", k])
        n = len(fake.requests())
        fake.stop()
        check(r.returncode == 2 and "1..8" in r.stderr and n == 0,
              "k=%s: exit %d, %d requests, %s" % (k, r.returncode, n, r.stderr[-200:]))
        check(doc is not None and doc["ok"] is False, "k=%s: no JSON document" % k)

    # --candidates flies LLM plans: not with --plan
    plan = os.path.join(tmp, "p.ms")
    with open(plan, "w") as f:
        f.write("tc(10)")
    r = subprocess.run([ALOFT, "run", "--scene", scene, "--plan", plan, "--candidates", "2",
                        "--db", db], capture_output=True, text=True, timeout=60)
    check(r.returncode == 2 and "--task" in r.stderr, "with --plan: %d %s" % (r.returncode,
                                                                              r.stderr))

    # fewer choices than asked: the two that came are judged, the round goes on
    r, doc, reqs = flown([{"choices": ["tc(20);tc(20)", "tc(25)"]}], ["--candidates", "3"])
    check(r.returncode == 0 and skills(doc) == [("turn_cw", [25])], "fewer: %s" % skills(doc))
    check(len(reqs) == 1 and doc and len(doc["candidates"]) == 2, "fewer: %d requests" % len(reqs))
    check("2 of the 3" in r.stderr, "fewer: not said: %s" % r.stderr[-300:])

    # more choices than asked, out of order: the K lowest indexes are the
    # candidates
    r, doc, reqs = flown([{"choices": [{"content": "tc(41);tc(1)", "index": 1},
                                       {"content": "tc(40);tc(1)", "index": 0},
                                       {"content": "tc(3)", "index": 3},
                                       {"content": "tc(2)", "index": 2}]}],
                         ["--candidates", "2"])
    check(r.returncode == 0 and doc and len(doc["candidates"]) == 2 and
          skills(doc) == [("turn_cw", [40]), ("turn_cw", [1])],
          "more: %s" % (doc and doc.get("candidates")))

    # no choices at all: the LLM failed, said plainly, nothing flown
    r, doc, reqs = flown([{"choices": []}], ["--candidates", "2"])
    check(r.returncode == 1 and doc and doc["calls"] == [] and
          "no choices" in (doc["error"] or ""), "no choices: %d %s" % (r.returncode,
                                                                      doc and doc["error"]))

    # a server that ignores n (one reply): the others asked one request each,
    # and so in every later round
    r, doc, reqs = flown([{"content": "tc(10);tc(10)"}, {"content": "tc(15)"},
                          {"content": "tc(17);tc(1)"}], ["--candidates", "3"])
    check(r.returncode == 0 and skills(doc) == [("turn_cw", [15])], "ignored: %s" % skills(doc))
    check([q.get("n") for q in reqs] == [3, None, None], "ignored: n %s" % [q.get("n")
                                                                            for q in reqs])
    check(doc and doc["candidates_cost"]["mode"] == "separate" and
          doc["candidates_cost"]["requests"] == 3, "ignored: %s" % (doc and
                                                                    doc["candidates_cost"]))
    check("does not support" in r.stderr, "ignored: not said: %s" % r.stderr[-300:])

    if doc:
        rp = subprocess.run([ALOFT, "run", "--replay", str(doc["mission_id"]), "--db", db,
                             "--json"], capture_output=True, text=True, timeout=60,
                            env=env_without_model())
        again = json.loads(rp.stdout) if rp.stdout else {}
        check(rp.returncode == 0 and again.get("replay", {}).get("match") and
              len(again.get("candidates", [])) == 3, "ignored: replay %d %s %s" % (
                  rp.returncode, again.get("replay"), rp.stderr[-300:]))

    # a server that refuses n (HTTP 400): K requests without it
    r, doc, reqs = flown([{"content": "tc(12);tc(12)", "reject_n": True}, {"content": "tc(13)"}],
                         ["--candidates", "2"])
    check(r.returncode == 0 and skills(doc) == [("turn_cw", [13])], "refused n: %s %s" % (
        skills(doc), r.stderr[-300:]))
    check([q.get("n") for q in reqs] == [2, None, None], "refused n: %s" % [q.get("n")
                                                                            for q in reqs])

    # all rejected: a failed try; the retry asks again and its right one flies
    r, doc, reqs = flown([{"choices": ["turnleft(90)", "Sure! I will turn."]},
                          {"choices": ["tc(60)", "tc(60);tc(1)"]}], ["--candidates", "2"])
    check(r.returncode == 0 and skills(doc) == [("turn_cw", [60])], "retry: %s" % skills(doc))
    check(doc and doc["tries"] == 2 and [c["round"] for c in doc["candidates"]] == [1, 1, 2, 2],
          "retry: %s" % (doc and doc["candidates"]))
    retry = reqs[1]["messages"][-1]["content"] if len(reqs) == 2 else ""
    check("turnleft(90)" in retry and "unknown skill" in retry,
          "retry prompt lacks the closest plan: %s" % retry[-400:])
    # all rejected every time: the mission fails after --max-tries
    r, doc, reqs = flown([{"choices": ["turnleft(90)", "nope"], "times": 2}],
                         ["--candidates", "2", "--max-tries", "2"])
    check(r.returncode == 1 and doc and not doc["ok"] and "no valid plan" in doc["error"] and
          len(reqs) == 2, "all wrong: %d %s" % (r.returncode, doc and doc["error"]))

    # --verify: the plan that leaves the geofence in the sampled worlds never
    # flies, though shorter; the one that passes does
    r, doc, reqs = flown([{"choices": ["mf(900)", "tc(30);tc(30);tc(30)"]}],
                         ["--candidates", "2", "--verify", "3"])
    check(r.returncode == 0 and skills(doc) == [("turn_cw", [30])] * 3,
          "verify: %s %s" % (skills(doc), r.stderr[-400:]))
    cands = doc["candidates"] if doc else []
    check(len(cands) == 2 and cands[0]["verify"] == {"passed": False, "failed": 3} and
          cands[1]["verify"] == {"passed": True, "failed": 0} and cands[1]["chosen"],
          "verify: %s" % cands)
    if doc:
        log = log_of(doc)
        check([(c["verify_failed"], c["chosen"]) for c in log["candidates"]] ==
              [(3, False), (0, True)], "verify: recorded %s" % log["candidates"])

    # every candidate failing verification: a failed try, nothing flown
    r, doc, reqs = flown([{"choices": ["mf(900)", "mf(800)"], "times": 1}],
                         ["--candidates", "2", "--verify", "2", "--max-tries", "1"])
    check(r.returncode == 1 and doc and doc["calls"] == [] and
          "verification" in (doc["error"] or ""), "verify all fail: %d %s" % (
              r.returncode, doc and doc["error"]))

sys.exit(1 if failures else 0)
