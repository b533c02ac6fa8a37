#!/usr/bin/env bash
# Installs the Debian 12 packages aloft builds and tests with (SPEC §16), but
# only those that are missing, so that a ready machine pays nothing.
set -euo pipefail

# darknet: its photos (/usr/share/darknet/data) are the README's vision
# example, and its yolov3-tiny cfg the benchmark's real-size network.
# libseccomp-dev: the system call filter that confines the Lua workers.
runtime_pkgs="liblua5.4-dev lua5.4 libcurl4-openssl-dev libcjson-dev libsqlite3-dev
libopencv-dev libpng-dev libmicrohttpd-dev libseccomp-dev cmake pkg-config make gcc
g++ python3 darknet"
test_pkgs="python3-onnx python3-numpy clang libclang-rt-14-dev sqlite3 clang-format
chromium chromium-driver python3-selenium lcov nodejs"

want="$runtime_pkgs"
if [ "${1:-}" = "--test" ]; then want="$want $test_pkgs"; fi

root=$(cd "$(dirname "$0")/.." && pwd)

# `make -j` runs the set-up of the build and of the tests at once; apt-get
# would then fail on its own lock. One set-up at a time: the second waits,
# then finds nothing missing.
lock="${TMPDIR:-/tmp}/aloft-setup-$(id -u).lock"
exec 9>"$lock"
flock 9

missing=""
for p in $want; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing="$missing $p"
  fi
done

# Debian's nodejs comes without npm; other builds of nodejs bring their own.
if [ "${1:-}" = "--test" ] && ! command -v npm >/dev/null; then missing="$missing npm"; fi

# apt's own output goes to a log: a person sees a line of progress, and the
# log's end when something fails.
log="${TMPDIR:-/tmp}/aloft-setup-$(id -u).log"
quietly() {
  if ! "$@" >>"$log" 2>&1; then
    echo "setup: '$*' failed; the end of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
}

if [ -n "$missing" ]; then
  echo "setup: installing$missing (apt's log: $log)" >&2
  : >"$log"
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  quietly $sudo apt-get update -q
  # shellcheck disable=SC2086
  quietly $sudo apt-get install -y -q --no-install-recommends $missing
fi

# The npm packages of the tests, each pinned by its directory's
# package-lock.json: the tokenizer of make bench (js-tiktoken) and the
# MAVLink peer of the vehicle emulator (node-mavlink). Installed once, then
# every test runs offline.
if [ "${1:-}" = "--test" ]; then
  for want in tests/bench/node:js-tiktoken tests/mavlink:node-mavlink; do
    node_dir="$root/${want%%:*}"
    if [ ! -d "$node_dir/node_modules/${want#*:}" ]; then
      echo "setup: npm ci in ${want%%:*}" >&2
      (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error >>"$log" 2>&1) || {
        echo "setup: npm ci failed; the end of $log:" >&2
        tail -n 20 "$log" >&2
        exit 1
      }
    fi
  done
fi
