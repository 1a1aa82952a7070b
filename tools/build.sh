#!/usr/bin/env bash
# Configures and builds vramsim into build/ (or $1), passing extra CMake args.
#   tools/build.sh                    release build in build/
#   tools/build.sh build-asan -DVRAMSIM_SANITIZE=ON
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
jobs=${VRAMSIM_JOBS:-$(nproc)}
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >"$dir.configure.log" 2>&1 \
  || { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" -j "$jobs"
