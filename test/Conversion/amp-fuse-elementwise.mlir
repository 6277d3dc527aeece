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

// A cast with two uses stays (fusing would compute it twice), and a
// contraction is never turned into a generic: it stays for cuBLASLt.
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
