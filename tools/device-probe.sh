#!/usr/bin/env bash
# One command for a GPU host, no network: builds vramsim-probe alone (or uses
# a given binary), runs --detect, the probe at N = 4096, 8192, 16384, and the
# same fp16 products through PyTorch (torch.matmul on CUDA) when python3 with
# torch is present; writes one table and the JSON files under OUT_DIR.
#
# Usage: tools/device-probe.sh OUT_DIR [--probe BINARY] [--tests BINARY] [-- PROBE_OPTIONS...]
#   OUT_DIR         created if missing; receives detect.json, probe-N.json,
#                   torch-N.json, table.txt, summary.json, and the logs
#   --probe BINARY  use this vramsim-probe instead of building one
#   --tests BINARY  also run this test_cuda_probe's device tests (log in OUT_DIR)
# Environment:
#   VRAMSIM_DEVICE_SIZES  sizes (default "4096 8192 16384")
#   VRAMSIM_PYTHON        the Python to try for PyTorch (default python3 on PATH)
# Exit status: 0 when every probe run succeeded; the probe's status when
# --detect fails (3: no usable CUDA) or a probe run fails (6: out of device
# memory, ...), after the table is written; 1 for a failed build; 2 for bad
# arguments. Needs bash, sed, awk; cmake and a C++ compiler only to build.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

