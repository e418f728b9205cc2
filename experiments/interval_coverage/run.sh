#!/usr/bin/env bash
# Runs one experiment at many base seeds, one JSON per seed, for coverage.py
# (experiments/interval_coverage/README.md).
#
# usage: experiments/interval_coverage/run.sh EXPERIMENT FIRST LAST [--random] [--out DIR] [-j N]
#   EXPERIMENT   a file in configs/experiments without .yaml (pm_wq_highpri_b, binder_rt_gs101, ...)
#   FIRST LAST   base seeds FIRST..LAST (with --random: the FIRST-th to LAST-th of a fixed list of
#                random 63-bit seeds instead of the small integers)
#   --out DIR    where the per-seed experiment files and JSON go (default: coverage_out/EXPERIMENT)
#   -j N         simulations at once (default: all cores; results do not depend on it)
# A seed whose JSON exists is skipped, so an interrupted run resumes (with
# another build or experiment, use another --out).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
schedlab="${SCHEDLAB:-$root/build/schedlab}"
[ $# -ge 3 ] || { sed -n '5,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }
name="$1" first="$2" last="$3"; shift 3
random=0 out="" jobs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --random) random=1; shift ;;
    --out) out="$2"; shift 2 ;;
    -j) jobs=(-j "$2"); shift 2 ;;
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
exp="$root/configs/experiments/$name.yaml"
[ -f "$exp" ] || { echo "run.sh: no experiment $exp" >&2; exit 2; }
[ -x "$schedlab" ] || { echo "run.sh: $schedlab not found: build first (cmake --build build)" >&2; exit 2; }
out="${out:-coverage_out/$name}"
mkdir -p "$out"
scenario="$(sed -n 's/^scenario: *["'"'"']\{0,1\}\([^ #"'"'"']*\).*/\1/p' "$exp")"
scenario="$(cd "$(dirname "$exp")" && readlink -e "$scenario")" || { echo "run.sh: $exp: scenario not found" >&2; exit 2; }
# With --random, line k of `seeds` is the k-th of a fixed list of random 63-bit seeds (Python's Mersenne
# Twister, seed 20261205); else line k is k.
if [ "$random" = 1 ]; then
  seeds="$(python3 -c "import random; r = random.Random(20261205); print('\n'.join(str(r.getrandbits(63)) for _ in range($last)))")"
else
  seeds="$(seq 1 "$last")"
fi
for k in $(seq "$first" "$last"); do
  seed="$(sed -n "${k}p" <<< "$seeds")"
  tag="$([ "$random" = 1 ] && echo "r$k" || echo "s$k")"
  [ -f "$out/$tag.json" ] && continue
  sed -e "s/^seed: .*/seed: $seed/" -e "s#^scenario: .*#scenario: $scenario#" "$exp" > "$out/$tag.yaml"
  "$schedlab" compare "$out/$tag.yaml" "${jobs[@]}" -q --json "$out/$tag.json"
  printf '\r%s: seed %s (%d of %d)' "$name" "$tag" "$((k - first + 1))" "$((last - first + 1))" >&2
done
echo >&2
