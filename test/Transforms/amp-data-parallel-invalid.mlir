// RUN: amp-opt %s --split-input-file --amp-data-parallel -verify-diagnostics
// RUN: not amp-opt %s --amp-data-parallel="grad-comm-dtype=f8" 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not amp-opt %s --amp-data-parallel="bucket-size=0" 2>&1 | FileCheck %s --check-prefix=BUCKET

// DTYPE: error: option 'grad-comm-dtype' must be f32, f16 or bf16, got 'f8'
// BUCKET: error: option 'bucket-size' must be a number of bytes >= 1, got 0

// Buckets have a static size.
func.func @dynamic_grad(%g: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error@+1 {{'amp.update' op gradient #0 has type 'tensor<?xf32>'; amp-data-parallel packs gradients into buckets, which needs float tensors of static shape}}
  %n = amp.update grads(%g : tensor<?xf32>) state(%w : tensor<?xf32>) {
  ^bb0(%dw: tensor<?xf32>, %w0: tensor<?xf32>):
    amp.yield %w0 : tensor<?xf32>
  } : tensor<?xf32>
  return %n : tensor<?xf32>
}

// -----

// The collectives come before the last update, so earlier updates move
// there: nothing may read their new state in between.
func.func @state_read_early(%g: tensor<4xf32>, %w: tensor<4xf32>, %v: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-note@+1 {{the update is here}}
  %w1 = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  // expected-error@+1 {{'arith.mulf' op uses the new state of an 'amp.update' before the last update of the step; the step's gradients must all be computed before its one overflow decision}}
  %g2 = arith.mulf %w1, %g : tensor<4xf32>
  // expected-note@+1 {{the last update is here}}
  %v1 = amp.update grads(%g2 : tensor<4xf32>) state(%v : tensor<4xf32>) {
  ^bb0(%dv: tensor<4xf32>, %v0: tensor<4xf32>):
    amp.yield %v0 : tensor<4xf32>
  } : tensor<4xf32>
  return %w1, %v1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// The runners' MPI runtime speaks MPICH's ABI.
// expected-error@+1 {{the module's DLTI spec sets "MPI:Implementation" to "OpenMPI", but the MPI runtime of amp-data-parallel's steps is built for MPICH's ABI}}
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">} {
  func.func @step(%g: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
    %n = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
    ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>):
      amp.yield %w0 : tensor<4xf32>
    } : tensor<4xf32>
    return %n : tensor<4xf32>
  }
}
