#!/usr/bin/env bash
# aloft run --plan and aloft lua --scene against the simulator (SPEC §2).
set -u
ALOFT=${ALOFT:-build/aloft}
SRC=${SRC:-.}
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# jq-like field access: json FILE EXPR (a Python expression over d)
json() { "$PY" -c "import json,sys; d=json.load(open('$1')); print($2)"; }

cat >"$tmp/room.json" <<'JSON'
{"limits": {"geofence_radius": 400},
 "objects": [{"class": "apple", "x": 0, "y": 250, "z": 80, "w": 8, "d": 8, "h": 9, "color": "red"},
             {"class": "person", "x": 0, "y": -300, "w": 50, "d": 30, "h": 175}]}
JSON

# --help and usage errors
"$ALOFT" run --help | grep -q -- "--plan" || fail "run --help"
"$ALOFT" run --plan - </dev/null >/dev/null 2>&1; [ $? = 2 ] || fail "run without --scene is a usage error"
"$ALOFT" run --scene "$tmp/room.json" >/dev/null 2>&1; [ $? = 2 ] || fail "run without --plan is a usage error"
"$ALOFT" run --scene "$tmp/room.json" --plan - --time-scale fast </dev/null >/dev/null 2>&1
[ $? = 2 ] || fail "bad --time-scale is a usage error"

# A bad scene file is rejected with a message naming the key.
echo '{"objects": [{"class": "cup", "x": 0, "y": 1, "w": 5, "d": 5, "hh": 9}]}' >"$tmp/bad.json"
out=$(echo "tc(90)" | "$ALOFT" run --scene "$tmp/bad.json" --plan - 2>&1); rc=$?
[ $rc = 1 ] || fail "bad scene: exit $rc"
echo "$out" | grep -q "bad.json: objects\[0\].hh: unknown key" || fail "bad scene message: $out"

# A full mission with the JSON report.
echo "s('person');g('person');l('arrived');->True" >"$tmp/plan.ms"
"$ALOFT" run --scene "$tmp/room.json" --plan "$tmp/plan.ms" --json >"$tmp/r.json" 2>"$tmp/progress"
[ $? = 0 ] || fail "mission exit status"
[ "$(json "$tmp/r.json" "d['ok'], d['result'], d['error'], d['logs']")" = "True True None ['arrived']" ] ||
  fail "mission report: $(cat "$tmp/r.json")"
for k in ok result error logs pose calls violations plans tries replans llm_calls plan_ms \
  first_action_ms exec_ms total_ms tokens; do
  [ "$(json "$tmp/r.json" "'$k' in d")" = True ] || fail "report lacks $k"
done
[ "$(json "$tmp/r.json" "d['tries'], d['replans'], d['llm_calls'], d['tokens']")" = \
  "1 0 0 {'prompt': 0, 'completion': 0}" ] || fail "counters"
[ "$(json "$tmp/r.json" "d['plans'] == [open('$tmp/plan.ms').read()]")" = True ] || fail "plans"
[ "$(json "$tmp/r.json" "isinstance(d['first_action_ms'], (int, float)) and 0 <= d['first_action_ms'] <= d['total_ms']")" = True ] ||
  fail "first_action_ms"
[ "$(json "$tmp/r.json" "170 < d['pose']['yaw'] < 190 and d['pose']['y'] < -150")" = True ] ||
  fail "pose after goto: $(json "$tmp/r.json" "d['pose']")"
[ "$(json "$tmp/r.json" "[c['skill'] for c in d['calls']][:3]")" = "['scan', 'is_visible', 'turn_cw']" ] ||
  fail "calls list high-level and inner calls in order"
# The progress lines, whole: the mission, each statement as it runs, each
# skill call with the simulated time, indented by call depth.
grep -Eq '^mission [0-9]+ \(recorded in .+\)$' "$tmp/progress" || fail "progress names the mission"
grep -Eq "^\[ *[0-9]+\.[0-9]{2}s\] scan\('person'\) -> True$" "$tmp/progress" ||
  fail "progress shows skill calls: $(cat "$tmp/progress")"
grep -Eq "^\[ *[0-9]+\.[0-9]{2}s\]   is_visible\('person'\) -> (True|False)$" "$tmp/progress" ||
  fail "progress indents inner calls"
grep -Eq "^\[ *[0-9]+\.[0-9]{2}s\] scan\('person'\) \.\.\.$" "$tmp/progress" ||
  fail "progress announces high-level calls"
