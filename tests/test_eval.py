#!/usr/bin/python3
"""aloft eval against the fake OpenAI server with scripted replies per task:
right plans (success), wrong plans (scored failures), invalid plans (tries
exhausted), a slow server, an unreachable one (exit 1); the table, the
SPEC §2 `eval --json` document, the HTML page, --compare, --repeat, --jobs,
the store, and usage errors."""

import glob
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from fake_llm_proc import Fake

ALOFT = os.environ.get("ALOFT", "build/aloft")
SRC = os.environ.get("SRC", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(SRC, "examples", "benchmark")
# Three tasks, four setups: 11 has an apple and a no-apple setup.
TASKS = ["01-person-behind", "03-count-fruit", "11-eat-or-drink"]
SETUPS = {"01-person-behind": 1, "03-count-fruit": 1, "11-eat-or-drink": 2}
failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def env():
    e = dict(os.environ)
    for k in ("ALOFT_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ALOFT_DB"):
        e.pop(k, None)
    return e


def aloft_eval(args, timeout=300, cwd=SRC):
    return subprocess.run([ALOFT, "eval"] + args, capture_output=True, text=True, env=env(),
                          timeout=timeout, cwd=cwd)


def task_dir(t):
    return os.path.join(BENCH, t)


def task_text(t):
    with open(os.path.join(task_dir(t), "task.txt")) as f:
        return f.read().strip()


def replies(plan_of, **extra):
    """One scripted reply per task, chosen by the task's text in the prompt."""
    return [dict({"match": "Task: " + task_text(t), "content": plan_of(t)}, **extra)
            for t in TASKS]


def reference(t):
    with open(os.path.join(task_dir(t), "plan.ms")) as f:
        return f.read()


def wrong(t):
    with open(os.path.join(task_dir(t), "wrong.json")) as f:
        return json.load(f)[-1]["plan"]  # for task 11: wrong in both setups


def fly(tmp, script, extra, rate=0):
    fake = Fake(tmp, script, rate=rate)
    try:
        r = aloft_eval(["--llm-url", fake.url, "--model", "fake", "--quiet"] + extra
                       + [task_dir(t) for t in TASKS])
        return r, fake.requests()
    finally:
        fake.stop()


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


TASK_KEYS = {"task": str, "runs": int, "success": int, "success_rate": number,
             "tries_mean": number, "replans_mean": number, "first_action_ms_median": number,
             "total_ms_median": number, "prompt_tokens": int, "completion_tokens": int,
             "cached_tokens": int}
OVERALL_KEYS = {"runs": int, "success": int, "success_rate": number,
                "first_action_ms_median": number, "prompt_tokens": int,
                "completion_tokens": int}
# Keys beyond SPEC §2 that eval documents (host/eval/score.h).
TASK_EXTRA = {"violations", "cost"}
OVERALL_EXTRA = {"violations", "cost", "cached_tokens", "tries_mean", "replans_mean",
                 "total_ms_median"}


def typed(v, t):
    if t is number:
        return number(v)
    if t is int:
        return number(v) and v == int(v)
    return isinstance(v, t)


def spec_document(doc, what, nullable=()):
    """The SPEC §2 eval --json format: every key with its type, nothing unknown."""
    ok = isinstance(doc, dict) and set(doc) == {"model", "llm_url", "repeat", "tasks", "overall"}
    check(ok, "%s: top-level keys %s" % (what, sorted(doc) if isinstance(doc, dict) else doc))
    if not ok:
        return
    check(isinstance(doc["model"], str) and isinstance(doc["llm_url"], str)
          and typed(doc["repeat"], int), "%s: model, llm_url, repeat" % what)
    for entry, keys, extra in [(t, TASK_KEYS, TASK_EXTRA) for t in doc["tasks"]] + \
            [(doc["overall"], OVERALL_KEYS, OVERALL_EXTRA)]:
        for k, t in keys.items():
            check(k in entry and (typed(entry[k], t) or (k in nullable and entry[k] is None)),
                  "%s: %s is %r" % (what, k, entry.get(k, "missing")))
        check(set(entry) <= set(keys) | extra, "%s: unknown keys %s" %
              (what, set(entry) - set(keys) - extra))


def by_task(doc):
    return {t["task"]: t for t in doc["tasks"]}


with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "eval.db")

    # right plans, twice per setup, two at a time: every run succeeds
    r, reqs = fly(tmp, replies(reference, cached_tokens=64),
                  ["--json", "--repeat", "2", "--jobs", "2", "--db", db,
                   "--html", os.path.join(tmp, "right.html")])
    check(r.returncode == 0, "right plans: exit %d %s" % (r.returncode, r.stderr))
    right = json.loads(r.stdout)
    spec_document(right, "right plans")
    check(right["model"] == "fake" and right["repeat"] == 2 and
          right["llm_url"].startswith("http://127.0.0.1:"), "right header: %s" % r.stdout)
    tasks = by_task(right)
    check(list(tasks) == TASKS, "tasks in order: %s" % list(tasks))
    for t in TASKS:
        e = tasks.get(t, {})
        runs = 2 * SETUPS[t]
        check(e.get("runs") == runs and e.get("success") == runs and e.get("success_rate") == 1,
              "%s: every right run succeeds: %s" % (t, e))
        check(e.get("tries_mean") == 1 and e.get("replans_mean") == 0, "%s tries: %s" % (t, e))
        check(e.get("prompt_tokens", 0) > 0 and e.get("completion_tokens", 0) > 0,
              "%s tokens: %s" % (t, e))
        # a run whose stream stops at the plan's end may not see the usage
        check(e.get("cached_tokens", 1) % 64 == 0 and e.get("cached_tokens") <= 64 * runs,
              "%s cached tokens: %s" % (t, e))
        check(e.get("first_action_ms_median", -1) >= 0 and e.get("total_ms_median", -1) >= 0,
              "%s times: %s" % (t, e))
    o = right["overall"]
    check(o["runs"] == 8 and o["success"] == 8 and o["success_rate"] == 1, "overall: %s" % o)
    check(o["cached_tokens"] >= 64 and o["cached_tokens"] == sum(
        t["cached_tokens"] for t in right["tasks"]), "the server's cached tokens: %s" % o)
    check(o["prompt_tokens"] == sum(t["prompt_tokens"] for t in right["tasks"]),
          "overall prompt tokens are the tasks' sum")
    check(len(reqs) == 8, "one LLM request per run: %d" % len(reqs))
    check(sum(1 for q in reqs if q["body"].get("stream")) == 8, "runs stream by default")

    # every run is recorded in the store like any mission
    lg = subprocess.run([ALOFT, "log", "--db", db, "--json"], capture_output=True, text=True)
    missions = json.loads(lg.stdout) if lg.returncode == 0 else []
    check(len(missions) == 8 and sorted({m["task"] for m in missions}) ==
          sorted(task_text(t) for t in TASKS), "store: %s %s" % (lg.stdout[:300], lg.stderr))

    # the HTML page: a chart and each task's numbers
    with open(os.path.join(tmp, "right.html")) as f:
        page = f.read()
    check(page.startswith("<!DOCTYPE html>") and page.count("<svg") == 2,
          "html has two charts")
    for t in TASKS:
        check(page.count(t) >= 3, "html names %s in both charts and the table" % t)
    check("100 %" in page and "Median first-action" in page, "html shows the success rates")

    # wrong plans: flown, scored, failed; exit 0 all the same
    wrong_json = os.path.join(tmp, "wrong.json")
    r, reqs = fly(tmp, replies(wrong), ["--json", "--no-stream"])
    check(r.returncode == 0, "wrong plans are scored: exit %d %s" % (r.returncode, r.stderr))
    doc = json.loads(r.stdout)
    spec_document(doc, "wrong plans", nullable=("first_action_ms_median",))
    with open(wrong_json, "w") as f:
        f.write(r.stdout)
    for t in TASKS:
        e = by_task(doc)[t]
        check(e["runs"] == SETUPS[t] and e["success"] == 0 and e["success_rate"] == 0,
              "%s: the wrong plan fails its check: %s" % (t, e))
    check(doc["overall"]["runs"] == 4 and doc["overall"]["success"] == 0, "wrong overall")
    check(all(q["body"].get("stream") is False for q in reqs), "--no-stream reaches the runs")

    # --candidates 2: an invalid and the right plan in one reply to n = 2;
    # the checker drops the invalid one and the right one flies every time
    script = [{"match": "Task: " + task_text(t), "choices": ["fly((( to the moon", reference(t)]}
              for t in TASKS]
    r, reqs = fly(tmp, script, ["--json", "--candidates", "2"])
    check(r.returncode == 0, "candidates: exit %d %s" % (r.returncode, r.stderr))
    doc = json.loads(r.stdout) if r.returncode == 0 else {"overall": {}}
    check(doc["overall"].get("runs") == 4 and doc["overall"].get("success") == 4,
          "candidates: the right one of each pair flies: %s" % doc["overall"])
    check(len(reqs) == 4 and all(q["body"].get("n") == 2 and q["body"].get("stream") is False
                                 for q in reqs), "candidates reach the runs: %s" % [
        (q["body"].get("n"), q["body"].get("stream")) for q in reqs])
    r = aloft_eval(["--candidates", "9", task_dir(TASKS[0])])
    check(r.returncode == 2 and "1..8" in r.stderr, "eval --candidates 9: %d %s" % (
        r.returncode, r.stderr))

    # invalid plans: every try refused by the checker, tries exhausted
    r, reqs = fly(tmp, replies(lambda t: "fly((( to the moon"), ["--json", "--max-tries", "2"])
    check(r.returncode == 0, "invalid plans are scored: exit %d %s" % (r.returncode, r.stderr))
    doc = json.loads(r.stdout)
    spec_document(doc, "invalid plans", nullable=("first_action_ms_median",))
    for t in TASKS:
        e = by_task(doc)[t]
        check(e["success"] == 0 and e["tries_mean"] == 2 and e["first_action_ms_median"] is None,
              "%s: invalid plans exhaust the tries: %s" % (t, e))
    check(len(reqs) == 8, "two tries for each of four runs: %d requests" % len(reqs))

    # the table: a line per task and overall, with the runs and successes
    r, _ = fly(tmp, replies(reference), [])
    check(r.returncode == 0, "table: exit %d %s" % (r.returncode, r.stderr))
    lines = r.stdout.splitlines()
    check(len(lines) == 2 + len(TASKS) + 1 and lines[1].split()[:3] == ["task", "runs", "ok"],
          "table layout: %r" % r.stdout)
    for t in TASKS:
        row = [l.split() for l in lines if l.startswith(t)]
        n = str(SETUPS[t])
        check(len(row) == 1 and row[0][1:4] == [n, n, "100"], "table row %s: %s" % (t, row))
    check(lines[-1].split()[:4] == ["overall", "4", "4", "100"], "overall row: %r" % lines[-1])

    # a slow server: still scored, and the first action waits for the plan
    fast = right["overall"]["first_action_ms_median"]
    r, _ = fly(tmp, replies(reference, first_token_ms=400), ["--json"])
    check(r.returncode == 0, "slow server: exit %d %s" % (r.returncode, r.stderr))
    slow = json.loads(r.stdout)
    check(slow["overall"]["success"] == 4, "slow server: runs succeed: %s" % slow["overall"])
    check(slow["overall"]["first_action_ms_median"] >= 400 > fast,
          "the server's delay shows in first-action time: %s vs %s" %
          (slow["overall"]["first_action_ms_median"], fast))

    # --jobs: two flights wait for the slow server at once (one at a time,
    # requests are at least the server's 1.5 s delay apart)
    r, reqs = fly(tmp, replies(reference, first_token_ms=1500), ["--json", "--jobs", "3"])
    check(r.returncode == 0 and json.loads(r.stdout)["overall"]["success"] == 4,
          "--jobs 3: %s %s" % (r.stdout[:200], r.stderr))
    times = sorted(q["t"] for q in reqs)
    check(len(times) == 4 and min(b - a for a, b in zip(times, times[1:])) < 1.0,
          "--jobs 3: requests overlap: %s" % times)

    # Ctrl-C (to the process group, as a terminal sends it) while the flights
    # wait for a slow server: no run scored, no further flight, exit 1
    fake = Fake(tmp, replies(reference, first_token_ms=30000))
    p = subprocess.Popen([ALOFT, "eval", "--llm-url", fake.url, "--model", "fake", "--json"]
                         + [task_dir(t) for t in TASKS], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env(), cwd=SRC,
                         start_new_session=True)
    deadline = time.monotonic() + 60  # only against a flight that never asks
    while not fake.requests() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=120)
    reqs = fake.requests()
    fake.stop()
    check(p.returncode == 1 and "cancelled" in err, "Ctrl-C: exit %s %s" % (p.returncode, err))
    doc = json.loads(out) if out.strip() else {}
    check(doc.get("overall", {}).get("runs") == 0, "Ctrl-C: nothing scored: %s" % out)
    check(len(reqs) == 1, "Ctrl-C: no further flight: %d requests" % len(reqs))

    # --compare: the right and the wrong runs side by side
    right_json = os.path.join(tmp, "right.json")
    with open(right_json, "w") as f:
        json.dump(right, f)
    r = aloft_eval(["--compare", right_json, wrong_json])
    check(r.returncode == 0, "compare: exit %d %s" % (r.returncode, r.stderr))
    rows = {l.split()[0]: l.split()[1:] for l in r.stdout.splitlines()[3:] if l.strip()}
    for t in TASKS:
        check(rows.get(t, [])[:2] == ["100", "0"], "compare %s: %s" % (t, rows.get(t)))
    check(rows.get("overall", [])[:2] == ["100", "0"], "compare overall: %s" % r.stdout)
    r = aloft_eval(["--compare", right_json])
    check(r.returncode == 2, "compare with one file: exit %d" % r.returncode)
    r = aloft_eval(["--compare", right_json, os.path.join(tmp, "right.html")])
    check(r.returncode == 1 and "not an `aloft eval --json` document" in r.stderr,
          "compare with a page: %d %s" % (r.returncode, r.stderr))

    # an unreachable server: exit 1, says so, and stops after the first
    # failure; without TASK_DIR, from elsewhere, the whole suite beside the build
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    # (a model name with an invalid byte: the document stays valid UTF-8)
    r = aloft_eval(["--llm-url", "http://127.0.0.1:%d/v1" % port, "--model", "fake\udcff",
                    "--json", "--repeat", "3"], cwd=tmp)
    check(r.returncode == 1 and "could not be reached" in r.stderr,
          "unreachable: exit %d %s" % (r.returncode, r.stderr))
    doc = json.loads(r.stdout)
    spec_document(doc, "unreachable", nullable=("success_rate", "tries_mean", "replans_mean",
                                                "first_action_ms_median", "total_ms_median"))
    check(doc["overall"]["runs"] == 0, "nothing scored: %s" % doc["overall"])
    check(doc["model"] == "fake\ufffd", "invalid UTF-8 replaced: %r" % doc["model"])
    check([t["task"] for t in doc["tasks"]] == sorted(os.path.basename(d) for d in glob.glob(
        os.path.join(BENCH, "[0-9]*"))), "the default suite: %s" % doc["tasks"])
    check("(45 of 45 runs not scored)" in r.stderr and r.stderr.count("eval: [") == 1,
          "unreachable: the runs not scored are counted: %s" % r.stderr)

    # usage errors and bad input
    for args, what in ((["--repeat", "0"], "--repeat"), (["--repeat", "1001"], "--repeat"),
                       (["--jobs", "0"], "--jobs"), (["--jobs", "65"], "--jobs"),
                       (["--price-in", "-1"], "--price-in"), (["--price-out", "nan"], "--price-out"),
                       (["--max-tries", "0"], "--max-tries"),
                       # the flight options follow run's rules (cli_flight_option)
                       (["--seed", "1000000001"], "--seed"), (["--seed", "-1"], "--seed"),
                       (["--time-scale", "-0.5"], "--time-scale"),
                       (["--time-scale", "nan"], "--time-scale"),
                       (["--llm-timeout-ms", "0"], "--llm-timeout-ms"),
                       (["--max-replans", "x"], "--max-replans")):
        r = aloft_eval(["--model", "m"] + args)
        check(r.returncode == 2 and what in r.stderr, "%s: %d %s" % (args, r.returncode, r.stderr))
    # At the limits the flight options are taken and passed on: every run
    # starts (and finds no server) rather than failing on its arguments.
    r = aloft_eval(["--llm-url", "http://127.0.0.1:%d/v1" % port, "--model", "m", "--seed",
                    "1000000000", "--time-scale", "2.5", "--max-replans", "0",
                    task_dir(TASKS[0])])
    check(r.returncode == 1 and "could not be reached" in r.stderr,
          "flight options at their limits: %d %s" % (r.returncode, r.stderr))
    r = aloft_eval([task_dir(TASKS[0])])
    check(r.returncode == 2 and "model" in r.stderr, "no model: %d %s" % (r.returncode, r.stderr))
    r = aloft_eval(["--model", "m", tmp])
    check(r.returncode == 1 and "task.txt" in r.stderr, "not a task dir: %s" % r.stderr)
    broken = os.path.join(tmp, "suite", "01-broken")
    os.makedirs(broken)
    with open(os.path.join(broken, "task.txt"), "w") as f:
        f.write("Go.\n")
    with open(os.path.join(broken, "scene.json"), "w") as f:
        f.write("{}")
    with open(os.path.join(broken, "check.json"), "w") as f:
        f.write("{\"ok\": tru")
    r = aloft_eval(["--model", "m", os.path.join(tmp, "suite")])
    check(r.returncode == 1 and "check.json" in r.stderr, "broken check: %s" % r.stderr)
    r = aloft_eval(["--help"])
    check(r.returncode == 0 and "--repeat" in r.stdout and "--compare" in r.stdout, "--help")

if failures:
    print("%d failure(s)" % failures)
    sys.exit(1)
print("ok")
