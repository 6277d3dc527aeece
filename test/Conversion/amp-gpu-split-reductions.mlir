// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-gpu-split-reductions))" | FileCheck %s

// The fused unscale + inf/NaN check of a 64x128 gradient: 128 threads (the
// inner, contiguous loop) each check 64 rows into a partial found_inf, then
// the partials are or-ed into the incoming found_inf. The unscaled gradient
// is written in place, one element per iteration.
// CHECK-DAG: #[[GRAD:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[SCALAR2:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[PARTIAL:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ID1:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SCALAR1:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @check_and_unscale
// CHECK-SAME: (%[[G:.*]]: tensor<64x128xf32>, %[[INV:.*]]: tensor<f32>, %[[FOUND:.*]]: tensor<i1>)
// CHECK: %[[UNSCALED:.*]] = tensor.empty() : tensor<64x128xf32>
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<128xi1>
// CHECK: %[[FALSE:.*]] = arith.constant false
// CHECK: %[[NONE:.*]] = linalg.fill ins(%[[FALSE]] : i1) outs(%[[EMPTY]] : tensor<128xi1>)
// CHECK: %[[SPLIT:.*]]:2 = linalg.generic {indexing_maps = [#[[GRAD]], #[[SCALAR2]], #[[GRAD]], #[[PARTIAL]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[G]], %[[INV]] : tensor<64x128xf32>, tensor<f32>) outs(%[[UNSCALED]], %[[NONE]] : tensor<64x128xf32>, tensor<128xi1>)
// CHECK: arith.ori
// CHECK: %[[ANY:.*]] = linalg.generic {indexing_maps = [#[[ID1]], #[[SCALAR1]]], iterator_types = ["reduction"]}
// CHECK-SAME: ins(%[[SPLIT]]#1 : tensor<128xi1>) outs(%[[FOUND]] : tensor<i1>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i1, %[[OUT:.*]]: i1):
// CHECK-NEXT: %[[OR:.*]] = arith.ori %[[OUT]], %[[IN]] : i1
// CHECK-NEXT: linalg.yield %[[OR]] : i1
// CHECK: return %[[SPLIT]]#0, %[[ANY]]
func.func @check_and_unscale(%g: tensor<64x128xf32>, %inv: tensor<f32>, %found: tensor<i1>) -> (tensor<64x128xf32>, tensor<i1>) {
  %max = arith.constant 3.40282347E+38 : f32
  %e = tensor.empty() : tensor<64x128xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%g, %inv : tensor<64x128xf32>, tensor<f32>) outs(%e, %found : tensor<64x128xf32>, tensor<i1>) {
  ^bb0(%x: f32, %s: f32, %out: f32, %acc: i1):
    %u = arith.mulf %x, %s : f32
    %a = math.absf %u : f32
    %bad = arith.cmpf ugt, %a, %max : f32
    %f = arith.ori %acc, %bad : i1
    linalg.yield %u, %f : f32, i1
  } -> (tensor<64x128xf32>, tensor<i1>)
  return %r#0, %r#1 : tensor<64x128xf32>, tensor<i1>
}

// -----

// A 1-D loop splits through expand_shape views: element 128 * r + t is read
// by thread t in its serial iteration r. The elementwise output is expanded
// the same way and collapsed back.
// CHECK-DAG: #[[SPLIT:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[PARTIAL:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @unscale_1d
// CHECK-SAME: (%[[G:.*]]: tensor<8192xf16>, %[[FOUND:.*]]: tensor<i1>)
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<8192xf32>
// CHECK: %[[G2:.*]] = tensor.expand_shape %[[G]] {{\[\[}}0, 1]] output_shape [64, 128] : tensor<8192xf16> into tensor<64x128xf16>
// CHECK: %[[OUT2:.*]] = tensor.expand_shape %[[EMPTY]] {{\[\[}}0, 1]] output_shape [64, 128] : tensor<8192xf32> into tensor<64x128xf32>
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [#[[SPLIT]], #[[SPLIT]], #[[PARTIAL]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[G2]] : tensor<64x128xf16>) outs(%[[OUT2]], %{{.*}} : tensor<64x128xf32>, tensor<128xi1>)
// CHECK: %[[UNSCALED:.*]] = tensor.collapse_shape %[[R]]#0 {{\[\[}}0, 1]] : tensor<64x128xf32> into tensor<8192xf32>
// CHECK: %[[ANY:.*]] = linalg.generic {{.*}} ins(%[[R]]#1 : tensor<128xi1>) outs(%[[FOUND]] : tensor<i1>)
// CHECK: return %[[UNSCALED]], %[[ANY]]
func.func @unscale_1d(%g: tensor<8192xf16>, %found: tensor<i1>) -> (tensor<8192xf32>, tensor<i1>) {
  %max = arith.constant 3.40282347E+38 : f32
  %e = tensor.empty() : tensor<8192xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%g : tensor<8192xf16>) outs(%e, %found : tensor<8192xf32>, tensor<i1>) {
  ^bb0(%x: f16, %out: f32, %acc: i1):
    %u = arith.extf %x : f16 to f32
    %a = math.absf %u : f32
    %bad = arith.cmpf ugt, %a, %max : f32
    %f = arith.ori %acc, %bad : i1
    linalg.yield %u, %f : f32, i1
  } -> (tensor<8192xf32>, tensor<i1>)
  return %r#0, %r#1 : tensor<8192xf32>, tensor<i1>
}

