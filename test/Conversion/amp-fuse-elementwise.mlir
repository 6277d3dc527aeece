// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-fuse-elementwise))" | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-fuse-elementwise{keep-product-casts}))" | FileCheck %s --check-prefix=KEEP

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

// Not a scalar computed once for many elements (the unscale factor): each
// reader would compute it again for every element.
// CHECK-LABEL: func.func @scalar_kept_shared
// CHECK: %[[F:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<f32>)
// CHECK: linalg.generic {{.*}} ins(%arg1, %[[F]] :
// CHECK: linalg.generic {{.*}} ins(%arg2, %[[F]] :
#id2 = affine_map<(i, j) -> (i, j)>
#scalar = affine_map<(i, j) -> ()>
#none = affine_map<() -> ()>
func.func @scalar_kept_shared(%scale: tensor<f32>, %x: tensor<64x4096xf32>, %y: tensor<64x4096xf32>)
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
  %u = linalg.generic {indexing_maps = [#id2, #scalar, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %f : tensor<64x4096xf32>, tensor<f32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %g: f32, %o: f32):
    %m = arith.mulf %a, %g : f32
    linalg.yield %m : f32
  } -> tensor<64x4096xf32>
  %v = linalg.generic {indexing_maps = [#id2, #scalar, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y, %f : tensor<64x4096xf32>, tensor<f32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %g: f32, %o: f32):
    %m = arith.addf %a, %g : f32
    linalg.yield %m : f32
  } -> tensor<64x4096xf32>
  return %u, %v : tensor<64x4096xf32>, tensor<64x4096xf32>
}

// -----

// A producer that reads two tensors whole (recomputed, it would cost more
// than its buffer) and is returned too: its first elementwise reader takes
// it in, writes its result as well, and then so does the second. One loop
// nest reads the two tensors once and writes three results.
// CHECK-LABEL: func.func @first_reader_writes_the_shared_result
// CHECK: %[[R:.*]]:3 = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<64x4096xf32>, tensor<64x4096xf32>)
// CHECK-NEXT: ^bb0(%[[A:[^:]*]]: f32, %[[B:[^:]*]]: f32,
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[U:.*]] = arith.negf %[[P]] : f32
// CHECK-NEXT: %[[V:.*]] = arith.truncf %[[P]] : f32 to bf16
// CHECK-NEXT: linalg.yield %[[P]], %[[U]], %[[V]] : f32, f32, bf16
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#1, %[[R]]#2, %[[R]]#0
#id2 = affine_map<(i, j) -> (i, j)>
func.func @first_reader_writes_the_shared_result(%x: tensor<64x4096xf32>, %y: tensor<64x4096xf32>)
    -> (tensor<64x4096xf32>, tensor<64x4096xbf16>, tensor<64x4096xf32>) {
  %e = tensor.empty() : tensor<64x4096xf32>
  %eb = tensor.empty() : tensor<64x4096xbf16>
  %p = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<64x4096xf32>, tensor<64x4096xf32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<64x4096xf32>
  %u = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<64x4096xf32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<64x4096xf32>
  %v = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<64x4096xf32>) outs(%eb : tensor<64x4096xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x4096xbf16>
  return %u, %v, %p : tensor<64x4096xf32>, tensor<64x4096xbf16>, tensor<64x4096xf32>
}

// -----

// Not when the first reader is a reduction (its loops are not the
// producer's elements, one each), nor into a later reader: the reduction
// would read the result before the fused op defines it.
// CHECK-LABEL: func.func @kept_for_a_reduction
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<64x4096xf32>, tensor<64x4096xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P]] :
// CHECK: linalg.generic {{.*}} ins(%[[P]] :
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @kept_for_a_reduction(%x: tensor<64x4096xf32>, %y: tensor<64x4096xf32>, %zeros: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<64x4096xf32>) {
  %e = tensor.empty() : tensor<64x4096xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<64x4096xf32>, tensor<64x4096xf32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<64x4096xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%p : tensor<64x4096xf32>) outs(%zeros : tensor<64xf32>) {
  ^bb0(%a: f32, %s: f32):
    %t = arith.addf %a, %s : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %u = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<64x4096xf32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<64x4096xf32>
  return %sum, %u : tensor<64xf32>, tensor<64x4096xf32>
}

