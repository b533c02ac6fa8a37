#!/usr/bin/env python3
"""Mutation testing of the safety code: does `make test` notice when a rule
breaks?

    scripts/mutate.py [--sample N] [--seed S] [--only SUBSTRING] [--timeout S] [--jobs N]

The mutants are listed in tests/mutants.json, one small source change each:

    {"file": "host/drone/constraints.c",
     "find": "st->battery <= g->lim.battery_reserve",   exact text, once in the file
     "replace": "st->battery < g->lim.battery_reserve",
     "op": "boundary",                                  the kind of change
     "label": "constraints",                            the ctest label of its tests
                                                        (several: "tello|mission")
     "test": ["test_mavlink_fly px4"],                  optional: its own tests
     "equivalent": "why no test can tell"}              optional, see below

For each mutant the runner copies the source tree to build-mutate/src (the
work tree is never touched), applies the change, builds only what its tests
run (the CLI, the C tests among them, the test tools they use), and runs
them two at a time with a short timeout: the tests of its label (the
quickest first), or, when the label pulls in slow tests (missions against
an emulator), the short, sharp tests of its own `test` list, in that order
("NAME ARGUMENTS": a test CTest knows, run with its command and environment,
ARGUMENTS added; e.g. the parts of a test file that accepts names). The
mutant is `killed` as soon as a test fails (or times out) and `survived`
when all pass. A mutant whose change cannot be observed is
`equivalent` only with the written reason kept in the list, and is not run.
A change that does not compile is `invalid`: an error of the list, not a kill.

Prints a table and writes build/mutate.json:
    {"mutants": [{"file", "line", "change", "status", "test"}]}
Exit status 0 when no mutant survived and every mutant compiled.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.join(ROOT, "build-mutate")
SRC = os.path.join(WORK, "src")
BIN = os.path.join(WORK, "bin")
TREE = ["CMakeLists.txt", "cmake", "host", "sandbox", "lua", "skills", "prompts", "web",
        "tests", "examples"]


def sh(cmd, timeout=None, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)


def sync_file(src, dst):
    """Copies SRC over DST when their bytes differ. The copy gets a new mtime,
    so whatever was built from an older (perhaps mutated) DST is rebuilt."""
    with open(src, "rb") as f:
        data = f.read()
    try:
        with open(dst, "rb") as f:
            if f.read() == data:
                return
    except FileNotFoundError:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "wb") as f:
        f.write(data)
    shutil.copymode(src, dst)


def copy_tree():
    """A private copy of the sources; mutants are applied there only."""
    for name in TREE:
        top = os.path.join(ROOT, name)
        if os.path.isfile(top):
            sync_file(top, os.path.join(SRC, name))
            continue
        for d, _, files in os.walk(top):
            for f in files:
                src = os.path.join(d, f)
                sync_file(src, os.path.join(SRC, os.path.relpath(src, ROOT)))
        # A file deleted from the work tree goes from the copy too: its glob
        # would still compile it.
        for d, _, files in os.walk(os.path.join(SRC, name)):
            for f in files:
                copy = os.path.join(d, f)
                if not os.path.exists(os.path.join(ROOT, os.path.relpath(copy, SRC))):
                    os.remove(copy)


def locate(m, top=ROOT):
    """The text of M's file under TOP and the line of its change (1-based)."""
    path = os.path.join(top, m["file"])
    with open(path) as f:
        text = f.read()
    n = text.count(m["find"])
    if n != 1:
        raise ValueError(f"{m['file']}: {m['find']!r} occurs {n} times, want exactly once")
    return text, text[: text.index(m["find"])].count("\n") + 1


# How long each test took when it passed, kept between runs in
# build-mutate/times.json: the tests of a label run the quickest first, so
# that a mutant is killed as early as can be.
TIMES = {}
TIMES_FILE = os.path.join(WORK, "times.json")


def load_times():
    """TIMES as kept, else CTest's own record of the release build's runs."""
    try:
        with open(os.path.join(ROOT, "build", "Testing", "Temporary", "CTestCostData.txt")) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3:
                    TIMES[parts[0]] = float(parts[2])
    except (OSError, ValueError):
        pass
    try:
        with open(TIMES_FILE) as f:
            TIMES.update(json.load(f))
    except (OSError, ValueError):
        pass


