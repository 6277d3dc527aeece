// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-cpu-split-reductions))" | FileCheck %s

// BatchNorm's channel mean (keepdim): each image's 16 sums become a partial
// result, then the 64 partials are added into the init in order, through a
// view of it without its unit dims.
// CHECK-DAG: #[[IMAGE:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[PARTIAL:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[PARTIALS:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[CHANNEL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @channel_sum
// CHECK-SAME: (%[[X:.*]]: tensor<64x16x32x32xf32>, %[[INIT:.*]]: tensor<1x16x1x1xf32>)
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<64x16xf32>
// CHECK: %[[ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[NONE:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<64x16xf32>)
// CHECK: %[[SUMS:.*]] = linalg.generic {indexing_maps = [#[[IMAGE]], #[[PARTIAL]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<64x16x32x32xf32>) outs(%[[NONE]] : tensor<64x16xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[INIT]] {{\[\[}}0, 1, 2, 3]] : tensor<1x16x1x1xf32> into tensor<16xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[PARTIALS]], #[[CHANNEL]]], iterator_types = ["reduction", "parallel"]}
// CHECK-SAME: ins(%[[SUMS]] : tensor<64x16xf32>) outs(%[[FLAT]] : tensor<16xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[OUT]], %[[IN]] : f32
// CHECK-NEXT: linalg.yield %[[ADD]] : f32
// CHECK: %[[KEPT:.*]] = tensor.expand_shape %[[SUM]] {{\[\[}}0, 1, 2, 3]] output_shape [1, 16, 1, 1] : tensor<16xf32> into tensor<1x16x1x1xf32>
// CHECK: return %[[KEPT]]
func.func @channel_sum(%x: tensor<64x16x32x32xf32>, %init: tensor<1x16x1x1xf32>) -> tensor<1x16x1x1xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (0, c, 0, 0)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<64x16x32x32xf32>) outs(%init : tensor<1x16x1x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x16x1x1xf32>
  return %r : tensor<1x16x1x1xf32>
}

// -----

// Two sums over one pass (BatchNorm's backward): a partial result each.
// CHECK-LABEL: func.func @sibling_sums
// CHECK-SAME: (%{{.*}}: tensor<64x32x16x16xf32>, %{{.*}}: tensor<64x32x16x16xf32>, %[[A:.*]]: tensor<32xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK: %[[SUMS:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<64x32xf32>)
// CHECK: %[[SA:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[SUMS]]#0 : tensor<64x32xf32>) outs(%[[A]] : tensor<32xf32>)
// CHECK: %[[SB:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[SUMS]]#1 : tensor<64x32xf32>) outs(%[[B]] : tensor<32xf32>)
// CHECK: return %[[SA]], %[[SB]]
func.func @sibling_sums(%dy: tensor<64x32x16x16xf32>, %xhat: tensor<64x32x16x16xf32>, %a: tensor<32xf32>, %b: tensor<32xf32>) -> (tensor<32xf32>, tensor<32xf32>) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>, affine_map<(n, c, h, w) -> (c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy, %xhat : tensor<64x32x16x16xf32>, tensor<64x32x16x16xf32>) outs(%a, %b : tensor<32xf32>, tensor<32xf32>) {
  ^bb0(%g: f32, %x: f32, %sa: f32, %sb: f32):
    %p = arith.mulf %g, %x : f32
    %s1 = arith.addf %g, %sa : f32
    %s2 = arith.addf %p, %sb : f32
    linalg.yield %s1, %s2 : f32, f32
  } -> (tensor<32xf32>, tensor<32xf32>)
  return %r#0, %r#1 : tensor<32xf32>, tensor<32xf32>
}

// -----

