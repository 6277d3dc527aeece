// RUN: amp-opt %s --split-input-file --amp-linalg-to-gpu-matmul | FileCheck %s
// RUN: amp-opt %s --split-input-file --amp-linalg-to-gpu-matmul=matmul-f32 | FileCheck %s --check-prefix=F32

// A low-precision product with an f32 accumulator; the zero fill becomes
// beta = 0.
// CHECK-LABEL: func.func @f16_f32_acc
// CHECK-NOT: linalg.fill
// CHECK: amp_gpu.matmul %arg0, %arg1, %arg2 {alpha = 1.000000e+00 : f32, beta = 0.000000e+00 : f32, call_site = 0 : i64} : memref<64x32xf16>, memref<32x16xf16>, memref<64x16xf32>
// CHECK-NOT: linalg.matmul
func.func @f16_f32_acc(%a: memref<64x32xf16>, %b: memref<32x16xf16>, %c: memref<64x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x16xf32>)
  linalg.matmul ins(%a, %b : memref<64x32xf16>, memref<32x16xf16>) outs(%c : memref<64x16xf32>)
  return
}

// -----

// Accumulation into C (no fill) keeps beta = 1; a bf16 output stays bf16.
// CHECK-LABEL: func.func @bf16_accumulate
// CHECK: amp_gpu.matmul %arg0, %arg1, %arg2 {alpha = 1.000000e+00 : f32, beta = 1.000000e+00 : f32, call_site = 0 : i64} : memref<8x4xbf16>, memref<4x2xbf16>, memref<8x2xbf16>
func.func @bf16_accumulate(%a: memref<8x4xbf16>, %b: memref<4x2xbf16>, %c: memref<8x2xbf16>) {
  linalg.matmul ins(%a, %b : memref<8x4xbf16>, memref<4x2xbf16>) outs(%c : memref<8x2xbf16>)
  return
}

// -----

// Transposed operands become transposed views, never copies; call sites
// are numbered per module.
// CHECK-LABEL: func.func @transposed
// CHECK: %[[AT:.*]] = memref.transpose %arg0 (d0, d1) -> (d1, d0) : memref<32x64xf16> to memref<64x32xf16, strided<[1, 64]>>
// CHECK: amp_gpu.matmul %[[AT]], %arg1, %arg2 {{.*}}call_site = 0 : i64{{.*}} : memref<64x32xf16, strided<[1, 64]>>, memref<32x16xf16>, memref<64x16xf32>
// CHECK: %[[BT:.*]] = memref.transpose %arg3 (d0, d1) -> (d1, d0) : memref<16x32xf16> to memref<32x16xf16, strided<[1, 32]>>
// CHECK: amp_gpu.matmul %arg4, %[[BT]], %arg2 {{.*}}call_site = 1 : i64{{.*}} : memref<64x32xf16>, memref<32x16xf16, strided<[1, 32]>>, memref<64x16xf32>
// CHECK-NOT: linalg.matmul
#mAt = affine_map<(m, n, k) -> (k, m)>
#mA  = affine_map<(m, n, k) -> (m, k)>
#mB  = affine_map<(m, n, k) -> (k, n)>
#mBt = affine_map<(m, n, k) -> (n, k)>
#mC  = affine_map<(m, n, k) -> (m, n)>
func.func @transposed(%at: memref<32x64xf16>, %b: memref<32x16xf16>, %c: memref<64x16xf32>,
                      %bt: memref<16x32xf16>, %a: memref<64x32xf16>) {
  linalg.matmul indexing_maps = [#mAt, #mB, #mC]
      ins(%at, %b : memref<32x64xf16>, memref<32x16xf16>) outs(%c : memref<64x16xf32>)
  linalg.matmul indexing_maps = [#mA, #mBt, #mC]
      ins(%a, %bt : memref<64x32xf16>, memref<16x32xf16>) outs(%c : memref<64x16xf32>)
  return
}

// -----

// Batched products keep the batch first: rank-3 calls.
// CHECK-LABEL: func.func @batched
// CHECK: amp_gpu.matmul %arg0, %arg1, %arg2 {{.*}} : memref<4x8x16xbf16>, memref<4x16x2xbf16>, memref<4x8x2xf32>
func.func @batched(%a: memref<4x8x16xbf16>, %b: memref<4x16x2xbf16>, %c: memref<4x8x2xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x8x16xbf16>, memref<4x16x2xbf16>) outs(%c : memref<4x8x2xf32>)
  return
}

// -----

// f32 products go through the runtime only with matmul-f32.
// CHECK-LABEL: func.func @f32
// CHECK: linalg.matmul
// CHECK-NOT: amp_gpu.matmul
// F32-LABEL: func.func @f32
// F32: amp_gpu.matmul %arg0, %arg1, %arg2 {{.*}} : memref<8x4xf32>, memref<4x2xf32>, memref<8x2xf32>
// F32-NOT: linalg.matmul
func.func @f32(%a: memref<8x4xf32>, %b: memref<4x2xf32>, %c: memref<8x2xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x2xf32>) outs(%c : memref<8x2xf32>)
  return
}

// -----

// Mixed input types and tensors are left to the other paths.
// CHECK-LABEL: func.func @left_alone
// F32-LABEL: func.func @left_alone
// CHECK: linalg.matmul
// CHECK: linalg.matmul
// CHECK-NOT: amp_gpu.matmul
func.func @left_alone(%a: memref<8x4xf16>, %b: memref<4x2xbf16>, %c: memref<8x2xf32>,
                      %t: tensor<8x4xf16>, %u: tensor<4x2xf16>, %v: tensor<8x2xf32>) -> tensor<8x2xf32> {
  linalg.matmul ins(%a, %b : memref<8x4xf16>, memref<4x2xbf16>) outs(%c : memref<8x2xf32>)
  %r = linalg.matmul ins(%t, %u : tensor<8x4xf16>, tensor<4x2xf16>) outs(%v : tensor<8x2xf32>) -> tensor<8x2xf32>
  return %r : tensor<8x2xf32>
}
