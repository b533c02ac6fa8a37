#!/usr/bin/env bash
# make coverage: builds with gcov instrumentation in build-cov/, runs every
# test, and writes an HTML report of line and branch coverage to
# build-cov/coverage/index.html. Then prints the branch coverage of each
# safety file (SAFETY below) and fails if one is under COVERAGE_MIN percent.
set -euo pipefail
cd "$(dirname "$0")/.."

SAFETY="host/drone/constraints.c sandbox/sandbox.c sandbox/env.c"
MIN=${COVERAGE_MIN:-95}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
out=build-cov/coverage
rc="--rc lcov_branch_coverage=1"

cmake -S . -B build-cov -DCMAKE_BUILD_TYPE=Debug -DALOFT_COVERAGE=ON >/dev/null
cmake --build build-cov -j "$JOBS"
lcov $rc --quiet --zerocounters --directory build-cov
(cd build-cov && ctest -j "$JOBS" --output-on-failure ${CTEST_ARGS:-}) || echo "coverage: some tests failed (the report still counts what ran)" >&2

mkdir -p "$out"
lcov $rc --quiet --capture --directory build-cov --output-file "$out/all.info"
lcov $rc --quiet --extract "$out/all.info" "$PWD/host/*" "$PWD/sandbox/*" --output-file "$out/aloft.info"
genhtml $rc --quiet --branch-coverage --output-directory "$out" "$out/aloft.info"
echo "coverage: report in $out/index.html"

# Branch coverage of each safety file, from the tracefile's BRF/BRH lines.
status=0
for f in $SAFETY; do
  read -r hit found < <(awk -v f="$PWD/$f" '
    /^SF:/ { on = ($0 == "SF:" f) }
    on && /^BRH:/ { sub("BRH:", ""); h = $0 }
    on && /^BRF:/ { sub("BRF:", ""); n = $0 }
    END { print h + 0, n + 0 }' "$out/aloft.info")
  pct=$(awk -v h="$hit" -v n="$found" 'BEGIN { printf "%.1f", n ? 100 * h / n : 100 }')
  mark=met
  if awk -v p="$pct" -v m="$MIN" 'BEGIN { exit !(p < m) }'; then mark=MISSED; status=1; fi
  printf '%-32s branches %4d/%-4d %5s%%  (target %s%%: %s)\n' "$f" "$hit" "$found" "$pct" "$MIN" "$mark"
done
exit $status
