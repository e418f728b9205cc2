#!/usr/bin/env bash
# Builds schedlab with GCC profile-guided optimisation, for long sweeps.
#
# usage: bench/pgo_build.sh [BUILD_DIR] [-j N]
#   BUILD_DIR  where to build (default: build-pgo); its schedlab and
#              bench/schedlab_bench are the optimised binaries
#   -j N       parallel compile jobs (default: 2)
#
# Two passes in the same directory (GCC names profile files after the object
# paths, so both passes must compile the same objects):
#   1. an instrumented build (-fprofile-generate) runs a training set: the
#      shipped scenarios that exercise EEVDF, RT, big.LITTLE placement and
#      balancing, schedutil, cpuidle, workqueues, pm_runtime and the DRM
#      scheduler, plus one A/B comparison;
#   2. the real build (-fprofile-use) lays out branches and inlines by that
#      profile. -fprofile-partial-training keeps code the training never ran
#      optimised as in a plain Release build.
# Profile feedback changes code layout, never arithmetic (no fast-math, no
# FP contraction is enabled by it): outputs are byte-identical to a plain
# Release build's. Measured on bench/ phone_ui_40: see the README, Benchmark.
# Takes about twice a plain build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="build-pgo" jobs=2
while [ $# -gt 0 ]; do
  case "$1" in
    -j) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "pgo_build.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) build="$1"; shift ;;
  esac
done
mkdir -p "$build"
build="$(cd "$build" && pwd)"
profile="$build/pgo-profile"
rm -rf "$profile"

echo "pgo_build: pass 1/2, instrumented build in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
  -DCMAKE_CXX_FLAGS="-fprofile-generate -fprofile-update=single -fprofile-dir=$profile" >/dev/null
cmake --build "$build" -j "$jobs" --target schedlab

echo "pgo_build: training"
train() { "$build/schedlab" "$@" -q -j 1 >/dev/null; }
for s in phone_ui_40 mixed_2cpu geekbench6_gs101 jetnews_gs101 ui_rk3588 rk3588_panthor_stock shade_swipe; do
  train run "$root/configs/scenarios/$s.yaml" --duration 10s
done
train compare "$root/configs/experiments/pm_wq_highpri_a.yaml" --runs 2

echo "pgo_build: pass 2/2, optimised build"
cmake -S "$root" -B "$build" \
  -DCMAKE_CXX_FLAGS="-fprofile-use -fprofile-partial-training -fprofile-dir=$profile -Wno-missing-profile" >/dev/null
cmake --build "$build" -j "$jobs" --target schedlab schedlab_bench
echo "pgo_build: done: $build/schedlab, $build/bench/schedlab_bench"
