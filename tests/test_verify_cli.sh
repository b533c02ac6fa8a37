#!/usr/bin/env bash
# aloft check --verify and aloft run --verify (SPEC §14): exit codes, the
# text and JSON reports, and a run that must not take off.
set -u
ALOFT=${ALOFT:-build/aloft}
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# json FILE EXPR: a Python expression over the document d
json() { "$PY" -c "import json,sys; d=json.load(open('$1')); print($2)"; }

cat >"$tmp/low.json" <<'JSON'
{"limits": {"geofence_radius": 600, "min_z": 30, "max_z": 150},
 "objects": [{"class": "apple", "x": 0, "y": 250, "z": 80, "w": 8, "d": 8, "h": 9, "color": "red"},
             {"class": "person", "x": 0, "y": -300, "w": 50, "d": 30, "h": 175}]}
JSON
echo "tc(90);mu(20);tu(90);->True" >"$tmp/safe.ms"
echo "mu(500)" >"$tmp/up.ms"
echo "?iv('apple')==True{mf(700)};->True" >"$tmp/branch.ms"

# Usage errors: exit 2 with a message.
usage() { # usage "what" args...
  local what=$1; shift
  out=$("$ALOFT" "$@" 2>&1 </dev/null); rc=$?
  [ $rc = 2 ] || fail "$what: exit $rc, not 2"
  [ -n "$out" ] || fail "$what: no message"
}
usage "--verify without --scene" check --verify 5 "$tmp/safe.ms"
usage "--scene without --verify" check --scene "$tmp/low.json" "$tmp/safe.ms"
usage "--verify 0" check --verify 0 --scene "$tmp/low.json" "$tmp/safe.ms"
usage "--verify -3" check --verify -3 --scene "$tmp/low.json" "$tmp/safe.ms"
usage "--verify abc" check --verify abc --scene "$tmp/low.json" "$tmp/safe.ms"
usage "--verify too many" check --verify 10001 --scene "$tmp/low.json" "$tmp/safe.ms"
out=$("$ALOFT" check --verify 99999999 --scene "$tmp/low.json" "$tmp/safe.ms" 2>&1)
echo "$out" | grep -q "10000" || fail "the cap is not named: $out"
usage "--seed x" check --verify 2 --seed x --scene "$tmp/low.json" "$tmp/safe.ms"
usage "run --verify 0" run --verify 0 --scene "$tmp/low.json" --plan "$tmp/safe.ms"
usage "run --verify on a Tello without --scene" run --drone tello --verify 3 --plan "$tmp/safe.ms"
"$ALOFT" check --help | grep -q -- "--verify N" || fail "check --help names --verify"
"$ALOFT" run --help | grep -q -- "--verify N" || fail "run --help names --verify"

# A missing scene file is a failure (1), not a usage error.
"$ALOFT" check --verify 2 --scene "$tmp/none.json" "$tmp/safe.ms" >/dev/null 2>&1
[ $? = 1 ] || fail "missing scene: exit not 1"

# A safe plan: exit 0 and the summary line.
out=$("$ALOFT" check --verify 30 --scene "$tmp/low.json" "$tmp/safe.ms"); rc=$?
[ $rc = 0 ] || fail "safe plan: exit $rc"
echo "$out" | grep -qx "30 worlds: 30 passed, 0 failed" || fail "safe plan summary: $out"

# The low ceiling: every world fails, one line each, exit 1.
out=$("$ALOFT" check --verify 8 --scene "$tmp/low.json" "$tmp/up.ms"); rc=$?
[ $rc = 1 ] || fail "low ceiling: exit $rc"
[ "$(echo "$out" | grep -c '^world [0-9]*: violation: move_up: altitude band.*branch: 1:1 mu(500)$')" = 8 ] ||
  fail "low ceiling lines: $out"
echo "$out" | grep -qx "8 worlds: 0 passed, 8 failed" || fail "low ceiling summary: $out"

# JSON: one document, the check fields and "verify".
"$ALOFT" check --json --verify 20 --seed 4 --scene "$tmp/low.json" "$tmp/branch.ms" >"$tmp/b.json"; rc=$?
[ $rc = 1 ] || fail "branch: exit $rc"
[ "$(json "$tmp/b.json" "sorted(d.keys())")" = "['dialect', 'errors', 'ok', 'skills', 'verify']" ] ||
  fail "json keys: $(cat "$tmp/b.json")"
