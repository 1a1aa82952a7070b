#!/usr/bin/env bash
# The GenAI Stable Diffusion capacity plan in one command (docs/planning.md):
# which GPU kind (A10 or A100-SXM4-80GB) and what replica cap
# keep the p99 request latency of the GenTD26 trace under an SLO, at the
# lowest cost, at the trace's own traffic and at twice it. Writes, into
# OUT_DIR: one plan CSV per (SLO, traffic scale) with its printed answer, a
# sweep CSV of the same space (2 seeds, for the curves), and `vramsim
# report`'s frontiers, curves and summary.
#
# Usage: scenarios/studies/genai-sd.sh [OUT_DIR]   (default: study-genai-sd)
# Environment: VRAMSIM (default: build/tools/vramsim of this checkout),
#   SEEDS (default 1..20), JOBS (default: every core).
# Needs the GenTD26 request trace: tools/fetch-traces gentd26 links a local
# copy beside the checkout into data/traces/ or downloads it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
vramsim=${VRAMSIM:-$here/../../build/tools/vramsim}
out=${1:-study-genai-sd}
seeds=${SEEDS:-1..20}
jobs=${JOBS:-$(nproc)}
[ -x "$vramsim" ] || { echo "genai-sd.sh: $vramsim not found; build it first: tools/build.sh build" >&2; exit 2; }
mkdir -p "$out"
trace=$("$here/../../tools/fetch-traces" --locate gentd26) || exit 1
sed "s|\"path\": \"[^\"]*lora_request_trace.csv\"|\"path\": \"$trace\"|" "$here/genai-sd.json" >"$out/genai-sd.json"
grep -q "\"path\": \"$trace\"" "$out/genai-sd.json" || { echo "genai-sd.sh: could not point the scenario at $trace" >&2; exit 1; }
scenario=$out/genai-sd.json
space=(--vary cluster.partition.0.gpu=A10,A100-SXM4-80GB
       --vary apps.0.serve.autoscaling_config.max_replicas=1..16
       --monotone apps.0.serve.autoscaling_config.max_replicas)
for slo in 180 120; do
  for scale in 1 2; do
    name=plan-p99-${slo}s-x$scale
    # exit 1: no configuration meets the SLO, which is an answer too
    "$vramsim" plan "$scenario" "${space[@]}" --vary apps.0.serve.traffic.trace.rate_scale=$scale \
        --slo "req_latency_p99_s<=$slo" --seeds "$seeds" --objective cost_usd -j "$jobs" \
        -o "$out/$name.csv" | tee "$out/$name.txt" || [ "${PIPESTATUS[0]}" -eq 1 ]
  done
done
"$vramsim" sweep "$scenario" --set cluster.partition.0.gpu=A10,A100-SXM4-80GB \
    --set apps.0.serve.autoscaling_config.max_replicas=2,3,4,5,6,8,10,12,16 \
    --set apps.0.serve.traffic.trace.rate_scale=1,2 --seeds 1..2 -j "$jobs" -o "$out/sweep.csv"
"$vramsim" report "$out" --metric req_latency_p99_s --metric cost_usd --metric req_slo_attainment \
    --slo req_latency_p99_s=180