// -----

// Nor into a first reader that reads the result twice (here also
// transposed): the fused op would read its own result.
// CHECK-LABEL: func.func @kept_for_a_double_reader
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<128x128xf32>, tensor<128x128xf32>)
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[P]] :
// CHECK: return %[[W]], %[[P]]
#id2 = affine_map<(i, j) -> (i, j)>
#swap = affine_map<(i, j) -> (j, i)>
func.func @kept_for_a_double_reader(%x: tensor<128x128xf32>, %y: tensor<128x128xf32>)
    -> (tensor<128x128xf32>, tensor<128x128xf32>) {
  %e = tensor.empty() : tensor<128x128xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<128x128xf32>, tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<128x128xf32>
  %w = linalg.generic {indexing_maps = [#id2, #swap, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %p : tensor<128x128xf32>, tensor<128x128xf32>) outs(%e : tensor<128x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %n = arith.addf %a, %b : f32
    linalg.yield %n : f32
  } -> tensor<128x128xf32>
  return %w, %p : tensor<128x128xf32>, tensor<128x128xf32>
}

// -----

// A producer with three readers, too many to compute it again in each (each
// would compile its own copy): the first takes it in, then the second and
// the third, and its buffer goes.
// CHECK-LABEL: func.func @three_readers
// CHECK: %[[R:.*]]:3 = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<64x4096xf32>, tensor<64xf32>)
// CHECK-COUNT-1: arith.subf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
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

// -----

// `x - mean` of a bf16 image read in f32 widens its input: its four readers
// (two in the forward, two in the backward) each compute it again from the
// bf16 image, which costs fewer bytes than its f32 buffer.
// CHECK-LABEL: func.func @widening_recomputed_in_four_readers
// CHECK-COUNT-4: ins(%arg0, %arg1{{.*}} : tensor<64x4096xbf16>, tensor<64xf32>
// CHECK-NOT: linalg.generic
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @widening_recomputed_in_four_readers(%x: tensor<64x4096xbf16>, %mean: tensor<64xf32>, %zeros: tensor<64xf32>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64x4096xf32>, tensor<64x4096xf32>) {
  %e = tensor.empty() : tensor<64x4096xf32>
  %d = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<64x4096xbf16>, tensor<64xf32>) outs(%e : tensor<64x4096xf32>) {
  ^bb0(%a: bf16, %m: f32, %o: f32):
    %w = arith.extf %a : bf16 to f32
    %s = arith.subf %w, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x4096xf32>
  %var = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%d : tensor<64x4096xf32>) outs(%zeros : tensor<64xf32>) {
  ^bb0(%a: f32, %s: f32):
    %q = arith.mulf %a, %a : f32
    %t = arith.addf %q, %s : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%d : tensor<64x4096xf32>) outs(%zeros : tensor<64xf32>) {
  ^bb0(%a: f32, %s: f32):
    %t = arith.addf %a, %s : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
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
  return %var, %sum, %u, %v : tensor<64xf32>, tensor<64xf32>, tensor<64x4096xf32>, tensor<64x4096xf32>
}

// -----

// A convolution's image rounded to bf16, read by an op in f32: by default
// the cast goes into its reader, which reads the f32 image; with
// `keep-product-casts` it stays next to the convolution, for the library
// to write bf16, and the reader reads bf16.
// CHECK-LABEL: func.func @product_cast
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw
// CHECK: linalg.generic {{.*}} ins(%[[C]] : tensor<2x4x8x8xf32>)
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.truncf %[[P]] : f32 to bf16
// CHECK-NOT: linalg.generic
// KEEP-LABEL: func.func @product_cast
// KEEP: %[[C:.*]] = linalg.conv_2d_nchw_fchw
// KEEP: %[[T:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<2x4x8x8xf32>)
// KEEP: linalg.generic {{.*}} ins(%[[T]] : tensor<2x4x8x8xbf16>)
// KEEP-NEXT: ^bb0(%[[P:.*]]: bf16, %{{.*}}: f32):
// KEEP-NEXT: arith.extf %[[P]] : bf16 to f32
#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>
func.func @product_cast(%x: tensor<2x3x10x10xbf16>, %w: tensor<4x3x3x3xbf16>, %init: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<2x3x10x10xbf16>, tensor<4x3x3x3xbf16>) outs(%init : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %el = tensor.empty() : tensor<2x4x8x8xbf16>
  %t = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<2x4x8x8xf32>) outs(%el : tensor<2x4x8x8xbf16>) {
  ^bb0(%p: f32, %o: bf16):
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<2x4x8x8xbf16>
  %e = tensor.empty() : tensor<2x4x8x8xf32>
  %y = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<2x4x8x8xbf16>) outs(%e : tensor<2x4x8x8xf32>) {
  ^bb0(%p: bf16, %o: f32):
    %x2 = arith.extf %p : bf16 to f32
    %m = arith.mulf %x2, %x2 : f32
    linalg.yield %m : f32
  } -> tensor<2x4x8x8xf32>
  return %y : tensor<2x4x8x8xf32>
}

