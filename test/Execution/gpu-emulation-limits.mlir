// amp-gpu-emulate-on-host checks, as it runs a kernel on the host, that its
// launch would be within CUDA's limits: a grid of 65536 blocks in y stops
// the run with the limit named (cf.assert prints to stdout, which abort does
// not flush: stdbuf makes it line-buffered).

// RUN: amp-opt %s --pass-pipeline="builtin.module(func.func(amp-gpu-emulate-on-host,convert-scf-to-cf),convert-cf-to-llvm,convert-arith-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)" \
// RUN:   | not --crash stdbuf -oL mlir-runner -e main -entry-point-result=void 2>&1 | FileCheck %s

// CHECK: a kernel's grid size in y exceeds CUDA's limit of 65535

func.func @main() {
  %c1 = arith.constant 1 : index
  %rows = arith.constant 65536 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %rows, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}
