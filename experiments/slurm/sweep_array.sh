#!/usr/bin/env bash
# Runs a schedlab sweep as a Slurm job array: one array task per shard
# (`schedlab sweep --shard i/N`), then one job, started only when every
# shard succeeded, that merges the shards (`schedlab merge`) into
# OUTDIR/merged: byte for byte what one unsharded sweep writes.
#
#   experiments/slurm/sweep_array.sh [options] SWEEP.yaml OUTDIR
#
#   -n N          shards = array tasks (default 4)
#   -c CPUS       CPUs per array task (default 1); each shard runs -j CPUS
#   -p PARTITION  Slurm partition (default: the cluster's default)
#   -t TIME       time limit per array task, as sbatch --time (default: the partition's)
#   -w, --wait    wait for the merge to finish and exit with its status
#   --schedlab P  the schedlab binary (default: $SCHEDLAB, else `schedlab` on PATH)
#   -h, --help    this text
#
# OUTDIR must be on a filesystem every node sees (NFS, Lustre, ...): the
# shards write OUTDIR/shard-<i>, the merge reads them all. Logs go to
# OUTDIR/logs/. Submitting again into the same OUTDIR resumes: each shard
# keeps the points it finished and the merge is redone. Extra sbatch
# options (account, QoS, ...) can come from the SBATCH_* environment
# variables sbatch itself reads (e.g. SBATCH_ACCOUNT=proj).
set -euo pipefail

usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; }

shards=4 cpus=1 partition="" time_limit="" wait_merge=0
schedlab="${SCHEDLAB:-}"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n) shards="$2"; shift 2 ;;
    -c) cpus="$2"; shift 2 ;;
    -p) partition="$2"; shift 2 ;;
    -t) time_limit="$2"; shift 2 ;;
    -w|--wait) wait_merge=1; shift ;;
    --schedlab) schedlab="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "sweep_array.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
if [ ${#args[@]} -ne 2 ]; then usage >&2; exit 2; fi
case "$shards" in ''|*[!0-9]*|0) echo "sweep_array.sh: -n needs a positive integer" >&2; exit 2 ;; esac
case "$cpus" in ''|*[!0-9]*|0) echo "sweep_array.sh: -c needs a positive integer" >&2; exit 2 ;; esac
command -v sbatch >/dev/null || { echo "sweep_array.sh: sbatch not found (is this a Slurm submit host?)" >&2; exit 2; }

# Absolute paths: jobs start in other directories and on other nodes.
sweep="$(realpath "${args[0]}")"
out="$(realpath -m "${args[1]}")"
[ -f "$sweep" ] || { echo "sweep_array.sh: no sweep file '${args[0]}'" >&2; exit 2; }
if [ -z "$schedlab" ]; then schedlab="$(command -v schedlab || true)"; fi
[ -n "$schedlab" ] && [ -x "$schedlab" ] || { echo "sweep_array.sh: schedlab binary not found (use --schedlab PATH or SCHEDLAB=PATH)" >&2; exit 2; }
schedlab="$(realpath "$schedlab")"
mkdir -p "$out/logs"

common=()
[ -n "$partition" ] && common+=(--partition="$partition")

# One array task per shard. printf %q quotes paths for the job's shell.
shard_cmd="$(printf '%q sweep %q --shard "${SLURM_ARRAY_TASK_ID}/%d" --out %q/shard-"${SLURM_ARRAY_TASK_ID}" -j %d -q' \
  "$schedlab" "$sweep" "$shards" "$out" "$cpus")"
array_opts=(--parsable --job-name=schedlab-sweep --array="0-$((shards - 1))" --cpus-per-task="$cpus"
            --output="$out/logs/shard-%a.out")
[ -n "$time_limit" ] && array_opts+=(--time="$time_limit")
array_id="$(sbatch "${common[@]}" "${array_opts[@]}" --wrap="$shard_cmd")"
array_id="${array_id%%;*}"  # --parsable prints "jobid[;cluster]"

# The merge runs when every shard succeeded; if one fails, the dependency
# can never be met and Slurm cancels the merge instead of leaving it pending.
shard_dirs=""
for ((i = 0; i < shards; i++)); do shard_dirs+=" $(printf '%q' "$out/shard-$i")"; done
merge_cmd="$(printf '%q merge' "$schedlab")${shard_dirs} $(printf -- '--out %q' "$out/merged")"
merge_opts=(--parsable --job-name=schedlab-merge --dependency="afterok:$array_id" --kill-on-invalid-dep=yes
            --cpus-per-task=1 --output="$out/logs/merge.out")
echo "submitted shards: job array $array_id ($shards tasks, $cpus CPU(s) each), logs in $out/logs/"
if [ "$wait_merge" = 1 ]; then
  echo "waiting for the merge into $out/merged ..."
  if sbatch "${common[@]}" "${merge_opts[@]}" --wait --wrap="$merge_cmd" >/dev/null; then
    echo "merged: $out/merged"
  else
    status=$?
    echo "sweep_array.sh: the merge did not succeed (exit $status); see $out/logs/" >&2
    exit "$status"
  fi
else
  merge_id="$(sbatch "${common[@]}" "${merge_opts[@]}" --wrap="$merge_cmd")"
  echo "submitted merge: job ${merge_id%%;*} -> $out/merged (squeue -j $array_id,${merge_id%%;*})"
fi
