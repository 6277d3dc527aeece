// RUN: amp-opt %s --split-input-file --verify-diagnostics --amp-insert-casts=unknown-ops=error

func.func @unknown_op_error(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'math.cbrt' is in no list of policy 'torch' and unknown-ops=error}}
  %0 = math.cbrt %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

#id = affine_map<(i) -> (i)>
// The body op of a generic is classified too.
func.func @unknown_body_op_error(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    // expected-error@+1 {{'math.cbrt' is in no list of policy 'torch' and unknown-ops=error}}
    %c = math.cbrt %x : f32
    linalg.yield %c : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pin_other_low_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{pins 'bf16' but the low type is 'f16' (option 'dtype'); pin 'f32' or 'f16'}}
  %0 = arith.addf %a, %a {amp.precision = "bf16"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pin_scalar(%a: f32) -> f32 {
  // expected-error@+1 {{pins 'f16' but has no f32 tensor for the pass to convert}}
  %0 = arith.addf %a, %a {amp.precision = "f16"} : f32
  return %0 : f32
}

// -----

func.func @pin_fixed(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{pins 'f16' but the loss seed stays f32: loss scaling rewrites it}}
  %0 = amp.seed %a {amp.precision = "f16"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pin_f64(%a: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error@+1 {{pins 'f16' but has f64 values, which the AMP passes never convert}}
  %0 = arith.addf %a, %a {amp.precision = "f16"} : tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// A pinned fill of a constant the low type cannot hold.
func.func @pinned_fill_out_of_range(%x: tensor<4xf32>) -> tensor<4xf32> {
  %big = arith.constant 1.0e+06 : f32
  // expected-error@+1 {{operand #0 is a constant outside the range of 'f16'}}
  %f = linalg.fill {amp.precision = "f16"} ins(%big : f32) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %f : tensor<4xf32>
}