[ "$(json "$tmp/b.json" "d['verify']['worlds'], d['verify']['seed']")" = "20 4" ] || fail "verify header"
[ "$(json "$tmp/b.json" "0 < len(d['verify']['failed']) < 20 and d['verify']['passed'] + len(d['verify']['failed']) == 20")" = True ] ||
  fail "branch: some worlds fail: $(cat "$tmp/b.json")"
[ "$(json "$tmp/b.json" "all(sorted(w) == ['branch','calls','changes','kind','reason','world'] and w['kind'] == 'violation' and '1:1 ?iv(\'apple\')==True{ -> True' in w['branch'] for w in d['verify']['failed'])")" = True ] ||
  fail "failed world shape: $(cat "$tmp/b.json")"
# The same seed gives the same report.
"$ALOFT" check --json --verify 20 --seed 4 --scene "$tmp/low.json" "$tmp/branch.ms" >"$tmp/b2.json"
cmp -s "$tmp/b.json" "$tmp/b2.json" || fail "same seed, different report"

# An invalid plan: exit 1, errors, no verification.
echo "tc(45" | "$ALOFT" check --json --verify 3 --scene "$tmp/low.json" - >"$tmp/inv.json"; rc=$?
[ $rc = 1 ] || fail "invalid plan: exit $rc"
[ "$(json "$tmp/inv.json" "d['ok'], len(d['errors']) > 0, d['verify']")" = "False True None" ] ||
  fail "invalid plan json: $(cat "$tmp/inv.json")"

# A budget: an endless-looking loop.
out=$(echo "1000{1000{_1=1}}" | "$ALOFT" check --verify 2 --max-instructions 100000 --scene "$tmp/low.json" -); rc=$?
[ $rc = 1 ] || fail "budget: exit $rc"
[ "$(echo "$out" | grep -c '^world [01]: budget: instruction')" = 2 ] || fail "budget lines: $out"

# run --verify: a plan that fails verification never takes off.
"$ALOFT" run --verify 5 --scene "$tmp/low.json" --plan "$tmp/up.ms" --json --db "$tmp/m.db" \
  >"$tmp/r.json" 2>"$tmp/progress"; rc=$?
[ $rc = 1 ] || fail "run --verify refused: exit $rc"
[ "$(json "$tmp/r.json" "d['ok'], d['calls'], len(d['verify'][0]['failed']), 'verification' in d['error']")" = "False [] 5 True" ] ||
  fail "run --verify refused report: $(cat "$tmp/r.json")"
grep -q "move_up(500) ->\|\] > mu" "$tmp/progress" && fail "run --verify refused flew: $(cat "$tmp/progress")"
grep -q "^world 0: violation" "$tmp/progress" || fail "run --verify progress: $(cat "$tmp/progress")"
# ... and the refused run is recorded: failed, its plan, no skill call.
id=$(json "$tmp/r.json" "d['mission_id']")
"$ALOFT" log --db "$tmp/m.db" --json "$id" >"$tmp/log.json" || fail "log of the refused run"
[ "$(json "$tmp/log.json" "d['mission']['status'], 'verification' in d['mission']['error'], len(d['plans']), [e for e in d['events'] if e['kind'] == 'call']")" = "failed True 1 []" ] ||
  fail "refused run in the store: $(cat "$tmp/log.json")"
# ... and a safe plan flies after all worlds passed.
"$ALOFT" run --verify 5 --scene "$tmp/low.json" --plan "$tmp/safe.ms" --json --db "$tmp/m.db" \
  >"$tmp/r2.json" 2>/dev/null; rc=$?
[ $rc = 0 ] || fail "run --verify safe: exit $rc"
[ "$(json "$tmp/r2.json" "d['ok'], [c['skill'] for c in d['calls']], d['verify'][0]['passed']")" = "True ['turn_cw', 'move_up', 'turn_ccw'] 5" ] ||
  fail "run --verify safe report: $(cat "$tmp/r2.json")"

[ $fails = 0 ] && echo "all verify CLI tests passed"
exit $((fails > 0))
