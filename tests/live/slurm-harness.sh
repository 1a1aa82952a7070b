#!/usr/bin/env bash
# A real single-node SLURM on loopback, confined to one directory, for the
# live tests and for trying live mode by hand.
#   slurm-harness.sh start DIR   write the config, start munged, slurmctld and
#                                slurmd, wait until the node is idle
#   slurm-harness.sh stop DIR    cancel every job, stop every daemon it
#                                started (TERM, then KILL); safe to repeat
#   slurm-harness.sh env DIR     print the export lines a shell needs
# Everything (key, sockets, pid files, logs, state, spool) lives in DIR; the
# daemons are started and stopped by pid, never by name. Ports are chosen
# free at start, so several harnesses can run side by side.
set -euo pipefail

usage() { echo "usage: $0 start|stop|env DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
mkdir -p "$2"
DIR=$(cd "$2" && pwd)
BOUND=${VRAMSIM_HARNESS_WAIT_S:-60}   # seconds any one wait may take

log() { echo "slurm-harness: $*" >&2; }
die() { log "$*"; exit 1; }

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pid_of() { [ -s "$DIR/run/$1.pid" ] && cat "$DIR/run/$1.pid" || true; }

# Every process whose environment carries this harness's tag: the daemons and
# the slurmstepd they fork (which inherit slurmd's environment). Only the
# daemons are started with the tag; `env` does not print it, so a shell that
# ran `env` is never a target.
tagged_pids() {
  local f pid
  for f in /proc/[0-9]*/environ; do
    pid=${f#/proc/}; pid=${pid%/environ}
    [ "$pid" = $$ ] && continue
    if { tr '\0' '\n' <"$f"; } 2>/dev/null | grep -qxF "VRAMSIM_SLURM_HARNESS=$DIR"; then
      echo "$pid"
    fi
  done
}

# kill_wait SIGNAL-then-KILL over the given pids, bounded.
kill_wait() {
  local pids=("$@") left i p
  [ ${#pids[@]} -gt 0 ] || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    left=()
    for p in "${pids[@]}"; do alive "$p" && left+=("$p"); done
    [ ${#left[@]} -eq 0 ] && return 0
    sleep 0.1
  done
  log "still running after 10 s, sending KILL: ${left[*]}"
  kill -KILL "${left[@]}" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    left=()
    for p in "${pids[@]}"; do alive "$p" && left+=("$p"); done
    [ ${#left[@]} -eq 0 ] && return 0
    sleep 0.1
  done
  log "could not stop: ${left[*]}"
  return 1
}

stop() {
  [ -f "$DIR/etc/slurm.conf" ] || return 0
  export SLURM_CONF="$DIR/etc/slurm.conf"
  # Jobs first, while the controller still runs: slurmd leaves running jobs
  # alone when it stops.
  if alive "$(pid_of slurmctld)"; then
    local ids
    ids=$(timeout 10 squeue --noheader --format=%i 2>/dev/null || true)
    if [ -n "$ids" ]; then
      # shellcheck disable=SC2086
      timeout 10 scancel $ids 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do
        [ -z "$(timeout 10 squeue --noheader --format=%i 2>/dev/null || true)" ] && break
        sleep 0.2
      done
    fi
  fi
  local pids=() p d
  for d in slurmd slurmctld munged; do
    p=$(pid_of "$d")
    alive "$p" && pids+=("$p")
  done
  kill_wait "${pids[@]}" || true
  # Whatever the daemons left behind (slurmstepd, job steps).
  mapfile -t pids < <(tagged_pids)
  kill_wait "${pids[@]}" || true
  rm -f "$DIR"/run/*.pid
}

free_port() {
  local p used
  used=$(ss -Htan 2>/dev/null | awk '{print $4}' | sed 's/.*://' || true)
  for ((i = 0; i < 200; i++)); do
    p=$((20000 + RANDOM % 30000))
    grep -qx "$p" <<<"$used" && continue
    grep -qx "$p" <<<"${taken:-}" && continue
    (: <"/dev/tcp/127.0.0.1/$p") 2>/dev/null && continue
    taken="${taken:-}"$'\n'"$p"
    echo "$p"
    return 0
  done
  die "no free port found"
}

write_config() {
  local node cpus mem ctld_port slurmd_port user
  node=$(hostname -s)
  cpus=$(nproc)
  # Memory is not a consumable resource here (CR_Core); a small figure keeps
  # slurmd from draining the node on hosts with little free memory.
  mem=1024
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  user=$(id -un)
  mkdir -p "$DIR"/{etc,run,log,state,spool/"$node",munge,bin,dev}
  chmod 0700 "$DIR/munge"
  # The stand-in GPU device of gres.conf: slurmd wants a character or block
  # device (it stat()s through links), so a link to /dev/null serves.
  ln -sfn /dev/null "$DIR/dev/nvidia0"
  cat >"$DIR/etc/slurm.conf" <<EOF
# Written by slurm-harness.sh: one node on loopback, everything under $DIR.
ClusterName=vramsim
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/munge.socket
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.daemon.pid
SlurmdPidFile=$DIR/run/slurmd.daemon.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
ReturnToService=2
# Short waits so cancelled and finished jobs leave squeue quickly.
KillWait=2
MinJobAge=2
InactiveLimit=0
SlurmdTimeout=60
SlurmctldTimeout=60
MessageTimeout=10
SchedulerType=sched/backfill
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem Gres=gpu:1 State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  cat >"$DIR/etc/gres.conf" <<EOF
NodeName=$node Name=gpu File=$DIR/dev/nvidia0
EOF
}

write_fake_nvidia_smi() {
  echo 0 >"$DIR/gpu-memory-used-mb"
  cat >"$DIR/bin/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
# Stand-in nvidia-smi: one NVIDIA A100-SXM4-40GB (40960 MiB, MIG disabled).
# Answers --query-gpu=FIELD,... --format=csv[,noheader][,nounits] as the real
# one does; memory.used is read from gpu-memory-used-mb next to bin/.
here=$(cd "$(dirname "$0")/.." && pwd)
used=$(cat "$here/gpu-memory-used-mb" 2>/dev/null || echo 0)
total=40960
query="" format=""
for a in "$@"; do
  case "$a" in
    --query-gpu=*) query=${a#--query-gpu=} ;;
    --format=*) format=${a#--format=} ;;
    -L|--list-gpus) echo "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-00000000-0000-0000-0000-000000000000)"; exit 0 ;;
  esac
done
if [ -z "$query" ]; then
  echo "NVIDIA-SMI stand-in: 1 GPU, NVIDIA A100-SXM4-40GB, ${used}MiB / ${total}MiB, MIG Disabled"
  exit 0
fi
case ",$format," in *,csv,*) ;; *) echo "Only CSV format is supported by this stand-in" >&2; exit 2 ;; esac
noheader=0 nounits=0
case ",$format," in *,noheader,*) noheader=1 ;; esac
case ",$format," in *,nounits,*) nounits=1 ;; esac
mib() { if [ $nounits = 1 ]; then echo "$1"; else echo "$1 MiB"; fi; }
IFS=, read -r -a fields <<<"$query"
header=() row=()
for f in "${fields[@]}"; do
  case "$f" in
    name|gpu_name) header+=("name"); row+=("NVIDIA A100-SXM4-40GB") ;;
    index) header+=("index"); row+=("0") ;;
    uuid|gpu_uuid) header+=("uuid"); row+=("GPU-00000000-0000-0000-0000-000000000000") ;;
    driver_version) header+=("driver_version"); row+=("535.104.05") ;;
    memory.total) header+=("memory.total [MiB]"); row+=("$(mib $total)") ;;
    memory.used) header+=("memory.used [MiB]"); row+=("$(mib "$used")") ;;
    memory.free) header+=("memory.free [MiB]"); row+=("$(mib $((total - used)))") ;;
    mig.mode.current|mig.mode.pending) header+=("$f"); row+=("Disabled") ;;
    count) header+=("count"); row+=("1") ;;
    *) echo "Field \"$f\" is not a valid field to query." >&2; exit 2 ;;
  esac
done
join() { local IFS=$'\x1f'; local s="$*"; echo "${s//$'\x1f'/, }"; }
[ $noheader = 1 ] || join "${header[@]}"
join "${row[@]}"
EOF
  chmod 0755 "$DIR/bin/nvidia-smi"
}

# start_daemon NAME CMD...: in the background, in its own session, output to
# DIR/log/NAME.out, pid to DIR/run/NAME.pid. The harness tag in the
# environment lets stop find what the daemon forks.
start_daemon() {
  local name=$1; shift
  VRAMSIM_SLURM_HARNESS="$DIR" setsid "$@" </dev/null >"$DIR/log/$name.out" 2>&1 &
  echo $! >"$DIR/run/$name.pid"
}

wait_for() {  # wait_for WHAT CMD...: until CMD succeeds, bounded
  local what=$1 i; shift
  for ((i = 0; i < BOUND * 5; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  return 1
}

fail_start() {
  log "$1"
  local f
  for f in "$DIR"/log/*; do
    [ -s "$f" ] || continue
    echo "---- tail of $f" >&2
    tail -n 15 "$f" >&2
  done
  stop
  exit 1
}

node_idle() {
  local s
  s=$(timeout 10 sinfo --noheader --nodes="$(hostname -s)" --format=%t 2>/dev/null) || return 1
  [ "$s" = idle ]
}

start() {
  for t in munged mungekey slurmctld slurmd sinfo squeue sbatch scancel ss; do
    command -v "$t" >/dev/null || die "$t not found (tools/setup.sh installs slurm-wlm and munge)"
  done
  stop   # leftovers of an earlier run in the same directory
  rm -rf "$DIR"/{state,spool,log,munge} "$DIR"/job-*.out
  write_config
  write_fake_nvidia_smi
  export SLURM_CONF="$DIR/etc/slurm.conf"

  mungekey --create --force --keyfile="$DIR/munge/munge.key" >/dev/null
  chmod 0600 "$DIR/munge/munge.key"
  start_daemon munged munged --foreground --force --socket="$DIR/munge/munge.socket" \
    --key-file="$DIR/munge/munge.key" --pid-file="$DIR/munge/munged.pid" \
    --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed"
  wait_for munged test -S "$DIR/munge/munge.socket" || fail_start "munged did not create its socket"

  start_daemon slurmctld slurmctld -D -i -f "$SLURM_CONF"
  wait_for slurmctld timeout 10 sinfo --noheader || fail_start "slurmctld did not answer within ${BOUND} s"
  start_daemon slurmd slurmd -D -f "$SLURM_CONF" -N "$(hostname -s)"
  wait_for slurmd node_idle || fail_start "node did not become idle within ${BOUND} s: $(sinfo -N -l 2>&1 | tail -n 1)"
  for d in munged slurmctld slurmd; do
    alive "$(pid_of $d)" || fail_start "$d exited"
  done
  log "up in $DIR (slurmctld port $(sed -n 's/^SlurmctldPort=//p' "$SLURM_CONF"))"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  env)
    [ -f "$DIR/etc/slurm.conf" ] || die "no harness in $DIR (run start first)"
    echo "export SLURM_CONF=$DIR/etc/slurm.conf"
    echo "export PATH=$DIR/bin:\$PATH"
    ;;
  *) usage ;;
esac
