#!/usr/bin/env bash
# Fuzzes the scenario loader and one simulated run with libFuzzer under
# AddressSanitizer + UndefinedBehaviorSanitizer, for SECONDS (default 60).
#   tools/fuzz.sh            60 s, as tools/run-tests.sh runs it
#   tools/fuzz.sh 3600       an hour; the corpus in build-fuzz/corpus grows across runs
#   tools/fuzz.sh 60 swf     the SWF trace reader and replay instead (seeds: tests/fuzz/swf)
#   tools/fuzz.sh 60 protocol  the live mode's wire protocol (seeds: tests/fuzz/protocol)
#   tools/fuzz.sh 60 report    the report's plan CSV reader and plan section (seeds: tests/fuzz/report)
#   tools/fuzz.sh 60 ray-serve Ray Serve config import and export (seeds: examples/ray-serve, tests/fuzz/ray-serve)
# Seeds: the bundled scenarios and tests/fuzz/regressions. A crash leaves its
# input in build-fuzz/artifacts/; once fixed it belongs in
# tests/fuzz/regressions/, which CTest replays on every build.
# VRAMSIM_FUZZ_DIR=DIR fuzzes in an existing build folder configured with
# -DVRAMSIM_FUZZ=ON instead of configuring build-fuzz/;
# VRAMSIM_FUZZ_NO_BUILD=1 takes its binary as built, and VRAMSIM_FUZZ_WORK=W
# keeps the corpus and artifacts in W (the CTest test fuzz.scenario, which
# tools/run-tests.sh registers, runs it so).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
[[ "$secs" =~ ^[0-9]+$ ]] && [ "$secs" -ge 1 ] && [ "$secs" -le 604800 ] \
  || { echo "fuzz: SECONDS: expected a whole number from 1 to 604800, got '$secs'" >&2; exit 2; }
dir=${VRAMSIM_FUZZ_DIR:-build-fuzz}
work=${VRAMSIM_FUZZ_WORK:-$dir}
case ${2:-scenario} in
  scenario) target=fuzz_scenario corpus=$work/corpus seeds=(scenarios tests/fuzz/regressions) ;;
  swf) target=fuzz_swf corpus=$work/corpus-swf seeds=(tests/fuzz/swf) ;;
  protocol) target=fuzz_protocol corpus=$work/corpus-protocol seeds=(tests/fuzz/protocol) ;;
  report) target=fuzz_report corpus=$work/corpus-report seeds=(tests/fuzz/report) ;;
  ray-serve) target=fuzz_ray_serve corpus=$work/corpus-ray-serve seeds=(examples/ray-serve tests/fuzz/ray-serve) ;;
  *) echo "fuzz: expected the target scenario, swf, protocol, report or ray-serve, got '$2'" >&2; exit 2 ;;
esac
if [ "${VRAMSIM_FUZZ_NO_BUILD:-0}" = 1 ]; then
  [ -x "$dir/tests/fuzz/$target" ] || { echo "fuzz: $dir/tests/fuzz/$target is not built" >&2; exit 1; }
elif [ -n "${VRAMSIM_FUZZ_DIR:-}" ]; then
  grep -q '^VRAMSIM_FUZZ:BOOL=ON' "$dir/CMakeCache.txt" 2>/dev/null \
    || { echo "fuzz: $dir is not configured with -DVRAMSIM_FUZZ=ON" >&2; exit 1; }
  cmake --build "$dir" -j "${VRAMSIM_JOBS:-$(nproc)}" --target "$target"
else
  cxx=${VRAMSIM_FUZZ_CXX:-}
  if [ -z "$cxx" ]; then
    for c in clang++-14 clang++; do
      if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
    done
  fi
  [ -n "$cxx" ] || { echo "fuzz: clang++ not found (tools/setup.sh installs clang)" >&2; exit 1; }
  VRAMSIM_TARGETS=$target tools/build.sh build-fuzz -DCMAKE_CXX_COMPILER="$cxx" -DVRAMSIM_FUZZ=ON \
    -DVRAMSIM_TESTS=OFF -DVRAMSIM_BENCHMARKS=OFF -DVRAMSIM_CUDA=OFF
fi
mkdir -p "$corpus" "$work/artifacts"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# -timeout: seconds per input; -rss_limit_mb: memory per process. A valid
# input may take seconds in the sanitizer build on busy cores: a replica that
# fails in its constructor after one has started is replaced every 0.1 s
# control loop, as Ray Serve does, and one input doing so for 10 minutes of
# simulated time (10,500 failures, 5,000 requests) took over 10 s. 60 s still
# stops a run that never ends.
"$dir/tests/fuzz/$target" -max_total_time="$secs" -timeout=60 -rss_limit_mb=2048 \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
  "$corpus" "${seeds[@]}"
