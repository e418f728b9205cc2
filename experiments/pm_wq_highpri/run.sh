#!/usr/bin/env bash
# The pm_wq WQ_HIGHPRI study in one command (experiments/pm_wq_highpri/README.md):
# both phones' A/B (nice 0 vs WQ_HIGHPRI) printed as the thread's tables with
# the published values beside them, the who-pays rows, and the WQ_SYSFS nice
# sweep with its plot.
#
# usage: experiments/pm_wq_highpri/run.sh [--runs N] [--sweep-runs N] [--out DIR] [--no-sweep] [-j N]
#   --runs N        runs per variant and phone (default: the experiment files' 245, the thread's count)
#   --sweep-runs N  runs per nice value of the sweep (default: the sweep file's 60)
#   --out DIR       where the JSON, CSV and plots go (default: pm_wq_highpri_out)
#   --no-sweep      skip the nice sweep
#   -j N            simulations at once (default: all cores; results do not depend on it)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
schedlab="${SCHEDLAB:-$root/build/schedlab}"
runs=() sweep=1 out=pm_wq_highpri_out jobs=() sweep_runs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=(--runs "$2"); shift 2 ;;
    --sweep-runs) sweep_runs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-sweep) sweep=0; shift ;;
    -j) jobs=(-j "$2"); shift 2 ;;
    -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$schedlab" ] || { echo "run.sh: $schedlab not found: build first (cmake --build build)" >&2; exit 2; }
mkdir -p "$out"
for phone in a b; do
  "$schedlab" compare "$root/configs/experiments/pm_wq_highpri_$phone.yaml" "${runs[@]}" "${jobs[@]}" -q \
    --json "$out/pm_wq_highpri_$phone.json"
done
python3 "$here/thread_table.py" "$out/pm_wq_highpri_a.json" "$out/pm_wq_highpri_b.json"
if [ "$sweep" = 1 ]; then
  sweep_file="$root/configs/sweeps/pm_wq_nice.yaml"
  if [ -n "$sweep_runs" ]; then
    sed "s/^runs: .*/runs: $sweep_runs/" "$sweep_file" > "$out/pm_wq_nice.yaml"
    sed -i "s#^scenario: ../scenarios/#scenario: $root/configs/scenarios/#" "$out/pm_wq_nice.yaml"
    sweep_file="$out/pm_wq_nice.yaml"
  fi
  rm -rf "$out/sweep"
  "$schedlab" sweep "$sweep_file" "${jobs[@]}" -q --out "$out/sweep" --plot "$out/plots"
  echo "WQ_SYSFS nice sweep (platform A), mean over runs per nice value:"
  python3 "$here/thread_table.py" --sweep "$out/sweep/points.csv"
  echo
  echo "plot: $out/plots/sweep_curves.png"
fi
