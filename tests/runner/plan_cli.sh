#!/usr/bin/env bash
# vramsim plan on the command line: the M/M/c scenario's answer and CSV, a
# plan no configuration meets (exit 1, the closest named), and bad input
# (exit 2, one line naming the argument).
#   plan_cli.sh VRAMSIM SCENARIO
set -uo pipefail
vramsim=$1 scenario=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/vramsim-plan-cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAILED: $*"; exit 1; }
run() {  # run EXPECTED_EXIT ARGS...: stdout to $work/out, stderr to $work/err
  local want=$1; shift
  "$vramsim" plan "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" -eq "$want" ] || { cat "$work/out" "$work/err"; fail "plan $*: exit $rc, expected $want"; }
}
mmc=("$scenario" --vary apps.0.replicas=1..8 --monotone apps.0.replicas --seeds 1..8 --objective replica_seconds)

run 0 "${mmc[@]}" --slo 'req_wait_mean_s<=0.01' -o "$work/plan.csv"
grep -qx "chosen: apps.0.replicas=5" "$work/out" || { cat "$work/out"; fail "expected 5 replicas (Erlang C)"; }
grep -qx "runner-up: apps.0.replicas=6" "$work/out" || { cat "$work/out"; fail "expected the runner-up at 6"; }
grep -q "^plan: 8 configuration(s) x 8 seed(s); evaluated [1-7] configuration(s)" "$work/out" ||
  { cat "$work/out"; fail "expected fewer configurations than the grid's 8"; }
head -1 "$work/plan.csv" | grep -qx \
  "apps.0.replicas,seeds_run,decision,req_wait_mean_s_mean,req_wait_mean_s_bound,req_wait_mean_s_slo,slo_met,replica_seconds,chosen,evaluated_as" ||
  fail "unexpected CSV header: $(head -1 "$work/plan.csv")"
[ "$(awk -F, 'NR > 1 && $9 == 1' "$work/plan.csv")" = "$(awk -F, 'NR > 1 && $1 == 5' "$work/plan.csv")" ] ||
  fail "expected the row of 5 replicas, and only it, chosen"
awk -F, 'NR > 1 && $9 == 1 && $7 != 1 { exit 1 }' "$work/plan.csv" || fail "the chosen row must meet the SLOs"

# The same plan with -j 1: the same bytes.
run 0 "${mmc[@]}" --slo 'req_wait_mean_s<=0.01' -j 1 -o "$work/plan-j1.csv"
cmp -s "$work/plan.csv" "$work/plan-j1.csv" || fail "the CSV depends on -j"

# No configuration meets it: exit 1, the closest named, the CSV written.
run 1 "${mmc[@]}" --slo 'req_wait_mean_s<=0.000001' -o "$work/none.csv"
grep -q "^no configuration evaluated meets the SLOs; the closest: apps.0.replicas=8" "$work/out" ||
  { cat "$work/out"; fail "expected the closest configuration named"; }
[ -s "$work/none.csv" ] || fail "expected the CSV of a plan that met nothing"
awk -F, 'NR > 1 && $9 == 1 { exit 1 }' "$work/none.csv" || fail "nothing chosen expected"

# Every configuration meets it: the cheapest.
run 0 "$scenario" --vary apps.0.replicas=5..8 --seeds 1..4 --objective replica_seconds --slo 'req_wait_mean_s<=10'
grep -qx "chosen: apps.0.replicas=5" "$work/out" || { cat "$work/out"; fail "expected the cheapest, 5 replicas"; }

# --gpu-price, as on run: the cost is GPU-hours x the price, so doubling the
# price doubles the chosen configuration's cost objective, and the answer
# stays. A sweep takes it too: its cost_usd column doubles alike.
cost_of() { sed -n 's/^  cost_usd (objective): mean \([0-9.e+]*\) .*/\1/p' "$work/out" | head -1; }
priced=("$scenario" --vary apps.0.replicas=5,6 --monotone apps.0.replicas --seeds 1..2 --objective cost_usd
        --slo 'req_wait_mean_s<=10')
run 0 "${priced[@]}" --gpu-price A100-SXM4-80GB=1
one=$(cost_of)
grep -qx "chosen: apps.0.replicas=5" "$work/out" || { cat "$work/out"; fail "expected 5 replicas at any price"; }
run 0 "${priced[@]}" --gpu-price A100-SXM4-80GB=2
two=$(cost_of)
grep -qx "chosen: apps.0.replicas=5" "$work/out" || { cat "$work/out"; fail "expected 5 replicas at any price"; }
awk -v a="$one" -v b="$two" 'BEGIN { exit !(a > 0 && b / a > 1.999 && b / a < 2.001) }' ||
  fail "cost at 2 USD ($two) is not twice the cost at 1 USD ($one)"
