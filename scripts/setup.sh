#!/usr/bin/env bash
# Installs the Debian 12 packages aloft builds and tests with (SPEC §16), but
# only those that are missing, so that a ready machine pays nothing.
set -euo pipefail

runtime_pkgs="liblua5.4-dev lua5.4 libcurl4-openssl-dev libcjson-dev libsqlite3-dev
libopencv-dev libmicrohttpd-dev cmake pkg-config make gcc g++ python3"
test_pkgs="python3 python3-onnx python3-numpy darknet clang libclang-rt-14-dev sqlite3 clang-format
chromium chromium-driver python3-selenium lcov nodejs"

want="$runtime_pkgs"
if [ "${1:-}" = "--test" ]; then want="$want $test_pkgs"; fi

root=$(cd "$(dirname "$0")/.." && pwd)

missing=""
for p in $want; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing="$missing $p"
  fi
done

# Debian's nodejs comes without npm; other builds of nodejs bring their own.
if [ "${1:-}" = "--test" ] && ! command -v npm >/dev/null; then missing="$missing npm"; fi

if [ -n "$missing" ]; then
  echo "setup: installing$missing" >&2
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  # shellcheck disable=SC2086
  $sudo apt-get install -y -q --no-install-recommends $missing
fi

# The tokenizer of make bench (js-tiktoken, pinned by tests/bench/node's
# package-lock.json): installed once, then every count runs offline.
node_dir="$root/tests/bench/node"
if [ "${1:-}" = "--test" ] && [ ! -d "$node_dir/node_modules/js-tiktoken" ]; then
  echo "setup: npm ci in tests/bench/node" >&2
  (cd "$node_dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
