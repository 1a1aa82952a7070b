#!/usr/bin/env bash
# The main job: install, build, then replay the reference cold start under
# the legacy and the fixed control plane, side by side, and run it once more
# under fixed with its full summary and status.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
# Only what the main job runs, at -O1 without debug info (it runs one small
# scenario); the test command builds everything at -O2 -g.
VRAMSIM_QUICK=1 VRAMSIM_TARGETS=vramsim tools/build.sh build
echo
build/tools/vramsim compare scenarios/cold-start-a100.json
echo
build/tools/vramsim run scenarios/cold-start-a100.json --policies fixed --critical-path \
  --trace build/cold-start-a100.trace.jsonl
echo
echo "trace written to build/cold-start-a100.trace.jsonl"
