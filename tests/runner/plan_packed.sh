#!/usr/bin/env bash
# vramsim plan over replicas packed on one GPU (scenarios/serving/packed-h200.json
# at 600 requests a second of 3.33 ms, for 20 s): the answer depends on how the GPU is
# shared. Hand-worked capacities, 1 / 3.33 ms = 300 requests a second alone:
# - independent: n replicas serve 300 n; 3 (900) is the cheapest with p99 <= 50 ms;
# - h200-resnet50-b1: g(3) = 2.163, 649 a second, still meets it at 3;
# - time-sliced: one GPU serves 300 a second whatever the count: nothing meets it.
#   plan_packed.sh VRAMSIM SCENARIO
set -uo pipefail
vramsim=$1 scenario=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/vramsim-plan-packed.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
plan() {  # plan EXPECTED_EXIT CURVE
  "$vramsim" plan "$scenario" --slo "req_latency_p99_s<=0.05" --vary apps.0.replicas=1..8 \
    --monotone apps.0.replicas --vary "apps.0.serve.device_sharing=$2" \
    --vary apps.0.serve.traffic.rate_per_s=600 --vary apps.0.serve.traffic.end=80s --seeds 1..3 --objective replica_seconds >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" -eq "$1" ] || { cat "$work/out" "$work/err"; fail "plan with $2: exit $rc, expected $1"; }
}
# The scenario as it stands (the measured curve, 2,000 a second): its
# expectation holds (the queue outgrows the timeout) and run names the curves.
"$vramsim" run "$scenario" >"$work/out" 2>"$work/err" || { cat "$work/out" "$work/err"; fail "run: expectations"; }
grep -q "^sharing: resnet: device_sharing h200-resnet50-b1 (up to 8 busy replica(s) on one device)" "$work/out" ||
  { cat "$work/out"; fail "run: expected the sharing line"; }
plan 0 independent
grep -q "^chosen: apps.0.replicas=3 apps.0.serve.device_sharing=independent" "$work/out" ||
  { cat "$work/out"; fail "independent: expected 3 replicas"; }
plan 0 h200-resnet50-b1
grep -q "^chosen: apps.0.replicas=3 apps.0.serve.device_sharing=h200-resnet50-b1" "$work/out" ||
  { cat "$work/out"; fail "h200-resnet50-b1: expected 3 replicas"; }
plan 1 time-sliced
grep -q "^no configuration evaluated meets the SLOs" "$work/out" ||
  { cat "$work/out"; fail "time-sliced: expected no configuration to meet the SLO"; }
# The curves as one dimension of the same plan: independent is the answer.
"$vramsim" plan "$scenario" --slo "req_latency_p99_s<=0.05" --vary apps.0.replicas=1..8 \
  --vary apps.0.serve.device_sharing=time-sliced,independent --vary apps.0.serve.traffic.rate_per_s=600 \
  --vary apps.0.serve.traffic.end=80s --seeds 1..2 --objective replica_seconds >"$work/out" 2>"$work/err" || { cat "$work/out" "$work/err"; fail "plan over both curves"; }
grep -q "^chosen: apps.0.replicas=3 apps.0.serve.device_sharing=independent" "$work/out" ||
  { cat "$work/out"; fail "over both curves: expected 3 independent replicas"; }
# Curves not varied: plan names them beside its answer.
"$vramsim" plan "$scenario" --slo "req_latency_p99_s<=0.05" --vary apps.0.replicas=3 \
  --vary apps.0.serve.traffic.rate_per_s=600 --vary apps.0.serve.traffic.end=80s --seeds 1 --objective replica_seconds >"$work/out" 2>"$work/err" || { cat "$work/out" "$work/err"; fail "plan, curves as set"; }
grep -q "^sharing: resnet: device_sharing h200-resnet50-b1, replica_concurrency time-sliced" "$work/out" ||
  { cat "$work/out"; fail "expected the curves named beside the answer"; }
echo "plan over packed replicas: independent 3, h200-resnet50-b1 3, time-sliced none"
