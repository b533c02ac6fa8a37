#!/usr/bin/python3
# labels: waits
"""aloft run --task against real servers' replies (tests/llm/, replayed
byte-exact by tests/fake_llm.py) and LLM failures, end to end (SPEC §7, §8):
each family's plan flies, streamed and --no-stream; a refusal is the
mission's reason; llama.cpp's error event and a 400 are reported, not
retried; a host name that does not resolve fails at once; a retry prints one
line; and plan_ms is the LLM's time, not the flight's that ran while the plan
streamed in."""

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

    def replayed(responses, extra=()):
        fake = Fake(tmp, responses)
        r, doc = run(fake.url, extra)
        n = len(fake.requests())
        fake.stop()
        return r, doc, n

    # each family's plan flies, as the recording streamed it or whole
    flights = [("openrouter_stream.json", [], ["turn_ccw", "turn_cw"]),
               ("openrouter_body.json", ["--no-stream"], ["turn_ccw", "turn_cw"]),
               ("llamacpp_stream.json", [], ["turn_ccw"]),
               ("llamacpp_body_reasoning.json", ["--no-stream"], ["turn_ccw"]),
               ("vllm_stream_reasoning.json", [], ["turn_cw"]),
               ("vllm_body_reasoning.json", ["--no-stream"], ["turn_cw"]),
               ("azure_body.json", ["--no-stream"], ["turn_ccw"])]
    for rec, mode, skills in flights:
        r, doc, n = replayed([{"replay": rec}], mode)
        check(r.returncode == 0 and doc and doc["ok"], "%s: exit %d %s" % (rec, r.returncode,
                                                                          r.stderr[-300:]))
        check(doc and [c["skill"] for c in doc["calls"]] == skills,
              "%s: calls %s" % (rec, doc and doc["calls"]))
        check(n == 1, "%s: %d requests" % (rec, n))

    # a refusal is the reason the mission gives, streamed or whole
    for rec, mode, words in [("openai_refusal_stream.json", [],
                              "I'm sorry, I can't assist with that request."),
                             ("openai_refusal_body.json", ["--no-stream"],
                              "I'm very sorry, but I can't assist with that.")]:
        r, doc, n = replayed([{"replay": rec, "times": 5}], mode)
        check(r.returncode == 1 and doc and not doc["ok"] and words in doc["error"] and
              "refused" in doc["error"], "%s: %r" % (rec, doc and doc["error"]))
        check(words in r.stderr, "%s: the refusal is not shown: %s" % (rec, r.stderr[-300:]))
        check(n == 1, "%s: a refusal was asked again (%d requests)" % (rec, n))

    # llama.cpp's error event at HTTP 200, a vLLM 400, a 501: said, not retried
    for rec, words in [("llamacpp_error_event.json", "exceeds the available context size"),
                       ("llamacpp_data_error.json", "exceeds the available context size"),
                       ("vllm_400.json", "maximum context length is 4096 tokens"),
                       ("llamacpp_501.json", "does not support chat completions")]:
        r, doc, n = replayed([{"replay": rec, "times": 5}])
        check(r.returncode == 1 and doc and words in doc["error"] and
              "no MiniSpec plan" not in doc["error"], "%s: %r" % (rec, doc and doc["error"]))
        check(n == 1, "%s: %d requests" % (rec, n))
        check("retrying" not in r.stderr, "%s: retried: %s" % (rec, r.stderr))

    # an HTML error page is summarised, not dumped
    r, doc, n = replayed([{"replay": "nginx_400.json"}])
    check(r.returncode == 1 and doc and "Request Header Or Cookie Too Large" in doc["error"] and
          "<" not in doc["error"], "nginx 400: %r" % (doc and doc["error"]))

    # one progress line per retry, then the plan
    r, doc, n = replayed([{"fault": "503", "times": 2}, {"content": "tu(90)"}])
    lines = [l for l in r.stderr.splitlines() if "retrying" in l]
    check(r.returncode == 0 and n == 3 and len(lines) == 2 and "HTTP 503" in lines[0],
          "503 twice: exit %d, %d requests, lines %s" % (r.returncode, n, lines))

    # a host name that does not resolve (.invalid never does): at once, named
    r, doc = run("http://aloft-llm.invalid/v1")
    check(r.returncode == 1 and doc and "aloft-llm.invalid" in doc["error"] and
          "resolve" in doc["error"] and "retrying" not in r.stderr,
          "unresolvable host: %r / %s" % (doc and doc["error"], r.stderr[-300:]))

    # plan_ms is the LLM's time. The plan streams in at 10 tokens/s (about
    # 0.7 s) while each turn flies for 1 s of real time (--time-scale 1)
    # inside the stream: before the fix plan_ms held the whole flight.
    fake = Fake(tmp, [{"content": "tc(90);tc(90);tc(90);tc(90)"}], rate=10)
    r, doc = run(fake.url, ["--time-scale", "1"])
    fake.stop()
    check(r.returncode == 0 and doc and doc["ok"], "timed flight: %s" % r.stderr[-300:])
    if doc:
        # at least three of the four seconds of turning ran while the reply
        # was still being read; none of it is the LLM's
        check(doc["plan_ms"] < doc["total_ms"] - 2500,
              "plan_ms %.0f of total_ms %.0f counts the flight" % (doc["plan_ms"],
                                                                   doc["total_ms"]))
        check(doc["plan_ms"] > 0 and doc["exec_ms"] >= 3900,
              "plan_ms %.0f exec_ms %.0f" % (doc["plan_ms"], doc["exec_ms"]))
        mission = None
        for line in r.stderr.splitlines():
            if line.startswith("mission "):
                mission = line.split()[1]
        log = subprocess.run([ALOFT, "log", "--db", db, "--json", mission or "0"],
                             capture_output=True, text=True, timeout=60)
        calls = json.loads(log.stdout)["llm_calls"] if log.returncode == 0 else []
        check(len(calls) == 1 and calls[0]["latency_ms"] < doc["total_ms"] - 2500,
              "recorded latency: %s" % [c.get("latency_ms") for c in calls])

sys.exit(1 if failures else 0)