def save_times():
    with open(TIMES_FILE, "w") as f:
        json.dump(TIMES, f, indent=1, sort_keys=True)


def ctest_tests():
    """{name: (command, environment, working directory, labels)} of every
    test CTest knows in BIN."""
    out = sh(["ctest", "--show-only=json-v1"], cwd=BIN).stdout
    tests = {}
    for t in json.loads(out)["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        env = dict(e.split("=", 1) for e in props.get("ENVIRONMENT", []))
        # no command for a C test not built yet
        tests[t["name"]] = (t.get("command"), env, props.get("WORKING_DIRECTORY", BIN),
                            props.get("LABELS", []))
    return tests


def selected(m, known):
    """The tests of mutant M as (name, extra arguments): its own `test`
    list ("test_name [arguments]", run in this order) when it has one, else
    every test of its label, the quickest first (by TIMES)."""
    if m.get("test"):
        runs = [tuple(t.split()) for t in m["test"]]
        runs = [(r[0], list(r[1:])) for r in runs]
    else:
        labels = set(m["label"].split("|"))
        names = [n for n, t in known.items() if labels & set(t[3])]
        runs = [(n, []) for n in sorted(names, key=lambda n: (TIMES.get(n, 30.0), n))]
    for name, _ in runs:
        if name not in known:
            raise ValueError(f"{m['file']}: no test named {name!r}")
    return runs


def build(targets, timeout):
    r = sh(["cmake", "--build", BIN, "-j", str(os.cpu_count() or 2), "--target"] + targets,
           timeout=timeout)
    return r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_tests(runs, known, timeout, jobs):
    """Runs RUNS, JOBS at a time, each in a process group of its own, until
    one fails or is past TIMEOUT seconds. Returns (the failing test or
    None, seconds). As soon as one fails the mutant is killed: the others
    are stopped, and so is whatever a test left running (a mutant can leave
    processes hanging)."""
    t0 = time.monotonic()
    # the tests' temporary files go to a directory of this run: tests killed
    # with SIGKILL cannot clean up after themselves
    scratch = tempfile.mkdtemp(prefix="aloft-mutant-")
    todo, running, failed = list(runs), [], None
    try:
        while (todo or running) and failed is None:
            while todo and len(running) < jobs:
                name, args = todo.pop(0)
                cmd, env, cwd, _ = known[name]
                p = subprocess.Popen(cmd + args, cwd=cwd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True,
                                     env=dict(os.environ, **env, TMPDIR=scratch))
                running.append((p, " ".join([name] + args), time.monotonic()))
            time.sleep(0.05)
            for run in list(running):
                p, what, started = run
                if p.poll() is None:
                    if time.monotonic() - started > timeout:
                        failed = what + " (timed out)"
                    continue
                running.remove(run)
                kill_group(p)  # what it left running
                if p.returncode != 0:
                    failed = what
                else:
                    TIMES[what] = round(time.monotonic() - started, 1)
    finally:
        for p, _, _ in running:
            kill_group(p)
            p.wait()
        shutil.rmtree(scratch, ignore_errors=True)
    return failed, time.monotonic() - t0


def sources_of(path, seen):
    """The text of the test file PATH and of the helpers in tests/ it
    imports or includes, recursively."""
    if path in seen or not os.path.isfile(path):
        return ""
    seen.add(path)
    with open(path, errors="replace") as f:
        text = f.read()
    here = os.path.join(ROOT, "tests")
    for mod in re.findall(r"^\s*(?:from|import)\s+(\w+)", text, re.M):
        text += sources_of(os.path.join(here, mod + ".py"), seen)
    for inc in re.findall(r'#include\s+"([\w.]+)"', text):
        text += sources_of(os.path.join(here, inc), seen)
    return text


def targets_for(runs, known):
    """The CLI, the C tests among RUNS and the test tools they use."""
    tools = [os.path.splitext(f)[0] for f in os.listdir(os.path.join(ROOT, "tests", "tools"))
             if f.endswith(".c")]
    c_tests = sorted({n for n, _ in runs if os.path.exists(os.path.join(ROOT, "tests", n + ".c"))})
    text, seen = "", set()
    for name, _ in runs:
        for ext in (".c", ".py", ".sh"):
            text += sources_of(os.path.join(ROOT, "tests", name + ext), seen)
    used = [t for t in tools if re.search(r"\b" + t + r"\b", text)]
    return ["aloft"] + sorted(used) + c_tests


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", default=os.path.join(ROOT, "tests", "mutants.json"))
    ap.add_argument("--sample", type=int, default=0, help="run only N mutants, drawn by --seed")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--only", default="", help="only mutants whose file contains this")
    ap.add_argument("--timeout", type=int, default=120,
                    help="seconds per test (a hang counts as a kill)")
    ap.add_argument("--jobs", type=int, default=2, help="tests run at once")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "mutate.json"))
    args = ap.parse_args()
    t_start = time.monotonic()

    with open(args.list) as f:
        mutants = [m for m in json.load(f) if args.only in m["file"]]
    for m in mutants:
        _, m["line"] = locate(m)  # a stale list fails here, before any build
    if args.sample and args.sample < len(mutants):
        rng = random.Random(args.seed)
        mutants = sorted(rng.sample(mutants, args.sample), key=mutants.index)

    copy_tree()
    r = sh(["cmake", "-S", SRC, "-B", BIN, "-DCMAKE_BUILD_TYPE=RelWithDebInfo"])
    if r.returncode:
        sys.exit("mutate: cmake failed:\n" + r.stderr[-3000:])
    known = ctest_tests()
    load_times()
    try:
        runs = {id(m): selected(m, known) for m in mutants}
    except ValueError as e:
        sys.exit(f"mutate: {e}")
    for m in mutants:
        if not runs[id(m)]:
            sys.exit(f"mutate: no test carries the label {m['label']!r}")
    ok, log = build(sorted({t for m in mutants for t in targets_for(runs[id(m)], known)}), 1800)
    if not ok:
        sys.exit("mutate: the unmutated tree does not build:\n" + log)
    known = ctest_tests()  # now with the commands of the C tests just built

    results = []
    print(f"{'status':<10} {'file:line':<38} {'op':<10} {'s':>5}  test", flush=True)
    for m in mutants:
        change = f"{m['find']} -> {m['replace']}"
        row = {"file": m["file"], "line": m["line"], "change": change, "status": "", "test": None}
        path = os.path.join(SRC, m["file"])
        original, _ = locate(m, SRC)  # the copy: the work tree may change meanwhile
        t0 = time.monotonic()
        try:
            if m.get("equivalent"):
                row["status"] = "equivalent"
                row["reason"] = m["equivalent"]
            else:
                with open(path, "w") as f:
                    f.write(original.replace(m["find"], m["replace"], 1))
                # only what its tests run: the CLI, their tools, the C tests
                ok, log = build(targets_for(runs[id(m)], known), 600)
                if not ok:
                    # Not a kill: the list must hold changes that compile.
                    row["status"] = "invalid"
                    row["reason"] = "does not compile: " + log.strip().splitlines()[-1][:200]
                    print(log, file=sys.stderr)
                else:
                    failed, _ = run_tests(runs[id(m)], known, args.timeout, args.jobs)
                    row["status"] = "killed" if failed else "survived"
                    row["test"] = failed
        finally:
            with open(path, "w") as f:
                f.write(original)
        row["seconds"] = round(time.monotonic() - t0, 1)
        results.append(row)
        print(f"{row['status']:<10} {m['file'] + ':' + str(m['line']):<38} {m['op']:<10} "
              f"{row['seconds']:>5.0f}  {row['test'] or row.get('reason', '')}", flush=True)
    save_times()

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"mutants": results}, f, indent=1)
    count = {s: sum(r["status"] == s for r in results)
             for s in ("killed", "survived", "equivalent", "invalid")}
    print(f"{count['killed']} killed, {count['survived']} survived, "
          f"{count['equivalent']} equivalent, {count['invalid']} invalid "
          f"in {time.monotonic() - t_start:.0f} s (with the first build); {args.out}")
    return 1 if count["survived"] or count["invalid"] else 0


if __name__ == "__main__":
    sys.exit(main())
