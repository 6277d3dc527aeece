// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-sink-tensor-extracts))" --verify-diagnostics

func.func @returned(%t: tensor<f32>) -> f32 {
  // expected-error@+1 {{'tensor.extract' op reads a device tensor into a scalar that the host would use}}
  %v = tensor.extract %t[] : tensor<f32>
  // expected-note@+1 {{used here}}
  return %v : f32
}

// -----

func.func @dynamic_index(%t: tensor<4xf32>, %i: index) -> tensor<4xf32> {
  // expected-error@+1 {{'tensor.extract' op reads a device tensor at indices that are not constants}}
  %v = tensor.extract %t[%i] : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.fill ins(%v : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
