// Every option is checked when the pipeline is parsed; the error names the
// option and its allowed range.
// RUN: not amp-opt %s --amp-pipeline="growth-factor=1" 2>&1 | FileCheck %s --check-prefix=GROWTH
// RUN: not amp-opt %s --amp-pipeline="backoff-factor=1.5" 2>&1 | FileCheck %s --check-prefix=BACKOFF
// RUN: not amp-opt %s --amp-pipeline="growth-interval=0" 2>&1 | FileCheck %s --check-prefix=INTERVAL
// RUN: not amp-opt %s --amp-pipeline="init-scale=-1" 2>&1 | FileCheck %s --check-prefix=INIT
// RUN: not amp-opt %s --amp-pipeline="min-scale=8 max-scale=4" 2>&1 | FileCheck %s --check-prefix=MINMAX
// RUN: not amp-opt %s --amp-pipeline="hysteresis=0" 2>&1 | FileCheck %s --check-prefix=HYST
// RUN: not amp-opt %s --amp-pipeline="scaling=auto" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not amp-opt %s --amp-pipeline="dtype=f8" 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not amp-opt %s --amp-pipeline="unknown-ops=clear" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not amp-opt %s --amp-pipeline="policy=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not amp-opt %s --amp-pipeline="level=O4" 2>&1 | FileCheck %s --check-prefix=LEVEL-NAME
// RUN: not amp-opt %s --amp-pipeline="level=auto policy=tf" 2>&1 | FileCheck %s --check-prefix=LEVEL-POLICY
// RUN: not amp-opt %s --amp-pipeline="level=O2 policy=mindspore-o2" 2>&1 | FileCheck %s --check-prefix=LEVEL-POLICY-O2
// RUN: not amp-opt %s --amp-pipeline="level=O0 policy=torch" 2>&1 | FileCheck %s --check-prefix=LEVEL-POLICY-O0
// RUN: not amp-opt %s --amp-pipeline="level=O0 scaling=dynamic" 2>&1 | FileCheck %s --check-prefix=LEVEL-O0
// RUN: not amp-opt %s --amp-pipeline="growth=2" 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not amp-opt %s --amp-pipeline="data-parallel=nccl" 2>&1 | FileCheck %s --check-prefix=DP-MODE
// RUN: not amp-opt %s --amp-pipeline="grad-comm-dtype=f16" 2>&1 | FileCheck %s --check-prefix=DP-ONLY
// RUN: not amp-opt %s --amp-pipeline="data-parallel=mpi grad-comm-dtype=f64" 2>&1 | FileCheck %s --check-prefix=DP-DTYPE
// RUN: not amp-opt %s --amp-pipeline="data-parallel=mpi bucket-size=0" 2>&1 | FileCheck %s --check-prefix=DP-BUCKET

// GROWTH: error: option 'growth-factor' must be a finite number > 1, got 1
// BACKOFF: error: option 'backoff-factor' must be in (0, 1), got 1.5
// INTERVAL: error: option 'growth-interval' must be an integer in [1, 2147483647], got 0
// INIT: error: option 'init-scale' must be a finite number > 0, got -1
// MINMAX: error: option 'max-scale' must be > min-scale (8; inf: no cap), got 4
// HYST: error: option 'hysteresis' must be an integer in [1, 2147483647], got 0
// MODE: error: option 'scaling' must be none, static or dynamic (empty: dynamic for f16, none for bf16), got 'auto'
// DTYPE: error: option 'dtype' must be f16 or bf16, got 'f8'
// UNKNOWN: error: option 'unknown-ops' must be 'deny', 'infer', 'allow' or 'error', got 'clear'
// POLICY: error: option 'policy': {{.*}}missing.json
// LEVEL-NAME: error: option 'level' must be O0, O1, O2, O3 or auto, got 'O4'
// LEVEL-POLICY: error: options 'level' and 'policy' both choose the policy; give one (to change the lists of level=auto, give a policy file with "extends": "mindspore")
// LEVEL-POLICY-O2: error: options 'level' and 'policy' both choose the policy; give one (to change the lists of level=O2, give a policy file with "extends": "mindspore-o2")
// LEVEL-POLICY-O0: error: options 'level' and 'policy' both choose the policy; give one{{$}}
// LEVEL-O0: error: option 'level=O0' keeps the step in f32 and unscaled; it takes no 'dtype', 'scaling' or 'unknown-ops'
// NAME: error: invalid amp-pipeline options 'growth=2': {{.*}}no such option growth
// DP-MODE: error: option 'data-parallel' must be none or mpi, got 'nccl'
// DP-ONLY: error: option 'grad-comm-dtype' applies to data-parallel training; give data-parallel=mpi
// DP-DTYPE: error: option 'grad-comm-dtype' must be f32, f16 or bf16, got 'f64'
// DP-BUCKET: error: option 'bucket-size' must be a number of bytes >= 1, got 0

// RUN: amp-opt %s --split-input-file --amp-pipeline -verify-diagnostics

// The errors of the passes reach the pipeline's user as located diagnostics.
func.func @no_seed(%g: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'amp.update' op needs the loss marked with 'amp.seed' in its function: scaling=dynamic scales the backward pass from the seed (use scaling=none for a step without loss scaling)}}
  %new = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

func.func @update_in_loop(%loss: tensor<f32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %seed = amp.seed %loss : tensor<f32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note@+1 {{the enclosing loop is here}}
  %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %w) -> tensor<4xf32> {
    // expected-error@+1 {{'amp.update' op is inside a loop}}
    %new = amp.update grads(%acc : tensor<4xf32>) state(%acc : tensor<4xf32>) {
    ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>):
      amp.yield %w0 : tensor<4xf32>
    } : tensor<4xf32>
    scf.yield %new : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
