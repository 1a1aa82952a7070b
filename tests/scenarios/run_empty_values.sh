#!/usr/bin/env bash
# Options given an empty value ('' as its own argument) exit 2 with one line
# naming the option, as a scenario field out of range does; none runs with
# a default instead.  Usage: run_empty_values.sh VRAMSIM SCENARIO
set -u
vramsim=$1 scenario=$2
fail=0
check() {  # expected-substring args...
  local want=$1; shift
  local err rc
  err=$("$vramsim" "$@" 2>&1 >/dev/null); rc=$?
  if [ "$rc" != 2 ] || [[ "$err" != *"$want"* ]] || [ "$(printf '%s\n' "$err" | wc -l)" != 1 ]; then
    echo "FAIL: vramsim $* -> exit $rc, stderr: $err (expected 2 and '$want')"; fail=1
  fi
}
check "--seed: expected an integer in [0, 18446744073709551615], got ''" run "$scenario" --seed ''
check "--status-every: expected a duration such as 10s, got ''" run "$scenario" --status-every ''
check "--trace: expected a file path, got ''" run "$scenario" --trace ''
check "--status-json: expected a file path, got ''" run "$scenario" --status-json ''
check "--chrome-trace: expected a file path, got ''" run "$scenario" --chrome-trace ''
check "--policies: expected legacy, fixed or preset,model=variant,..., got ''" run "$scenario" --policies ''
check "--seed: expected an integer in [0, 18446744073709551615], got ''" compare "$scenario" --seed ''
check "--mix: expected preset,model=variant,..., got ''" compare "$scenario" --mix ''
check "--seed: expected an integer in [0, 18446744073709551615], got '-1'" gen --seed -1
exit $fail
