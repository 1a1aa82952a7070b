#!/usr/bin/env bash
# Installs, builds and runs every test: once in a release build, once under
# AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
jobs=${VRAMSIM_JOBS:-$(nproc)}

tools/build.sh build
(cd build && ctest --output-on-failure -j "$jobs")

tools/build.sh build-asan -DVRAMSIM_SANITIZE=ON -DVRAMSIM_BENCHMARKS=OFF
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-asan && ctest --output-on-failure -j "$jobs")

# A bounded fuzzing run over the scenario format (clang and libFuzzer; setup
# installs them, but a machine without clang skips this step).
if command -v clang++-14 >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1; then
  tools/fuzz.sh "${VRAMSIM_FUZZ_SECONDS:-60}"
else
  echo "run-tests: clang++ not found; skipping the fuzzing run"
fi
