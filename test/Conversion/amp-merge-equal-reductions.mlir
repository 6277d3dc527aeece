// RUN: amp-opt %s --split-input-file --amp-merge-equal-reductions | FileCheck %s

// torch-mlir's BatchNorm: the sum of squares of x - mean into 1 x C x 1 x 1
// (batch variance) and again into C (running variance). The second is the
// first collapsed.
// CHECK-LABEL: func.func @batch_norm_variance(
// CHECK-SAME:      %[[D:.*]]: tensor<4x3x2x2xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[D]] : tensor<4x3x2x2xf32>) outs(%{{.*}} : tensor<1x3x1x1xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         %[[SAME:.*]] = tensor.collapse_shape %[[SUM]] {{\[\[}}0, 1, 2, 3]] : tensor<1x3x1x1xf32> into tensor<3xf32>
// CHECK:         return %[[SUM]], %[[SAME]]
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#keep = affine_map<(n, c, h, w) -> (0, c, 0, 0)>
#channel = affine_map<(n, c, h, w) -> (c)>
func.func @batch_norm_variance(%d: tensor<4x3x2x2xf32>) -> (tensor<1x3x1x1xf32>, tensor<3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<1x3x1x1xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<1x3x1x1xf32>) -> tensor<1x3x1x1xf32>
  %var = linalg.generic {indexing_maps = [#x, #keep], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%d : tensor<4x3x2x2xf32>) outs(%z4 : tensor<1x3x1x1xf32>) {
  ^bb0(%a: f32, %s: f32):
    %q = arith.mulf %a, %a : f32
    %t = arith.addf %q, %s : f32
    linalg.yield %t : f32
  } -> tensor<1x3x1x1xf32>
  %e1 = tensor.empty() : tensor<3xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
  %running = linalg.generic {indexing_maps = [#x, #channel], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%d : tensor<4x3x2x2xf32>) outs(%z1 : tensor<3xf32>) {
  ^bb0(%a: f32, %s: f32):
    %q = arith.mulf %a, %a : f32
    %t = arith.addf %q, %s : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  return %var, %running : tensor<1x3x1x1xf32>, tensor<3xf32>
}

// -----

// Not when anything differs: the body (a sum, not a sum of squares), the
// fill (one, not zero), or the dimension written (a row sum, not a channel
// sum).
// CHECK-LABEL: func.func @different(
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT:     tensor.collapse_shape
#x = affine_map<(n, c) -> (n, c)>
#col = affine_map<(n, c) -> (c)>
#row = affine_map<(n, c) -> (n)>
func.func @different(%d: tensor<4x4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %o = linalg.fill ins(%one : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %squares = linalg.generic {indexing_maps = [#x, #col], iterator_types = ["reduction", "parallel"]}
      ins(%d : tensor<4x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %s: f32):
    %q = arith.mulf %a, %a : f32
    %t = arith.addf %q, %s : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#x, #col], iterator_types = ["reduction", "parallel"]}
      ins(%d : tensor<4x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %s: f32):
    %t = arith.addf %a, %s : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %from_one = linalg.generic {indexing_maps = [#x, #col], iterator_types = ["reduction", "parallel"]}
      ins(%d : tensor<4x4xf32>) outs(%o : tensor<4xf32>) {
  ^bb0(%a: f32, %s: f32):
    %q = arith.mulf %a, %a : f32
    %t = arith.addf %q, %s : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %rows = linalg.generic {indexing_maps = [#x, #row], iterator_types = ["parallel", "reduction"]}
      ins(%d : tensor<4x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %s: f32):
    %q = arith.mulf %a, %a : f32
    %t = arith.addf %q, %s : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %squares, %sum, %from_one, %rows : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
