#!/usr/bin/env bash
# The main job: install, build, then replay the reference cold start under
# the legacy and the fixed control plane, side by side, and run it once more
# under fixed with its full summary and status.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
# Only what the main job runs, and the Python module (docs/python.md), at -O1
# without debug info (it runs one small scenario); the test command builds
# everything.
VRAMSIM_QUICK=1 VRAMSIM_TARGETS="vramsim vramsim_python" tools/build.sh build
echo
build/tools/vramsim compare scenarios/cold-start-a100.json
echo
build/tools/vramsim run scenarios/cold-start-a100.json --policies fixed --critical-path \
  --trace build/cold-start-a100.trace.jsonl
echo
echo "trace written to build/cold-start-a100.trace.jsonl"
echo
# The same run from Python: the module in build/python.
PYTHONPATH=build/python /usr/bin/python3 -c 'import vramsim
r = vramsim.run("scenarios/cold-start-a100.json", policies="fixed")
print("import vramsim: %s, time to RUNNING %.1f s, trace of %d events" % (r.apps[0]["state"], r.apps[0]["time_to_running_s"], len(r.events)))'

