#!/usr/bin/env bash
# Installs, builds and runs every test, in one build: clang with
# AddressSanitizer + UndefinedBehaviorSanitizer, -O1 with line tables only
# (ASan's reports still name file and line), which is also the libFuzzer
# build; then fuzzes the scenario format for 60 s in it. Each source is
# compiled once. Where a CUDA toolkit is found, the CUDA probe (which the
# sanitizers cannot instrument) is built in build/ and its tests run there.
#   VRAMSIM_TEST_RELEASE=1   also build everything with gcc -O2 in build/ and
#                            run the whole suite there (twice the time)
#   VRAMSIM_CTEST_JOBS=N     tests at once (default: twice the cores; most
#                            of the live tests wait on SLURM and the wall)
# Build with tools/build.sh (-O2 -g) before taking benchmark figures.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
cores=${VRAMSIM_JOBS:-$(nproc)}
ctest_jobs=${VRAMSIM_CTEST_JOBS:-$((2 * cores))}

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
# The tests' own sources at -O0: a quarter less compile time, and what they
# exercise, the libraries, keeps -O1.
VRAMSIM_OPT="$asan_opt" tools/build.sh build-asan -DVRAMSIM_SANITIZE=ON -DVRAMSIM_BENCHMARKS=OFF \
  -DVRAMSIM_TEST_OPT=-O0 "${fuzz[@]}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-asan && ctest --output-on-failure -j "$ctest_jobs")

if [ -n "$cxx" ]; then
  VRAMSIM_FUZZ_DIR=build-asan tools/fuzz.sh "${VRAMSIM_FUZZ_SECONDS:-60}"
fi

unset ASAN_OPTIONS UBSAN_OPTIONS
if [ "${VRAMSIM_TEST_RELEASE:-0}" = 1 ]; then
  VRAMSIM_OPT="-O2 -DNDEBUG" tools/build.sh build
  (cd build && ctest --output-on-failure -j "$ctest_jobs")
elif command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  VRAMSIM_OPT="-O2 -DNDEBUG" VRAMSIM_TARGETS="test_cuda_probe" tools/build.sh build -DVRAMSIM_BENCHMARKS=OFF
  (cd build && ctest --output-on-failure -j "$ctest_jobs" -L cuda_probe)
fi