// -----

// A loss accumulated as `acc - x`: the partials start at -0.0 and are added.
// CHECK-LABEL: func.func @loss_subtracts
// CHECK-SAME: (%[[X:.*]]: tensor<64x64xf32>, %[[INIT:.*]]: tensor<f32>)
// CHECK: %[[ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[PARTIALS:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<64xf32>)
// CHECK: %[[SPLIT:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<64x64xf32>) outs(%[[PARTIALS]] : tensor<64xf32>)
// CHECK: arith.subf
// CHECK: %[[LOSS:.*]] = linalg.generic {{.*}} ins(%[[SPLIT]] : tensor<64xf32>) outs(%[[INIT]] : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: arith.addf %[[OUT]], %[[IN]] : f32
// CHECK: return %[[LOSS]]
func.func @loss_subtracts(%x: tensor<64x64xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x64xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.subf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Few parallel outputs: each of the 4 rows gets 64 threads; the partials of
// a max start at -inf.
// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[PARTIAL:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @row_max
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [4, 64, 64] : tensor<4x4096xf32> into tensor<4x64x64xf32>
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PARTIALS:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<4x64xf32>)
// CHECK: %[[SPLIT:.*]] = linalg.generic {indexing_maps = [#[[ROWS]], #[[PARTIAL]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<4x64x64xf32>) outs(%[[PARTIALS]] : tensor<4x64xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[SPLIT]] : tensor<4x64xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.maximumf
func.func @row_max(%x: tensor<4x4096xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4096xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.maximumf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// 2^20 elements: 16384 partials, themselves split into 256, then summed.
// CHECK-LABEL: func.func @large
// CHECK: tensor.expand_shape %{{.*}} output_shape [64, 16384]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<16384xf32>)
// CHECK: tensor.expand_shape %{{.*}} output_shape [64, 256]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<256xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<256xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK-NOT: linalg.generic
func.func @large(%x: tensor<1048576xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<1048576xf32>) outs(%init : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Left as they are: too few elements per output (a loss over a 16x10
// batch), enough parallel outputs already, a size with no divisor near 64
// (4099 is prime), a combiner without a neutral element (`x - acc`), an op
// that reads its loop indices, dynamic shapes, and a scalar operand.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: expand_shape
// CHECK-NOT: linalg.fill
// CHECK-COUNT-7: linalg.generic
// CHECK-NOT: linalg.generic
func.func @left_alone(%small: tensor<16x10xf32>, %wide: tensor<1024x4096xf32>, %prime: tensor<4099xf32>,
                      %big: tensor<8192xf32>, %dyn: tensor<?xf32>, %s: tensor<f32>, %w: tensor<1024xf32>,
                      %factor: f32)
    -> (tensor<f32>, tensor<1024xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %0 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%small : tensor<16x10xf32>) outs(%s : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %1 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%wide : tensor<1024x4096xf32>) outs(%w : tensor<1024xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%prime : tensor<4099xf32>) outs(%s : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %3 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%big : tensor<8192xf32>) outs(%s : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.subf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %4 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%big : tensor<8192xf32>) outs(%s : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i32
    %f = arith.sitofp %n : i32 to f32
    %m = arith.mulf %v, %f : f32
    %r = arith.addf %m, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %5 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%dyn : tensor<?xf32>) outs(%s : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %6 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%big, %factor : tensor<8192xf32>, f32) outs(%s : tensor<f32>) {
  ^bb0(%v: f32, %f: f32, %acc: f32):
    %m = arith.mulf %v, %f : f32
    %r = arith.addf %m, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<f32>, tensor<1024xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// BatchNorm's channel mean (keepdim, its unit dims read at 0): 16 x 32 x 32
// threads each sum the 64 images of one channel and pixel; the partials
// drop the unit dims, and so does the op combining them (a view of the
// init), which is split again: 16 x 16 threads of 64 partials each.
// CHECK-DAG: #[[IMAGE:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d0, d1, d2)>
// CHECK-DAG: #[[PARTIAL:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @channel_sum
// CHECK-SAME: (%[[X:.*]]: tensor<64x16x32x32xf32>, %[[INIT:.*]]: tensor<1x16x1x1xf32>)
// CHECK: %[[SUMS:.*]] = linalg.generic {indexing_maps = [#[[IMAGE]], #[[PARTIAL]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<64x16x32x32xf32>) outs(%{{.*}} : tensor<16x32x32xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[INIT]] {{\[\[}}0, 1, 2, 3]] : tensor<1x16x1x1xf32> into tensor<16xf32>
// CHECK: %[[AGAIN:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<16x16xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[AGAIN]] : tensor<16x16xf32>) outs(%[[FLAT]] : tensor<16xf32>)
// CHECK: %[[KEPT:.*]] = tensor.expand_shape %[[SUM]] {{\[\[}}0, 1, 2, 3]] output_shape [1, 16, 1, 1]
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
