#!/usr/bin/env bash
# The teo tick study in one command (experiments/teo_tick/README.md): teo
# (v6.5), teo_tick (+ the tick fixes series) and teo_tick_rfc (+ the RFC v1
# of 1 Aug 2023) on the Geekbench-6-like run and on JetNews flings (gs101),
# printed as the thread's tables with the published values beside them.
#
# usage: experiments/teo_tick/run.sh [--runs N] [--out DIR] [-j N] [--set-file FILE]
#   --runs N         runs per kernel and workload (default: the experiment files' 100)
#   --out DIR        where the JSON goes (default: a temporary directory, removed)
#   -j N             simulations at once (default: all cores; results do not depend on it)
#   --set-file FILE  overlays for every kernel of both workloads, e.g.
#                    configs/overlays/gs101_idle_power_gs201.yaml (a what-if)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
schedlab="${SCHEDLAB:-$root/build/schedlab}"
runs=() jobs=() sets=() out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) [ $# -ge 2 ] || { echo "run.sh: --runs needs a number" >&2; exit 2; }; runs=(--runs "$2"); shift 2 ;;
    --out) [ $# -ge 2 ] || { echo "run.sh: --out needs a directory" >&2; exit 2; }; out="$2"; shift 2 ;;
    -j) [ $# -ge 2 ] || { echo "run.sh: -j needs a number" >&2; exit 2; }; jobs=(-j "$2"); shift 2 ;;
    --set-file) [ $# -ge 2 ] || { echo "run.sh: --set-file needs a file" >&2; exit 2; }; sets+=(--set-file "$2"); shift 2 ;;
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[ -x "$schedlab" ] || { echo "run.sh: $schedlab not found: build first (cmake --build build)" >&2; exit 2; }
if [ -z "$out" ]; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
for study in geekbench jetnews; do
  "$schedlab" compare "$root/configs/experiments/teo_tick_$study.yaml" "${runs[@]}" "${jobs[@]}" ${sets[@]+"${sets[@]}"} -q \
    --json "$out/teo_tick_$study.json"
done
python3 "$here/thread_table.py" "$out/teo_tick_geekbench.json" "$out/teo_tick_jetnews.json"
