#!/usr/bin/env python3
"""Flies every task of the benchmark suite with its reference plan and checks
the outcome.

    examples/benchmark/run_suite.py [--aloft build/aloft] [--seed N] [--wrong] [TASK_DIR...]

Each task directory holds task.txt (the request, from TypeFly's Table 2),
plan.ms (our reference plan in MiniSpec), and one or more scene setups:
scene.json with check.json, or NAME.scene.json with NAME.check.json.
A check.json lists what must hold after the flight:

    ok, result          the report's "ok" and "result" values
    answer              the number the plan must give as its answer: the last
                        log line names it and no other number
    near                [{"object": ID, "max_cm": N}]  final distance to the box
    closer              [[A, B]]  ends nearer to A than to B
    facing              [{"object": ID, "max_deg": N}]  heading vs bearing to it
    logs_contain        ["text", ...]  each appears in some log line
    called              [{"skill": S, "args": [...], "ret": V}]  some call matches
    max_calls           {"moves": N}  at most N motion calls
    violations          allowed number of constraint violations (default 0)

wrong.json in a task directory lists plausible wrong plans, each
{"plan": MINISPEC, "mistake": WHY, "setup": NAME (optional: all setups)}.
With --wrong, the suite flies those instead, and a setup passes when its
check REJECTS the wrong plan: a check that accepts a wrong answer is a
check that judges nothing.

The flights are recorded in a scratch mission store (--db, default a
temporary file removed at the end), never in your own.

Exit status 0 when every setup passes.
"""
import re
import argparse
import glob
import json
import math
import os
import subprocess
import sys
import tempfile

MOVES = {"move_forward", "move_backward", "move_left", "move_right", "move_up",
         "move_down", "turn_cw", "turn_ccw"}


NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def box_distance(pose, o):
    lo = (o["x"] - o["w"] / 2, o["y"] - o["d"] / 2, o.get("z", 0))
    hi = (o["x"] + o["w"] / 2, o["y"] + o["d"] / 2, o.get("z", 0) + o["h"])
    p = (pose["x"], pose["y"], pose["z"])
    return math.sqrt(sum((p[i] - min(max(p[i], lo[i]), hi[i])) ** 2 for i in range(3)))


def bearing_error(pose, o):
    bearing = math.degrees(math.atan2(o["x"] - pose["x"], o["y"] - pose["y"])) % 360
    return abs((bearing - pose["yaw"] + 540) % 360 - 180)


def objects_by_id(scene):
    """Instance ids as the simulator assigns them: explicit ids, then CLASS_N."""
    objs, used = {}, {o["id"] for o in scene["objects"] if "id" in o}
    for o in scene["objects"]:
        oid = o.get("id")
        if not oid:
            n = 1
            while f'{o["class"]}_{n}' in used:
                n += 1
            oid = f'{o["class"]}_{n}'
            used.add(oid)
        objs[oid] = o
    return objs


def check(report, scene, want):
    """Returns a list of failed expectations (empty when the setup passes)."""
    fails = []
    objs = objects_by_id(scene)
    pose = report["pose"]

    def obj(oid):
        if oid not in objs:
            fails.append(f"check names unknown object {oid}")
            return None
        return objs[oid]

    for key in ("ok", "result"):
        if key in want and report.get(key) != want[key]:
            fails.append(f"{key} is {report.get(key)!r}, want {want[key]!r}"
                         + (f" (error: {report.get('error')})" if key == "ok" else ""))
    for n in want.get("near", []):
        o = obj(n["object"])
        if o is not None:
            d = box_distance(pose, o)
            if d > n["max_cm"]:
                fails.append(f"ended {d:.0f} cm from {n['object']}, want <= {n['max_cm']}")
    for a, b in want.get("closer", []):
        oa, ob = obj(a), obj(b)
        if oa is not None and ob is not None and box_distance(pose, oa) >= box_distance(pose, ob):
            fails.append(f"ended nearer to {b} than to {a}")
    for f in want.get("facing", []):
        o = obj(f["object"])
        if o is not None:
            e = bearing_error(pose, o)
            if e > f["max_deg"]:
                fails.append(f"heading is {e:.0f} deg off {f['object']}, want <= {f['max_deg']}")
    logs = report.get("logs", [])
    if "answer" in want:
        said = [float(n) for n in NUMBER.findall(logs[-1])] if logs else []
        if said != [float(want["answer"])]:
            fails.append(f"answer is {logs[-1] if logs else 'missing'!r}, "
                         f"want exactly the number {want['answer']}")
    for text in want.get("logs_contain", []):
        if not any(text in line for line in logs):
            fails.append(f"no log line contains {text!r} (logs: {logs})")
    calls = report.get("calls", [])
    for c in want.get("called", []):
        if not any(k["skill"] == c["skill"]
                   and ("args" not in c or k["args"] == c["args"])
                   and ("ret" not in c or k["ret"] == c["ret"]) for k in calls):
            fails.append(f"no call matches {c}")
    limit = want.get("max_calls", {}).get("moves")
    moves = sum(1 for k in calls if k["skill"] in MOVES)
    if limit is not None and moves > limit:
        fails.append(f"{moves} motion calls, want <= {limit}")
    allowed = want.get("violations", 0)
    if len(report.get("violations", [])) > allowed:
        fails.append(f"violations: {report['violations']}")
    return fails


