#!/usr/bin/env bash
# vramsim sweep --on-slurm on the harness SLURM: the job array's merged CSV
# is byte for byte the CSV of the same sweep run here; each task's final
# state is in the summary; --resume reruns only the missing or stale slices;
# --merge-only merges a complete parts folder and names what is missing; a
# part of another build or scenario, or changed, is refused.
#   sweep-on-slurm.sh VRAMSIM SCENARIO HARNESS_SCRIPT WORKDIR   (VRAMSIM_SLURM_HARNESS: the harness folder)
set -euo pipefail
vramsim=$1 scenario=$2 harness=$3 work=$4
: "${VRAMSIM_SLURM_HARNESS:?the harness folder}"
eval "$("$harness" env "$VRAMSIM_SLURM_HARNESS")"
rm -rf "$work" && mkdir -p "$work"
args=("$scenario" --set cluster.max_workers=1,2 --set policies=legacy,fixed
      --set 'cluster.latency.queue_wait={"dist":"exponential","mean":"60s"},5s' --seeds 1..6)
"$vramsim" sweep "${args[@]}" -j 2 -o "$work/local.csv" 2>/dev/null
"$vramsim" sweep "${args[@]}" --on-slurm --tasks 5 --poll 0.2 -o "$work/slurm.csv" 2>"$work/slurm.err"
cat "$work/slurm.err"
parts=$work/slurm.csv.parts
ls "$parts"/part-{0,1,2,3,4}.csv "$parts"/part-{0,1,2,3,4}.csv.sum >/dev/null
cmp "$work/local.csv" "$work/slurm.csv"
[ "$(wc -l <"$work/slurm.csv")" -eq 49 ] || { echo "expected a header and 48 rows"; exit 1; }
for i in 0 1 2 3 4; do
  grep -q "^sweep: array job [0-9]* task $i: COMPLETED$" "$work/slurm.err" ||
    { echo "expected task $i's final state COMPLETED in the summary"; exit 1; }
done

# fails EXPECTED_RC PATTERN ARGS...: the sweep exits EXPECTED_RC, its stderr
# one line matching PATTERN.
fails() {
  local want=$1 pattern=$2 rc=0
  shift 2
  "$vramsim" sweep "$@" 2>"$work/fail.err" || rc=$?
  cat "$work/fail.err"
  [ "$rc" -eq "$want" ] || { echo "expected exit $want, got $rc: $*"; exit 1; }
  [ "$(wc -l <"$work/fail.err")" -eq 1 ] || { echo "expected one line on stderr"; exit 1; }
  grep -q -- "$pattern" "$work/fail.err" || { echo "expected '$pattern' on stderr"; exit 1; }
}
# --resume: a deleted part is the one slice run again; the others are kept
# as they were, and the CSV is the local one.
stamp() { stat -c '%n %y %i' "$parts"/part-{0,1,2,4}.csv "$parts"/part-{0,1,2,4}.csv.sum; }
before=$(stamp)
rm "$parts/part-3.csv"
rm "$work/slurm.csv"
"$vramsim" sweep "${args[@]}" --on-slurm --resume --poll 0.2 -o "$work/slurm.csv" 2>"$work/resume.err"
cat "$work/resume.err"
grep -q "^sweep: --resume: 4 of 5 slice(s) reused, 1 to rerun: 3$" "$work/resume.err" ||
  { echo "expected 4 slices reused and slice 3 rerun"; exit 1; }
grep -q "^sweep: array job [0-9]* task 3: COMPLETED$" "$work/resume.err" || { echo "expected task 3's state"; exit 1; }
[ "$(grep -c "task [0-9]*: " "$work/resume.err")" -eq 1 ] || { echo "expected one task only"; exit 1; }
grep -q "(4 reused, 1 rerun)" "$work/resume.err" || { echo "expected the counts in the last line"; exit 1; }
[ "$before" = "$(stamp)" ] || { echo "the parts of the other slices were rewritten"; exit 1; }
cmp "$work/local.csv" "$work/slurm.csv"
# A part whose record is not its own is stale: resumed, it runs again.
sed -i 's/^rows .*/rows 0/' "$parts/part-1.csv.sum"
"$vramsim" sweep "${args[@]}" --on-slurm --resume --poll 0.2 -o "$work/slurm.csv" 2>"$work/resume.err"
cat "$work/resume.err"
grep -q "^sweep: --resume: 4 of 5 slice(s) reused, 1 to rerun: 1$" "$work/resume.err" ||
  { echo "expected slice 1, with a changed record, rerun"; exit 1; }
