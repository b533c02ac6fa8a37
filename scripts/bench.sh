#!/usr/bin/env bash
# make bench: builds the benchmark programs (tests/bench/bench_*.c) and runs
# them all through `aloft bench`, which prints one table and writes
# build/bench.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
export SRC=${SRC:-$root}
cmake --build "$build" --target benches aloft >/dev/null
exec "$build/aloft" bench --out "$build/bench.json" "$@"