def setups(task_dir):
    for scene_path in sorted(glob.glob(os.path.join(task_dir, "*scene.json"))):
        check_path = scene_path[: -len("scene.json")] + "check.json"
        name = os.path.basename(scene_path)[: -len("scene.json")].rstrip(".") or "-"
        yield name, scene_path, check_path


def flights(task_dir, wrong):
    """(label, plan text, scene, check) for each flight of a task: the
    reference plan on every setup, or with WRONG each wrong plan on its own."""
    task = os.path.basename(task_dir)
    if not wrong:
        with open(os.path.join(task_dir, "plan.ms")) as f:
            plan = f.read()
        for name, scene_path, check_path in setups(task_dir):
            yield f"{task} [{name}]", plan, scene_path, check_path
        return
    path = os.path.join(task_dir, "wrong.json")
    if not os.path.exists(path):
        return
    with open(path) as f:
        entries = json.load(f)
    for e in entries:
        for name, scene_path, check_path in setups(task_dir):
            if e.get("setup", name) == name:
                yield f"{task} [{name}] {e['mistake']}", e["plan"], scene_path, check_path


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Fly the benchmark suite's reference plans.")
    ap.add_argument("--aloft", default=os.environ.get("ALOFT", "build/aloft"))
    ap.add_argument("--seed", default="1")
    ap.add_argument("--wrong", action="store_true",
                    help="fly each task's wrong plans; pass when the check rejects them")
    ap.add_argument("--db", help="mission store to record the flights in "
                    "(default: a scratch store, removed at the end)")
    ap.add_argument("tasks", nargs="*")
    args = ap.parse_args()
    tasks = args.tasks or sorted(d for d in glob.glob(os.path.join(here, "[0-9]*")) if os.path.isdir(d))
    failed = total = 0
    pictures = tempfile.TemporaryDirectory(prefix="aloft-suite-")
    db = args.db or os.path.join(pictures.name, "suite.db")
    for task_dir in tasks:
        for label, plan, scene_path, check_path in flights(task_dir, args.wrong):
            total += 1
            proc = subprocess.run([args.aloft, "run", "--scene", scene_path, "--plan", "-",
                                   "--json", "--quiet", "--seed", args.seed,
                                   "--pictures", pictures.name, "--db", db], input=plan,
                                  capture_output=True, text=True, timeout=120)
            try:
                report = json.loads(proc.stdout)
            except ValueError:
                print(f"FAIL {label}: no JSON report (exit {proc.returncode}): {proc.stderr.strip()}")
                failed += 1
                continue
            with open(scene_path) as f:
                scene = json.load(f)
            with open(check_path) as f:
                want = json.load(f)
            fails = check(report, scene, want)
            if args.wrong and not fails:
                failed += 1
                print(f"FAIL {label}: the check accepts this wrong plan")
            elif args.wrong:
                print(f"pass {label}: rejected: " + "; ".join(fails))
            elif fails:
                failed += 1
                print(f"FAIL {label}: " + "; ".join(fails))
            else:
                p = report["pose"]
                print(f"pass {label}: pose ({p['x']:.0f}, {p['y']:.0f}, {p['z']:.0f}) "
                      f"yaw {p['yaw']:.0f}, {len(report['calls'])} calls")
    print(f"{total - failed}/{total} setups passed")
    return 1 if failed or not total else 0


if __name__ == "__main__":
    sys.exit(main())
