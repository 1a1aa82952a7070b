#!/usr/bin/env bash
# A real SLURM confined to one directory, for the live tests and for trying
# live mode by hand: one node on loopback, or (--nodes N) N nodes, each
# slurmd in its own network namespace with its own address on a bridge, as
# the hosts of a real cluster are.
#   slurm-harness.sh start DIR [--nodes N]
#                                write the config, start munged, slurmctld and
#                                the slurmd(s), wait until every node is idle
#   slurm-harness.sh stop DIR    cancel every job, stop every daemon it
#                                started (TERM, then KILL), remove the
#                                namespaces and the bridge; safe to repeat
#   slurm-harness.sh env DIR     print the export lines a shell needs
#   slurm-harness.sh can-multinode
#                                exit 0 when network namespaces can be made
#                                here, else one line saying why and exit 77
# Everything (key, sockets, pid files, logs, state, spool) lives in DIR; the
# daemons are started and stopped by pid, never by name. Ports are chosen
# free at start, the bridge, namespaces and subnet are named from DIR, so
# several harnesses can run side by side.
#
# Multi-node layout (N nodes): slurmctld and munged in the root namespace,
# listening on the bridge address 10.X.Y.1; node I's slurmd in namespace
# <tag>-nI at 10.X.Y.(10+I), reached through a veth pair on the bridge, in a
# private mount and UTS namespace whose /etc/hosts names the nodes and the
# head (this machine's host name, and `vramsim-head`) with their bridge
# addresses, whose /etc/resolv.conf names no reachable server (a lookup
# fails at once rather than after a timeout), and whose host name is nodeI. The jobs slurmd starts live in
# that node's namespaces: an agent there reaches the head only across the
# bridge. Partitions: `debug` (every node, default, no time limit) and
# `short` (the last node, MaxTime 1 minute).
set -euo pipefail

