#!/usr/bin/env bash
# Configures and builds vramsim into build/ (or $1), passing extra CMake args;
# warnings are errors here (VRAMSIM_WERROR), as in every build of the project's own.
#   tools/build.sh                    release build in build/
#   tools/build.sh build-asan -DVRAMSIM_SANITIZE=ON
#   VRAMSIM_TARGETS="vramsim" tools/build.sh   only these targets
#   VRAMSIM_QUICK=1 tools/build.sh    -O1 without debug info, and each library
#                                     compiled as one source (a unity build:
#                                     the headers parsed once per library, not
#                                     per file), for the main job's first
#                                     build; benchmarks want the default -O2
#   VRAMSIM_OPT="-O2 -DNDEBUG" tools/build.sh   these optimisation flags instead
#                                     (tools/run-tests.sh builds the tests so)
# Compiles go through ccache where it is installed; its cache lives outside
# the clone (ccache's default, ~/.cache/ccache, or $CCACHE_DIR), and paths are
# hashed relative to the clone so a fresh clone elsewhere hits the same cache.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
jobs=${VRAMSIM_JOBS:-$(nproc)}
launcher=()
if command -v ccache >/dev/null 2>&1 && [ "${VRAMSIM_CCACHE:-1}" != 0 ]; then
  # Depend mode: a miss costs no extra preprocessor run (ccache reads the
  # compiler's own -MD output), which on an empty cache (a fresh clone, CI)
  # would add about a fifth to the build's CPU time.
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
  export CCACHE_DEPEND=${CCACHE_DEPEND:-true}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
# Set on every configure, so a folder built quick goes back to -O2 -g.
opt="-O2 -g -DNDEBUG" unity=OFF
[ "${VRAMSIM_QUICK:-0}" = 1 ] && opt="-O1 -DNDEBUG" unity=ON
[ -n "${VRAMSIM_OPT:-}" ] && opt="$VRAMSIM_OPT"
# VRAMSIM_TEST_OPT too is set on every configure (empty unless the caller
# passes it), so build/ goes back to -O2 test sources after the test
# command's CUDA step.
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$opt" \
  -DVRAMSIM_UNITY=$unity -DVRAMSIM_TEST_OPT= -DVRAMSIM_WERROR=ON "${launcher[@]}" "$@" \
  >"$dir.configure.log" 2>&1 \
  || { cat "$dir.configure.log"; exit 1; }
# shellcheck disable=SC2086
cmake --build "$dir" -j "$jobs" ${VRAMSIM_TARGETS:+--target $VRAMSIM_TARGETS}
