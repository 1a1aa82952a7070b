#!/usr/bin/env bash
# The FGD paper's comparison (Weng et al., ATC '23) in one command
# (docs/workloads-openb.md, "Placement policies against fragmentation"): the
# openb pod lists replayed as arrivals on the 1,523-node list under each
# placement policy, one fragmentation CSV per run (--frag-csv), then
# `vramsim report`'s unallocated and fragmented GPUs against the arrived
# workload, one curve per policy.
#
# Usage: scenarios/studies/openb-policies.sh [OUT_DIR] [POD_LIST...]
#   OUT_DIR   default study-openb-policies
#   POD_LIST  default, gpushare40, gpushare100, gpuspec33 (default: default)
# Environment: VRAMSIM (default: build/tools/vramsim of this checkout);
#   POLICIES (default: "first-fit ray best-fit fgd");
#   OPENB_TRACES (default: ../shared/data/traces/alibaba-gpu-v2023 beside the checkout).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
vramsim=${VRAMSIM:-$here/../../build/tools/vramsim}
out=${1:-study-openb-policies}
shift || true
lists=("$@")
[ ${#lists[@]} -gt 0 ] || lists=(default)
policies=${POLICIES:-first-fit ray best-fit fgd}
traces=${OPENB_TRACES:-$here/../../../shared/data/traces/alibaba-gpu-v2023}
[ -x "$vramsim" ] || { echo "openb-policies.sh: $vramsim not found; build it first: cmake --build build --target vramsim" >&2; exit 2; }
if [ ! -f "$traces/openb_node_list_all_node.csv" ]; then
  echo "openb-policies.sh: the openb trace is absent: no $traces/openb_node_list_all_node.csv" >&2
  echo "  (set OPENB_TRACES to the folder holding the cluster-trace-gpu-v2023 CSVs)" >&2
  exit 2
fi
traces=$(cd "$traces" && pwd)
mkdir -p "$out"
for list in "${lists[@]}"; do
  pods=$traces/openb_pod_list_$list.csv
  [ -f "$pods" ] || { echo "openb-policies.sh: no pod list $pods" >&2; exit 2; }
  # The bundled study with its trace paths made absolute.
  sed -e "s|\"nodes\": \"[^\"]*\"|\"nodes\": \"$traces/openb_node_list_all_node.csv\"|" \
      -e "s|\"pods\": \"[^\"]*\"|\"pods\": \"$pods\"|" "$here/openb-default.json" >"$out/openb-$list.json"
  mkdir -p "$out/$list"
  for p in $policies; do
    start=$(date +%s.%N)
    "$vramsim" run "$out/openb-$list.json" --policies "fixed,advertisement=legacy,placement=$p" \
        --frag-csv "$out/$list/frag-$p.csv" --frag-nodes-csv "$out/$list/nodes-$p.csv" \
        > "$out/$list/summary-$p.txt" 2>/dev/null || [ $? -eq 1 ]
    echo "$list $p: $(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s"
  done
  "$vramsim" report "$out/$list" >/dev/null
  echo "$list: $out/$list/report/report.md"
done