for price in 1 2; do
  "$vramsim" sweep "$scenario" --set apps.0.replicas=5 --seeds 1 --gpu-price "A100-SXM4-80GB=$price" \
    -o "$work/sweep-$price.csv" 2>/dev/null || fail "sweep --gpu-price A100-SXM4-80GB=$price failed"
done
col=$(head -1 "$work/sweep-1.csv" | tr , '\n' | grep -nx cost_usd | cut -d: -f1)
[ -n "$col" ] || fail "no cost_usd column in the sweep CSV"
awk -F, -v c="$col" 'FNR == 2 { print $c }' "$work/sweep-1.csv" "$work/sweep-2.csv" >"$work/costs"
awk 'NR == 1 { a = $1 } NR == 2 { b = $1 } END { exit !(a > 0 && b / a > 1.999 && b / a < 2.001) }' "$work/costs" ||
  fail "the sweep's cost_usd does not double with the price: $(tr '\n' ' ' <"$work/costs")"

# Bad input: exit 2 and one line naming the argument; no CSV left behind.
bad() {  # bad EXPECTED_TEXT ARGS...
  local want=$1; shift
  run 2 "$@" -o "$work/bad.csv"
  grep -qF -- "$want" "$work/err" || { cat "$work/err"; fail "plan $*: stderr lacks '$want'"; }
  [ "$(wc -l <"$work/err")" -le 1 ] || { cat "$work/err"; fail "plan $*: more than one line"; }
  [ ! -e "$work/bad.csv" ] || fail "plan $*: a CSV was written"
}
bad "--slo 'nonsense<=1': 'nonsense' is not a run metric" "$scenario" --slo 'nonsense<=1'
bad "--slo 'req_wait_mean_s=1': expected METRIC<=VALUE" "$scenario" --slo 'req_wait_mean_s=1'
bad "--vary 'apps.0.replicas=5..2': '5..2': expected an integer range" "$scenario" --slo 'req_wait_mean_s<=1' \
  --vary apps.0.replicas=5..2
bad "--monotone cluster.max_workers: expected the path of a --vary" "$scenario" --slo 'req_wait_mean_s<=1' \
  --vary apps.0.replicas=1..2 --monotone cluster.max_workers
bad "--confidence: expected a share from 0.5 to 0.999" "$scenario" --slo 'req_wait_mean_s<=1' --confidence 1.5
bad "--objective 'dollars': expected a run metric" "$scenario" --slo 'req_wait_mean_s<=1' --objective dollars
bad "--seeds '9..2': expected" "$scenario" --slo 'req_wait_mean_s<=1' --seeds 9..2
bad "--vary apps.0.replicas=x: " "$scenario" --slo 'req_wait_mean_s<=1' --vary apps.0.replicas=1,x
bad "--parts-dir: expected with --on-slurm only" "$scenario" --slo 'req_wait_mean_s<=1' --parts-dir "$work/p"
bad "--gpu-price 'B300=1': expected MODEL=USD" "$scenario" --slo 'req_wait_mean_s<=1' --gpu-price B300=1
bad "--gpu-price with --on-slurm: expected the prices in the scenario" "$scenario" --slo 'req_wait_mean_s<=1' \
  --gpu-price A100-SXM4-80GB=1 --on-slurm
# Option values out of their range, or empty: exit 2 naming the option.
for args in "-j 0" "-j 1025" "--poll 0" "--seeds=" "--output=" "--objective="; do
  # shellcheck disable=SC2086
  run 2 "$scenario" --slo 'req_wait_mean_s<=1' $args
  grep -q -- "--$(echo "$args" | sed 's/^-j.*/jobs/; s/^--\([a-z]*\).*/\1/')" "$work/err" ||
    { cat "$work/err"; fail "plan $args: the option is not named"; }
done
# A folder where the CSV should go: exit 3 before any run.
mkdir "$work/dir.csv"
run 3 "$scenario" --slo 'req_wait_mean_s<=1' -o "$work/dir.csv"
echo "plan CLI: the Erlang C answer, no-answer and all-pass plans, --gpu-price, bad input refused"
