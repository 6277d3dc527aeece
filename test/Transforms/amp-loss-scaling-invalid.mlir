// RUN: amp-opt %s --split-input-file --amp-loss-scaling -verify-diagnostics
// RUN: not amp-opt %s --amp-loss-scaling="growth-factor=1" 2>&1 | FileCheck %s --check-prefix=GROWTH
// RUN: not amp-opt %s --amp-loss-scaling="growth-factor=inf" 2>&1 | FileCheck %s --check-prefix=GROWTH-INF
// RUN: not amp-opt %s --amp-loss-scaling="backoff-factor=1" 2>&1 | FileCheck %s --check-prefix=BACKOFF
// RUN: not amp-opt %s --amp-loss-scaling="backoff-factor=0" 2>&1 | FileCheck %s --check-prefix=BACKOFF0
// RUN: not amp-opt %s --amp-loss-scaling="growth-interval=0" 2>&1 | FileCheck %s --check-prefix=INTERVAL
// RUN: not amp-opt %s --amp-loss-scaling="growth-interval=2147483648" 2>&1 | FileCheck %s --check-prefix=INTERVAL-BIG
// RUN: not amp-opt %s --amp-loss-scaling="init-scale=0" 2>&1 | FileCheck %s --check-prefix=INIT
// RUN: not amp-opt %s --amp-loss-scaling="init-scale=nan" 2>&1 | FileCheck %s --check-prefix=INIT-NAN
// RUN: not amp-opt %s --amp-loss-scaling="init-scale=1e39" 2>&1 | FileCheck %s --check-prefix=INIT-F32
// RUN: not amp-opt %s --amp-loss-scaling="min-scale=4 max-scale=2" 2>&1 | FileCheck %s --check-prefix=MINMAX
// RUN: not amp-opt %s --amp-loss-scaling="min-scale=-1" 2>&1 | FileCheck %s --check-prefix=MIN
// RUN: not amp-opt %s --amp-loss-scaling="min-scale=131072" 2>&1 | FileCheck %s --check-prefix=INIT-RANGE
// RUN: not amp-opt %s --amp-loss-scaling="hysteresis=0" 2>&1 | FileCheck %s --check-prefix=HYST
// RUN: not amp-opt %s --amp-loss-scaling="scaling=always" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not amp-opt %s --amp-loss-scaling="dtype=f32" 2>&1 | FileCheck %s --check-prefix=DTYPE

// GROWTH: error: option 'growth-factor' must be a finite number > 1, got 1
// GROWTH-INF: error: option 'growth-factor' must be a finite number > 1, got inf
// BACKOFF: error: option 'backoff-factor' must be in (0, 1), got 1
// BACKOFF0: error: option 'backoff-factor' must be in (0, 1), got 0
// INTERVAL: error: option 'growth-interval' must be an integer in [1, 2147483647], got 0
// INTERVAL-BIG: error: option 'growth-interval' must be an integer in [1, 2147483647], got 2147483648
// INIT: error: option 'init-scale' must be a finite number > 0, got 0
// INIT-NAN: error: option 'init-scale' must be a finite number > 0, got nan
// INIT-F32: error: option 'init-scale' must be finite in f32 (at most 3.40282e+38), got 1e+39
// MINMAX: error: option 'max-scale' must be > min-scale (4; inf: no cap), got 2
// MIN: error: option 'min-scale' must be a finite number >= 0 (0: no floor), got -1
// INIT-RANGE: error: option 'init-scale' must be within [min-scale, max-scale] = [131072, inf] with dynamic scaling, got 65536
// HYST: error: option 'hysteresis' must be an integer in [1, 2147483647], got 0
// MODE: error: option 'scaling' must be none, static or dynamic (empty: dynamic for f16, none for bf16), got 'always'
// DTYPE: error: option 'dtype' must be f16 or bf16, got 'f32'

// A step that updates its state needs the loss seed to scale it.
func.func @no_seed(%g: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'amp.update' op needs the loss marked with 'amp.seed' in its function: scaling=dynamic scales the backward pass from the seed (use scaling=none for a step without loss scaling)}}
  %new = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>):
    %w1 = arith.subf %w0, %dw : tensor<4xf32>
    amp.yield %w1 : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

// A gradient computed without the seed is not a gradient of the loss.
func.func @gradient_without_seed(%loss: tensor<f32>, %x: tensor<4xf32>, %w: tensor<4xf32>)
    -> tensor<4xf32> {
  // expected-note@+1 {{the loss seed is here}}
  %seed = amp.seed %loss : tensor<f32>
  %e = tensor.empty() : tensor<4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i) -> ()>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%seed : tensor<f32>) outs(%e : tensor<4xf32>) {
  ^bb0(%s: f32, %o: f32):
    linalg.yield %s : f32
  } -> tensor<4xf32>
  // expected-warning@+1 {{gradient #1 does not depend on the loss seed: it is not scaled by S, yet it will be unscaled by 1/S like the others}}
  %new = amp.update grads(%g, %x : tensor<4xf32>, tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%dw: tensor<4xf32>, %dx: tensor<4xf32>, %w0: tensor<4xf32>):
    %w1 = arith.subf %w0, %dw : tensor<4xf32>
    amp.yield %w1 : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

// One step updates its state once.
func.func @update_in_loop(%loss: tensor<f32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %seed = amp.seed %loss : tensor<f32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-note@+1 {{the enclosing loop is here}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %w) -> tensor<4xf32> {
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

// The seed is where the backward starts, in the step's body.
func.func @seed_in_branch(%loss: tensor<f32>, %c: i1) -> tensor<f32> {
  %r = scf.if %c -> tensor<f32> {
    // expected-error@+1 {{'amp.seed' op must be directly in the function body of the training step, not nested in 'scf.if'}}
    %seed = amp.seed %loss : tensor<f32>
    scf.yield %seed : tensor<f32>
  } else {
    scf.yield %loss : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// Dynamic scaling adds arguments, which a caller would not pass.
func.func @called_step(%loss: tensor<f32>) -> tensor<f32> {
  // expected-error@-1 {{'func.func' op is a training step with loss scaling, which adds scaler state to its signature, but it is referenced by other operations}}
  %seed = amp.seed %loss : tensor<f32>
  return %seed : tensor<f32>
}

func.func @caller(%loss: tensor<f32>) -> tensor<f32> {
  // expected-note@+1 {{referenced here}}
  %r = func.call @called_step(%loss) : (tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
