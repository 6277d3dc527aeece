// RUN: not amp-compile %s --func=dynamic_result_static_batch -o %t.o 2>&1 | FileCheck %s --check-prefix=STATIC
// RUN: not amp-compile %s --func=dynamic_inner_result -o %t.o 2>&1 | FileCheck %s --check-prefix=INNER
// RUN: not amp-compile %s --func=i8_data -o %t.o 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not amp-compile %s --func=hyper_without_value -o %t.o 2>&1 | FileCheck %s --check-prefix=HYPER
// RUN: not amp-compile %s --func=dynamic_result_static_batch --chip=sm_100 -o %t.o 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not amp-compile %s --func=dynamic_result_static_batch --amp "dtype=f8" -o %t.o 2>&1 | FileCheck %s --check-prefix=OPTIONS

// CHIP: amp-compile: error: amp-lower-to-nvvm: chip 'sm_100' is not one of sm_70 ... sm_90
// OPTIONS: amp-compile: error: --amp:

// A result of dynamic size in a step of static batches: nothing gives the
// session its size.
// STATIC: errors.mlir:[[@LINE+1]]:1: error: amp-compile: result 'result2' has type 'tensor<?x4xf32>'; only dimension 0 of data arguments and results may be dynamic (the batch size, given at each call), in a step whose data arguments have a dynamic batch dimension
func.func @dynamic_result_static_batch(%w: tensor<4xf32>, %x: tensor<2x4xf32>)
    -> (tensor<f32>, tensor<4xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %loss = linalg.fill ins(%c0 : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %seed = amp.seed %loss : tensor<f32>
  %new = amp.update grads(%w : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  %out = tensor.cast %x : tensor<2x4xf32> to tensor<?x4xf32>
  return %loss, %new, %out : tensor<f32>, tensor<4xf32>, tensor<?x4xf32>
}

// Only the batch may be dynamic, also in a step with a dynamic batch.
// INNER: errors.mlir:[[@LINE+1]]:1: error: amp-compile: result 'result2' has type 'tensor<?x?xf32>'; only dimension 0 of data arguments and results may be dynamic
func.func @dynamic_inner_result(%w: tensor<4xf32>, %x: tensor<?x4xf32>)
    -> (tensor<f32>, tensor<4xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %loss = linalg.fill ins(%c0 : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %seed = amp.seed %loss : tensor<f32>
  %new = amp.update grads(%w : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  %out = tensor.cast %x : tensor<?x4xf32> to tensor<?x?xf32>
  return %loss, %new, %out : tensor<f32>, tensor<4xf32>, tensor<?x?xf32>
}

// Element types the table has no code for.
// TYPE: errors.mlir:[[@LINE+1]]:56: error: amp-compile: argument 'x' has type 'tensor<?x4xi8>'; compiled steps take ranked tensors of f32, f16, bf16, f64, i1, i32, i64
func.func @i8_data(%w: tensor<4xf32> {amp.name = "w"}, %x: tensor<?x4xi8> {amp.name = "x"})
    -> (tensor<f32>, tensor<4xf32>) {
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

// A hyperparameter starts at its amp.value: the session has no other.
// HYPER: errors.mlir:[[@LINE+1]]:51: error: amp-compile: hyperparameter 'lr' needs an 'amp.value' to start the compiled step at
func.func @hyper_without_value(%w: tensor<4xf32>, %lr: tensor<f32> {amp.name = "lr"})
    -> (tensor<f32>, tensor<4xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %loss = linalg.fill ins(%c0 : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %seed = amp.seed %loss : tensor<f32>
  %new = amp.update grads(%w : tensor<4xf32>) state(%w : tensor<4xf32>) inputs(%lr : tensor<f32>) {
  ^bb0(%g: tensor<4xf32>, %w0: tensor<4xf32>, %r: tensor<f32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %loss, %new : tensor<f32>, tensor<4xf32>
}
