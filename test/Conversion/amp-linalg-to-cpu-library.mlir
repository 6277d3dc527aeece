// RUN: amp-opt %s --split-input-file --amp-linalg-to-cpu-library | FileCheck %s

// An f32 matmul after a fill of zero: the call overwrites its output
// (accumulate = 0) and the fill goes; the runtime is declared once with its
// C interface.
// CHECK-LABEL: func.func @matmul_f32(
// CHECK-SAME:      %[[A:.*]]: memref<4x8xf32>, %[[B:.*]]: memref<8x16xf32>, %[[C:.*]]: memref<4x16xf32>)
// CHECK-NOT:     linalg.fill
// CHECK:         %[[NO:.*]] = arith.constant 0 : i32
// CHECK:         %[[UA:.*]] = memref.cast %[[A]] : memref<4x8xf32> to memref<*xf32>
// CHECK:         %[[UB:.*]] = memref.cast %[[B]] : memref<8x16xf32> to memref<*xf32>
// CHECK:         %[[UC:.*]] = memref.cast %[[C]] : memref<4x16xf32> to memref<*xf32>
// CHECK:         call @ampCpuMatmulF32(%[[UA]], %[[UB]], %[[UC]], %[[NO]])
// CHECK-NOT:     linalg.matmul
// CHECK:       func.func private @ampCpuMatmulF32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i32) attributes {llvm.emit_c_interface}
func.func @matmul_f32(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// A weight gradient (A transposed) with f16 inputs into an f32 output that
// holds a value: the transposed operand is a view, the call accumulates.
// CHECK-LABEL: func.func @transposed_f16(
// CHECK-SAME:      %[[A:.*]]: memref<8x4xf16>, %[[B:.*]]: memref<8x16xf16>, %[[C:.*]]: memref<4x16xf32>)
// CHECK:         %[[YES:.*]] = arith.constant 1 : i32
// CHECK:         %[[AT:.*]] = memref.transpose %[[A]] (d0, d1) -> (d1, d0) : memref<8x4xf16> to memref<4x8xf16, strided<[1, 4]>>
// CHECK:         memref.cast %[[AT]] : memref<4x8xf16, strided<[1, 4]>> to memref<*xf16>
// CHECK:         call @ampCpuMatmulF16(%{{.*}}, %{{.*}}, %{{.*}}, %[[YES]]) : (memref<*xf16>, memref<*xf16>, memref<*xf32>, i32) -> ()
func.func @transposed_f16(%a: memref<8x4xf16>, %b: memref<8x16xf16>, %c: memref<4x16xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<8x4xf16>, memref<8x16xf16>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// Batch matmuls of bf16 and 2-d convolutions with their strides and
// dilations.
// CHECK-LABEL: func.func @batch_and_conv(
// CHECK:         call @ampCpuMatmulBF16(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xbf16>, memref<*xbf16>, memref<*xf32>, i32) -> ()
// CHECK:         %[[SH:.*]] = arith.constant 2 : i64
// CHECK:         %[[SW:.*]] = arith.constant 2 : i64
// CHECK:         %[[DH:.*]] = arith.constant 1 : i64
// CHECK:         %[[DW:.*]] = arith.constant 1 : i64
// CHECK:         call @ampCpuConv2DF32(%{{.*}}, %{{.*}}, %{{.*}}, %[[SH]], %[[SW]], %[[DH]], %[[DW]], %{{.*}}) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i32) -> ()
func.func @batch_and_conv(%a: memref<2x4x8xbf16>, %b: memref<2x8x16xbf16>, %c: memref<2x4x16xf32>,
                          %x: memref<1x3x9x9xf32>, %w: memref<8x3x3x3xf32>, %y: memref<1x8x4x4xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xbf16>, memref<2x8x16xbf16>) outs(%c : memref<2x4x16xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w : memref<1x3x9x9xf32>, memref<8x3x3x3xf32>) outs(%y : memref<1x8x4x4xf32>)
  return
}

// -----

// A product into a low-precision output, or of mixed input types, stays a
// loop nest.
// CHECK-LABEL: func.func @stays(
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xbf16>, memref<8x16xbf16>) outs(%{{.*}} : memref<4x16xbf16>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xf16>, memref<8x16xf32>) outs(%{{.*}} : memref<4x16xf32>)
// CHECK-NOT:     call
func.func @stays(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %c: memref<4x16xbf16>,
                 %d: memref<4x8xf16>, %e: memref<8x16xf32>, %f: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xbf16>)
  linalg.matmul ins(%d, %e : memref<4x8xf16>, memref<8x16xf32>) outs(%f : memref<4x16xf32>)
  return
}
