#!/usr/bin/env bash
# vramsim plan --on-slurm on the harness SLURM: each round of the search as a
# job array, and the plan's CSV byte for byte the one the same plan writes
# when it runs here.
#   plan-on-slurm.sh VRAMSIM SCENARIO HARNESS_SCRIPT WORKDIR   (VRAMSIM_SLURM_HARNESS: the harness folder)
set -euo pipefail
vramsim=$1 scenario=$2 harness=$3 work=$4
: "${VRAMSIM_SLURM_HARNESS:?the harness folder}"
eval "$("$harness" env "$VRAMSIM_SLURM_HARNESS")"
rm -rf "$work" && mkdir -p "$work"
args=("$scenario" --vary apps.0.replicas=1..8 --monotone apps.0.replicas --seeds 1..8 --seed-batch 4
      --objective replica_seconds --slo 'req_wait_mean_s<=0.01')
"$vramsim" plan "${args[@]}" -j 2 -o "$work/local.csv" >"$work/local.out"
"$vramsim" plan "${args[@]}" --on-slurm --poll 0.2 -j 1 -o "$work/slurm.csv" >"$work/slurm.out" 2>"$work/slurm.err"
cat "$work/slurm.out"
cmp "$work/local.csv" "$work/slurm.csv"
grep -qx "chosen: apps.0.replicas=5" "$work/slurm.out" || { echo "expected 5 replicas"; exit 1; }
grep -q "as SLURM array job" "$work/slurm.err" || { cat "$work/slurm.err"; echo "expected the arrays named"; exit 1; }
ls "$work"/slurm.csv.parts/round-0.sh "$work"/slurm.csv.parts/round-0-task-0.csv >/dev/null
echo "plan on SLURM: the CSV of the local plan, round by round as job arrays"
