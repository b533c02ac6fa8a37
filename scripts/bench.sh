#!/usr/bin/env bash
# make bench: runs every benchmark executable (build/bench_*), each with the
# path of a JSON file to write as its argument, collects them into
# build/bench.json ({"bench_NAME": {...}, ...}) and prints a table of every
# number they reported.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
export SRC=${SRC:-$root}
cmake --build "$build" --target benches >/dev/null || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
shopt -s nullglob
for exe in "$build"/bench_*; do
  [ -x "$exe" ] && [ -f "$exe" ] || continue
  name=$(basename "$exe")
  echo "== $name" >&2
  if ! (cd "$build" && "$exe" "$tmp/$name.json") >&2; then
    echo "$name failed" >&2
    status=1
  fi
done
/usr/bin/env python3 - "$tmp" "$build/bench.json" <<'PY'
import glob, json, os, sys
tmp, out = sys.argv[1], sys.argv[2]
results = {}
for path in sorted(glob.glob(os.path.join(tmp, "*.json"))):
    name = os.path.basename(path)[:-5]
    try:
        with open(path) as f:
            results[name] = json.load(f)
    except ValueError as e:
        results[name] = {"error": f"unreadable JSON: {e}"}
with open(out, "w") as f:
    json.dump(results, f, indent=2)
    f.write("\n")

def rows(prefix, v):
    """Every number in a result, with its unit when given as {"value", "unit"}."""
    if isinstance(v, dict) and "value" in v and isinstance(v["value"], (int, float)):
        yield prefix, v["value"], v.get("unit", "")
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from rows(f"{prefix}.{k}" if prefix else k, x)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from rows(f"{prefix}[{i}]", x)
    elif isinstance(v, (int, float)) and not isinstance(v, bool):
        yield prefix, v, ""

table = [(b, m, v, u) for b, r in results.items() for m, v, u in rows("", r)]
w1 = max([len(b) for b, *_ in table] + [9])
w2 = max([len(m) for _, m, *_ in table] + [6])
print(f"{'benchmark':<{w1}}  {'metric':<{w2}}  {'value':>14}  unit")
for b, m, v, u in table:
    print(f"{b:<{w1}}  {m:<{w2}}  {v:>14.6g}  {u}")
print(f"\nwritten to {out}")
PY
exit $status
