#!/usr/bin/env bash
# The command line (SPEC §2): --help everywhere, exit codes 0/1/2, one JSON
# document with --json, options before or after positionals, `aloft skills`.
set -u
ALOFT=${ALOFT:-build/aloft}
pass=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect() { # expect STATUS DESCRIPTION -- COMMAND...
    local want=$1 what=$2
    shift 3
    "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    local got=$?
    if [ "$got" -eq "$want" ]; then
        pass=$((pass + 1))
    else
        failed=$((failed + 1))
        echo "FAIL $what: exit $got, want $want"
        head -5 "$tmp/err"
    fi
}
check() { # check DESCRIPTION CONDITION...
    local what=$1
    shift
    if "$@"; then pass=$((pass + 1)); else failed=$((failed + 1)); echo "FAIL $what"; fi
}

for cmd in check transpile run lua skills detect serve log bench; do
    expect 0 "$cmd --help" -- "$ALOFT" "$cmd" --help
    check "$cmd --help prints a usage line" grep -q "Usage: aloft $cmd" "$tmp/out"
    check "$cmd --help says what the exit status means" grep -q "^Exit status: 0" "$tmp/out"
    expect 0 "help $cmd" -- "$ALOFT" help "$cmd"
done
expect 0 "--help" -- "$ALOFT" --help
expect 0 "--version" -- "$ALOFT" --version
expect 2 "no command" -- "$ALOFT"
expect 2 "unknown command" -- "$ALOFT" fly
check "unknown command is named" grep -q "unknown command 'fly'" "$tmp/err"
expect 2 "unknown option" -- "$ALOFT" skills --frobnicate
# Every command parses through the shared option table: one message for an
# unknown option and one for a missing value, naming the option, and no
# second line from getopt itself.
for cmd in check transpile lua skills detect log eval run serve bench; do
    expect 2 "$cmd: unknown option" -- "$ALOFT" "$cmd" --frobnicate
    check "$cmd: unknown option is named once" \
        test "$(cat "$tmp/err")" = "aloft $cmd: unknown option '--frobnicate'
Try 'aloft $cmd --help'."
done
# A typo two edits away gets a suggestion; one further away does not.
expect 2 "run: a mistyped option" -- "$ALOFT" run --tme-scale 3
check "run: the typo is said once, with the option meant" \
    test "$(cat "$tmp/err")" = "aloft run: unknown option '--tme-scale' (did you mean '--time-scale'?)
Try 'aloft run --help'."
expect 2 "serve: a mistyped option with a value" -- "$ALOFT" serve --prot=8080
check "serve: the option meant, not the value" \
    grep -qx "aloft serve: unknown option '--prot' (did you mean '--port'?)" "$tmp/err"
# --candidates K: 1..8 on every command that plans (run, eval, serve).
for cmd in run eval serve; do
    for k in 0 9 x; do
        expect 2 "$cmd --candidates $k" -- "$ALOFT" $cmd --candidates $k
        check "$cmd --candidates $k says the range" \
            grep -q "aloft $cmd: --candidates: '$k' is not a number of plans in 1..8" "$tmp/err"
    done
done
expect 2 "run: three edits away" -- "$ALOFT" run --jzzzn
check "run: no suggestion three edits away" grep -qx "aloft run: unknown option '--jzzzn'" "$tmp/err"
for c in "log --db" "detect --model" "check --skills" "skills --skills" "run --scene"; do
    set -- $c
    expect 2 "$1: $2 without a value" -- "$ALOFT" "$1" "$2"
    check "$1: the missing value is named" grep -qx "aloft $1: $2 needs a value" "$tmp/err"
