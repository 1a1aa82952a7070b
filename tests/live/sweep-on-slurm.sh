#!/usr/bin/env bash
# vramsim sweep --on-slurm on the harness SLURM: the job array's merged CSV
# is byte for byte the CSV of the same sweep run here.
#   sweep-on-slurm.sh VRAMSIM SCENARIO HARNESS_SCRIPT WORKDIR   (VRAMSIM_SLURM_HARNESS: the harness folder)
set -euo pipefail
vramsim=$1 scenario=$2 harness=$3 work=$4
: "${VRAMSIM_SLURM_HARNESS:?the harness folder}"
eval "$("$harness" env "$VRAMSIM_SLURM_HARNESS")"
rm -rf "$work" && mkdir -p "$work"
args=("$scenario" --set cluster.max_workers=1,2 --set policies=legacy,fixed
      --set 'cluster.latency.queue_wait={"dist":"exponential","mean":"60s"},5s' --seeds 1..6)
"$vramsim" sweep "${args[@]}" -j 2 -o "$work/local.csv" 2>/dev/null
"$vramsim" sweep "${args[@]}" --on-slurm --tasks 5 --poll 0.2 -o "$work/slurm.csv"
ls "$work"/slurm.csv.parts/part-{0,1,2,3,4}.csv >/dev/null
cmp "$work/local.csv" "$work/slurm.csv"
[ "$(wc -l <"$work/slurm.csv")" -eq 49 ] || { echo "expected a header and 48 rows"; exit 1; }
# A task that cannot write its part file (a folder in its place): the head
# refuses to merge, names the task and its log, and writes no CSV.
mkdir -p "$work/bad.parts/part-1.csv/x"
set +e
"$vramsim" sweep "${args[@]}" --on-slurm --tasks 2 --poll 0.2 --parts-dir "$work/bad.parts" -o "$work/bad.csv" \
  2>"$work/bad.err"
rc=$?
set -e
cat "$work/bad.err"
[ "$rc" -eq 3 ] || { echo "expected exit 3 when a task wrote no part file, got $rc"; exit 1; }
grep -q "task 1 left no part file .*bad.parts/part-1.csv (see .*bad.parts/task-1.log)" "$work/bad.err" ||
  { echo "expected the message to name task 1 and its log"; exit 1; }
grep -q "cannot write" "$work/bad.parts/task-1.log" || { echo "expected the task's own error in its log"; exit 1; }
[ ! -e "$work/bad.csv" ] || { echo "no CSV expected"; exit 1; }
# An interrupted head cancels its array: with the node's cores held by
# another job the tasks stay pending; SIGINT, exit 130, and no job of the
# sweep left in squeue.
blocker=$(sbatch --parsable --cpus-per-task="$(nproc)" --job-name=blocker --output=/dev/null --wrap 'sleep 300')
blocker=${blocker%%;*}
"$vramsim" sweep "${args[@]}" --on-slurm --tasks 2 --poll 0.2 --parts-dir "$work/int.parts" -o "$work/int.csv" \
  2>"$work/int.err" &
head=$!
for _ in $(seq 100); do
  squeue --noheader --format=%k | grep -q "vramsim-sweep:$work/int.parts" && break
  sleep 0.1
done
kill -INT "$head"
set +e
wait "$head"
rc=$?
set -e
scancel "$blocker"
cat "$work/int.err"
[ "$rc" -eq 130 ] || { echo "expected exit 130 when interrupted, got $rc"; exit 1; }
grep -q "interrupted; array job .* cancelled, no CSV written" "$work/int.err" || { echo "expected the cancel to be said"; exit 1; }
left=""
for _ in $(seq 50); do
  left=$(squeue --noheader --format=%k | grep -c "vramsim-sweep:$work/int.parts" || true)
  [ "$left" -eq 0 ] && break
  sleep 0.2
done
[ "$left" -eq 0 ] || { echo "the interrupted sweep's array is still listed"; exit 1; }
[ ! -e "$work/int.csv" ] || { echo "no CSV expected"; exit 1; }
echo "sweep on SLURM: merged CSV identical to the local one; an interrupt cancels the array"
