// RUN: amp-opt %s --split-input-file --amp-guard-update -verify-diagnostics
// RUN: not amp-opt %s --amp-guard-update="backoff-factor=2" 2>&1 | FileCheck %s --check-prefix=BACKOFF
// RUN: not amp-opt %s --split-input-file --amp-guard-update="scaling=none" 2>&1 | FileCheck %s --check-prefix=NONE

// The options are validated as for amp-loss-scaling (see its tests).
// BACKOFF: error: option 'backoff-factor' must be in (0, 1), got 2

// Dynamic scaling reads the scale from the argument amp-loss-scaling adds.
// expected-error@+1 {{'func.func' op has 0 scaler state arguments but scaling=dynamic needs 2; run amp-loss-scaling first, with the same options}}
func.func @no_state(%g: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %new = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

// All updates share one decision, so none may be nested.
func.func @update_in_branch(%c: i1, %w: tensor<4xf32>,
                            %s: tensor<f32> {amp.state = "scale"},
                            %t: tensor<i32> {amp.state = "growth_tracker"}) -> tensor<4xf32> {
  %r = scf.if %c -> tensor<4xf32> {
    // expected-error@+1 {{'amp.update' op is nested in 'scf.if'; all updates of a step share one overflow decision, so 'amp.update' must be directly in the function body}}
    %new = amp.update grads(%w : tensor<4xf32>) state(%w : tensor<4xf32>) {
    ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>):
      amp.yield %w0 : tensor<4xf32>
    } : tensor<4xf32>
    scf.yield %new : tensor<4xf32>
  } else {
    scf.yield %w : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// One step updates its state once.
func.func @update_in_loop(%w: tensor<4xf32>,
                          %s: tensor<f32> {amp.state = "scale"},
                          %t: tensor<i32> {amp.state = "growth_tracker"}) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note@+1 {{the enclosing loop is here}}
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %w) -> tensor<4xf32> {
    // expected-error@+1 {{'amp.update' op is inside a loop; a training step updates its state once, so 'amp.update' must be directly in the function body}}
    %new = amp.update grads(%acc : tensor<4xf32>) state(%acc : tensor<4xf32>) {
    ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>):
      amp.yield %w0 : tensor<4xf32>
    } : tensor<4xf32>
    scf.yield %new : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// The decision needs every gradient; a gradient computed from an earlier
// update's result comes too late.
func.func @chained_updates(%g: tensor<4xf32>, %w: tensor<4xf32>, %v: tensor<4xf32>,
                           %s: tensor<f32> {amp.state = "scale"},
                           %t: tensor<i32> {amp.state = "growth_tracker"}) -> tensor<4xf32> {
  // expected-note@+1 {{the update is here}}
  %w1 = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>):
    %n = arith.subf %w0, %dw : tensor<4xf32>
    amp.yield %n : tensor<4xf32>
  } : tensor<4xf32>
  // expected-error@+1 {{'arith.mulf' op uses the new state of an 'amp.update' before the last update of the step; the step's gradients must all be computed before its one overflow decision}}
  %g2 = arith.mulf %w1, %g : tensor<4xf32>
  // expected-note@+1 {{the last update is here}}
  %v1 = amp.update grads(%g2 : tensor<4xf32>) state(%v : tensor<4xf32>) {
  ^bb0(%dv: tensor<4xf32>, %v0: tensor<4xf32>):
    %n = arith.subf %v0, %dv : tensor<4xf32>
    amp.yield %n : tensor<4xf32>
  } : tensor<4xf32>
  return %v1 : tensor<4xf32>
}

// -----

// The guard's options must be those amp-loss-scaling was given: with
// scaling=none (the NONE run) the scaler state arguments are an error; with
// the default dynamic scaling they are right and this step has no error.
// NONE: error: 'func.func' op has scaler state arguments but scaling=none; give amp-guard-update the options given to amp-loss-scaling
func.func @state_without_scaling(%w: tensor<4xf32>,
                                 %s: tensor<f32> {amp.state = "scale"},
                                 %t: tensor<i32> {amp.state = "growth_tracker"}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// found_inf is appended to the results, which a caller would not expect.
func.func @called_step(%w: tensor<4xf32>,
                       %s: tensor<f32> {amp.state = "scale"},
                       %t: tensor<i32> {amp.state = "growth_tracker"}) -> tensor<4xf32> {
  // expected-error@-3 {{'func.func' op is a training step with loss scaling, which adds scaler state to its signature, but it is referenced by other operations}}
  return %w : tensor<4xf32>
}

func.func @caller(%w: tensor<4xf32>, %s: tensor<f32>, %t: tensor<i32>) -> tensor<4xf32> {
  // expected-note@+1 {{referenced here}}
  %r = func.call @called_step(%w, %s, %t) : (tensor<4xf32>, tensor<f32>, tensor<i32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Sums over the ranks and local gradients cannot share one decision.
func.func @partly_data_parallel(%g: tensor<4xf32>, %w: tensor<4xf32>, %v: tensor<4xf32>,
                                %s: tensor<f32> {amp.state = "scale"},
                                %t: tensor<i32> {amp.state = "growth_tracker"})
    -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-note@+1 {{the first update is here}}
  %w1 = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } {amp.data_parallel = "mpi"} : tensor<4xf32>
  // expected-error@+1 {{'amp.update' op lacks 'amp.data_parallel', unlike the first update of the step; all updates of a step are data-parallel or none}}
  %v1 = amp.update grads(%g : tensor<4xf32>) state(%v : tensor<4xf32>) {
  ^bb0(%dv: tensor<4xf32>, %v0: tensor<4xf32>):
    amp.yield %v0 : tensor<4xf32>
  } : tensor<4xf32>
  return %w1, %v1 : tensor<4xf32>, tensor<4xf32>
}
