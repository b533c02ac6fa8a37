#!/usr/bin/env bash
# Runs every libFuzzer harness built in build-fuzz/ (make build-fuzz) for
# SECONDS in total, split evenly between them. Each starts from a scratch
# copy of its seed corpus (tests/fuzz/corpus_NAME for fuzz_NAME), so the
# corpus in the source tree is never modified. Exits 1 if any fuzzer finds
# a crash, a leak or a broken property; its reproducer is kept in
# build-fuzz/fuzz-artifacts/. For each it prints executions, executions per
# second and, at the end, the totals.
#
# The safety campaign's harnesses (fuzz_plan_flight, fuzz_lua_flight) also
# leave a shrunk reproducer there, campaign-*.txt (plan or script, scene,
# seed, budgets); replay one with
#   build/test_campaign --replay build-fuzz/fuzz-artifacts/campaign-....txt
set -euo pipefail

seconds=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}

mapfile -t fuzzers < <(find "$build" -maxdepth 1 -type f -name 'fuzz_*' -perm -u+x | sort)
if [ ${#fuzzers[@]} -eq 0 ]; then
    echo "fuzz: no fuzzers in $build (run 'make build-fuzz')" >&2
    exit 1
fi
per=$((seconds / ${#fuzzers[@]}))
[ "$per" -ge 1 ] || per=1

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
status=0
total_execs=0
total_secs=0
for f in "${fuzzers[@]}"; do
    name=$(basename "$f")
    work="$scratch/$name"
    mkdir -p "$work/corpus" "$work/artifacts"
    seeds="$root/tests/fuzz/corpus_${name#fuzz_}"
    [ -d "$seeds" ] && cp -R "$seeds/." "$work/corpus/"
    echo "fuzz: $name for ${per}s ($(ls "$work/corpus" | wc -l) seeds)"
    start=$(date +%s.%N)
    if ALOFT_CAMPAIGN_OUT="$work/artifacts" "$f" -max_total_time="$per" -timeout=20 \
        -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$work/corpus" \
        >"$work/log" 2>&1; then
        secs=$(awk "BEGIN { print $(date +%s.%N) - $start }")
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
        execs=${execs:-0}
        total_execs=$((total_execs + execs))
        total_secs=$(awk "BEGIN { print $total_secs + $secs }")
        printf 'fuzz: %s: %d executions in %.0f s: %.0f executions/s\n' "$name" "$execs" \
            "$secs" "$(awk "BEGIN { print $execs / ($secs + 0.001) }")"
    else
        echo "fuzz: $name FAILED; last output:" >&2
        tail -n 40 "$work/log" >&2
        mkdir -p "$build/fuzz-artifacts"
        cp "$work/artifacts/"* "$build/fuzz-artifacts/" 2>/dev/null || true
        echo "fuzz: reproducers in $build/fuzz-artifacts/" >&2
        status=1
    fi
done
printf 'fuzz: total: %d executions in %.0f s: %.0f executions/s\n' "$total_execs" "$total_secs" \
    "$(awk "BEGIN { print $total_execs / ($total_secs + 0.001) }")"
exit $status