// -----

// A cast of a product of f32 inputs to bf16 (amp-cpu-widen-library-operands
// made the inputs f32): no library call writes bf16 from f32 inputs, so even
// with `keep-product-casts` the cast goes into its reader.
// CHECK-LABEL: func.func @widened_product_cast
// KEEP-LABEL: func.func @widened_product_cast
// KEEP: %[[C:.*]] = linalg.matmul
// KEEP: linalg.generic {{.*}} ins(%[[C]] : tensor<4x16xf32>)
// KEEP-NEXT: ^bb0(%[[P:.*]]: f32, %{{.*}}: f32):
// KEEP-NEXT: arith.truncf %[[P]] : f32 to bf16
// KEEP-NOT: linalg.generic
// KEEP: return
#id2c = affine_map<(i, j) -> (i, j)>
func.func @widened_product_cast(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %init: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  %el = tensor.empty() : tensor<4x16xbf16>
  %t = linalg.generic {indexing_maps = [#id2c, #id2c], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<4x16xf32>) outs(%el : tensor<4x16xbf16>) {
  ^bb0(%p: f32, %o: bf16):
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<4x16xbf16>
  %e = tensor.empty() : tensor<4x16xf32>
  %y = linalg.generic {indexing_maps = [#id2c, #id2c], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x16xbf16>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%p: bf16, %o: f32):
    %x2 = arith.extf %p : bf16 to f32
    %m = arith.mulf %x2, %x2 : f32
    linalg.yield %m : f32
  } -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A scalar with one use, read broadcast by an elementwise op over many
// elements (Adam's bias correction `1 - beta^t`), stays its own op: fused,
// its powf would run for every element.
// CHECK-LABEL: func.func @broadcast_scalar_not_fused
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<f32>)
// CHECK: math.powf
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[S]] : tensor<1024x256xf32>, tensor<f32>)
// CHECK-NOT: math.powf
// CHECK: return
#id2 = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
#scalar = affine_map<() -> ()>
func.func @broadcast_scalar_not_fused(%p: tensor<1024x256xf32>, %t: tensor<f32>) -> tensor<1024x256xf32> {
  %beta = arith.constant 0.9 : f32
  %es = tensor.empty() : tensor<f32>
  %c = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
      ins(%t : tensor<f32>) outs(%es : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %pw = math.powf %beta, %a : f32
    linalg.yield %pw : f32
  } -> tensor<f32>
  %e = tensor.empty() : tensor<1024x256xf32>
  %r = linalg.generic {indexing_maps = [#id2, #all, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %c : tensor<1024x256xf32>, tensor<f32>) outs(%e : tensor<1024x256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<1024x256xf32>
  return %r : tensor<1024x256xf32>
}
