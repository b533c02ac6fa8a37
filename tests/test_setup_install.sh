#!/usr/bin/env bash
# The newcomer's set-up: `make -j` runs two set-ups at once and they must not
# fight over apt's lock; `make install` gives a binary that works from any
# directory, with the examples beside it.
set -u
ALOFT=${ALOFT:-build/aloft}
SRC=${SRC:-.}
BUILD=${BUILD:-build}
pass=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # check DESCRIPTION CONDITION...
    local what=$1
    shift
    if "$@"; then pass=$((pass + 1)); else failed=$((failed + 1)); echo "FAIL $what"; fi
}

# --- two set-ups at once ---------------------------------------------------
# A stand-in apt-get on PATH fails if another apt-get runs at the same time,
# as the real one does on /var/lib/apt/lists/lock; dpkg-query says every
# package is missing, so both set-ups install.
fake="$tmp/fakebin"
mkdir -p "$fake"
cat >"$fake/dpkg-query" <<'SH'
#!/bin/sh
echo "unknown ok not-installed"
SH
cat >"$fake/apt-get" <<'SH'
#!/bin/sh
mkdir "$FAKE_APT_LOCK" 2>/dev/null || { echo "E: Could not get lock" >&2; exit 100; }
echo "$*" >>"$FAKE_APT_CALLS"
sleep 0.3
rmdir "$FAKE_APT_LOCK"
SH
cat >"$fake/sudo" <<'SH'
#!/bin/sh
exec "$@"
SH
chmod +x "$fake"/*
run_setup() {
    PATH="$fake:$PATH" TMPDIR="$tmp" FAKE_APT_LOCK="$tmp/apt.lock" \
        FAKE_APT_CALLS="$tmp/apt.calls" bash "$SRC/scripts/setup.sh" >"$tmp/setup$1.out" 2>&1
}
run_setup 1 &
p1=$!
run_setup 2 &
p2=$!
wait $p1
r1=$?
wait $p2
r2=$?
check "first of two concurrent set-ups succeeds (exit $r1: $(tail -3 "$tmp/setup1.out"))" [ $r1 -eq 0 ]
check "second of two concurrent set-ups succeeds (exit $r2: $(tail -3 "$tmp/setup2.out"))" [ $r2 -eq 0 ]
check "both set-ups ran apt-get (update + install each)" [ "$(wc -l <"$tmp/apt.calls")" -eq 4 ]
# apt's chatter goes to the log, the terminal gets one line
check "a set-up prints one line, not apt's output" [ "$(wc -l <"$tmp/setup1.out")" -eq 1 ]
check "the line names each package once" \
    [ "$(tr ' ' '\n' <"$tmp/setup1.out" | grep -cx python3)" -eq 1 ]
# a failing install says so and shows the end of the log
cat >"$fake/apt-get" <<'SH'
#!/bin/sh
echo "E: Unable to locate package frobnicate" >&2
exit 100
SH
PATH="$fake:$PATH" TMPDIR="$tmp" bash "$SRC/scripts/setup.sh" >"$tmp/fail.out" 2>&1
r=$?
check "a failed apt-get fails the set-up (exit $r)" [ $r -ne 0 ]
check "and its error is shown" grep -q "Unable to locate package frobnicate" "$tmp/fail.out"

# --- make install ------------------------------------------------------------
prefix="$tmp/prefix"
if cmake --install "$BUILD" --prefix "$prefix" >"$tmp/install.out" 2>&1; then
    pass=$((pass + 1))
else
    failed=$((failed + 1))
    echo "FAIL cmake --install: $(tail -3 "$tmp/install.out")"
fi
bin="$prefix/bin/aloft"
check "the binary is installed" [ -x "$bin" ]
check "the benchmark suite is installed" [ -f "$prefix/share/aloft/examples/benchmark/08-find-apple/task.txt" ]
# From another directory, with nothing of the source tree in reach: the
# Lua runtime, the skills and the prompts are inside the binary.
mkdir -p "$tmp/elsewhere"
cd "$tmp/elsewhere" || exit 1
out=$("$bin" run --scene "$prefix/share/aloft/examples/scenes/office.json" --db "$tmp/m.db" \
    --json --plan - <<<"tc(90);mf(50);l('installed')" 2>"$tmp/run.err")
check "the installed aloft flies a plan from elsewhere ($(tail -2 "$tmp/run.err"))" \
    /usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(not (d["ok"] and d["logs"] == ["installed"]))' "$out"
check "the OpenCV module is installed" [ -f "$prefix/lib/aloft/aloft-opencv.so" ]
if [ -r /usr/share/darknet/data/person.jpg ]; then
    "$bin" detect --detector hog /usr/share/darknet/data/person.jpg >"$tmp/detect.out" 2>&1
    check "the installed aloft finds its OpenCV module ($(tail -2 "$tmp/detect.out"))" \
        grep -q "^person_1 " "$tmp/detect.out"
fi
check "the installed aloft lists its skills" sh -c "'$bin' skills | grep -q '^s  *high *scan'"
# `aloft eval` with no TASK_DIR finds the installed suite: it gets as far
# as the LLM (nothing listens on port 9), not a usage error about the suite.
"$bin" eval --llm-url http://127.0.0.1:9/v1 --model m --db "$tmp/e.db" >"$tmp/eval.out" 2>&1
r=$?
check "installed eval finds its suite (exit $r: $(tail -2 "$tmp/eval.out"))" [ $r -eq 1 ]
cd - >/dev/null || exit 1

echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
