#!/usr/bin/env bash
# labels: constraints safety
# No path from a plan or script reaches the driver without the constraint
# check (SPEC §10): a MiniSpec plan, a built-in high-level skill, a user Lua
# skill, a user MiniSpec skill, and `aloft lua` (also through pcall and
# coroutines) all try to leave the geofence, climb above max_z and make a
# move longer than max_move. Each must be refused or clamped, recorded as a
# violation, and the drone must end inside the limits.
set -u
ALOFT=${ALOFT:-build/aloft}
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

cat >"$tmp/scene.json" <<'JSON'
{"limits": {"geofence_radius": 300, "min_z": 40, "max_z": 200, "max_move": 250},
 "objects": [{"class": "person", "x": 0, "y": 500, "w": 50, "d": 30, "h": 175}]}
JSON
mkdir "$tmp/skills"
cat >"$tmp/skills/escape.lua" <<'LUA'
return {
  name = "escape", description = "tries to leave the limits", args = {}, returns = "bool",
  run = function()
    move_forward(400)
    for _ = 1, 5 do move_forward(200) end
    move_up(1000)
    move_down(1000)
    move_up(1000)
    return true
  end,
}
LUA
cat >"$tmp/skills/escape_ms.lua" <<'LUA'
return {
  name = "escape_ms", description = "tries to leave the limits, in MiniSpec", args = {},
  returns = "bool", minispec = "mf(400);5{mf(200)};mu(1000);->True",
}
LUA

# Checks a report: drone inside the limits, at least N violations whose reasons
# name the constraints.
check() {
  local what=$1 file=$2 min=$3
  "$PY" - "$file" "$min" "$what" <<'PY' || fails=$((fails + 1))
import json, math, sys
d = json.load(open(sys.argv[1])); want = int(sys.argv[2]); what = sys.argv[3]
p = d.get("pose")
errs = []
reasons = " ".join(v["reason"] for v in d["violations"])
if len(d["violations"]) < want: errs.append(f"{len(d['violations'])} violations, want >= {want}")
for word in ("geofence", "longest move"):
    if word not in reasons: errs.append(f"no '{word}' violation")
if p is not None:
    if math.hypot(p["x"], p["y"]) > 300 + 1e-6: errs.append(f"left the geofence: {p}")
    if p["z"] > 200 + 1e-6: errs.append(f"above max_z: {p}")
if errs: print(f"FAIL {what}: " + "; ".join(errs) + f"\n  {json.dumps(d)[:600]}")
sys.exit(1 if errs else 0)
PY
}

# 1. A MiniSpec plan.
echo "mf(400);5{mf(200)};mu(1000);md(1000);mu(1000)" |
  "$ALOFT" run --scene "$tmp/scene.json" --plan - --json >"$tmp/1.json" 2>/dev/null
check "minispec plan" "$tmp/1.json" 2

# 2. A built-in high-level skill (approach flies toward a person beyond the fence).
echo "a('person');a('person');5{a}" |
  "$ALOFT" run --scene "$tmp/scene.json" --plan - --json >"$tmp/2.json" 2>/dev/null
"$PY" -c "
import json, math, sys
d = json.load(open('$tmp/2.json')); p = d['pose']
ok = math.hypot(p['x'], p['y']) <= 300 and any('geofence' in v['reason'] for v in d['violations'])
sys.exit(0 if ok else 1)" || fail "built-in skill: $(head -c 400 "$tmp/2.json")"

# 3. A user Lua skill and 4. a user MiniSpec skill, called from a plan.
for s in escape escape_ms; do
  echo "$s" | "$ALOFT" run --scene "$tmp/scene.json" --skills "$tmp/skills" --plan - --json \
    >"$tmp/$s.json" 2>"$tmp/$s.err"
  check "user skill $s" "$tmp/$s.json" 2
done

# 5. aloft lua, directly and through pcall, coroutines and skill tables.
cat >"$tmp/direct.lua" <<'LUA'
move_forward(400)
for _ = 1, 5 do move_forward(200) end
pcall(move_left, 400)
coroutine.wrap(function() move_right(400) end)()
local f = move_backward
f(400)
move_up(1000)
-- The driver is out of reach: no debug, no package, no require.
assert(debug == nil and package == nil and require == nil)
LUA
"$ALOFT" lua --scene "$tmp/scene.json" --json "$tmp/direct.lua" >"$tmp/5.json" 2>/dev/null
# aloft lua reports each call and what it returned (a refused motion returns
# false): judged from that output alone.
"$PY" -c "
import json, sys
d = json.load(open('$tmp/5.json'))
rets = [(c['skill'], c['args'][0], c['ret']) for c in d['calls'] if c['skill'].startswith('move_')]
# Exactly the first move_forward(200) passes; the next ones would leave the
# 300 cm fence; 400 cm moves exceed max_move; move_up is clamped and passes.
want = [('move_forward', 400, False), ('move_forward', 200, True)] + \
       [('move_forward', 200, False)] * 4 + \
       [('move_left', 400, False), ('move_right', 400, False), ('move_backward', 400, False),
        ('move_up', 1000, True)]
sys.exit(0 if d['ok'] and rets == want else 1)
" || fail "aloft lua calls: $(head -c 800 "$tmp/5.json")"

if [ $fails = 0 ]; then echo "test_constraints_paths: ok"; fi
[ $fails = 0 ]
