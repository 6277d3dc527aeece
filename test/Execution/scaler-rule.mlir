// The scaler rule of amp-guard-update, run: a one-parameter step goes
// through amp-loss-scaling and amp-guard-update, is lowered to the LLVM
// dialect and called by mlir-runner on a table of (scale, growth tracker,
// hysteresis left, found_inf) cases; the new parameter (unchanged bit for bit
// when the step is skipped) and scaler state it prints must equal
// test/python/scaler_reference.py's, bit for bit. The reference itself is
// checked against transcriptions of PyTorch's _amp_update_scale_ and
// DeepSpeed's DynamicLossScaler.update_scale (--self-check). found_inf comes
// from the step's own check: the gradient is S * x with x = inf or 1.

// DEFINE: %{ref} = %python %S/../python/scaler_reference.py
// DEFINE: %{lower} = amp-opt --convert-elementwise-to-linalg \
// DEFINE:   --one-shot-bufferize=bufferize-function-boundaries \
// DEFINE:   --convert-linalg-to-loops --convert-scf-to-cf --convert-vector-to-llvm \
// DEFINE:   --expand-strided-metadata --finalize-memref-to-llvm --convert-math-to-llvm \
// DEFINE:   --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm \
// DEFINE:   --reconcile-unrealized-casts
// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils

// RUN: %{ref} --self-check | FileCheck %s
// CHECK: scaler reference: PyTorch and DeepSpeed rules agree

// PyTorch's defaults.
// RUN: amp-opt %s --amp-loss-scaling --amp-guard-update -o %t.0.mlir
// RUN: %{ref} --case 0 --driver --into %t.0.mlir | %{lower} | %{run} > %t.0.out
// RUN: %{ref} --case 0 --table | diff - %t.0.out

// Factors that are not powers of two: products rounded once from f64.
// RUN: amp-opt %s --amp-loss-scaling="growth-factor=3.0 backoff-factor=0.3 growth-interval=3" \
// RUN:   --amp-guard-update="growth-factor=3.0 backoff-factor=0.3 growth-interval=3" -o %t.1.mlir
// RUN: %{ref} --case 1 --driver --into %t.1.mlir | %{lower} | %{run} > %t.1.out
// RUN: %{ref} --case 1 --table | diff - %t.1.out

// The floor and the cap (init-scale only has to lie between them).
// RUN: amp-opt %s --amp-loss-scaling="min-scale=1.0 max-scale=1024.0 init-scale=16.0 growth-interval=2" \
// RUN:   --amp-guard-update="min-scale=1.0 max-scale=1024.0 init-scale=16.0 growth-interval=2" -o %t.2.mlir
// RUN: %{ref} --case 2 --driver --into %t.2.mlir | %{lower} | %{run} > %t.2.out
// RUN: %{ref} --case 2 --table | diff - %t.2.out

// DeepSpeed's hysteresis.
// RUN: amp-opt %s --amp-loss-scaling="hysteresis=3 growth-interval=4" \
// RUN:   --amp-guard-update="hysteresis=3 growth-interval=4" -o %t.3.mlir
// RUN: %{ref} --case 3 --driver --into %t.3.mlir | %{lower} | %{run} > %t.3.out
// RUN: %{ref} --case 3 --table | diff - %t.3.out

func.func @step(%x: tensor<1xf32>, %w: tensor<1xf32>) -> tensor<1xf32> {
  %loss = arith.constant dense<0.0> : tensor<f32>
  %seed = amp.seed %loss : tensor<f32>
  %e = tensor.empty() : tensor<1xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i) -> ()>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%seed, %x : tensor<f32>, tensor<1xf32>) outs(%e : tensor<1xf32>) {
  ^bb0(%s: f32, %v: f32, %o: f32):
    %m = arith.mulf %s, %v : f32
    linalg.yield %m : f32
  } -> tensor<1xf32>
  %new = amp.update grads(%g : tensor<1xf32>) state(%w : tensor<1xf32>) {
  ^bb0(%dw: tensor<1xf32>, %w0: tensor<1xf32>):
    %w1 = arith.subf %w0, %dw : tensor<1xf32>
    amp.yield %w1 : tensor<1xf32>
  } : tensor<1xf32>
  return %new : tensor<1xf32>
}
