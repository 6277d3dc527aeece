#!/usr/bin/env bash
# The GPU check of issue 6 (docs/GPU.md), in two halves:
#
#   bash scripts/gpu-check.sh --prepare [PACK]   # here, with MLIR (build/)
#   bash scripts/gpu-check.sh [PACK]             # on the GPU machine, repo root
#   bash scripts/gpu-check.sh --build-only [PACK] # its build step alone (any machine)
#
# --prepare compiles every example step for sm_90 with amp-compile (fp32,
# f16, bf16), and the MLP with a dynamic batch dimension
# (test/amp-compile/Inputs/mlp_dynamic_digits.mlir, f16, trained in batches
# of 64 and the last one of 29), the same MLP as a data-parallel step
# (data-parallel=mpi, f16 sums: the one-rank NCCL check), writes the
# initial parameters and the expected CPU loss curves (amp-run, same initial
# parameters, batches in file order; the data-parallel step as one process,
# a world of one), copies the digits data, and checks that the pack (default
# build/gpu-pack) stays under the 64 MiB that can be carried to the GPU
# machine.
#
# Without --prepare (CUDA toolkit, CMake, ninja, Python 3 + PyTorch; no MLIR)
# it builds the runtime, the driver and the compiled steps with CMake, runs
# the device tests (amp-gpu-selftest), trains every compiled step with
# amp-train (the data-parallel step with a one-rank NCCL communicator,
# amp-train --nccl) and compares its loss curve with the CPU one (tolerances in
# scripts/compare-curves.py), benchmarks 8192^3 f16/bf16 GEMMs (ampMatmul vs
# cuBLASLt direct vs torch.matmul) and one training step of the MLP and the
# transformer block vs PyTorch eager AMP, and prints a table. Exit status 0
# when every check passed.
set -uo pipefail
cd "$(dirname "$0")/.."
EXAMPLES=${AMP_GPU_EXAMPLES:-"mlp cnn transformer"}
MODES=${AMP_GPU_MODES:-"fp32 f16 bf16"}
# Modes of the step with a dynamic batch ("" leaves it out), and its batch.
DYNAMIC_MODES=${AMP_GPU_DYNAMIC_MODES-"f16"}
DYNAMIC_BATCH=64
# Modes of the data-parallel step ("" leaves it out): the dynamic MLP with
# data-parallel=mpi, trained as the one of a dynamic batch is.
DP_MODES=${AMP_GPU_DP_MODES-"f16"}
STEPS=${AMP_GPU_STEPS:-100}
LIMIT_MIB=64

amp_options() { # example, mode -> AMP, the amp-compile/amp-run options
  local dp="" text=""
  [ "$1" != mlp_dp ] || dp="data-parallel=mpi"
  case $2 in
    fp32) [ -z "$dp" ] || text="level=O0 $dp" ;;
    *) text="dtype=$2${dp:+ $dp}" ;;
  esac
  AMP=()
  [ -z "$text" ] || AMP=("--amp=$text")
}

step_source() { # example name -> its step
  case $1 in
    mlp_dynamic|mlp_dp) echo test/amp-compile/Inputs/mlp_dynamic_digits.mlir ;;
    *) echo "examples/$1.mlir" ;;
  esac
}

prepare() {
  local pack=$1 build=${AMP_BUILD_DIR:-build}
  local data=$build/data
  for tool in amp-compile amp-run; do
    [ -x "$build/bin/$tool" ] || { echo "gpu-check: $build/bin/$tool is not built"; return 1; }
  done
  [ -f "$data/digits_train_x.npy" ] || { echo "gpu-check: no $data/digits_train_x.npy"; return 1; }
  export CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
  rm -rf "$pack" && mkdir -p "$pack/steps" "$pack/expected" "$pack/init" "$pack/data"
  cp "$data/digits_train_x.npy" "$data/digits_train_y.npy" "$pack/data/"
  local x=$pack/data/digits_train_x.npy y=$pack/data/digits_train_y.npy
  # One line per compiled step: example, mode, steps, and for a step with a
  # dynamic batch its batch size (the last partial batch kept).
  : > "$pack/manifest"
  local ex mode modes batching AMP
  for ex in $EXAMPLES ${DYNAMIC_MODES:+mlp_dynamic} ${DP_MODES:+mlp_dp}; do
    modes=$MODES batching=()
    case $ex in
      mlp_dynamic) modes=$DYNAMIC_MODES ;;
      mlp_dp) modes=$DP_MODES ;;
    esac
    case $ex in
      mlp_dynamic|mlp_dp) batching=(--batch-size "$DYNAMIC_BATCH" --keep-last-batch) ;;
    esac
    "$build/bin/amp-run" "$(step_source "$ex")" --steps 0 --data "$x,$y" "${batching[@]}" \
      --save-params "$pack/init/$ex" > /dev/null || return 1
    for mode in $modes; do
      echo "gpu-check: compiling $ex ($mode) for sm_90"
      amp_options "$ex" "$mode"
      "$build/bin/amp-compile" "$(step_source "$ex")" "${AMP[@]}" --chip=sm_90 \
        -o "$pack/steps/${ex}_$mode.o" || return 1
      "$build/bin/amp-run" "$(step_source "$ex")" "${AMP[@]}" --data "$x,$y" \
        --steps "$STEPS" --shuffle=false --load-params "$pack/init/$ex" "${batching[@]}" \
        --log "$pack/expected/${ex}_$mode.csv" > /dev/null || return 1
      echo "$ex $mode $STEPS${batching:+ $DYNAMIC_BATCH}" >> "$pack/manifest"
    done
  done
  local bytes
  bytes=$(du -sb "$pack" | cut -f1)
  echo "gpu-check: pack $pack holds $(du -sh "$pack" | cut -f1) ($bytes bytes; limit $LIMIT_MIB MiB)"
  [ "$bytes" -lt $((LIMIT_MIB * 1024 * 1024)) ] || { echo "gpu-check: the pack is too large"; return 1; }
}

