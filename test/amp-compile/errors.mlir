// RUN: not amp-compile %s -o %t.o 2>&1 | FileCheck %s
// RUN: not amp-compile %s --chip=sm_100 -o %t.o 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not amp-compile %s --amp "dtype=f8" -o %t.o 2>&1 | FileCheck %s --check-prefix=OPTIONS

// A data batch of dynamic shape: a session could not allocate it.
// CHECK: errors.mlir:[[@LINE+3]]:42: error: amp-compile: data argument 'arg1' has a dynamic batch dimension; ahead-of-time GPU steps take static shapes: compile the step for one batch size
// CHIP: amp-compile: error: amp-lower-to-nvvm: chip 'sm_100' is not one of sm_70 ... sm_90
// OPTIONS: amp-compile: error: --amp:
func.func @train_step(%w: tensor<4xf32>, %x: tensor<?x4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %loss = linalg.fill ins(%c0 : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %seed = amp.seed %loss : tensor<f32>
  %new = amp.update grads(%w : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %loss, %new : tensor<f32>, tensor<4xf32>
}
