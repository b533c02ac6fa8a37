#!/usr/bin/env python3
"""Mutation testing of the safety code: does `make test` notice when a rule
breaks?

    scripts/mutate.py [--sample N] [--seed S] [--only SUBSTRING] [--timeout S]

The mutants are listed in tests/mutants.json, one small source change each:

    {"file": "host/drone/constraints.c",
     "find": "st->battery <= g->lim.battery_reserve",   exact text, once in the file
     "replace": "st->battery < g->lim.battery_reserve",
     "op": "boundary",                                  the kind of change
     "label": "constraints",                            the ctest label of its tests
                                                        (several: "tello|mission")
     "equivalent": "why no test can tell"}              optional, see below

For each mutant the runner copies the source tree to build-mutate/src (the
work tree is never touched), applies the change, builds the CLI, the tools
and the C tests of the label, and runs `ctest -L LABEL` with a short
timeout. The mutant is `killed` when a test fails (or times out) and
`survived` when all pass. A mutant whose change cannot be observed is
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
import threading
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


def tests_of(label):
    out = sh(["ctest", "-N", "-L", "^(" + label + ")$"], cwd=BIN).stdout
    return re.findall(r"Test +#\d+: (\S+)", out)


def build(targets, timeout):
    r = sh(["cmake", "--build", BIN, "-j", str(os.cpu_count() or 2), "--target"] + targets,
           timeout=timeout)
    return r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


def run_tests(label, timeout):
    """Returns (first failing test or None, seconds). The tests run in a
    process group of their own, which is killed as soon as one test fails
    (the mutant is killed; the others need not finish) or when the run is
    past its time: a mutant can leave processes hanging that hold ctest's
    pipes open."""
    t0 = time.monotonic()
    # the tests' temporary files go to a directory of this run: tests killed
    # with SIGKILL cannot clean up after themselves
    scratch = tempfile.mkdtemp(prefix="aloft-mutant-")
    p = subprocess.Popen(["ctest", "-L", "^(" + label + ")$", "--timeout", str(timeout),
                          "-j", "2"], cwd=BIN, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True,
                         env=dict(os.environ, TMPDIR=scratch))

    late = []

    def kill():
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def too_late():
        late.append(True)
        kill()

    timer = threading.Timer(timeout * 2 + 60, too_late)
    timer.start()
    failed = None
    for line in p.stdout:
        m = re.search(r"Test +#\d+: (\S+) .*\*\*\*", line)
        if m:
            failed = m.group(1)
            break
    timer.cancel()
    kill()  # the rest of the tests, and whatever a mutant left running
    p.wait()
    shutil.rmtree(scratch, ignore_errors=True)
    if failed is None and (late or p.returncode != 0):
        failed = "timeout" if late else "ctest"
    return failed, time.monotonic() - t0


def targets_for(tests):
    """The CLI, the test tools and the C tests among TESTS."""
    tools = [os.path.splitext(f)[0] for f in os.listdir(os.path.join(ROOT, "tests", "tools"))
             if f.endswith(".c")]
    c_tests = [t for t in tests if os.path.exists(os.path.join(ROOT, "tests", t + ".c"))]
    return ["aloft"] + sorted(tools) + c_tests


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", default=os.path.join(ROOT, "tests", "mutants.json"))
    ap.add_argument("--sample", type=int, default=0, help="run only N mutants, drawn by --seed")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--only", default="", help="only mutants whose file contains this")
    ap.add_argument("--timeout", type=int, default=180,
                    help="seconds per test (a hang counts as a kill)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "mutate.json"))
    args = ap.parse_args()

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
    labels = sorted({m["label"] for m in mutants})
    tests = {lab: tests_of(lab) for lab in labels}
    for lab in labels:
        if not tests[lab]:
            sys.exit(f"mutate: no test carries the label {lab!r}")
    ok, log = build(sorted({t for lab in labels for t in targets_for(tests[lab])}), 1800)
    if not ok:
        sys.exit("mutate: the unmutated tree does not build:\n" + log)

    results, t_start = [], time.monotonic()
    print(f"{'status':<10} {'file:line':<38} {'op':<10} test")
    for m in mutants:
        change = f"{m['find']} -> {m['replace']}"
        row = {"file": m["file"], "line": m["line"], "change": change, "status": "", "test": None}
        path = os.path.join(SRC, m["file"])
        original, _ = locate(m, SRC)  # the copy: the work tree may change meanwhile
        try:
            if m.get("equivalent"):
                row["status"] = "equivalent"
                row["reason"] = m["equivalent"]
            else:
                with open(path, "w") as f:
                    f.write(original.replace(m["find"], m["replace"], 1))
                ok, log = build(targets_for(tests[m["label"]]), 600)
                if not ok:
                    # Not a kill: the list must hold changes that compile.
                    row["status"] = "invalid"
                    row["reason"] = "does not compile: " + log.strip().splitlines()[-1][:200]
                    print(log, file=sys.stderr)
                else:
                    failed, secs = run_tests(m["label"], args.timeout)
                    row["status"] = "killed" if failed else "survived"
                    row["test"] = failed
                    row["seconds"] = round(secs, 1)
        finally:
            with open(path, "w") as f:
                f.write(original)
        results.append(row)
        print(f"{row['status']:<10} {m['file'] + ':' + str(m['line']):<38} {m['op']:<10} "
              f"{row['test'] or row.get('reason', '')}", flush=True)

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"mutants": results}, f, indent=1)
    count = {s: sum(r["status"] == s for r in results)
             for s in ("killed", "survived", "equivalent", "invalid")}
    print(f"{count['killed']} killed, {count['survived']} survived, "
          f"{count['equivalent']} equivalent, {count['invalid']} invalid "
          f"in {time.monotonic() - t_start:.0f} s; {args.out}")
    return 1 if count["survived"] or count["invalid"] else 0


if __name__ == "__main__":
    sys.exit(main())