run_on_gpu() {
  [ -f "$1/manifest" ] || { echo "gpu-check: no $1/manifest (run --prepare here first)"; return 1; }
  local pack build_only=${2:-}
  pack=$(cd "$1" && pwd)
  # Outside the pack, so that a pack built here stays carriable.
  local out=${AMP_GPU_RESULTS:-$pack.results} build=$pack.build
  mkdir -p "$out"
  local steps="" failures=0 table=$out/table.txt
  local ex mode n batch dynamic=0
  while read -r ex mode n batch; do
    steps="$steps;${ex}_$mode=$pack/steps/${ex}_$mode.o"
    [ -z "$batch" ] || dynamic=$((dynamic + 1))
  done < "$pack/manifest"
  echo "== build (runtime, amp-train, compiled steps)"
  cmake -S runtime -B "$build" -G Ninja -DAMP_COMPILED_STEPS="${steps#;}" > "$out/cmake.log" 2>&1 &&
    ninja -C "$build" > "$out/ninja.log" 2>&1 || { tail -n 30 "$out/cmake.log" "$out/ninja.log"; return 1; }
  if [ -n "$build_only" ]; then
    echo "gpu-check: built $(($(wc -l < "$pack/manifest") - dynamic)) compiled steps and $dynamic of a dynamic batch in $build/lib, $build/bin/amp-train, $build/bin/amp-gpu-selftest"
    return 0
  fi
  : > "$table"
  row() { printf '%-34s %s\n' "$1" "$2" | tee -a "$table"; }

  echo "== device tests"
  if timeout 300 "$build/bin/amp-gpu-selftest" > "$out/selftest.log" 2>&1; then
    row "amp-gpu-selftest" "PASS"
  else
    row "amp-gpu-selftest" "FAIL (see $out/selftest.log)"; failures=$((failures + 1))
  fi

  echo "== training: compiled steps vs the CPU (amp-run) loss curves"
  while read -r ex mode n batch; do
    local name=${ex}_$mode batching=()
    [ -z "$batch" ] || batching=(--batch-size "$batch" --keep-last-batch)
    # The data-parallel step sums through NCCL, on a one-rank communicator.
    [ "$ex" != mlp_dp ] || batching+=(--nccl)
    if timeout 120 "$build/bin/amp-train" "$build/lib/lib$name.so" \
         --data "$pack/data/digits_train_x.npy,$pack/data/digits_train_y.npy" "${batching[@]}" \
         --steps "$n" --init "$pack/init/$ex" --log "$out/$name.csv" --time 100 \
         > "$out/$name.log" 2>&1 &&
       verdict=$(python3 scripts/compare-curves.py "$mode" "$pack/expected/$name.csv" "$out/$name.csv"); then
      row "train $name" "$verdict, $(sed -n 's/.*: \(.* ms per step\).*/\1/p' "$out/$name.log")"
    else
      row "train $name" "FAIL ${verdict:-(see $out/$name.log)}"; failures=$((failures + 1))
    fi
  done < "$pack/manifest"

  echo "== GEMM 8192^3: ampMatmul vs cuBLASLt direct vs torch.matmul"
  if timeout 120 "$build/bin/amp-gpu-selftest" --bench 8192 > "$out/bench.log" 2>&1; then
    grep -iE "f16|bf16" "$out/bench.log" | while read -r line; do row "gemm (runtime)" "$line"; done
  else
    row "gemm (runtime)" "FAIL (see $out/bench.log)"; failures=$((failures + 1))
  fi
  python3 bench/torch_reference.py matmul 8192 2> "$out/torch-matmul.log" |
    while read -r line; do row "gemm torch.matmul" "$line"; done

  echo "== one training step vs PyTorch eager AMP (autocast + GradScaler)"
  for ex in mlp transformer; do
    for mode in f16 bf16; do
      [ -f "$out/${ex}_$mode.log" ] || continue
      ours=$(sed -n 's/.*: \([0-9.]*\) ms per step.*/\1/p' "$out/${ex}_$mode.log")
      torch=$(python3 bench/torch_reference.py step "$ex" "$mode" 2> "$out/torch-$ex-$mode.log")
      row "step ${ex} $mode" "amp-compile ${ours:-?} ms, torch eager AMP ${torch:-?} ms"
    done
  done
  echo "== summary ($(date -u +%F)); $failures failure(s)"
  cat "$table"
  [ "$failures" -eq 0 ]
}

case ${1:-} in
  --prepare) prepare "${2:-${AMP_BUILD_DIR:-build}/gpu-pack}" ;;
  --build-only) run_on_gpu "${2:-${AMP_BUILD_DIR:-build}/gpu-pack}" build-only ;;
  -h|--help) sed -n '2,24p' "$0" ;;
  *) run_on_gpu "${1:-${AMP_BUILD_DIR:-build}/gpu-pack}" ;;
esac
