# Every reference plan of examples/benchmark flies in the simulator and passes
# its task's success check (TypeFly's 12 tasks; task 11 in both setups).
import os
import subprocess
import sys

src = os.environ.get("SRC", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
aloft = os.environ.get("ALOFT", os.path.join(src, "build", "aloft"))
suite = os.path.join(src, "examples", "benchmark", "run_suite.py")
proc = subprocess.run([sys.executable, suite, "--aloft", aloft], capture_output=True, text=True)
sys.stdout.write(proc.stdout)
sys.stderr.write(proc.stderr)
lines = [l for l in proc.stdout.splitlines() if l.startswith(("pass ", "FAIL "))]
if len(lines) != 13:
    print(f"expected 13 setups (12 tasks, task 11 twice), got {len(lines)}")
    sys.exit(1)
sys.exit(proc.returncode)
