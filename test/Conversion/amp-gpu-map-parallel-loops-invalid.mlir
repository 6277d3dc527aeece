// RUN: amp-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(func.func(amp-gpu-map-parallel-loops))"

func.func @sum(%a: memref<64xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{has reductions, which the GPU lowering cannot map to threads}}
  %s = scf.parallel (%i) = (%c0) to (%c64) step (%c1) init (%zero) -> f32 {
    %x = memref.load %a[%i] : memref<64xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %t = arith.addf %l, %r : f32
      scf.reduce.return %t : f32
    }
  }
  return %s : f32
}

// -----

func.func @too_large(%out: memref<100000000x100000000xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100000000 : index
  // expected-error @+1 {{needs more blocks than a GPU grid holds (390625 along its innermost dimension, 100000000 along the others; at most 65535 in one of them)}}
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    memref.store %v, %out[%i, %j] : memref<100000000x100000000xf32>
  }
  return
}
