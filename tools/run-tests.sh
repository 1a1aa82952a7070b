#!/usr/bin/env bash
# Installs, builds and runs every test: once in a release build (gcc), once
# under AddressSanitizer + UndefinedBehaviorSanitizer (clang), then fuzzes
# the scenario format for 60 s with libFuzzer in that same sanitizer build.
# Neither test build carries full debug info, which costs the most compile
# and link time: the release one is -O2 without it, the sanitizer one -O1
# with line tables only (ASan's reports still name file and line). Build
# with tools/build.sh (-O2 -g) before taking benchmark figures.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
jobs=${VRAMSIM_JOBS:-$(nproc)}

VRAMSIM_OPT="-O2 -DNDEBUG" tools/build.sh build
(cd build && ctest --output-on-failure -j "$jobs")

# The sanitizer build is also the fuzzing build: its sources are compiled
# once, with the sanitizers and libFuzzer's coverage, for the tests and for
# the fuzz targets alike.
cxx=${VRAMSIM_FUZZ_CXX:-}
if [ -z "$cxx" ]; then
  for c in clang++-14 clang++; do
    if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
  done
fi
fuzz=(-DCMAKE_CXX_COMPILER="$cxx" -DVRAMSIM_FUZZ=ON)
# GCC 12 warns falsely (-Warray-bounds on std::string) at -O1: without clang, -O2.
asan_opt="-O1 -g1 -DNDEBUG"
[ -n "$cxx" ] || { echo "run-tests: clang++ not found; the sanitizer build uses the default compiler, no fuzzing"
                   fuzz=(); asan_opt="-O2 -g1 -DNDEBUG"; }
VRAMSIM_OPT="$asan_opt" tools/build.sh build-asan -DVRAMSIM_SANITIZE=ON -DVRAMSIM_BENCHMARKS=OFF "${fuzz[@]}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-asan && ctest --output-on-failure -j "$jobs")

if [ -n "$cxx" ]; then
  VRAMSIM_FUZZ_DIR=build-asan tools/fuzz.sh "${VRAMSIM_FUZZ_SECONDS:-60}"
fi
