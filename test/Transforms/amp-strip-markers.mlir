// RUN: amp-opt %s --split-input-file --amp-strip-markers | FileCheck %s

// The seed becomes ones of its type; the update region is inlined with its
// block arguments replaced by the grads, then the state; the results are the
// yielded values.

// CHECK-LABEL: func.func @sgd_step(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<2x4xf32>, %[[W:[^:]*]]: tensor<4xf32>)
// CHECK-NOT:     amp.
// CHECK:         %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK:         %[[G:.*]] = linalg.generic {{.*}} ins(%[[ONES]], %[[X]]
// CHECK:         %[[LR:.*]] = arith.constant dense<1.000000e-01> : tensor<4xf32>
// CHECK:         %[[STEP:.*]] = arith.mulf %[[LR]], %[[G]] : tensor<4xf32>
// CHECK:         %[[NEW:.*]] = arith.subf %[[W]], %[[STEP]] : tensor<4xf32>
// CHECK:         return %{{.*}}, %[[NEW]] : tensor<f32>, tensor<4xf32>
#map0 = affine_map<(i, j) -> ()>
#map1 = affine_map<(i, j) -> (i, j)>
#map2 = affine_map<(i, j) -> (j)>
func.func @sgd_step(%x: tensor<2x4xf32>, %w: tensor<4xf32>)
    -> (tensor<f32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%x : tensor<2x4xf32>) outs(%acc : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %out: f32) {
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  %seed = amp.seed %loss : tensor<f32>
  %e4 = tensor.empty() : tensor<4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %gw = linalg.generic {indexing_maps = [#map0, #map1, #map2],
                        iterator_types = ["reduction", "parallel"]}
      ins(%seed, %x : tensor<f32>, tensor<2x4xf32>) outs(%z4 : tensor<4xf32>) {
  ^bb0(%s: f32, %v: f32, %o: f32):
    %m = arith.mulf %s, %v : f32
    %a = arith.addf %o, %m : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  %new = amp.update grads(%gw : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g: tensor<4xf32>, %w0: tensor<4xf32>):
    %lr = arith.constant dense<0.1> : tensor<4xf32>
    %step = arith.mulf %lr, %g : tensor<4xf32>
    %w1 = arith.subf %w0, %step : tensor<4xf32>
    amp.yield %w1 : tensor<4xf32>
  } : tensor<4xf32>
  return %loss, %new : tensor<f32>, tensor<4xf32>
}

// -----

// Low-precision seeds become ones of their own type; several updates are all
// inlined, including one with no gradients (a step counter).

// CHECK-LABEL: func.func @two_updates(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<4xf16>, %[[N:[^:]*]]: tensor<i32>)
// CHECK-NOT:     amp.
// CHECK:         %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf16>
// CHECK:         %[[A1:.*]] = arith.subf %[[A]], %[[ONES]] : tensor<4xf16>
// CHECK:         %[[N1:.*]] = arith.addi %[[N]], %{{.*}} : tensor<i32>
// CHECK:         return %[[A1]], %[[N1]]
func.func @two_updates(%a: tensor<4xf16>, %n: tensor<i32>)
    -> (tensor<4xf16>, tensor<i32>) {
  %seed = amp.seed %a : tensor<4xf16>
  %a1 = amp.update grads(%seed : tensor<4xf16>) state(%a : tensor<4xf16>) {
  ^bb0(%g: tensor<4xf16>, %a0: tensor<4xf16>):
    %d = arith.subf %a0, %g : tensor<4xf16>
    amp.yield %d : tensor<4xf16>
  } : tensor<4xf16>
  %n1 = amp.update state(%n : tensor<i32>) {
  ^bb0(%n0: tensor<i32>):
    %one = arith.constant dense<1> : tensor<i32>
    %i = arith.addi %n0, %one : tensor<i32>
    amp.yield %i : tensor<i32>
  } : tensor<i32>
  return %a1, %n1 : tensor<4xf16>, tensor<i32>
}

// -----

// A state yielded unchanged is the update's state operand once inlined.

// CHECK-LABEL: func.func @frozen(
// CHECK-SAME:      %[[W:[^:]*]]: tensor<4xf32>, %{{[^:]*}}: tensor<4xf32>)
// CHECK-NEXT:    return %[[W]] : tensor<4xf32>
func.func @frozen(%w: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  %new = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g0: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}
