#!/usr/bin/env bash
# The harness itself: start in a fresh folder, run a --gpus=1 job that is
# still running at stop, stop twice; afterwards no daemon, slurmstepd or job
# of that folder may be left.
#   harness-selftest.sh HARNESS_SCRIPT WORK_DIR
set -euo pipefail
harness=$1
dir=$2
rm -rf "$dir"
fail() { echo "FAIL: $*" >&2; "$harness" stop "$dir" || true; exit 1; }

"$harness" start "$dir"
pids=$(cat "$dir"/run/{munged,slurmctld,slurmd}.pid)
[ "$(echo "$pids" | wc -l)" -eq 3 ] || fail "expected 3 daemon pids, got: $pids"
eval "$("$harness" env "$dir")"
[ "$(command -v nvidia-smi)" = "$dir/bin/nvidia-smi" ] || fail "env does not put the stand-in nvidia-smi first"
job=$(printf '#!/bin/sh\necho $$ > %s/job.pid\nsleep 300\n' "$dir" | sbatch --parsable --gpus=1 --output=/dev/null)
for _ in $(seq 100); do [ -s "$dir/job.pid" ] && break; sleep 0.2; done
[ -s "$dir/job.pid" ] || fail "job $job did not start"
jobpid=$(cat "$dir/job.pid")
kill -0 "$jobpid" || fail "job process $jobpid not running"

"$harness" stop "$dir"
"$harness" stop "$dir"   # a second stop is a no-op
for p in $pids $jobpid; do
  if kill -0 "$p" 2>/dev/null; then fail "pid $p still running after stop"; fi
done
for f in /proc/[0-9]*/environ; do
  if { tr '\0' '\n' <"$f"; } 2>/dev/null | grep -qxF "VRAMSIM_SLURM_HARNESS=$dir"; then
    fail "process ${f//[^0-9]/} of the harness still running"
  fi
done
[ -z "$(ls "$dir"/run/*.pid 2>/dev/null)" ] || fail "pid files left in $dir/run"
echo "harness self-test passed"
