#!/usr/bin/env bash
# The a100-kth capacity study in one command (docs/capacity-planning.md):
# how many A100 workers the serving mix of a100-kth.json needs under the
# legacy and the fixed policies, with the KTH-SP2 batch trace as background
# load. Writes the sweep CSV, one traced run per policy with its status
# timeline, and `vramsim report`'s plots and summary into OUT_DIR.
#
# Usage: scenarios/studies/a100-kth.sh [OUT_DIR]   (default: study-a100-kth)
# Environment: VRAMSIM (default: build/tools/vramsim of this checkout);
# SEEDS, the sweep's seeds (default 1..20, the figures the docs give).
# Needs the KTH-SP2 log: tools/fetch-traces kth-sp2 puts it at
# data/traces/pwa-swf/ (the scenario's background.path), from a local copy
# beside the checkout or from the Parallel Workloads Archive.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
vramsim=${VRAMSIM:-$here/../../build/tools/vramsim}
out=${1:-study-a100-kth}
[ -x "$vramsim" ] || { echo "a100-kth.sh: $vramsim not found; build it first: tools/build.sh build" >&2; exit 2; }
mkdir -p "$out"
# The log where it is (a local copy), else downloaded into data/traces/; the
# study runs a copy of the scenario that names it.
trace=$("$here/../../tools/fetch-traces" --locate kth-sp2) || exit 1
sed "s|\"path\": \"[^\"]*KTH-SP2-1996-2.1-cln.swf\"|\"path\": \"$trace\"|" "$here/a100-kth.json" >"$out/a100-kth.json"
grep -q "\"path\": \"$trace\"" "$out/a100-kth.json" || { echo "a100-kth.sh: could not point the scenario at $trace" >&2; exit 1; }
scenario=$out/a100-kth.json
"$vramsim" sweep "$scenario" --set cluster.max_workers=2,3,4,5,6,8,12,16 --set policies=legacy,fixed \
    --seeds "${SEEDS:-1..20}" -o "$out/sweep.csv"
for p in legacy fixed; do
  "$vramsim" run "$scenario" --policies "$p" --trace "$out/$p.jsonl" \
      --status-every 60s --status-csv "$out/timeline-$p.csv" > "$out/summary-$p.txt" || [ $? -eq 1 ]
done
# The study's objective: every one of the twelve apps RUNNING (the SLO line).
"$vramsim" report "$out" --metric apps_reached_running --metric ttr_p95_s --metric queue_wait_mean_s \
    --metric gpu_hours_allocated --slo apps_reached_running=12