grep -Eq "^\[ *0\.00s\] > s\('person'\)$" "$tmp/progress" || fail "progress shows statements"
grep -Eq '^\[ *[0-9]+\.[0-9]{2}s\] done, result True$' "$tmp/progress" || fail "progress says done"

# A plan the checker rejects: exit 1, diagnostics with line:col.
echo "tc(45);turnleft(3)" | "$ALOFT" run --scene "$tmp/room.json" --plan - --json >"$tmp/bad.out" 2>/dev/null
[ $? = 1 ] || fail "invalid plan exit status"
[ "$(json "$tmp/bad.out" "d['ok'] == False and d['error'].startswith('1:8:') and d['calls'] == []")" = True ] ||
  fail "invalid plan report: $(cat "$tmp/bad.out")"

# Geofence and obstacle refusals are violations; the skill returns False.
echo "_1=mf(500);_2=tc(180);_3=mf(400);->_1" | "$ALOFT" run --scene "$tmp/room.json" --plan - --json >"$tmp/v.json" 2>/dev/null
[ "$(json "$tmp/v.json" "d['result'], len(d['violations']), d['pose']['x'], d['pose']['y']")" = "False 2 0 0" ] ||
  fail "refusals: $(cat "$tmp/v.json")"
json "$tmp/v.json" "d['violations'][0]['reason']" | grep -q geofence || fail "geofence reason"
json "$tmp/v.json" "d['violations'][1]['reason']" | grep -q person_1 || fail "obstacle reason"

# 1000 iterations of a loop: instant at --time-scale 0 (1000 simulated seconds
# of turning would run into the 60 s wall-clock limit otherwise).
echo "1000{tc(1)}" | "$ALOFT" run --scene "$tmp/room.json" --plan - --json --time-scale 0 --timeout-ms 60000 >"$tmp/loop.json" 2>/dev/null
[ "$(json "$tmp/loop.json" "d['ok'], d['pose']['yaw'], len(d['calls'])")" = "True 280 1000" ] ||
  fail "1000-iteration loop: $(head -c 300 "$tmp/loop.json")"

# Same seed, same results with noise on; another seed differs.
"$PY" - "$tmp/room.json" "$tmp/noisy.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["noise"] = {"position_cm": 20, "miss_rate": 0.3}
json.dump(s, open(sys.argv[2], "w"))
PY
echo "_1=0;20{?iv('apple'){_1=_1+ox('apple')}};s('person');o('person');->_1" >"$tmp/noisy.ms"
strip="{k: v for k, v in d.items() if not k.endswith('_ms') and k != 'mission_id'} | {'calls': [{k: v for k, v in c.items() if k != 't_ms'} for c in d['calls']]}"
for seed in 7 7 8; do
  "$ALOFT" run --scene "$tmp/noisy.json" --plan "$tmp/noisy.ms" --json --seed $seed 2>/dev/null >"$tmp/n.json"
  json "$tmp/n.json" "$strip" >"$tmp/seed-$seed-$(ls "$tmp" | grep -c seed)"
done
a=$(ls "$tmp"/seed-7-* | head -1); b=$(ls "$tmp"/seed-7-* | tail -1)
cmp -s "$a" "$b" || fail "same seed gave different results"
cmp -s "$a" "$tmp"/seed-8-* && fail "different seeds gave identical results"

# Ctrl-C cancels at once and still prints the report.
echo "l('start');d(60000);l('never')" >"$tmp/long.ms"
"$ALOFT" run --scene "$tmp/room.json" --plan "$tmp/long.ms" --json --time-scale 1 >"$tmp/c.json" 2>"$tmp/c.err" &
pid=$!
for _ in $(seq 1 200); do grep -q "log('start')" "$tmp/c.err" 2>/dev/null && break; sleep 0.05; done
kill -INT $pid
wait $pid; rc=$?
[ $rc = 1 ] || fail "cancelled run exit $rc"
[ "$(json "$tmp/c.json" "d['ok'], 'cancel' in d['error'], d['logs']")" = "False True ['start']" ] ||
  fail "cancelled report: $(cat "$tmp/c.json")"

# aloft lua --scene flies scripts in the simulator.
printf "log(tostring(is_visible('apple')))\nlog(tostring(scan('person')))\n" >"$tmp/s.lua"
out=$("$ALOFT" lua --scene "$tmp/room.json" "$tmp/s.lua") || fail "lua --scene exit"
[ "$out" = "$(printf 'true\ntrue')" ] || fail "lua --scene output: $out"

if [ $fails = 0 ]; then echo "test_run: ok"; fi
[ $fails = 0 ]
