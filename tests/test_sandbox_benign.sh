#!/usr/bin/env bash
# labels: sandbox
# Benign scripts print exactly what plain Lua 5.4 prints: the sandbox takes
# away reach, not behaviour (string formatting, tables, maths, closures,
# coroutines, metatables, string methods).
set -u
ALOFT=${ALOFT:-build/aloft}
SRC=${SRC:-.}
pass=0 failed=0
for f in "$SRC"/tests/benign/*.lua; do
    want=$(lua5.4 "$f" 2>&1)
    got=$("$ALOFT" lua "$f" 2>&1)
    if [ "$want" == "$got" ]; then
        pass=$((pass + 1))
    else
        failed=$((failed + 1))
        echo "FAIL $(basename "$f"): output differs from plain Lua"
        diff <(echo "$want") <(echo "$got") | head -20
    fi
done
echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
