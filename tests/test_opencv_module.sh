#!/usr/bin/env bash
# OpenCV lives in a module opened on first use (host/vision/cvmod.h): the
# program links none of it, a command or mission that needs no vision runs
# without it, and one that needs it but cannot load it says so clearly.
set -u
ALOFT=${ALOFT:?} SRC=${SRC:?}
pass=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { # check DESCRIPTION CONDITION...
    local what=$1
    shift
    if "$@"; then pass=$((pass + 1)); else failed=$((failed + 1)); echo "FAIL $what"; fi
}
scene="$SRC/examples/benchmark/08-find-apple/scene.json"
photo=/usr/share/darknet/data/person.jpg

check "the program links no OpenCV library" sh -c "! ldd '$ALOFT' | grep -q opencv"
check "the module is built beside the program" [ -f "$(dirname "$ALOFT")/aloft-opencv.so" ]

# Without the module (it points nowhere): checking, a simulated flight and a
# picture of the simulated view all work.
export ALOFT_OPENCV_MODULE="$tmp/none.so"
echo "tc(90)" | "$ALOFT" check - >"$tmp/out" 2>&1
check "check runs without the module ($(cat "$tmp/out"))" [ $? -eq 0 ]
"$ALOFT" run --scene "$scene" --db "$tmp/m.db" --pictures "$tmp" --json --plan - \
    <<<"tc(135);_p=tp;l(_p)" >"$tmp/run.json" 2>"$tmp/run.err"
check "a simulated mission with take_picture runs without it ($(tail -2 "$tmp/run.err"))" [ $? -eq 0 ]
pic=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["logs"][0])' "$tmp/run.json")
check "the picture is a PNG ($pic)" sh -c "head -c 8 '$pic' | od -An -c | grep -q 'P   N   G'"

# A command that needs it says which file it tried and why, exit 1.
"$ALOFT" detect --detector hog "$photo" >"$tmp/out" 2>"$tmp/err"
r=$?
check "detect without the module fails (exit $r)" [ $r -eq 1 ]
check "and names the module and the file ($(cat "$tmp/err"))" \
    grep -q "OpenCV module.*none.so: cannot open shared object file" "$tmp/err"
"$ALOFT" run --scene "$scene" --db "$tmp/m.db" --detector hog --source "$photo" --json \
    --plan - <<<"?iv('person'){l('yes')}" >"$tmp/run.json" 2>"$tmp/run.err"
r=$?
check "a mission with a detector but no module fails (exit $r)" [ $r -eq 1 ]
check "with one JSON report naming the module" /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (d["ok"] is False and "OpenCV module" in d["error"] and not d["calls"]))' "$tmp/run.json"
# A file that is not the module, or not a shared object at all
ALOFT_OPENCV_MODULE=/etc/hostname "$ALOFT" detect --detector hog "$photo" 2>"$tmp/err"
check "a file that is no shared object is refused ($(cat "$tmp/err"))" grep -q "OpenCV module" "$tmp/err"
libz=$(ldconfig -p | awk '/libz\.so\.1 / {print $NF; exit}')
if [ -n "$libz" ]; then
    ALOFT_OPENCV_MODULE=$libz "$ALOFT" detect --detector hog "$photo" 2>"$tmp/err"
    check "another library is refused ($(cat "$tmp/err"))" grep -q "not aloft's OpenCV module" "$tmp/err"
fi

# With the module found beside the program, vision works.
unset ALOFT_OPENCV_MODULE
"$ALOFT" detect --detector hog "$photo" >"$tmp/out" 2>"$tmp/err"
check "detect with the module finds the person ($(cat "$tmp/err"))" grep -q "^person_1 " "$tmp/out"

echo "$pass passed, $failed failed"
[ "$failed" -eq 0 ]