done
# An empty plan is valid (aloft run flies it as nothing) and said to be empty.
printf ' ;\n\n' >"$tmp/empty.ms"
expect 0 "check of an empty plan" -- "$ALOFT" check "$tmp/empty.ms"
check "an empty plan is called empty" grep -qx "ok (empty: the plan does nothing)" "$tmp/out"
echo "tc(90)" >"$tmp/turn.ms"
expect 0 "check of a plan" -- "$ALOFT" check "$tmp/turn.ms"
check "a plan with a statement is not called empty" grep -qx "ok (v2)" "$tmp/out"
# Without a scene, aloft lua says how to give its skills a drone.
echo 'turn_cw(90)' >"$tmp/turn.lua"
expect 1 "lua: a drone skill without a scene" -- "$ALOFT" lua "$tmp/turn.lua"
check "the message names --scene, and no option lua lacks" \
    sh -c "grep -q 'aloft lua flies the simulator with --scene FILE' '$tmp/err' && ! grep -q -- '--drone' '$tmp/err'"
expect 2 "lua without a script" -- "$ALOFT" lua
expect 2 "lua with a bad limit" -- "$ALOFT" lua --max-memory lots x.lua
# A cap too small for the Lua environment is a clear error, not an abort.
echo 'print(1)' >"$tmp/one.lua"
expect 1 "lua with a cap too small for its environment" -- "$ALOFT" lua --max-memory 8k "$tmp/one.lua"
check "the tiny cap is named" grep -q "the environment does not fit in 8192 bytes" "$tmp/err"
expect 1 "lua with a missing script" -- "$ALOFT" lua /nonexistent/script.lua
check "missing script is named" grep -q "cannot open '/nonexistent/script.lua'" "$tmp/err"

# options after the positional argument (GNU style)
echo 'log("hello")' >"$tmp/s.lua"
expect 0 "lua, options after the script" -- "$ALOFT" lua "$tmp/s.lua" --json --max-instructions 100000
check "lua --json is one JSON document" /usr/bin/python3 -c "
import json, sys
d = json.load(open('$tmp/out'))
assert d['ok'] is True and d['error'] is None and d['logs'] == ['hello'], d
assert d['calls'][0]['skill'] == 'log' and d['calls'][0]['args'] == ['hello'], d
assert d['instructions'] >= 0 and d['memory_peak'] > 0, d"

# oversized input is refused, not read forever
head -c 5000000 /dev/zero | tr '\0' ' ' >"$tmp/big.lua"
expect 1 "oversized script" -- "$ALOFT" lua "$tmp/big.lua"
check "oversized script says so" grep -q "larger than" "$tmp/err"

# skills: the built-ins with TypeFly's abbreviations, plus a user directory
mkdir -p "$tmp/skills"
cat >"$tmp/skills/wave.lua" <<'LUA'
return {name = "wave", description = "turn left and right", args = {},
        run = function() turn_ccw(20) turn_cw(20) return true end}
LUA
echo 'return {name = "broken"' >"$tmp/skills/broken.lua"
expect 0 "skills --json" -- "$ALOFT" skills --json
check "built-in abbreviations" /usr/bin/python3 -c "
import json
want = {'move_forward': 'mf', 'turn_ccw': 'tu', 'turn_cw': 'tc', 'is_visible': 'iv',
        'object_x': 'ox', 'take_picture': 'tp', 'probe': 'p', 'replan': 'rp', 'delay': 'd',
        'log': 'l', 'scan': 's', 'scan_abstract': 'sa', 'orienting': 'o', 'approach': 'a',
        'goto': 'g'}
got = {s['name']: s for s in json.load(open('$tmp/out'))}
for name, abbr in want.items():
    assert got[name]['abbr'] == abbr, (name, got[name]['abbr'])
assert got['move_forward']['level'] == 'low' and got['scan']['level'] == 'high'
assert got['turn_cw']['args'] == [{'name': 'degrees', 'type': 'int'}]
assert got['move_forward']['returns'] == 'bool' and got['move_forward']['description']"
expect 1 "skills with a broken file" -- "$ALOFT" skills --json --skills "$tmp/skills"
check "broken file named with its reason" grep -q "skills/broken.lua: .*expected" "$tmp/err"
check "user skill listed" /usr/bin/python3 -c "
import json
got = {s['name']: s for s in json.load(open('$tmp/out'))}
assert got['wave']['level'] == 'high' and got['wave']['abbr'] == 'w', got['wave']
assert 'broken' not in got"
expect 1 "skills with a missing directory" -- "$ALOFT" skills --skills "$tmp/nope"

echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
