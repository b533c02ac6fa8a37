#!/usr/bin/env bash
# aloft run with real eyes (SPEC §11): --detector and --source give the
# mission the vision pipeline instead of the simulator's camera; on the
# simulator and on the Tello emulator.
set -u
ALOFT=${ALOFT:-build/aloft}
BUILD=${BUILD:-$(dirname "$ALOFT")}
PY=/usr/bin/python3
PHOTO=/usr/share/darknet/data/person.jpg
tmp=$(mktemp -d)
emu_pid=
trap '[ -n "$emu_pid" ] && kill $emu_pid 2>/dev/null; rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
json() { "$PY" -c "import json,sys; d=json.load(open('$1')); print($2)"; }
db="$tmp/aloft.db"
export ALOFT_DB="$db"

# An empty room: the simulator's camera sees no person in it.
echo '{"objects": [{"class": "apple", "x": 0, "y": 250, "z": 80, "w": 8, "d": 8, "h": 9}]}' \
    >"$tmp/room.json"
plan="?iv('person'){l('yes')};?iv('person')==False{l('no')}"

# The simulator's own camera (the default, --detector sim): no person.
echo "$plan" | "$ALOFT" run --quiet --scene "$tmp/room.json" --plan - --json >"$tmp/sim.json" ||
    fail "sim camera: exit $?"
[ "$(json "$tmp/sim.json" "d['logs']")" = "['no']" ] ||
    fail "sim camera logs: $(json "$tmp/sim.json" "d['logs']")"

# HOG on the photo: the simulated drone flies, the mission sees the person.
[ -r "$PHOTO" ] || fail "$PHOTO missing (Debian package darknet)"
echo "$plan" | "$ALOFT" run --scene "$tmp/room.json" --detector hog --source "$PHOTO" \
    --frame-timeout-ms 60000 --plan - --json >"$tmp/hog.json" 2>"$tmp/hog.err" ||
    fail "hog: exit $?: $(cat "$tmp/hog.err")"
[ "$(json "$tmp/hog.json" "d['logs']")" = "['yes']" ] ||
    fail "hog logs: $(json "$tmp/hog.json" "d['logs']")"
grep -q "vision: hog on $PHOTO" "$tmp/hog.err" || fail "hog: no vision line: $(cat "$tmp/hog.err")"

# yolo with a model that is not there: exit 1 before anything flies.
out=$(echo "l('x')" | "$ALOFT" run --scene "$tmp/room.json" --detector yolo \
    --detector-model "$tmp/none.onnx" --source "$PHOTO" --plan - 2>&1)
rc=$?
[ $rc = 1 ] || fail "missing model: exit $rc"
echo "$out" | grep -q "none.onnx: cannot read it" || fail "missing model message: $out"
! echo "$out" | grep -q "mission " || fail "missing model: a mission was started: $out"

# A model file that is not a model: the pipeline refuses it, exit 1, and
# the mission is recorded as failed.
echo "not a model" >"$tmp/bad.onnx"
out=$(echo "l('x')" | "$ALOFT" run --scene "$tmp/room.json" --detector yolo \
    --detector-model "$tmp/bad.onnx" --source "$PHOTO" --plan - 2>&1)
rc=$?
[ $rc = 1 ] || fail "bad model: exit $rc: $out"
echo "$out" | grep -q "bad.onnx" || fail "bad model message: $out"
id=$(echo "$out" | sed -n 's/^mission \([0-9]*\) .*/\1/p')
"$ALOFT" log --json "$id" >"$tmp/bad.json" || fail "log of the bad-model mission"
[ "$(json "$tmp/bad.json" "d['mission']['status']")" = "failed" ] ||
    fail "bad model recorded as $(json "$tmp/bad.json" "d['mission']['status']")"

# Usage errors: exit 2.
echo "l('x')" | "$ALOFT" run --scene "$tmp/room.json" --detector hog --plan - >/dev/null 2>&1
[ $? = 2 ] || fail "hog without --source in the simulator is a usage error"
echo "l('x')" | "$ALOFT" run --scene "$tmp/room.json" --source "$PHOTO" --plan - >/dev/null 2>&1
[ $? = 2 ] || fail "--source with the sim detector is a usage error"
echo "l('x')" | "$ALOFT" run --scene "$tmp/room.json" --detector yolo --plan - >/dev/null 2>&1
[ $? = 2 ] || fail "yolo without a model is a usage error"
echo "l('x')" | "$ALOFT" run --scene "$tmp/room.json" --detector owl --plan - >/dev/null 2>&1
[ $? = 2 ] || fail "an unknown detector is a usage error"
"$ALOFT" run --help | grep -q -- "--detector-model" || fail "run --help lacks the vision options"
"$ALOFT" run --help | grep -q -- "--tello-video-port" || fail "run --help lacks the Tello options"

# The Tello with a detector and an explicit --source: the real drone flies,
# the pipeline sees.
state_port=$("$PY" -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
"$BUILD/tello_emu" --port 0 --state-port "$state_port" --log "$tmp/emu.log" --speed 1000 \
    --max-runtime-s 120 >"$tmp/emu.out" &
emu_pid=$!
for _ in $(seq 1 500); do grep -q '^port ' "$tmp/emu.out" 2>/dev/null && break; sleep 0.02; done
port=$(sed -n 's/^port //p' "$tmp/emu.out")
if [ -z "$port" ]; then
    fail "tello_emu did not start"
else
    echo "mf(50);$plan" | "$ALOFT" run --drone tello:127.0.0.1 --tello-port "$port" \
        --tello-state-port "$state_port" --no-video --detector hog --source "$PHOTO" \
        --frame-timeout-ms 60000 --plan - --json >"$tmp/tello.json" 2>"$tmp/tello.err" ||
        fail "tello + hog: exit $?: $(cat "$tmp/tello.err")"
    [ "$(json "$tmp/tello.json" "d['logs']")" = "['yes']" ] ||
        fail "tello + hog logs: $(cat "$tmp/tello.json")"
    grep -q "recv forward 50" "$tmp/emu.log" && grep -q "recv land" "$tmp/emu.log" ||
        fail "tello + hog: commands $(grep recv "$tmp/emu.log" | tr '\n' '|')"

    # No --source: the camera is the Tello's video stream on --tello-video-port,
    # opened after streamon. The emulator sends no video: the stream does not
    # open, the mission fails clearly and the drone lands.
    n0=$(wc -l <"$tmp/emu.log")
    video_port=$("$PY" -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
    out=$(echo "$plan" | "$ALOFT" run --drone tello:127.0.0.1 --tello-port "$port" \
        --tello-state-port "$state_port" --tello-video-port "$video_port" --detector hog \
        --plan - 2>&1)
    rc=$?
    [ $rc = 1 ] || fail "tello video without a stream: exit $rc: $out"
    echo "$out" | grep -q "camera tello:$video_port: no video arrived" ||
        fail "tello video without a stream: message: $out"
    seq=$(tail -n +$((n0 + 1)) "$tmp/emu.log" | sed -n 's/^recv //p' | tr '\n' '|')
    case "$seq" in
    *streamon*takeoff*land*) ;;
    *) fail "tello video without a stream: commands $seq" ;;
    esac
fi

if [ $fails = 0 ]; then echo "test_run_vision: ok"; fi
[ $fails = 0 ]
