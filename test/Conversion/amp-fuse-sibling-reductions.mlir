// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-fuse-sibling-reductions))" | FileCheck %s

// Two sums over one input's rows: one generic reads it once and yields both,
// at the place of the first; the second's fill moves above it.
// CHECK-LABEL: func.func @two_sums
// CHECK: %[[E:.*]] = tensor.empty() : tensor<64xf32>
// CHECK: %[[F1:.*]] = linalg.fill {{.*}} outs(%[[E]]
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<64xf32>
// CHECK: %[[F2:.*]] = linalg.fill {{.*}} outs(%[[E2]]
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1 : tensor<64x256xf32>, tensor<64x256xf32>) outs(%[[F1]], %[[F2]] : tensor<64xf32>, tensor<64xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[A]]
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[X]], %[[Y]]
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[P]], %[[B]]
// CHECK-NEXT: linalg.yield %[[S]], %[[T]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#1, %[[R]]#0
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @two_sums(%x: tensor<64x256xf32>, %y: tensor<64x256xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x256xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<64xf32>) -> tensor<64xf32>
  %dot = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %y : tensor<64x256xf32>, tensor<64x256xf32>) outs(%f2 : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %dot, %sum : tensor<64xf32>, tensor<64xf32>
}

// -----

// BatchNorm's backward: three sums over the channels of two activations
// become one generic reading each activation once.
// CHECK-LABEL: func.func @three_channel_sums
// CHECK: %[[R:.*]]:3 = linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%arg0, %arg1, %arg2 : tensor<8x16x4x4xf32>, tensor<8x16x4x4xf32>, tensor<16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#channel = affine_map<(n, c, h, w) -> (c)>
func.func @three_channel_sums(%dy: tensor<8x16x4x4xf32>, %d: tensor<8x16x4x4xf32>, %rstd: tensor<16xf32>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#nchw, #channel], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy : tensor<8x16x4x4xf32>) outs(%f : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %dot = linalg.generic {indexing_maps = [#nchw, #nchw, #channel], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy, %d : tensor<8x16x4x4xf32>, tensor<8x16x4x4xf32>) outs(%f2 : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %scaled = linalg.generic {indexing_maps = [#nchw, #channel, #nchw, #channel], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%d, %rstd, %dy : tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<8x16x4x4xf32>) outs(%f3 : tensor<16xf32>) {
  ^bb0(%a: f32, %r: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %r : f32
    %q = arith.mulf %p, %b : f32
    %s = arith.addf %q, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %sum, %dot, %scaled : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// A sum of squares about the mean needs the mean first: two passes.
// CHECK-LABEL: func.func @dependent_sums
// CHECK: %[[MEAN:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[MEAN]] :
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @dependent_sums(%x: tensor<64x256xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %mean = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x256xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %var = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mean : tensor<64x256xf32>, tensor<64xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %d = arith.subf %a, %m : f32
    %q = arith.mulf %d, %d : f32
    %s = arith.addf %q, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %var : tensor<64xf32>
}

// -----

// Sums over other loops, or of other inputs, or that need an op with memory
// effects between them, stay apart.
// CHECK-LABEL: func.func @not_siblings
// CHECK-COUNT-4: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#column = affine_map<(i, j) -> (j)>
func.func private @load() -> tensor<64x256xf32>
func.func @not_siblings(%x: tensor<64x256xf32>, %y: tensor<64x256xf32>)
    -> (tensor<64xf32>, tensor<256xf32>, tensor<64xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %rows = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x256xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %ec = tensor.empty() : tensor<256xf32>
  %fc = linalg.fill ins(%zero : f32) outs(%ec : tensor<256xf32>) -> tensor<256xf32>
  %columns = linalg.generic {indexing_maps = [#id, #column], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<64x256xf32>) outs(%fc : tensor<256xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<256xf32>
  %other = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<64x256xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %loaded = func.call @load() : () -> tensor<64x256xf32>
  %effects = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %loaded : tensor<64x256xf32>, tensor<64x256xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %rows, %columns, %other, %effects : tensor<64xf32>, tensor<256xf32>, tensor<64xf32>, tensor<64xf32>
}
