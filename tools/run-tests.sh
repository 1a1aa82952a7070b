#!/usr/bin/env bash
# Installs, builds and runs every test, in one build: clang with
# AddressSanitizer + UndefinedBehaviorSanitizer and line tables (ASan's
# reports still name file and line), which is also the libFuzzer build; one
# of its tests fuzzes the scenario format for 60 s (fuzz.scenario, beside
# the live tests that mostly wait on SLURM).
# The simulation's hot libraries are built at -O1, everything else at -O0,
# and the test sources without line tables (GoogleTest's own messages name
# file and line): half the compile time, and the simulated tests stay fast. Each source is
# compiled once, each library as one source (a unity build: its headers
# parsed once, not once per file). CTest runs each GoogleTest suite as one
# test (VRAMSIM_TESTS_BY_SUITE): a process per test, with the sanitizers'
# start and leak check, cost more than most tests themselves. Where a CUDA toolkit is found, the CUDA probe (which the
# sanitizers cannot instrument) is built in build/ and its tests run there.
#   VRAMSIM_TEST_RELEASE=1   also build everything with gcc -O2 in build/ and
#                            run the whole suite there (twice the time)
#   VRAMSIM_CTEST_JOBS=N     tests at once (default: the cores plus six, one
#                            per SLURM cluster of the live tests, which
#                            mostly wait on SLURM and the wall)
#   VRAMSIM_FUZZ_SECONDS=N   the fuzzing time (default 60; 0: none)
# Build with tools/build.sh (-O2 -g) before taking benchmark figures.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cores=${VRAMSIM_JOBS:-$(nproc)}
ctest_jobs=${VRAMSIM_CTEST_JOBS:-$((cores + 6))}

cxx=${VRAMSIM_FUZZ_CXX:-}
if [ -z "$cxx" ]; then
  for c in clang++-14 clang++; do
    if command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
  done
fi
fuzz=(-DCMAKE_CXX_COMPILER="$cxx" -DVRAMSIM_FUZZ=ON)
# GCC 12 warns falsely (-Warray-bounds on std::string) at -O1: without clang, -O2.
asan_opt="-O0 -g1 -DNDEBUG" hot_opt=-O1
[ -n "$cxx" ] || { echo "run-tests: clang++ not found; the sanitizer build uses the default compiler, no fuzzing"
                   fuzz=(); asan_opt="-O2 -g1 -DNDEBUG" hot_opt=; }
fuzz_seconds=${VRAMSIM_FUZZ_SECONDS:-60}
[ -n "$cxx" ] || fuzz_seconds=0
VRAMSIM_OPT="$asan_opt" tools/build.sh build-asan -DVRAMSIM_SANITIZE=ON -DVRAMSIM_BENCHMARKS=OFF \
  -DVRAMSIM_HOT_OPT="$hot_opt" -DVRAMSIM_TEST_OPT="-O0 -g0" -DVRAMSIM_FUZZ_SECONDS="$fuzz_seconds" \
  -DVRAMSIM_UNITY=ON -DVRAMSIM_TESTS_BY_SUITE=ON "${fuzz[@]}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# fuzz.scenario, the fuzzer, is one of these tests.
(cd build-asan && ctest --output-on-failure -j "$ctest_jobs")

unset ASAN_OPTIONS UBSAN_OPTIONS
if [ "${VRAMSIM_TEST_RELEASE:-0}" = 1 ]; then
  VRAMSIM_OPT="-O2 -DNDEBUG" tools/build.sh build
  (cd build && ctest --output-on-failure -j "$ctest_jobs")
elif command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  VRAMSIM_OPT="-O2 -DNDEBUG" VRAMSIM_TARGETS="test_cuda_probe" tools/build.sh build -DVRAMSIM_BENCHMARKS=OFF -DVRAMSIM_TEST_OPT="-O0 -g0"
  (cd build && ctest --output-on-failure -j "$ctest_jobs" -L cuda_probe)
fi
