#!/usr/bin/env bash
# The a100-kth capacity study in one command (docs/capacity-planning.md):
# how many A100 workers the serving mix of a100-kth.json needs under the
# legacy and the fixed policies, with the KTH-SP2 batch trace as background
# load. Writes the sweep CSV, one traced run per policy with its status
# timeline, and `vramsim report`'s plots and summary into OUT_DIR.
#
# Usage: scenarios/studies/a100-kth.sh [OUT_DIR]   (default: study-a100-kth)
# Environment: VRAMSIM (default: build/tools/vramsim of this checkout).
# Needs the traces at ../shared/data/traces beside the checkout (the
# scenario's background.path).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
vramsim=${VRAMSIM:-$here/../../build/tools/vramsim}
out=${1:-study-a100-kth}
[ -x "$vramsim" ] || { echo "a100-kth.sh: $vramsim not found; build it first: tools/build.sh build" >&2; exit 2; }
mkdir -p "$out"
"$vramsim" sweep "$here/a100-kth.json" --set cluster.max_workers=2,3,4,5,6,8,12,16 --set policies=legacy,fixed \
    --seeds 1..20 -o "$out/sweep.csv"
for p in legacy fixed; do
  "$vramsim" run "$here/a100-kth.json" --policies "$p" --trace "$out/$p.jsonl" \
      --status-every 60s --status-csv "$out/timeline-$p.csv" > "$out/summary-$p.txt" || [ $? -eq 1 ]
done
# The study's objective: every one of the twelve apps RUNNING (the SLO line).
"$vramsim" report "$out" --metric apps_reached_running --metric ttr_p95_s --metric queue_wait_mean_s \
    --metric gpu_hours_allocated --slo apps_reached_running=12
