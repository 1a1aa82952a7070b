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
#   OPENB_TRACES: a folder holding the cluster-trace-gpu-v2023 CSVs; unset,
#   tools/fetch-traces finds or downloads the node list and each pod list
#   (openb-nodes, openb-LIST: a local copy first, e.g. ../shared/data/traces).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
vramsim=${VRAMSIM:-$here/../../build/tools/vramsim}
out=${1:-study-openb-policies}
shift || true
lists=("$@")
[ ${#lists[@]} -gt 0 ] || lists=(default)
policies=${POLICIES:-first-fit ray best-fit fgd}
[ -x "$vramsim" ] || { echo "openb-policies.sh: $vramsim not found; build it first: cmake --build build --target vramsim" >&2; exit 2; }
if [ -n "${OPENB_TRACES:-}" ]; then
  traces=$OPENB_TRACES
else
  # Each file where the studies read it (data/traces/alibaba-gpu-v2023), or one line saying why not.
  for name in nodes "${lists[@]}"; do
    "$here/../../tools/fetch-traces" "openb-$name" >/dev/null || exit 2
  done
  traces=$here/../../data/traces/alibaba-gpu-v2023
fi
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