cmp "$work/local.csv" "$work/slurm.csv"
# Nothing left to run: no array, the same CSV.
"$vramsim" sweep "${args[@]}" --on-slurm --resume -o "$work/slurm.csv" 2>"$work/resume.err"
cat "$work/resume.err"
grep -q "^sweep: --resume: 5 of 5 slice(s) reused, 0 to rerun$" "$work/resume.err" || { echo "expected all reused"; exit 1; }
! grep -q "array job" "$work/resume.err" || { echo "expected no array submitted"; exit 1; }
cmp "$work/local.csv" "$work/slurm.csv"

# --merge-only on the complete folder: the same CSV, nothing submitted.
"$vramsim" sweep "${args[@]}" --on-slurm --merge-only --parts-dir "$parts" -o "$work/merged.csv" 2>"$work/merge.err"
cat "$work/merge.err"
! grep -q "array job" "$work/merge.err" || { echo "expected no array submitted"; exit 1; }
cmp "$work/local.csv" "$work/merged.csv"
rm "$work/merged.csv"
# A record of another build: refused, naming the part and the build.
cp "$parts/part-2.csv.sum" "$work/kept.sum"
sed -i "s/^binary .*/binary $(printf '0%.0s' $(seq 64))/" "$parts/part-2.csv.sum"
cmp -s "$work/kept.sum" "$parts/part-2.csv.sum" && { echo "the record was not changed"; exit 1; }
fails 3 "^vramsim sweep: --merge-only: slice 2 of 5: $parts/part-2.csv: made by another vramsim build (binary sha256 " \
  "${args[@]}" --on-slurm --merge-only --parts-dir "$parts" -o "$work/merged.csv"
cp "$work/kept.sum" "$parts/part-2.csv.sum"
# Another scenario file (the same scenario, one more line): refused.
cp "$scenario" "$work/scenario.json"
echo >>"$work/scenario.json"
fails 3 "^vramsim sweep: --merge-only: slice 0 of 5: $parts/part-0.csv: made from another scenario file" \
  "$work/scenario.json" "${args[@]:1}" --on-slurm --merge-only --parts-dir "$parts" -o "$work/merged.csv"
# Another grid (one seed less): refused.
fails 3 "^vramsim sweep: --merge-only: slice 0 of 5: $parts/part-0.csv: made for another grid" \
  "${args[@]:0:${#args[@]}-1}" 1..5 --on-slurm --merge-only --parts-dir "$parts" --tasks 5 -o "$work/merged.csv"
# A part changed after its task wrote it.
cp "$parts/part-4.csv" "$work/kept.csv"
sed -i '$ s/$/0/' "$parts/part-4.csv"
cmp -s "$work/kept.csv" "$parts/part-4.csv" && { echo "the part was not changed"; exit 1; }
fails 3 "^vramsim sweep: --merge-only: slice 4 of 5: $parts/part-4.csv: its bytes differ from its checksum record" \
  "${args[@]}" --on-slurm --merge-only --parts-dir "$parts" -o "$work/merged.csv"
# A missing slice.
rm "$parts/part-4.csv"
fails 3 "^vramsim sweep: --merge-only: slice 4 of 5: $parts/part-4.csv: missing$" \
  "${args[@]}" --on-slurm --merge-only --parts-dir "$parts" -o "$work/merged.csv"
[ ! -e "$work/merged.csv" ] || { echo "no CSV expected from a refused merge"; exit 1; }
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
grep -q "^sweep: array job [0-9]* task 0: COMPLETED$" "$work/bad.err" || { echo "expected task 0 COMPLETED"; exit 1; }
grep -q "^sweep: array job [0-9]* task 1: FAILED (exit 3)$" "$work/bad.err" || { echo "expected task 1 FAILED (exit 3)"; exit 1; }
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
echo "sweep on SLURM: merged CSV identical to the local one; task states; --resume and --merge-only; foreign parts refused; an interrupt cancels the array"