(($# >= 1)) || usage
out="$1"
shift
probe=""
tests=""
extra=()
while (($#)); do
  case "$1" in
    --probe) (($# >= 2)) || usage; probe="$2"; shift 2 ;;
    --tests) (($# >= 2)) || usage; tests="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "device-probe.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
sizes="${VRAMSIM_DEVICE_SIZES:-4096 8192 16384}"
python="${VRAMSIM_PYTHON:-python3}"
mkdir -p "$out"
started=$SECONDS

# Flat one-line JSON: one field without jq (null and absent read as "").
json_string() { [[ -f "$2" ]] || return 0; sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" "$2" | head -n 1; }
json_number() { [[ -f "$2" ]] || return 0; sed -n "s/.*\"$1\":\\([-0-9.eE+]\\{1,\\}\\).*/\\1/p" "$2" | head -n 1; }

# 1. The probe: given, or built alone from tools/probe/standalone.
if [[ -z "$probe" ]]; then
  echo "building vramsim-probe alone (log: $out/build.log)"
  jobs="$(nproc 2>/dev/null || echo 4)"
  if ! { cmake -S "$repo_root/tools/probe/standalone" -B "$out/build" -DCMAKE_BUILD_TYPE=Release &&
         cmake --build "$out/build" -j "$jobs"; } >"$out/build.log" 2>&1; then
    tail -n 20 "$out/build.log" >&2
    echo "device-probe.sh: the standalone build failed (log: $out/build.log)" >&2
    exit 1
  fi
  probe="$out/build/vramsim-probe"
fi
if [[ ! -x "$probe" ]]; then
  echo "device-probe.sh: vramsim-probe not found at $probe" >&2
  exit 1
fi

# 2. The inventory: no usable CUDA ends the run with the probe's status.
set +e
"$probe" --detect --json-out "$out/detect.json" >/dev/null 2>"$out/detect.err"
status=$?
set -e
if ((status != 0)); then
  cat "$out/detect.err" >&2
  exit "$status"
fi

# 3. The probe at each size; a failing size is a row with its status.
first_failure=0
for n in $sizes; do
  set +e
  "$probe" --n "$n" "${extra[@]}" --json-out "$out/probe-$n.json" >/dev/null 2>"$out/probe-$n.err"
  status=$?
  set -e
  if ((status != 0)); then
    rm -f "$out/probe-$n.json"
    ((first_failure != 0)) || first_failure=$status
  fi
  echo "$status" >"$out/probe-$n.status"
done

# 4. The same products through PyTorch, when it can run them.
torch_note=""
if ! command -v "$python" >/dev/null 2>&1; then
  torch_note="PyTorch: not measured ($python not found)"
else
  set +e
  "$python" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)' >/dev/null 2>&1
  status=$?
  set -e
  if ((status == 3)); then
    torch_note="PyTorch: not measured (torch.cuda.is_available() is False)"
  elif ((status != 0)); then
    torch_note="PyTorch: not measured (torch cannot be imported by $python)"
  else
    set +e
    "$python" "$repo_root/tools/probe/torch_matmul.py" --sizes "$sizes" --out-dir "$out" >"$out/torch.log" 2>&1
    status=$?
    set -e
    torch_note="PyTorch: $("$python" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda)' 2>/dev/null || echo "torch"), exit $status"
  fi
fi

# 5. One table.
gpu="$(sed -n 's/.*"name":"\([^"]*\)".*/\1/p' "$out/detect.json" | head -n 1)"
for n in $sizes; do
  if [[ -f "$out/probe-$n.json" ]]; then gpu="$(json_string gpu "$out/probe-$n.json")"; break; fi
done
"$probe" --peak-for "$gpu" --json-out "$out/peak.json" >/dev/null
peak="$(json_number dense_fp16_tflops "$out/peak.json")"
peak_source="$(json_string source "$out/peak.json")"
driver=""
if command -v nvidia-smi >/dev/null 2>&1; then
  driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1 || true)"
fi

# a / b * scale with format f; n/a when either is missing.
div() { awk -v a="$1" -v b="$2" -v f="$3" -v s="$4" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print "n/a"; else printf f, s * a / b }'; }
q() { if [[ "$1" =~ ^-?[0-9.]+$ ]]; then echo "$1"; else echo null; fi; }
met() { awk -v x="$1" -v t="$2" 'BEGIN { print (x != "n/a" && x + 0 >= t) ? "met" : "NOT met" }'; }
or_na() { if [[ -n "$1" ]]; then echo "$1"; else echo "n/a"; fi; }
row() { printf '%-6s %12s %10s %15s %14s %16s %18s\n' "$@"; }
{
  echo "device: $gpu"
  echo "driver: $(or_na "$driver")"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "dense fp16 peak (fp32 accumulate): $(or_na "$peak") TFLOPS${peak_source:+ ($peak_source)}"
  echo "${torch_note}"
  row "N" "probe TFLOPS" "% of peak" "PyTorch TFLOPS" "probe/PyTorch" "probe peak MiB" "PyTorch peak MiB"
} >"$out/table.txt"
rows_json=""
for n in $sizes; do
  p="$out/probe-$n.json"
  t="$out/torch-$n.json"
  if [[ -f "$p" ]]; then
    tflops="$(json_number matmul_tflops "$p")"
    alloc="$(json_number peak_alloc_mb "$p")"
  else
    tflops="exit $(cat "$out/probe-$n.status")"
    alloc=""
  fi
  torch_tflops="$(json_number matmul_tflops "$t")"
  torch_alloc="$(json_number max_memory_allocated_mb "$t")"
  if [[ -f "$t" && -z "$torch_tflops" ]]; then torch_tflops="failed"; fi
  num_probe="$([[ -f "$p" ]] && echo "$tflops" || echo "")"
  num_torch="$([[ "$torch_tflops" =~ ^[0-9.]+$ ]] && echo "$torch_tflops" || echo "")"
  percent="$(div "$num_probe" "$peak" "%.1f" 100)"
  ratio="$(div "$num_probe" "$num_torch" "%.3f" 1)"
  row "$n" "$tflops" "$percent" "$(or_na "$torch_tflops")" "$ratio" "$(or_na "$alloc")" "$(or_na "$torch_alloc")" >>"$out/table.txt"
  rows_json+="${rows_json:+,}{\"n\":$n,\"probe_tflops\":$(q "$num_probe"),\"probe_status\":$(cat "$out/probe-$n.status"),\"percent_of_peak\":$(q "$percent"),\"torch_tflops\":$(q "$num_torch"),\"probe_over_torch\":$(q "$ratio"),\"probe_peak_alloc_mb\":$(q "$alloc"),\"torch_max_memory_allocated_mb\":$(q "$torch_alloc")}"
  if [[ "$n" == 8192 ]]; then
    targets="targets at N=8192: >= 70% of peak: $(met "$percent" 70) ($percent); >= 0.95 of PyTorch: $(met "$ratio" 0.95) ($ratio)"
  fi
done
if [[ -n "${targets:-}" ]]; then echo "$targets" >>"$out/table.txt"; fi
echo "elapsed: $((SECONDS - started)) s" >>"$out/table.txt"

# 6. The device tests, when a test binary is given.
tests_status=null
if [[ -n "$tests" ]]; then
  set +e
  VRAMSIM_PROBE="$probe" "$tests" --gtest_filter='*OnDevice*:ProbeBinary.*:CublasLtLoader.*' >"$out/device-tests.log" 2>&1
  tests_status=$?
  set -e
  echo "device tests: exit $tests_status (log: $out/device-tests.log)" >>"$out/table.txt"
fi

jq_string() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }
printf '{"device":%s,"driver":%s,"peak_tflops":%s,"peak_accumulate":"fp32","pytorch":%s,"device_tests_status":%s,"rows":[%s]}\n' \
  "$(jq_string "$gpu")" "$(jq_string "$driver")" "${peak:-null}" "$(jq_string "$torch_note")" "$tests_status" "$rows_json" \
  >"$out/summary.json"
cat "$out/table.txt"
exit "$first_failure"
