#!/usr/bin/env bash
# k copies of one command on the same GPU at once, for each k of a list: the
# aggregate throughput of the k copies over that of one copy alone, measured
# the way shared/data/gpu-colocation measured it, for a user's own model. For
# a GPU host, no network. Writes the curve a scenario can name as
# {"curve_file": "OUT_DIR/curve.json"}.
#
# Usage: tools/device-colocation.sh OUT_DIR [--counts "1 2 3 4 6 8"] [--seconds S] [--warmup S] [-- COMMAND ARGS...]
#   OUT_DIR      created if missing; receives curve.json, table.txt and each
#                copy's stdout and stderr as k<K>-<i>.out and k<K>-<i>.err
#   --counts     the k to measure (default "1 2 3 4 6 8"): integers 1..64,
#                strictly rising, the first one 1
#   --seconds S  seconds of timed requests per copy (default 5; 1..600)
#   --warmup S   seconds of warm-up per copy before it is ready (default 2; 0..600)
#   COMMAND      one copy of the workload, following the protocol below.
#                Without it, the built-in loop tools/colocation_resnet50.py:
#                ResNet-50 from torchvision with random weights (nothing is
#                downloaded), fp16, channels_last, batch 1 at 224x224, under
#                torch.inference_mode(); a request is one forward pass and
#                torch.cuda.synchronize()
# Protocol. Each copy gets in its environment:
#   VRAMSIM_COLOC_INDEX       its index, 0..k-1 (VRAMSIM_COLOC_COUNT: k)
#   VRAMSIM_COLOC_SECONDS     the length of the timed loop (--seconds)
#   VRAMSIM_COLOC_WARMUP      the length of the warm-up (--warmup)
#   VRAMSIM_COLOC_READY_FILE  its own path: the copy sets up, warms up, then
#                             creates this file
#   VRAMSIM_COLOC_START_FILE  one path for all k copies: the copy waits until
#                             it exists, then runs closed-loop requests (the
#                             next as soon as the last is done) for
#                             VRAMSIM_COLOC_SECONDS
# and prints, as the last line of its stdout, "requests=N seconds=S": N >= 1
# requests completed in S > 0 seconds of timed loop; then it exits 0. The
# script starts the k copies, creates the start file once all k ready files
# exist, and waits for the k copies to exit. A copy's throughput is N / S, the
# aggregate the sum over the k copies, aggregate_speedup(k) = aggregate(k) /
# aggregate(1). A copy that exits non-zero (before or after it is ready) or
# prints no such last line fails its k: no larger k is run (copies still
# waiting for the start file are stopped), and what was measured is written.
# Memory: from the start file until the copies exit, about once a second,
# nvidia-smi --query-compute-apps=pid,used_memory; a copy's processes are the
# one the script started and its descendants (ps -o pid= --ppid, followed
# down), its memory in one sample the sum of their used_memory; kept: each
# copy's largest, in MiB. Null without nvidia-smi, and where nvidia-smi lists
# none of a k's processes (a container with its own pid namespace).
# Output, OUT_DIR/curve.json, one JSON object:
#   curve                    v(1), ..., v(kmax): the speedup for every count
#                            up to the largest measured k, v(1) = 1; counts not
#                            measured filled by linear interpolation between
#                            the measured neighbours
#   measured_counts, aggregate_speedup, requests_per_s, memory_mib (per k an
#   array of per-copy MiB, or null), per_copy_requests_per_s: per measured k
#   interpolated_counts      the counts of the curve filled in
#   command                  the command line ("built-in resnet50-224-batch1-fp16")
#   seconds, warmup          the timed loop and the warm-up, in seconds
#   device                   nvidia-smi --query-gpu=name, or null
#   failed                   why the run stopped early, or null
# and OUT_DIR/table.txt, one row per measured k (also printed).
# Environment:
#   VRAMSIM_PYTHON               the Python of the built-in loop (default python3)
#   VRAMSIM_COLOC_READY_TIMEOUT  seconds to wait for a k's ready files (default 600)
#   CUDA_VISIBLE_DEVICES         one GPU: every copy uses the first GPU it sees
# Exit status: 0 every k measured; 2 bad arguments; 3 the built-in loop cannot
# run (no Python, torch or torchvision, or no CUDA device for torch); 4 a copy
# failed; 5 the ready timeout passed (the copies are stopped). 4 and 5 after
# writing what was measured. Needs bash, awk, sed, ps; nvidia-smi for the
# memory figures and the device name.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
me="device-colocation.sh"
usage() { awk 'NR > 1 { if (!/^#/) exit; sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}" >&2; exit 2; }
bad() { echo "$me: $1" >&2; exit 2; }
# An integer (at most 4 digits) in [lo, hi].
int_in() { [[ "$1" =~ ^[0-9]{1,4}$ ]] && ((10#$1 >= $2 && 10#$1 <= $3)); }

(($# >= 1)) || usage
out="$1"
shift
[[ -n "$out" && "$out" != -* ]] || usage
counts="1 2 3 4 6 8"
seconds=5
warmup=2
cmd=()
while (($#)); do
  case "$1" in
    --counts) (($# >= 2)) || bad "--counts needs a value"; counts="$2"; shift 2 ;;
    --seconds) (($# >= 2)) || bad "--seconds needs a value"; seconds="$2"; shift 2 ;;
    --warmup) (($# >= 2)) || bad "--warmup needs a value"; warmup="$2"; shift 2 ;;
    --) shift; (($#)) || bad "-- needs a COMMAND after it"; cmd=("$@"); break ;;
    *) echo "$me: unknown argument '$1'" >&2; usage ;;
  esac
done

read -r -a count_list <<<"$counts" || true
counts_bad() { bad "--counts expects integers 1..64, strictly rising, the first one 1 (got '$counts')"; }
((${#count_list[@]} > 0)) || counts_bad
previous=0
for i in "${!count_list[@]}"; do
  int_in "${count_list[i]}" 1 64 || counts_bad
  count_list[i]=$((10#${count_list[i]}))
  ((count_list[i] > previous)) || counts_bad
  previous=${count_list[i]}
done
((count_list[0] == 1)) || counts_bad
int_in "$seconds" 1 600 || bad "--seconds expects an integer 1..600 (got '$seconds')"
int_in "$warmup" 0 600 || bad "--warmup expects an integer 0..600 (got '$warmup')"
seconds=$((10#$seconds))
warmup=$((10#$warmup))
ready_timeout="${VRAMSIM_COLOC_READY_TIMEOUT:-600}"
if ! [[ "$ready_timeout" =~ ^[0-9]{1,6}$ ]] || ((10#$ready_timeout < 1)); then
  bad "VRAMSIM_COLOC_READY_TIMEOUT expects a whole number of seconds >= 1 (got '$ready_timeout')"
fi
ready_timeout=$((10#$ready_timeout))

# The built-in loop needs python with torch, torchvision and a CUDA device.
if ((${#cmd[@]} == 0)); then
  python="${VRAMSIM_PYTHON:-python3}"
  if ! command -v "$python" >/dev/null 2>&1; then
    echo "$me: the built-in loop needs Python with torch and torchvision: $python not found (VRAMSIM_PYTHON names another)" >&2
    exit 3
  fi
  set +e
  check="$("$python" -c 'import sys, torch, torchvision; sys.exit(0 if torch.cuda.is_available() else 3)' 2>&1 >/dev/null)"
  status=$?
  set -e
  if ((status == 3)); then
    echo "$me: the built-in loop needs a CUDA device: torch.cuda.is_available() is False for $python" >&2
    exit 3
  elif ((status != 0)); then
    echo "$me: the built-in loop needs torch and torchvision: $python cannot import them${check:+ ($(printf '%s\n' "$check" | tail -n 1))}" >&2
    exit 3
  fi
  cmd=("$python" "$repo_root/tools/colocation_resnet50.py")
  command_text="built-in resnet50-224-batch1-fp16"
else
  command_text="$(printf '%q ' "${cmd[@]}")"
  command_text="${command_text% }"
fi

mkdir -p "$out"
sync_dir="$(cd "$out" && pwd)"  # absolute: a copy may change its directory
rm -f "$out/curve.json" "$out/table.txt"

have_smi=0
device=""
if command -v nvidia-smi >/dev/null 2>&1; then
  have_smi=1
  gpu_select=()
  if [[ "${CUDA_VISIBLE_DEVICES:-}" =~ ^[0-9]+$ ]]; then gpu_select=(-i "$CUDA_VISIBLE_DEVICES"); fi
  device="$(nvidia-smi "${gpu_select[@]}" --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)"
fi

# The running copies; whatever is left of them when the script ends is stopped.
copy_pids=()
descendants() {  # the pid and its descendants, one per line
  local pending=("$1") p kids
  while ((${#pending[@]})); do
    p="${pending[0]}"
    pending=("${pending[@]:1}")
    echo "$p"
    read -r -d '' -a kids < <(ps -o pid= --ppid "$p" 2>/dev/null) || true
    pending+=("${kids[@]}")
  done
}
stop_copies() {
  local pid p
  for pid in "${copy_pids[@]}"; do
    for p in $(descendants "$pid"); do kill -TERM "$p" 2>/dev/null || true; done
  done
}
trap stop_copies EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# One nvidia-smi sample into mem_max: per copy, the sum over its processes.
sample_memory() {
  local map="" i p used
  for i in "${!copy_pids[@]}"; do
    for p in $(descendants "${copy_pids[i]}"); do map+="$p:$i "; done
  done
  while read -r i used; do
    if [[ -z "${mem_max[i]}" ]] || ((used > mem_max[i])); then mem_max[i]=$used; fi
  done < <(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
    awk -v map="$map" '
      BEGIN { n = split(map, m, " "); for (j = 1; j <= n; j++) { split(m[j], kv, ":"); copy[kv[1]] = kv[2] } }
      { gsub(/[ \t\r]/, ""); split($0, f, ",")
        if ((f[1] in copy) && f[2] ~ /^[0-9]+$/) { sum[copy[f[1]]] += f[2]; seen[copy[f[1]]] = 1 } }
      END { for (c in seen) print c, sum[c] }')
}

# A copy's requests per second from its last non-empty line, or "".
copy_rate() {
  local last
  last="$(awk 'NF { line = $0 } END { print line }' "$1" | tr -d '\r')"
  if [[ "$last" =~ ^[[:space:]]*requests=([0-9]+)[[:space:]]+seconds=([0-9]+(\.[0-9]*)?|\.[0-9]+)[[:space:]]*$ ]]; then
    awk -v n="${BASH_REMATCH[1]}" -v s="${BASH_REMATCH[2]}" 'BEGIN { if (n + 0 >= 1 && s + 0 > 0) printf "%.6f", n / s }'
  fi
}
last_line() { awk 'NF { line = $0 } END { print line }' "$1" | tr -d '\r' | cut -c 1-120; }

results=""  # one line per measured k: k, aggregate req/s, speedup, memory JSON, per-copy JSON
base=""
failed=""
exit_status=0
for k in "${count_list[@]}"; do
  start_file="$sync_dir/k$k.start"
  rm -f "$start_file" "$sync_dir/k$k-"*.ready
  copy_pids=()
  for ((i = 0; i < k; i++)); do
    VRAMSIM_COLOC_INDEX=$i VRAMSIM_COLOC_COUNT=$k VRAMSIM_COLOC_SECONDS=$seconds VRAMSIM_COLOC_WARMUP=$warmup \
      VRAMSIM_COLOC_READY_FILE="$sync_dir/k$k-$i.ready" VRAMSIM_COLOC_START_FILE="$start_file" \
      "${cmd[@]}" </dev/null >"$out/k$k-$i.out" 2>"$out/k$k-$i.err" &
    copy_pids+=($!)
  done

  # All k ready, one exited early, or the timeout.
  deadline=$((SECONDS + ready_timeout))
  early=""
  while :; do
    ready=0
    for ((i = 0; i < k; i++)); do
      if [[ -e "$sync_dir/k$k-$i.ready" ]]; then
        ready=$((ready + 1))
      elif ! kill -0 "${copy_pids[i]}" 2>/dev/null; then
        early=$i
      fi
    done
    if ((ready == k)) || [[ -n "$early" ]]; then break; fi
    if ((SECONDS > deadline)); then
      late=""
      for ((i = 0; i < k; i++)); do [[ -e "$sync_dir/k$k-$i.ready" ]] || late+=" $i"; done
      failed="k=$k: copies not ready after $ready_timeout s:$late (logs $out/k$k-<i>.err)"
      exit_status=5
      break
    fi
    sleep 0.1
  done

  mem_max=()
  for ((i = 0; i < k; i++)); do mem_max[i]=""; done
  if [[ -z "$early" && $exit_status == 0 ]]; then
    : >"$start_file"
    polls=0
    while :; do
      alive=0
      for pid in "${copy_pids[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then alive=1; fi
      done
      ((alive)) || break
      if ((have_smi && polls % 10 == 0)); then sample_memory; fi
      polls=$((polls + 1))
      sleep 0.1
    done
  else
    stop_copies
  fi
  statuses=()
  for ((i = 0; i < k; i++)); do
    if wait "${copy_pids[i]}"; then statuses[i]=0; else statuses[i]=$?; fi
  done
  copy_pids=()
  rm -f "$start_file" "$sync_dir/k$k-"*.ready
  ((exit_status == 0)) || break

  rates=()
  reason=""
  for ((i = 0; i < k; i++)); do
    if [[ -n "$early" ]]; then
      i=$early
      reason="copy $i exited with status ${statuses[i]} before it was ready"
    elif ((statuses[i] != 0)); then
      reason="copy $i exited with status ${statuses[i]}"
    else
      rate="$(copy_rate "$out/k$k-$i.out")"
      if [[ -n "$rate" ]]; then rates+=("$rate"); continue; fi
      reason="copy $i printed no valid last line 'requests=N seconds=S' (got '$(last_line "$out/k$k-$i.out")')"
    fi
    failed="k=$k: $reason (logs $out/k$k-$i.out, $out/k$k-$i.err)"
    tail -n 5 "$out/k$k-$i.err" >&2 || true
    exit_status=4
    break
  done
  ((exit_status == 0)) || break

  aggregate="$(printf '%s\n' "${rates[@]}" | awk '{ s += $1 } END { printf "%.6f", s }')"
  [[ -n "$base" ]] || base="$aggregate"
  speedup="$(awk -v a="$aggregate" -v b="$base" 'BEGIN { printf "%.3f", a / b }')"
  per_copy="[$(printf '%s\n' "${rates[@]}" | awk '{ printf "%s%.2f", (NR > 1 ? "," : ""), $1 }')]"
  memory=null
  for ((i = 0; i < k; i++)); do
    if [[ -n "${mem_max[i]}" ]]; then memory=""; fi
  done
  if [[ -z "$memory" ]]; then
    for ((i = 0; i < k; i++)); do memory+="${memory:+,}${mem_max[i]:-null}"; done
    memory="[$memory]"
  fi
  results+="$k $aggregate $speedup $memory $per_copy"$'\n'
  echo "k=$k: $(awk -v a="$aggregate" 'BEGIN { printf "%.2f", a }') requests/s, speedup $speedup"
done
if [[ -n "$failed" ]]; then echo "$me: $failed" >&2; fi

# The curve: measured speedups as measured, the counts between them by linear
# interpolation; fields of the JSON as comma-separated lists.
lists="$(printf '%s' "$results" | awk '
  NF { n++; c[n] = $1; r[n] = sprintf("%.2f", $2); v[n] = $3; m[n] = $4; p[n] = $5; gsub(/,/, ", ", m[n]); gsub(/,/, ", ", p[n]) }
  function list(a, sep,   s, j) { s = ""; for (j = 1; j <= n; j++) s = s (j > 1 ? sep : "") a[j]; return s }
  END {
    curve = ""; filled = ""; between = ""
    for (j = 1; j <= n; j++) {
      curve = curve (j > 1 ? ", " : "") v[j]
      if (j == n) break
      for (x = c[j] + 1; x < c[j + 1]; x++) {
        y = sprintf("%.3f", v[j] + (v[j + 1] - v[j]) * (x - c[j]) / (c[j + 1] - c[j]))
        curve = curve ", " y
        filled = filled (filled == "" ? "" : ", ") x
        between = between (between == "" ? "" : " ") x " (" y ")"
      }
    }
    print curve; print list(c, ", "); print list(v, ", "); print list(r, ", ")
    print filled; print list(m, ", "); print list(p, ", "); print between
  }')"
field() { sed -n "${1}p" <<<"$lists"; }
json_string() {
  if [[ -z "$1" ]]; then echo null; return; fi
  printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g; s/\t/\\t/g')"
}
{
  echo "{"
  echo "  \"curve\": [$(field 1)],"
  echo "  \"measured_counts\": [$(field 2)],"
  echo "  \"aggregate_speedup\": [$(field 3)],"
  echo "  \"requests_per_s\": [$(field 4)],"
  echo "  \"interpolated_counts\": [$(field 5)],"
  echo "  \"memory_mib\": [$(field 6)],"
  echo "  \"per_copy_requests_per_s\": [$(field 7)],"
  echo "  \"command\": $(json_string "$command_text"),"
  echo "  \"seconds\": $seconds,"
  echo "  \"warmup\": $warmup,"
  echo "  \"device\": $(json_string "$device"),"
  echo "  \"failed\": $(json_string "$failed")"
  echo "}"
} >"$out/curve.json"

row() { printf '%-4s %12s %9s  %s\n' "$@"; }
{
  echo "device: ${device:-n/a}"
  echo "command: $command_text"
  echo "per copy: ${seconds} s timed, ${warmup} s warm-up; date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  row "k" "requests/s" "speedup" "MiB per copy (max)"
  while read -r k aggregate speedup memory per_copy; do
    [[ -n "$k" ]] || continue
    mib="$(sed 's/^\[//; s/\]$//; s/,/ /g; s/null/n\/a/g' <<<"$memory")"
    [[ "$memory" != null ]] || mib="n/a"
    row "$k" "$(awk -v a="$aggregate" 'BEGIN { printf "%.2f", a }')" "$speedup" "$mib"
  done <<<"$results"
  if [[ -n "$(field 8)" ]]; then echo "interpolated: $(field 8)"; fi
  if [[ -n "$failed" ]]; then echo "failed: $failed"; fi
  curve="$(field 1 | sed 's/,//g')"
  echo "curve: ${curve:-n/a}"
} >"$out/table.txt"
cat "$out/table.txt"
exit "$exit_status"
