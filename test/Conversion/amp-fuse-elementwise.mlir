// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-fuse-elementwise))" | FileCheck %s

// A cast with one use is computed inside its consumer: one kernel, not two.
// CHECK-LABEL: func.func @cast_into_consumer
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<64xf32>, tensor<64xf16>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[B:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[X]] : f32 to f16
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[T]], %[[B]] : f16
// CHECK-NEXT: linalg.yield %[[S]] : f16
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
#id = affine_map<(i) -> (i)>
func.func @cast_into_consumer(%x: tensor<64xf32>, %b: tensor<64xf16>) -> tensor<64xf16> {
  %e = tensor.empty() : tensor<64xf16>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xf16>) {
  ^bb0(%v: f32, %o: f16):
    %c = arith.truncf %v : f32 to f16
    linalg.yield %c : f16
  } -> tensor<64xf16>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%t, %b : tensor<64xf16>, tensor<64xf16>) outs(%e : tensor<64xf16>) {
  ^bb0(%v: f16, %w: f16, %o: f16):
    %a = arith.addf %v, %w : f16
    linalg.yield %a : f16
  } -> tensor<64xf16>
  return %s : tensor<64xf16>
}

// -----

// A cast with two uses, one a matmul, stays (fusing would compute it twice
// and keep its buffer), and a contraction is never turned into a generic:
// it stays for cuBLASLt.
// CHECK-LABEL: func.func @shared_cast_and_matmul
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x8xf32>) outs(%{{.*}} : tensor<8x8xf16>)
// CHECK: linalg.matmul ins(%[[T]], %[[T]] : tensor<8x8xf16>, tensor<8x8xf16>) outs(%{{.*}} : tensor<8x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<8x8xf16>)
#id2 = affine_map<(i, j) -> (i, j)>
func.func @shared_cast_and_matmul(%x: tensor<8x8xf32>, %acc: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf16>) {
  %e = tensor.empty() : tensor<8x8xf16>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf16>) {
  ^bb0(%v: f32, %o: f16):
    %c = arith.truncf %v : f32 to f16
    linalg.yield %c : f16
  } -> tensor<8x8xf16>
  %m = linalg.matmul ins(%t, %t : tensor<8x8xf16>, tensor<8x8xf16>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  %n = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<8x8xf16>) outs(%e : tensor<8x8xf16>) {
  ^bb0(%v: f16, %o: f16):
    %d = arith.mulf %v, %v : f16
    linalg.yield %d : f16
  } -> tensor<8x8xf16>
  return %m, %n : tensor<8x8xf32>, tensor<8x8xf16>
}

// -----

// BatchNorm's `x - mean` (one input read whole, the mean broadcast) has two
// uses, the variance's sum of squares and the normalization: each computes
// it again, and its buffer goes (a subtraction costs less than writing and
// reading back the tensor).
// CHECK-LABEL: func.func @recomputed_in_each_consumer
// CHECK-SAME:      %[[X:[^:]*]]: tensor<64x4096xf32>, %[[MEAN:[^:]*]]: tensor<64xf32>
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[MEAN]] : tensor<64x4096xf32>, tensor<64xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[M:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[A]], %[[M]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT: arith.addf %[[Q]], %[[S]] : f32
// CHECK: %[[NORM:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MEAN]], %[[VAR]] : tensor<64x4096xf32>, tensor<64xf32>, tensor<64xf32>)
// CHECK-NEXT: ^bb0(%[[A2:.*]]: f32, %[[M2:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.subf %[[A2]], %[[M2]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[VAR]], %[[NORM]]
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @recomputed_in_each_consumer(%x: tensor<64x4096xf32>, %mean: tensor<64xf32>, %zeros: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<64x4096xf32>) {
  %e = tensor.empty() : tensor<64x4096xf32>
  %d = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<64x4096xf32>, tensor<64xf32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x4096xf32>
  %var = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%d : tensor<64x4096xf32>) outs(%zeros : tensor<64xf32>) {
  ^bb0(%a: f32, %s: f32):
    %q = arith.mulf %a, %a : f32
    %t = arith.addf %q, %s : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %norm = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d, %var : tensor<64x4096xf32>, tensor<64xf32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %v: f32, %o: f32):
    %n = arith.divf %a, %v : f32
    linalg.yield %n : f32
  } -> tensor<64x4096xf32>
  return %var, %norm : tensor<64xf32>, tensor<64x4096xf32>
}

// -----

// Not a scalar computed once for many elements (the unscale factor), nor a
// producer that reads two tensors whole: recomputed, it would cost more
// than its buffer.
// CHECK-LABEL: func.func @kept_shared
// CHECK: %[[F:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<f32>)
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%arg1, %arg2 : tensor<64x4096xf32>, tensor<64x4096xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[P]], %[[F]] :
// CHECK: linalg.generic {{.*}} ins(%[[P]], %[[F]] :
#id2 = affine_map<(i, j) -> (i, j)>
#scalar = affine_map<(i, j) -> ()>
#none = affine_map<() -> ()>
func.func @kept_shared(%scale: tensor<f32>, %x: tensor<64x4096xf32>, %y: tensor<64x4096xf32>)
    -> (tensor<64x4096xf32>, tensor<64x4096xf32>) {
  %e0 = tensor.empty() : tensor<f32>
  %f = linalg.generic {indexing_maps = [#none, #none], iterator_types = []}
      ins(%scale : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%s: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %r = arith.divf %one, %s : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e = tensor.empty() : tensor<64x4096xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<64x4096xf32>, tensor<64x4096xf32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<64x4096xf32>
  %u = linalg.generic {indexing_maps = [#id2, #scalar, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %f : tensor<64x4096xf32>, tensor<f32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %g: f32, %o: f32):
    %m = arith.mulf %a, %g : f32
    linalg.yield %m : f32
  } -> tensor<64x4096xf32>
  %v = linalg.generic {indexing_maps = [#id2, #scalar, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %f : tensor<64x4096xf32>, tensor<f32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %g: f32, %o: f32):
    %m = arith.addf %a, %g : f32
    linalg.yield %m : f32
  } -> tensor<64x4096xf32>
  return %u, %v : tensor<64x4096xf32>, tensor<64x4096xf32>
}

// -----

// Nor a producer with three readers: each would compile its own copy.
// CHECK-LABEL: func.func @three_readers
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<64x4096xf32>, tensor<64xf32>)
// CHECK-COUNT-3: linalg.generic {{.*}} ins(%[[D]] :
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @three_readers(%x: tensor<64x4096xf32>, %mean: tensor<64xf32>)
    -> (tensor<64x4096xf32>, tensor<64x4096xf32>, tensor<64x4096xf32>) {
  %e = tensor.empty() : tensor<64x4096xf32>
  %d = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<64x4096xf32>, tensor<64xf32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x4096xf32>
  %u = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<64x4096xf32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<64x4096xf32>
  %v = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<64x4096xf32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.mulf %a, %a : f32
    linalg.yield %n : f32
  } -> tensor<64x4096xf32>
  %w = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<64x4096xf32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.addf %a, %a : f32
    linalg.yield %n : f32
  } -> tensor<64x4096xf32>
  return %u, %v, %w : tensor<64x4096xf32>, tensor<64x4096xf32>, tensor<64x4096xf32>
}
