#!/usr/bin/env bash
# vramsim replay on the command line: the default processor count from the
# header, a Batsim workload by its .json name, exit 2 with a one-line message naming file, line and field on bad
# input, exit 3 when the CSV cannot be written.
set -u
vramsim=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
# expect STATUS STDERR-SUBSTRING -- ARGS...
expect() {
  local want=$1 msg=$2
  shift 3
  "$vramsim" replay "$@" >"$dir/out" 2>"$dir/err"
  local rc=$?
  if [ "$rc" != "$want" ] || ! grep -qF -- "$msg" "$dir/err" "$dir/out"; then
    echo "FAIL: replay $* -> exit $rc (want $want), expected '$msg' in:"; cat "$dir/err" "$dir/out"
    fails=$((fails + 1))
  elif [ "$want" = 2 ] && [ "$(wc -l <"$dir/err")" != 1 ]; then
    echo "FAIL: replay $*: expected one line on stderr:"; cat "$dir/err"
    fails=$((fails + 1))
  fi
}
row() { echo "$1 $2 0 $3 $4 -1 -1 $4 $3 -1 1 1 1 -1 -1 -1 -1 -1"; }
{ echo "; MaxProcs: 4"; row 1 0 10 4; row 2 1 10 2; row 3 2 5 2; row 4 3 5 8; } >"$dir/ok.swf"
expect 0 "replay: ok.swf on 4 processors, fcfs" -- "$dir/ok.swf"
expect 0 "jobs: 3 replayed, 1 skipped (0 no run time, 0 no processor count, 1 wider than the partition)" -- "$dir/ok.swf"
expect 0 "jobs: 4 replayed" -- "$dir/ok.swf" --procs 8 --scheduler easy --jobs-csv "$dir/jobs.csv"
printf 'job_id,submit,start,end\n1,0,0,10\n2,1,1,11\n3,2,2,7\n4,3,11,16\n' >"$dir/want.csv"
cmp -s "$dir/jobs.csv" "$dir/want.csv" || { echo "FAIL: jobs.csv:"; cat "$dir/jobs.csv"; fails=$((fails + 1)); }
expect 0 "jobs: 2 replayed" -- "$dir/ok.swf" --limit 2

{ row 1 0 10 4; } >"$dir/nohead.swf"
expect 2 "nohead.swf: MaxProcs: the header has none; expected --procs N" -- "$dir/nohead.swf"
{ echo "; MaxProcs: 4"; row 1 0 10 4; echo "2 1 0 x 4 -1 -1 4 5 -1 1 1 1 -1 -1 -1 -1 -1"; } >"$dir/bad.swf"
expect 2 "bad.swf:3: run_time: expected an integer (-1 for unknown), got 'x'" -- "$dir/bad.swf"
expect 2 "missing.swf: file: cannot be opened for reading" -- "$dir/missing.swf"
expect 2 "--scheduler: expected fcfs or easy, got 'sjf'" -- "$dir/ok.swf" --scheduler sjf
expect 2 "--procs: expected a positive number of processors, got 0" -- "$dir/ok.swf" --procs 0
expect 2 "--limit: expected a positive number of jobs, got 0" -- "$dir/ok.swf" --limit 0
cat >"$dir/w.json" <<'JSON'
{"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 2, "walltime": 5, "profile": "d"},
                       {"id": 2, "subtime": 1, "res": 1, "walltime": 50, "profile": "d"}],
 "profiles": {"d": {"type": "delay", "delay": 10}}}
JSON
expect 0 "killed at their requested time (walltime): 1" -- "$dir/w.json" --jobs-csv "$dir/w.csv"
printf 'job_id,submit,start,end\n1,0.000,0.000,5.000\n2,1.000,5.000,15.000\n' >"$dir/want.csv"  # Batsim: to the millisecond
cmp -s "$dir/w.csv" "$dir/want.csv" || { echo "FAIL: w.csv:"; cat "$dir/w.csv"; fails=$((fails + 1)); }
echo '{"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 3, "profile": "d"}], "profiles": {}}' >"$dir/bad.json"
expect 2 "bad.json: jobs[0].profile: expected the name of a profile in profiles, got \"d\"" -- "$dir/bad.json"
if [ -w /dev/full ]; then
  expect 3 "cannot write '/dev/full'" -- "$dir/ok.swf" --jobs-csv /dev/full
fi
[ "$fails" = 0 ] && echo "replay-cli: all passed"
exit "$fails"