// The fused unscale + inf/NaN check of a 512x512 gradient: the rows become
// parallel, each with a partial found_inf; the unscaled gradient is written
// in place.
// CHECK-DAG: #[[GRAD:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @check_and_unscale
// CHECK-SAME: (%[[G:.*]]: tensor<512x512xf32>, %[[INV:.*]]: tensor<f32>, %[[FOUND:.*]]: tensor<i1>)
// CHECK: %[[UNSCALED:.*]] = tensor.empty() : tensor<512x512xf32>
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<512xi1>
// CHECK: %[[FALSE:.*]] = arith.constant false
// CHECK: %[[NONE:.*]] = linalg.fill ins(%[[FALSE]] : i1) outs(%[[EMPTY]] : tensor<512xi1>)
// CHECK: %[[SPLIT:.*]]:2 = linalg.generic {indexing_maps = [#[[GRAD]], #{{.*}}, #[[GRAD]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: outs(%[[UNSCALED]], %[[NONE]] : tensor<512x512xf32>, tensor<512xi1>)
// CHECK: %[[ANY:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[SPLIT]]#1 : tensor<512xi1>) outs(%[[FOUND]] : tensor<i1>)
// CHECK: arith.ori
// CHECK: return %[[SPLIT]]#0, %[[ANY]]
func.func @check_and_unscale(%g: tensor<512x512xf32>, %inv: tensor<f32>, %found: tensor<i1>) -> (tensor<512x512xf32>, tensor<i1>) {
  %max = arith.constant 3.40282347E+38 : f32
  %e = tensor.empty() : tensor<512x512xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%g, %inv : tensor<512x512xf32>, tensor<f32>) outs(%e, %found : tensor<512x512xf32>, tensor<i1>) {
  ^bb0(%x: f32, %s: f32, %out: f32, %acc: i1):
    %u = arith.mulf %x, %s : f32
    %a = math.absf %u : f32
    %bad = arith.cmpf ugt, %a, %max : f32
    %f = arith.ori %acc, %bad : i1
    linalg.yield %u, %f : f32, i1
  } -> (tensor<512x512xf32>, tensor<i1>)
  return %r#0, %r#1 : tensor<512x512xf32>, tensor<i1>
}

// -----

// A bias gradient over 256 features has 16 vectors of results: the
// parallel loops split it already.
// CHECK-LABEL: func.func @bias_gradient
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : tensor<1024x256xf32>) outs(%{{.*}} : tensor<256xf32>)
// CHECK-NOT: linalg.generic
func.func @bias_gradient(%dy: tensor<1024x256xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
      ins(%dy : tensor<1024x256xf32>) outs(%init : tensor<256xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}

// -----

// A loss over 64x10 logits: too little work to split.
// CHECK-LABEL: func.func @small_loss
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%{{.*}} : tensor<64x10xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK-NOT: linalg.generic
func.func @small_loss(%x: tensor<64x10xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x10xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.subf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Rows of 128: a partial per row would sum fewer than 256 elements.
// CHECK-LABEL: func.func @short_rows
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<16x1024x128xf32>) outs(%{{.*}} : tensor<16xf32>)
// CHECK-NOT: linalg.generic
func.func @short_rows(%x: tensor<16x1024x128xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(c, n, k) -> (c, n, k)>, affine_map<(c, n, k) -> (c)>], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<16x1024x128xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// A maximum to one value over 2048x256: the rows' maxima start at -inf.
// CHECK-LABEL: func.func @maximum
// CHECK: %[[LOWEST:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[NONE:.*]] = linalg.fill ins(%[[LOWEST]] : f32) outs(%{{.*}} : tensor<2048xf32>)
// CHECK: %[[ROWS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<2048x256xf32>) outs(%[[NONE]] : tensor<2048xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[ROWS]] : tensor<2048xf32>)
// CHECK: arith.maximumf
func.func @maximum(%x: tensor<2048x256xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<2048x256xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A sum into the first row of a 4 x 16 init: a dim read at 0 that is no
// unit dim, which the partials and the combining view cannot drop, so the
// op stays whole.
// CHECK-LABEL: func.func @into_first_row
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<64x16x32x32xf32>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK-NOT: linalg.generic
func.func @into_first_row(%x: tensor<64x16x32x32xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (0, c)>], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : tensor<64x16x32x32xf32>) outs(%init : tensor<4x16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
