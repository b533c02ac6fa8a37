#!/usr/bin/env bash
# make demo: flies one task of the benchmark suite in the simulator with its
# reference plan, showing every statement and skill call as it happens, then
# the mission's log, where the drone ended and whether the task succeeded.
#
#   scripts/demo.sh [TASK_DIR]     (TIME_SCALE=3 by default: 3x real time)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
aloft=${ALOFT:-$root/build/aloft}
task=${1:-$root/examples/benchmark/08-find-apple}
scene=$(ls "$task"/*scene.json | head -1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The demo's missions go to a store of their own, not the user's.
db=${DEMO_DB:-$root/build/demo.db}

echo "Task:  $(cat "$task/task.txt")"
echo "Scene: $(python3 -c "import json; print(json.load(open('$scene')).get('description', ''))" 2>/dev/null || echo "$scene")"
echo "Plan:  $(cat "$task/plan.ms")"
echo
"$aloft" run --scene "$scene" --plan "$task/plan.ms" --time-scale "${TIME_SCALE:-3}" \
  --pictures "$tmp" --db "$db" --json >"$tmp/report.json"
echo
python3 - "$tmp/report.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("Log:    " + (" | ".join(d["logs"]) or "(nothing logged)"))
p = d["pose"]
print(f"Result: {d['result']}   ok: {d['ok']}   violations: {len(d['violations'])}")
print(f"Pose:   x {p['x']:.0f} cm, y {p['y']:.0f} cm, z {p['z']:.0f} cm, heading {p['yaw']:.0f} deg")
print(f"Time:   {d['exec_ms'] / 1000:.1f} s flying, first action after {d['first_action_ms'] or 0:.1f} ms")
PY
echo
python3 "$root/examples/benchmark/run_suite.py" --aloft "$aloft" "$task"
echo
echo "The demo's missions are recorded in $db: $aloft log --db $db"
