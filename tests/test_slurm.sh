#!/usr/bin/env bash
# End-to-end test of experiments/slurm/sweep_array.sh on a real Slurm:
# starts a throw-away single-node cluster on this machine (munged with its
# own key, slurmctld and slurmd from Debian's slurm-wlm, a private
# slurm.conf, state and spool folders and ports, all under one temporary
# folder), submits a small sweep as a job array with sbatch, waits for the
# merge (bounded), checks that the merged folder equals an unsharded sweep
# byte for byte, then stops the daemons it started (by PID) and removes
# everything. Needs root. Anything that keeps Slurm from running is a
# FAILURE, never a skip: a CI that cannot run this test must say so.
#
#   tests/test_slurm.sh SCHEDLAB_BINARY SOURCE_DIR
set -euo pipefail

schedlab="$(realpath "${1:?usage: test_slurm.sh SCHEDLAB_BINARY SOURCE_DIR}")"
src="$(realpath "${2:?usage: test_slurm.sh SCHEDLAB_BINARY SOURCE_DIR}")"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "must run as root (it starts munged, slurmctld and slurmd)"
for c in munged munge unmunge sbatch squeue scontrol slurmctld slurmd sinfo python3; do
  command -v "$c" >/dev/null || fail "'$c' not found: apt-get install slurm-wlm munge"
done

tmp="$(mktemp -d /tmp/schedlab-slurm.XXXXXX)"
chmod 755 "$tmp"
pids=()
munged_pid=""
show_logs() {
  for f in "$tmp"/*.log "$tmp"/munge/munged.log "$tmp"/array/logs/*.out; do
    [ -f "$f" ] && { echo "---- $f (last lines)"; tail -n 15 "$f"; }
  done
  return 0
}
cleanup() {
  status=$?
  [ $status -ne 0 ] && show_logs >&2
  if [ -f "$tmp/slurm.conf" ]; then
    SLURM_CONF="$tmp/slurm.conf" timeout 10 scancel --user=root >/dev/null 2>&1 || true
  fi
  # Only the processes this script started, by PID.
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  # munged last: slurmctld and slurmd authenticate through it until they stop.
  if [ -n "$munged_pid" ]; then kill "$munged_pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  rm -rf "$tmp"
  exit $status
}
trap cleanup EXIT

# --- munge: a throw-away key and socket (the machine's own munge, if any, is left alone)
mkdir -m 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
# --foreground: this script's own child, stopped and reaped by PID below.
munged --foreground --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge.sock" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" --seed-file="$tmp/munge/munged.seed" 2>>"$tmp/munge/munged.stderr.log" &
munged_pid=$!
for _ in $(seq 50); do [ -S "$tmp/munge.sock" ] && break; sleep 0.1; done
[ -S "$tmp/munge.sock" ] || fail "munged did not start"
munge -S "$tmp/munge.sock" -n | unmunge -S "$tmp/munge.sock" >/dev/null || fail "munge credentials do not round-trip"

# --- slurm.conf: one node (this machine), private ports, no cgroups, no accounting
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ctld_port="$(free_port)"
d_port="$(free_port)"
[ "$ctld_port" != "$d_port" ] || d_port="$(free_port)"
host="$(hostname -s)"
cpus="$(nproc)"
mkdir -p "$tmp/state" "$tmp/spool"
cat >"$tmp/slurm.conf" <<CONF
ClusterName=schedlabtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=schedlab Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$tmp/slurm.conf"

# --- daemons in the foreground (-D) of background jobs, so their PIDs are ours
slurmctld -D -f "$SLURM_CONF" >"$tmp/slurmctld.stdout.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.2; done
scontrol ping | grep -q UP || fail "slurmctld did not come up"
slurmd -D -f "$SLURM_CONF" -N "$host" >"$tmp/slurmd.stdout.log" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 150); do
  state="$(sinfo -h -N -o %t 2>/dev/null | head -n 1)"
  [ "$state" = "idle" ] && break
  sleep 0.2
done
[ "$state" = "idle" ] || fail "the node did not become idle (state '$state')"
echo "slurm: single-node cluster up on $host (ports $ctld_port/$d_port, $cpus CPUs)"

# --- a small sweep: 2 variants x 3 nice values x 3 runs of 1 s
cat >"$tmp/sweep.yaml" <<SWEEP
name: slurm_e2e
scenario: $src/configs/scenarios/mixed_2cpu.yaml
runs: 3
seed: 1
duration: 1s
warmup: 200ms
start_jitter: 16ms
grid:
  tasks[ui_main].nice: [-10, 0, 10]
variants:
  - name: rtp_on
  - name: rtp_off
    set: {kernel.features.RUN_TO_PARITY: false}
SWEEP
"$schedlab" sweep "$tmp/sweep.yaml" --out "$tmp/single" -q </dev/null || fail "the unsharded sweep failed"

cd "$tmp"
timeout 300 "$src/experiments/slurm/sweep_array.sh" -n 3 -c 1 --wait --schedlab "$schedlab" \
  "$tmp/sweep.yaml" "$tmp/array" || fail "the job array or its merge failed or timed out"
for i in 0 1 2; do [ -f "$tmp/array/shard-$i/shard.json" ] || fail "shard $i wrote no folder"; done
diff -r "$tmp/single" "$tmp/array/merged" || fail "the merged job array differs from the unsharded sweep"
echo "PASS: Slurm job array of 3 shards merged to the same bytes as one unsharded sweep"