usage() { echo "usage: $0 start DIR [--nodes N] | stop DIR | env DIR | can-multinode" >&2; exit 2; }
[ $# -ge 1 ] || usage
cmd=$1
NODES=0   # 0: the single loopback node
if [ "$cmd" = can-multinode ]; then
  [ $# -eq 1 ] || usage
  DIR=/nonexistent
else
  [ $# -ge 2 ] || usage
  mkdir -p "$2"
  DIR=$(cd "$2" && pwd)
  shift 2
  while [ $# -gt 0 ]; do
    case "$1" in
      --nodes) [ $# -ge 2 ] || usage; NODES=$2; shift 2 ;;
      *) usage ;;
    esac
  done
  [[ "$NODES" =~ ^[0-9]+$ ]] && [ "$NODES" -le 8 ] || { echo "slurm-harness: --nodes: expected 0..8, got $NODES" >&2; exit 2; }
  [ "$cmd" = start ] || [ "$NODES" = 0 ] || usage
fi
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
  local pids=() p f
  for f in "$DIR"/run/slurmd*.pid "$DIR"/run/slurmctld.pid "$DIR"/run/munged.pid; do
    [ -s "$f" ] || continue
    p=$(cat "$f")
    alive "$p" && pids+=("$p")
  done
  kill_wait "${pids[@]}" || true
  # Whatever the daemons left behind (slurmstepd, job steps).
  mapfile -t pids < <(tagged_pids)
  kill_wait "${pids[@]}" || true
  rm -f "$DIR"/run/*.pid
  net_down
}

# ---- the multi-node network ------------------------------------------------

# Names and subnet from DIR, so two harnesses never share them.
net_names() {
  local h
  h=$(printf %s "$DIR" | md5sum | cut -c1-6)
  TAG=vs$h
  BRIDGE=${TAG}br
  SUBNET=10.$((100 + 0x${h:0:2} % 100)).$((0x${h:2:2})).
  HEAD_ADDR=${SUBNET}1
}
node_addr() { echo "${SUBNET}$((10 + $1))"; }

# Why namespaces cannot be made here (one line), or nothing.
multinode_problem() {
  local t probe=vsprobe$$
  [ "$(id -u)" -eq 0 ] || { echo "network namespaces need root (CAP_SYS_ADMIN, CAP_NET_ADMIN); running as $(id -un)"; return; }
  for t in ip nsenter unshare md5sum; do
    command -v "$t" >/dev/null || { echo "$t not found (tools/setup.sh installs iproute2 and util-linux)"; return; }
  done
  ip netns add "$probe" 2>/dev/null || { echo "ip netns add failed: $(ip netns add "$probe" 2>&1 | head -n 1)"; return; }
  ip netns del "$probe" 2>/dev/null || true
  ip link add "$probe" type bridge 2>/dev/null || { echo "cannot create a bridge: $(ip link add "$probe" type bridge 2>&1 | head -n 1)"; return; }
  ip link del "$probe" 2>/dev/null || true
}

net_up() {
  local i ns
  net_names
  ip link add "$BRIDGE" type bridge
  ip addr add "${HEAD_ADDR}/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  for ((i = 1; i <= NODES; i++)); do
    ns=$TAG-n$i
    ip netns add "$ns"
    ip link add "$TAG-$i" type veth peer name "$TAG-p$i"
    ip link set "$TAG-p$i" netns "$ns"
    ip link set "$TAG-$i" master "$BRIDGE" up
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "$TAG-p$i" name eth0
    ip -n "$ns" addr add "$(node_addr "$i")/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" route add default via "$HEAD_ADDR"
  done
  echo "$NODES" >"$DIR/etc/nodes"
  echo "$HEAD_ADDR" >"$DIR/etc/head-address"
}

net_down() {
  [ -s "$DIR/etc/nodes" ] || return 0
  net_names
  local i n
  n=$(cat "$DIR/etc/nodes")
  for ((i = 1; i <= n; i++)); do
    ip netns del "$TAG-n$i" 2>/dev/null || true
    ip link del "$TAG-$i" 2>/dev/null || true
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  rm -f "$DIR/etc/nodes" "$DIR/etc/head-address"
}

# Node I's slurmd, in its network namespace and a private mount and UTS
# namespace (its own /etc/hosts and host name).
start_node_slurmd() {
  local i=$1
  start_daemon "slurmd-node$i" nsenter --net="/run/netns/$TAG-n$i" \
    unshare --mount --uts --propagation private \
    sh -c 'mount --bind "$1/hosts" /etc/hosts && mount --bind "$1/resolv.conf" /etc/resolv.conf &&
           hostname "$2" && shift 2 && exec "$@"' sh \
    "$DIR/etc" "node$i" slurmd -D -f "$SLURM_CONF" -N "node$i"
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
  local node cpus mem ctld_port slurmd_port user ctld_host nodes_line partitions slurmd_timeout
  node=$(hostname -s)
  cpus=$(nproc)
  # Memory is not a consumable resource here (CR_Core); a small figure keeps
  # slurmd from draining the node on hosts with little free memory.
  mem=1024
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  user=$(id -un)
  mkdir -p "$DIR"/{etc,run,log,state,spool/"$node",munge,bin,dev}
  ctld_host="localhost(127.0.0.1)"
  nodes_line="NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem Gres=gpu:1 State=UNKNOWN"
  partitions="PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP"
  slurmd_timeout=60
  if [ "$NODES" -gt 0 ]; then
    slurmd_timeout=10   # a node cut off is DOWN (its jobs NODE_FAIL) within about 10 s
    local i list=""
    ctld_host="localhost($HEAD_ADDR)"
    nodes_line=""
    {
      echo "127.0.0.1 localhost"
      echo "$HEAD_ADDR $(hostname) vramsim-head"
      for ((i = 1; i <= NODES; i++)); do echo "$(node_addr "$i") node$i"; done
    } >"$DIR/etc/hosts"
    # No name server is reachable from a node: one on its own loopback
    # answers "refused" at once, where the host's would time out.
    echo "nameserver 127.0.0.1" >"$DIR/etc/resolv.conf"
    for ((i = 1; i <= NODES; i++)); do
      mkdir -p "$DIR/spool/node$i"
      nodes_line+="NodeName=node$i NodeAddr=$(node_addr "$i") CPUs=$cpus RealMemory=$mem Gres=gpu:1 State=UNKNOWN"$'\n'
      list+="${list:+,}node$i"
    done
    partitions="PartitionName=debug Nodes=$list Default=YES MaxTime=INFINITE State=UP"$'\n'
    partitions+="PartitionName=short Nodes=node$NODES MaxTime=00:01:00 State=UP"
  fi
  chmod 0700 "$DIR/munge"
  # The stand-in GPU device of gres.conf: slurmd wants a character or block
  # device (it stat()s through links), so a link to /dev/null serves.
  ln -sfn /dev/null "$DIR/dev/nvidia0"
  cat >"$DIR/etc/slurm.conf" <<EOF
# Written by slurm-harness.sh: one node on loopback, everything under $DIR.
ClusterName=vramsim
SlurmctldHost=$ctld_host
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
SlurmdPidFile=$DIR/run/slurmd-%n.daemon.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
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
# A short wait so a cancelled job leaves squeue quickly; an ended job is
# known to scontrol for SLURM's default MinJobAge, as on a real cluster (at
# 2 s, a head on a loaded machine could poll too late to learn how a job
# ended: its record may be purged any time from MinJobAge on).
KillWait=2
MinJobAge=300
InactiveLimit=0
SlurmdTimeout=${VRAMSIM_HARNESS_SLURMD_TIMEOUT:-$slurmd_timeout}
# A batch job on a node that failed ends NODE_FAIL instead of going back to
# the queue (a real cluster may requeue it: the head then sees it pending).
JobRequeue=0
SlurmctldTimeout=60
MessageTimeout=10
SchedulerType=sched/backfill
$nodes_line
$partitions
EOF
  cat >"$DIR/etc/gres.conf" <<EOF
Name=gpu File=$DIR/dev/nvidia0
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

node_names() {
  local i
  if [ "$NODES" -eq 0 ]; then hostname -s; return; fi
  for ((i = 1; i <= NODES; i++)); do echo "node$i"; done
}

# Every node of the harness idle.
nodes_idle() {
  local s n
  s=$(timeout 10 sinfo --noheader --Node --format=%N=%t 2>/dev/null) || return 1
  for n in $(node_names); do grep -qx "$n=idle" <<<"$s" || return 1; done
}

start() {
  for t in munged mungekey slurmctld slurmd sinfo squeue sbatch scancel ss; do
    command -v "$t" >/dev/null || die "$t not found (tools/setup.sh installs slurm-wlm and munge)"
  done
  stop   # leftovers of an earlier run in the same directory
  rm -rf "$DIR"/{state,spool,log,munge} "$DIR"/job-*.out
  if [ "$NODES" -gt 0 ]; then
    local why
    why=$(multinode_problem)
    [ -z "$why" ] || { log "cannot start $NODES nodes: $why"; exit 77; }
    mkdir -p "$DIR/etc"
    net_up || fail_start "could not set up the network of $NODES nodes"
  fi
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
  local daemons=(munged slurmctld) i
  if [ "$NODES" -eq 0 ]; then
    start_daemon slurmd slurmd -D -f "$SLURM_CONF" -N "$(hostname -s)"
    daemons+=(slurmd)
  else
    for ((i = 1; i <= NODES; i++)); do
      start_node_slurmd "$i"
      daemons+=("slurmd-node$i")
    done
  fi
  wait_for slurmd nodes_idle || fail_start "nodes not idle within ${BOUND} s: $(sinfo -N -l 2>&1 | tail -n +3 | tr -s ' ' | paste -sd';')"
  for d in "${daemons[@]}"; do
    alive "$(pid_of "$d")" || fail_start "$d exited"
  done
  log "up in $DIR (slurmctld port $(sed -n 's/^SlurmctldPort=//p' "$SLURM_CONF")$([ "$NODES" -eq 0 ] || echo ", $NODES nodes on $BRIDGE, head at $HEAD_ADDR"))"
}

# What a cluster's outages look like, for the tests: the controller stopped
# and started again (its state kept), a node cut off (slurmd killed, link
# down) and brought back.
ctld_stop() {
  local p
  p=$(pid_of slurmctld)
  if alive "$p"; then kill_wait "$p"; fi
  rm -f "$DIR/run/slurmctld.pid"
}
ctld_start() {
  export SLURM_CONF="$DIR/etc/slurm.conf"
  alive "$(pid_of slurmctld)" && return 0
  start_daemon slurmctld slurmctld -D -f "$SLURM_CONF"   # no -i: the saved jobs come back
  wait_for slurmctld timeout 10 sinfo --noheader || die "slurmctld did not come back within ${BOUND} s"
}
node_cut() {
  local i=$1 p
  net_names
  p=$(pid_of "slurmd-node$i")
  if alive "$p"; then kill -KILL "$p"; fi
  ip link set "$TAG-$i" down
}
node_restore() {
  local i=$1
  net_names
  NODES=$(cat "$DIR/etc/nodes")
  export SLURM_CONF="$DIR/etc/slurm.conf"
  ip link set "$TAG-$i" up
  alive "$(pid_of "slurmd-node$i")" || start_node_slurmd "$i"
}

case "$cmd" in
  can-multinode)
    why=$(multinode_problem)
    [ -z "$why" ] || { echo "slurm-harness: no multi-node cluster here: $why"; exit 77; }
    ;;
  start) start ;;
  stop) stop ;;
  ctld-stop) ctld_stop ;;
  ctld-start) ctld_start ;;
  node-cut|node-restore)
    [[ "${NODE:-}" =~ ^[1-8]$ ]] || die "$cmd: set NODE=I (1..8)"
    "${cmd/-/_}" "$NODE" ;;
  env)
    [ -f "$DIR/etc/slurm.conf" ] || die "no harness in $DIR (run start first)"
    echo "export SLURM_CONF=$DIR/etc/slurm.conf"
    echo "export PATH=$DIR/bin:\$PATH"
    if [ -s "$DIR/etc/nodes" ]; then
      net_names
      echo "export VRAMSIM_HARNESS_HEAD_ADDR=$HEAD_ADDR"
      echo "export VRAMSIM_HARNESS_NODES=$(cat "$DIR/etc/nodes")"
    fi
    ;;
  *) usage ;;
esac
