# Every reference plan of examples/benchmark flies in the simulator and passes
# its task's success check (TypeFly's 12 tasks; task 11 in both setups), and
# every task's check rejects each of its plausible wrong plans (wrong.json:
# wrong object, wrong direction, wrong count, no answer).
import glob
import json
import os
import subprocess
import sys

src = os.environ.get("SRC", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
aloft = os.environ.get("ALOFT", os.path.join(src, "build", "aloft"))
bench = os.path.join(src, "examples", "benchmark")
suite = os.path.join(bench, "run_suite.py")
failed = False


def fly(extra, expected, what):
    global failed
    proc = subprocess.run([sys.executable, suite, "--aloft", aloft] + extra,
                          capture_output=True, text=True)
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    lines = [l for l in proc.stdout.splitlines() if l.startswith(("pass ", "FAIL "))]
    if len(lines) != expected:
        print(f"{what}: expected {expected} flights, got {len(lines)}")
        failed = True
    if proc.returncode != 0:
        print(f"{what}: run_suite.py exited {proc.returncode}")
        failed = True


tasks = sorted(d for d in glob.glob(os.path.join(bench, "[0-9]*")) if os.path.isdir(d))
fly([], 15, "reference plans")  # 12 tasks; 11 has two setups, 07 and 08 a windy one too

# Each task has wrong plans; count the flights they make (an entry without
# "setup" flies on every setup of its task).
wrong = 0
for t in tasks:
    path = os.path.join(t, "wrong.json")
    if not os.path.exists(path):
        print(f"{os.path.basename(t)}: no wrong.json: its check was never shown to reject a plan")
        failed = True
        continue
    n_setups = len(glob.glob(os.path.join(t, "*scene.json")))
    with open(path) as f:
        wrong += sum(1 if "setup" in e else n_setups for e in json.load(f))
fly(["--wrong"], wrong, "wrong plans")
sys.exit(1 if failed else 0)
