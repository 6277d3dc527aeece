// RUN: amp-opt %s --split-input-file --amp-linalg-to-cpu-library | FileCheck %s
// RUN: amp-opt %s --split-input-file --amp-linalg-to-cpu-library=epilogues=false | FileCheck %s --check-prefix=NOFUSE

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

// Batch matmuls of bf16 and 2-d convolutions with their strides, dilations
// and (none here) padding before and after.
// CHECK-LABEL: func.func @batch_and_conv(
// CHECK:         call @ampCpuMatmulBF16(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xbf16>, memref<*xbf16>, memref<*xf32>, i32) -> ()
// CHECK:         %[[S:.*]] = arith.constant 2 : i64
// CHECK:         %[[D:.*]] = arith.constant 1 : i64
// CHECK:         %[[P:.*]] = arith.constant 0 : i64
// CHECK:         call @ampCpuConv2DF32(%{{.*}}, %{{.*}}, %{{.*}}, %[[S]], %[[S]], %[[D]], %[[D]], %[[P]], %[[P]], %[[P]], %[[P]], %{{.*}}) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) -> ()
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
// -----

// A forward convolution of an input zero-padded by one copy into a filled
// buffer: the call reads the copy's source with padding 1 on every side,
// and the fill, copy and buffer go.
// CHECK-LABEL: func.func @forward_padded(
// CHECK-SAME:      %[[X:.*]]: memref<2x3x8x8xf32>, %[[W:.*]]: memref<4x3x3x3xf32>, %[[Y:.*]]: memref<2x4x8x8xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.copy
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i64
// CHECK:         %[[UX:.*]] = memref.cast %[[X]] : memref<2x3x8x8xf32> to memref<*xf32>
// CHECK:         call @ampCpuConv2DF32(%[[UX]], %{{.*}}, %{{.*}}, %[[ONE]], %{{.*}}, %{{.*}}, %{{.*}}, %[[P:.*]], %[[P]], %[[P]], %[[P]], %{{.*}})
// CHECK-NOT:     memref.dealloc
// CHECK:       func.func private @ampCpuConv2DF32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) attributes {llvm.emit_c_interface}
func.func @forward_padded(%x: memref<2x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<2x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<2x3x10x10xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x10x10xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %x, %interior : memref<2x3x8x8xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  linalg.fill ins(%zero : f32) outs(%y : memref<2x4x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : memref<2x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x8x8xf32>)
  memref.dealloc %padded : memref<2x3x10x10xf32>
  return
}

// -----

// A weight gradient as torch-mlir writes it, after a forward convolution of
// 3 images 4 x 8 x 8 by 8 filters 3 x 3 with stride 2 and padding 1: the
// transposed input x^T (4 x 3, zero-padded) by the transposed output
// gradient dy^T (8 x 3 x 4 x 4) into the transposed filter gradient, with
// linalg's stride and dilation swapped. The call gets views of dy, x and
// the filter gradient in their forward roles, stride 2, padding 1 before
// and 0 after (the last row of the padded image is not read), the pad's
// buffer gone.
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-SAME:      %[[XT:.*]]: memref<4x3x8x8xbf16>, %[[DYT:.*]]: memref<8x3x4x4xbf16>, %[[DW:.*]]: memref<4x8x3x3xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-DAG:     %[[X:.*]] = memref.transpose %[[XT]] (d0, d1, d2, d3) -> (d1, d0, d2, d3) : memref<4x3x8x8xbf16> to memref<3x4x8x8xbf16, strided<[64, 192, 8, 1]>>
// CHECK-DAG:     %[[DY:.*]] = memref.transpose %[[DYT]] (d0, d1, d2, d3) -> (d1, d0, d2, d3)
// CHECK-DAG:     %[[G:.*]] = memref.transpose %[[DW]] (d0, d1, d2, d3) -> (d1, d0, d2, d3)
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[NONE:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[UX:.*]] = memref.cast %[[X]]
// CHECK-DAG:     %[[UDY:.*]] = memref.cast %[[DY]]
// CHECK-DAG:     %[[UG:.*]] = memref.cast %[[G]]
// CHECK:         call @ampCpuConv2DBackwardWeightsBF16(%[[UX]], %[[UDY]], %[[UG]], %[[TWO]], %{{.*}}, %[[ONE]], %{{.*}}, %[[ONE]], %{{.*}}, %[[NONE]], %{{.*}}, %{{.*}}) : (memref<*xbf16>, memref<*xbf16>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) -> ()
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
func.func @weight_gradient(%xt: memref<4x3x8x8xbf16>, %dyt: memref<8x3x4x4xbf16>, %dw: memref<4x8x3x3xf32>) {
  %zero = arith.constant 0.0 : bf16
  %fzero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<4x3x10x10xbf16>
  linalg.map outs(%padded : memref<4x3x10x10xbf16>)
    (%init: bf16) {
      linalg.yield %zero : bf16
    }
  %interior = memref.subview %padded[0, 0, 1, 1] [4, 3, 8, 8] [1, 1, 1, 1] : memref<4x3x10x10xbf16> to memref<4x3x8x8xbf16, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %xt, %interior : memref<4x3x8x8xbf16> to memref<4x3x8x8xbf16, strided<[300, 100, 10, 1], offset: 11>>
  linalg.fill ins(%fzero : f32) outs(%dw : memref<4x8x3x3xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %dyt : memref<4x3x10x10xbf16>, memref<8x3x4x4xbf16>) outs(%dw : memref<4x8x3x3xf32>)
  memref.dealloc %padded : memref<4x3x10x10xbf16>
  return
}

// -----

// The same weight gradient with the operands torch-mlir makes for it: x
// (3 x 4 x 8 x 8) and dy (3 x 8 x 4 x 4) transposed through a unit group
// dimension into copies, the copy of x then padded. The call reads x and dy
// in place, and the copies, which nothing else reads, go.
// CHECK-LABEL: func.func @weight_gradient_of_copies(
// CHECK-SAME:      %[[X:.*]]: memref<3x4x8x8xbf16>, %[[DY:.*]]: memref<3x8x4x4xbf16>, %[[DW:.*]]: memref<4x8x3x3xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     linalg.transpose
// CHECK-DAG:     %[[UX:.*]] = memref.cast %[[X]] : memref<3x4x8x8xbf16> to memref<*xbf16>
// CHECK-DAG:     %[[UDY:.*]] = memref.cast %[[DY]] : memref<3x8x4x4xbf16> to memref<*xbf16>
// CHECK:         call @ampCpuConv2DBackwardWeightsBF16(%[[UX]], %[[UDY]],
// CHECK-NOT:     linalg.transpose
// CHECK-NOT:     memref.dealloc
func.func @weight_gradient_of_copies(%x: memref<3x4x8x8xbf16>, %dy: memref<3x8x4x4xbf16>, %dw: memref<4x8x3x3xf32>) {
  %zero = arith.constant 0.0 : bf16
  %fzero = arith.constant 0.0 : f32
  %xg = memref.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [3, 1, 4, 8, 8] : memref<3x4x8x8xbf16> into memref<3x1x4x8x8xbf16>
  %xt = memref.alloc() : memref<4x1x3x8x8xbf16>
  linalg.transpose ins(%xg : memref<3x1x4x8x8xbf16>) outs(%xt : memref<4x1x3x8x8xbf16>) permutation = [2, 1, 0, 3, 4]
  %xc = memref.collapse_shape %xt [[0], [1, 2], [3], [4]] : memref<4x1x3x8x8xbf16> into memref<4x3x8x8xbf16>
  %dyg = memref.expand_shape %dy [[0], [1, 2], [3], [4]] output_shape [3, 1, 8, 4, 4] : memref<3x8x4x4xbf16> into memref<3x1x8x4x4xbf16>
  %dyt = memref.alloc() : memref<1x8x3x4x4xbf16>
  linalg.transpose ins(%dyg : memref<3x1x8x4x4xbf16>) outs(%dyt : memref<1x8x3x4x4xbf16>) permutation = [1, 2, 0, 3, 4]
  %dyc = memref.collapse_shape %dyt [[0, 1], [2], [3], [4]] : memref<1x8x3x4x4xbf16> into memref<8x3x4x4xbf16>
  %padded = memref.alloc() : memref<4x3x10x10xbf16>
  linalg.fill ins(%zero : bf16) outs(%padded : memref<4x3x10x10xbf16>)
  %interior = memref.subview %padded[0, 0, 1, 1] [4, 3, 8, 8] [1, 1, 1, 1] : memref<4x3x10x10xbf16> to memref<4x3x8x8xbf16, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %xc, %interior : memref<4x3x8x8xbf16> to memref<4x3x8x8xbf16, strided<[300, 100, 10, 1], offset: 11>>
  linalg.fill ins(%fzero : f32) outs(%dw : memref<4x8x3x3xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %dyc : memref<4x3x10x10xbf16>, memref<8x3x4x4xbf16>) outs(%dw : memref<4x8x3x3xf32>)
  memref.dealloc %padded : memref<4x3x10x10xbf16>
  memref.dealloc %xt : memref<4x1x3x8x8xbf16>
  memref.dealloc %dyt : memref<1x8x3x4x4xbf16>
  return
}

// -----

// Not when x changes after its copy, or when the copy is not x transposed
// (dy's copy swaps its two image dimensions too): the call reads the
// copies, as transposed views.
// CHECK-LABEL: func.func @weight_gradient_keeps_copies(
// CHECK-SAME:      %[[X:.*]]: memref<3x4x8x8xf32>, %[[DY:.*]]: memref<3x8x6x6xf32>, %[[DW:.*]]: memref<4x8x3x3xf32>)
// CHECK:         %[[XT:.*]] = memref.alloc() : memref<4x3x8x8xf32>
// CHECK:         linalg.transpose ins(%[[X]] : memref<3x4x8x8xf32>) outs(%[[XT]] : memref<4x3x8x8xf32>)
// CHECK:         %[[DYT:.*]] = memref.alloc() : memref<8x3x6x6xf32>
// CHECK:         linalg.transpose ins(%[[DY]] : memref<3x8x6x6xf32>) outs(%[[DYT]] : memref<8x3x6x6xf32>)
// CHECK:         linalg.fill
// CHECK-DAG:     %[[XV:.*]] = memref.transpose %[[XT]] (d0, d1, d2, d3) -> (d1, d0, d2, d3)
// CHECK-DAG:     %[[DYV:.*]] = memref.transpose %[[DYT]] (d0, d1, d2, d3) -> (d1, d0, d2, d3)
// CHECK-DAG:     %[[UX:.*]] = memref.cast %[[XV]]
// CHECK-DAG:     %[[UDY:.*]] = memref.cast %[[DYV]]
// CHECK:         call @ampCpuConv2DBackwardWeightsF32(%[[UX]], %[[UDY]],
func.func @weight_gradient_keeps_copies(%x: memref<3x4x8x8xf32>, %dy: memref<3x8x6x6xf32>, %dw: memref<4x8x3x3xf32>) {
  %fzero = arith.constant 0.0 : f32
  %xt = memref.alloc() : memref<4x3x8x8xf32>
  linalg.transpose ins(%x : memref<3x4x8x8xf32>) outs(%xt : memref<4x3x8x8xf32>) permutation = [1, 0, 2, 3]
  %dyt = memref.alloc() : memref<8x3x6x6xf32>
  linalg.transpose ins(%dy : memref<3x8x6x6xf32>) outs(%dyt : memref<8x3x6x6xf32>) permutation = [1, 0, 3, 2]
  linalg.fill ins(%fzero : f32) outs(%x : memref<3x4x8x8xf32>)
  linalg.fill ins(%fzero : f32) outs(%dw : memref<4x8x3x3xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xt, %dyt : memref<4x3x8x8xf32>, memref<8x3x6x6xf32>) outs(%dw : memref<4x8x3x3xf32>)
  memref.dealloc %xt : memref<4x3x8x8xf32>
  memref.dealloc %dyt : memref<8x3x6x6xf32>
  return
}

// -----

// A strided 1 x 1 convolution of an 8 x 8 image reads 7 x 7 of it: the
// 8th row and column are less than a stride, which oneDNN's output count
// rounds away, so the calls read the image whole (a crop would be reordered
// first), its forward and its weight gradient alike.
// CHECK-LABEL: func.func @strided_reads_whole_image(
// CHECK-SAME:      %[[X:.*]]: memref<1x2x8x8xf32>, %{{.*}}: memref<3x2x1x1xf32>, %{{.*}}: memref<1x3x4x4xf32>, %[[XT:.*]]: memref<2x1x8x8xf32>
// CHECK-NOT:     memref.subview
// CHECK:         %[[UX:.*]] = memref.cast %[[X]] : memref<1x2x8x8xf32> to memref<*xf32>
// CHECK:         call @ampCpuConv2DF32(%[[UX]], %{{.*}}, %{{.*}}, %[[C2:.*]], %[[C2]], %[[C1:.*]], %[[C1]], %[[C0:.*]], %[[C0]], %[[C0]], %[[C0]],
// CHECK-NOT:     memref.subview
// CHECK:         call @ampCpuConv2DBackwardWeightsF32(%{{.*}}, %{{.*}}, %{{.*}}, %[[S2:.*]], %[[S2]], %[[S1:.*]], %[[S1]], %[[S0:.*]], %[[S0]], %[[S0]], %[[S0]],
func.func @strided_reads_whole_image(%x: memref<1x2x8x8xf32>, %w: memref<3x2x1x1xf32>, %y: memref<1x3x4x4xf32>,
                                     %xt: memref<2x1x8x8xf32>, %dyt: memref<3x1x4x4xf32>, %dw: memref<2x3x1x1xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w : memref<1x2x8x8xf32>, memref<3x2x1x1xf32>) outs(%y : memref<1x3x4x4xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xt, %dyt : memref<2x1x8x8xf32>, memref<3x1x4x4xf32>) outs(%dw : memref<2x3x1x1xf32>)
  return
}

// -----

// torch-mlir's weight gradient of a 3 x 3 convolution with stride 2 (of 3
// images 4 x 16 x 16, padding 1, by 8 filters) computes a 4 x 4 window, one
// row and column more than the filter, and reads only its 3 x 3 corner: the
// call computes that corner alone.
// CHECK-LABEL: func.func @weight_gradient_read_corner(
// CHECK-SAME:      %[[X:.*]]: memref<4x3x18x18xf32>, %[[DY:.*]]: memref<8x3x8x8xf32>, %[[DW:.*]]: memref<4x8x3x3xf32>)
// CHECK:         %[[FULL:.*]] = memref.alloc() : memref<4x8x4x4xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         %[[CORNER:.*]] = memref.subview %[[FULL]][0, 0, 0, 0] [4, 8, 3, 3] [1, 1, 1, 1]
// CHECK:         %[[G:.*]] = memref.transpose %[[CORNER]] (d0, d1, d2, d3) -> (d1, d0, d2, d3)
// CHECK:         %[[UG:.*]] = memref.cast %[[G]] : memref<8x4x3x3xf32, strided<[16, 128, 4, 1]>> to memref<*xf32>
// CHECK:         call @ampCpuConv2DBackwardWeightsF32(%{{.*}}, %{{.*}}, %[[UG]],
// CHECK:         memref.copy
func.func @weight_gradient_read_corner(%xt: memref<4x3x18x18xf32>, %dyt: memref<8x3x8x8xf32>, %dw: memref<4x8x3x3xf32>) {
  %fzero = arith.constant 0.0 : f32
  %full = memref.alloc() : memref<4x8x4x4xf32>
  linalg.fill ins(%fzero : f32) outs(%full : memref<4x8x4x4xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xt, %dyt : memref<4x3x18x18xf32>, memref<8x3x8x8xf32>) outs(%full : memref<4x8x4x4xf32>)
  %corner = memref.subview %full[0, 0, 0, 0] [4, 8, 3, 3] [1, 1, 1, 1] : memref<4x8x4x4xf32> to memref<4x8x3x3xf32, strided<[128, 16, 4, 1]>>
  memref.copy %corner, %dw : memref<4x8x3x3xf32, strided<[128, 16, 4, 1]>> to memref<4x8x3x3xf32>
  memref.dealloc %full : memref<4x8x4x4xf32>
  return
}

// -----

// Not when anything reads the whole window.
// CHECK-LABEL: func.func @weight_gradient_read_whole(
// CHECK:         %[[FULL:.*]] = memref.alloc() : memref<4x8x4x4xf32>
// CHECK:         %[[G:.*]] = memref.transpose %[[FULL]] (d0, d1, d2, d3) -> (d1, d0, d2, d3)
// CHECK:         %[[UG:.*]] = memref.cast %[[G]] : memref<8x4x4x4xf32, strided<[16, 128, 4, 1]>> to memref<*xf32>
// CHECK:         call @ampCpuConv2DBackwardWeightsF32(%{{.*}}, %{{.*}}, %[[UG]],
func.func @weight_gradient_read_whole(%xt: memref<4x3x18x18xf32>, %dyt: memref<8x3x8x8xf32>, %dw: memref<4x8x3x3xf32>, %all: memref<4x8x4x4xf32>) {
  %fzero = arith.constant 0.0 : f32
  %full = memref.alloc() : memref<4x8x4x4xf32>
  linalg.fill ins(%fzero : f32) outs(%full : memref<4x8x4x4xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xt, %dyt : memref<4x3x18x18xf32>, memref<8x3x8x8xf32>) outs(%full : memref<4x8x4x4xf32>)
  %corner = memref.subview %full[0, 0, 0, 0] [4, 8, 3, 3] [1, 1, 1, 1] : memref<4x8x4x4xf32> to memref<4x8x3x3xf32, strided<[128, 16, 4, 1]>>
  memref.copy %corner, %dw : memref<4x8x3x3xf32, strided<[128, 16, 4, 1]>> to memref<4x8x3x3xf32>
  memref.copy %full, %all : memref<4x8x4x4xf32> to memref<4x8x4x4xf32>
  memref.dealloc %full : memref<4x8x4x4xf32>
  return
}

// -----

// The input gradient of that strided convolution as torch-mlir writes it:
// dy (3 x 8 x 4 x 4) copied into a zero buffer with stride 2 after one
// zero, convolved with stride 1 by the rotated, transposed filter. The call
// gets dy itself, the filter as an 8 x 4 view, stride 2 and the forward's
// padding (3 - 1) - 1 = 1 before, and accumulates into dx (no fill).
// CHECK-LABEL: func.func @input_gradient(
// CHECK-SAME:      %[[DY:.*]]: memref<3x8x4x4xf16>, %[[WR:.*]]: memref<4x8x3x3xf16>, %[[DX:.*]]: memref<3x4x8x8xf32>)
// CHECK-NOT:     memref.alloc
// CHECK-DAG:     %[[YES:.*]] = arith.constant 1 : i32
// CHECK-DAG:     %[[W:.*]] = memref.transpose %[[WR]] (d0, d1, d2, d3) -> (d1, d0, d2, d3)
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG:     %[[NONE:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[UDY:.*]] = memref.cast %[[DY]] : memref<3x8x4x4xf16> to memref<*xf16>
// CHECK:         call @ampCpuConv2DBackwardDataF16(%[[UDY]], %{{.*}}, %{{.*}}, %[[TWO]], %{{.*}}, %[[ONE]], %{{.*}}, %[[ONE]], %{{.*}}, %[[NONE]], %{{.*}}, %[[YES]])
// CHECK-NOT:     memref.copy
func.func @input_gradient(%dy: memref<3x8x4x4xf16>, %wr: memref<4x8x3x3xf16>, %dx: memref<3x4x8x8xf32>) {
  %zero = arith.constant 0.0 : f16
  %dilated = memref.alloc() : memref<3x8x10x10xf16>
  linalg.fill ins(%zero : f16) outs(%dilated : memref<3x8x10x10xf16>)
  %interior = memref.subview %dilated[0, 0, 1, 1] [3, 8, 4, 4] [1, 1, 2, 2] : memref<3x8x10x10xf16> to memref<3x8x4x4xf16, strided<[800, 100, 20, 2], offset: 11>>
  memref.copy %dy, %interior : memref<3x8x4x4xf16> to memref<3x8x4x4xf16, strided<[800, 100, 20, 2], offset: 11>>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%dilated, %wr : memref<3x8x10x10xf16>, memref<4x8x3x3xf16>) outs(%dx : memref<3x4x8x8xf32>)
  memref.dealloc %dilated : memref<3x8x10x10xf16>
  return
}

// -----

// Convolutions that are none of those stay forward calls on the buffers as
// they are: a padded buffer whose source changes after the copy, and one
// with zeros interleaved but more zeros before the copy than the filter
// reaches (no padding of the forward convolution gives those sums). The
// input larger than the convolution reads is cropped.
// CHECK-LABEL: func.func @stays_forward(
// CHECK-SAME:      %[[X:.*]]: memref<1x2x6x6xf32>, %[[W:.*]]: memref<2x2x3x3xf32>, %[[Y:.*]]: memref<1x2x6x6xf32>, %[[V:.*]]: memref<1x2x10x10xf32>, %[[BIG:.*]]: memref<1x2x9x9xf32>, %[[Z:.*]]: memref<1x2x3x3xf32>
// CHECK:         %[[P:.*]] = memref.alloc() : memref<1x2x8x8xf32>
// CHECK:         memref.copy %[[X]]
// CHECK:         linalg.fill
// CHECK:         %[[UP:.*]] = memref.cast %[[P]] : memref<1x2x8x8xf32> to memref<*xf32>
// CHECK:         call @ampCpuConv2DF32(%[[UP]],
// CHECK:         %[[D:.*]] = memref.alloc() : memref<1x2x12x12xf32>
// CHECK:         memref.copy
// CHECK:         %[[UD:.*]] = memref.cast %[[D]] : memref<1x2x12x12xf32> to memref<*xf32>
// CHECK:         call @ampCpuConv2DF32(%[[UD]],
// CHECK:         %[[CROP:.*]] = memref.subview %[[BIG]][0, 0, 0, 0] [1, 2, 7, 7] [1, 1, 1, 1]
// CHECK:         %[[UC:.*]] = memref.cast %[[CROP]]
// CHECK:         call @ampCpuConv2DF32(%[[UC]],
// CHECK-NOT:     call @ampCpuConv2DBackward
func.func @stays_forward(%x: memref<1x2x6x6xf32>, %w: memref<2x2x3x3xf32>, %y: memref<1x2x6x6xf32>,
                         %v: memref<1x2x10x10xf32>, %big: memref<1x2x9x9xf32>, %z: memref<1x2x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<1x2x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<1x2x8x8xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 2, 6, 6] [1, 1, 1, 1] : memref<1x2x8x8xf32> to memref<1x2x6x6xf32, strided<[128, 64, 8, 1], offset: 9>>
  memref.copy %x, %interior : memref<1x2x6x6xf32> to memref<1x2x6x6xf32, strided<[128, 64, 8, 1], offset: 9>>
  linalg.fill ins(%zero : f32) outs(%x : memref<1x2x6x6xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %w : memref<1x2x8x8xf32>, memref<2x2x3x3xf32>) outs(%y : memref<1x2x6x6xf32>)
  %dilated = memref.alloc() : memref<1x2x12x12xf32>
  linalg.fill ins(%zero : f32) outs(%dilated : memref<1x2x12x12xf32>)
  %spaced = memref.subview %dilated[0, 0, 3, 3] [1, 2, 3, 3] [1, 1, 2, 2] : memref<1x2x12x12xf32> to memref<1x2x3x3xf32, strided<[288, 144, 24, 2], offset: 39>>
  memref.copy %z, %spaced : memref<1x2x3x3xf32> to memref<1x2x3x3xf32, strided<[288, 144, 24, 2], offset: 39>>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%dilated, %w : memref<1x2x12x12xf32>, memref<2x2x3x3xf32>) outs(%v : memref<1x2x10x10xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%big, %w : memref<1x2x9x9xf32>, memref<2x2x3x3xf32>) outs(%z : memref<1x2x3x3xf32>)
  memref.dealloc %padded : memref<1x2x8x8xf32>
  memref.dealloc %dilated : memref<1x2x12x12xf32>
  return
}

// -----

// A convolution of a batch known only at run time: a forward call on the
// operands as they are, without padding, whatever its filter window.
// CHECK-LABEL: func.func @dynamic_batch(
// CHECK-SAME:      %[[X:.*]]: memref<?x3x9x9xf32>
// CHECK:         %[[S:.*]] = arith.constant 1 : i64
// CHECK:         %[[P:.*]] = arith.constant 0 : i64
// CHECK:         %[[UX:.*]] = memref.cast %[[X]] : memref<?x3x9x9xf32> to memref<*xf32>
// CHECK:         call @ampCpuConv2DF32(%[[UX]], %{{.*}}, %{{.*}}, %[[S]], %[[S]], %[[S]], %[[S]], %[[P]], %[[P]], %[[P]], %[[P]], %{{.*}})
func.func @dynamic_batch(%x: memref<?x3x9x9xf32>, %w: memref<4x3x8x8xf32>, %y: memref<?x4x2x2xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : memref<?x3x9x9xf32>, memref<4x3x8x8xf32>) outs(%y : memref<?x4x2x2xf32>)
  return
}

// -----

// A bf16 product whose only reader rounds it to bf16: the call writes a
// bf16 buffer, which the reader reads without the truncf.
// CHECK-LABEL: func.func @low_output_bf16(
// CHECK-SAME:      %[[A:.*]]: memref<5x7xbf16>, %[[B:.*]]: memref<7x9xbf16>, %[[BIAS:.*]]: memref<9xbf16>, %[[Y:.*]]: memref<5x9xbf16>)
// CHECK-NOT:     memref<5x9xf32>
// CHECK:         %[[LOW:.*]] = memref.alloc() {alignment = 64 : i64} : memref<5x9xbf16>
// CHECK:         %[[UC:.*]] = memref.cast %[[LOW]] : memref<5x9xbf16> to memref<*xbf16>
// CHECK:         call @ampCpuMatmulBF16ToBF16(%{{.*}}, %{{.*}}, %[[UC]]) : (memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) -> ()
// CHECK:         linalg.generic {{.*}} ins(%[[LOW]], %[[BIAS]] : memref<5x9xbf16>, memref<9xbf16>) outs(%[[Y]] : memref<5x9xbf16>)
// CHECK-NEXT:    ^bb0(%[[P:.*]]: bf16, %[[Q:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:      %[[E:.*]] = arith.extf %[[P]] : bf16 to f32
// CHECK-NEXT:      %[[F:.*]] = arith.extf %[[Q]] : bf16 to f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[E]], %[[F]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[R]] : bf16
// CHECK:         memref.dealloc %[[LOW]] : memref<5x9xbf16>
// CHECK:       func.func private @ampCpuMatmulBF16ToBF16(memref<*xbf16>, memref<*xbf16>, memref<*xbf16>) attributes {llvm.emit_c_interface}
func.func @low_output_bf16(%a: memref<5x7xbf16>, %b: memref<7x9xbf16>, %bias: memref<9xbf16>, %y: memref<5x9xbf16>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<5x9xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<5x9xf32>)
  linalg.matmul ins(%a, %b : memref<5x7xbf16>, memref<7x9xbf16>) outs(%c : memref<5x9xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<5x9xf32>, memref<9xbf16>) outs(%y : memref<5x9xbf16>) {
  ^bb0(%p: f32, %q: bf16, %out: bf16):
    %t = arith.truncf %p : f32 to bf16
    %e = arith.extf %t : bf16 to f32
    %f = arith.extf %q : bf16 to f32
    %s = arith.addf %e, %f : f32
    %r = arith.truncf %s : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %c : memref<5x9xf32>
  return
}

// -----

// A bf16 product whose only reader is a whole cast to bf16 into a fresh
// buffer: the call writes that buffer, and the cast and the f32 product go.
// CHECK-LABEL: func.func @low_output_into_the_cast(
// CHECK-NOT:     memref<4x6xf32>
// CHECK:         %[[LOW:.*]] = memref.alloc() : memref<4x6xbf16>
// CHECK:         %[[UC:.*]] = memref.cast %[[LOW]] : memref<4x6xbf16> to memref<*xbf16>
// CHECK:         call @ampCpuMatmulBF16ToBF16(%{{.*}}, %{{.*}}, %[[UC]])
// CHECK-NOT:     linalg.generic
// CHECK:         memref.copy %[[LOW]], %{{.*}}
func.func @low_output_into_the_cast(%a: memref<4x5xbf16>, %b: memref<5x6xbf16>, %y: memref<4x6xbf16>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<4x6xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x6xf32>)
  linalg.matmul ins(%a, %b : memref<4x5xbf16>, memref<5x6xbf16>) outs(%c : memref<4x6xf32>)
  %low = memref.alloc() : memref<4x6xbf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x6xf32>) outs(%low : memref<4x6xbf16>) {
  ^bb0(%p: f32, %out: bf16):
    %t = arith.truncf %p : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c : memref<4x6xf32>
  memref.copy %low, %y : memref<4x6xbf16> to memref<4x6xbf16>
  return
}

// -----

// A bf16 forward convolution and an input gradient (a stride-1 convolution
// of a zero-interleaved output gradient) whose images are only read
// rounded to bf16: both calls write bf16, the forward one into its cast's
// buffer, the input gradient into a new one that its reader reads.
// CHECK-LABEL: func.func @low_output_convolutions(
// CHECK:         %[[IMAGE:.*]] = memref.alloc() : memref<2x4x8x8xbf16>
// CHECK:         call @ampCpuConv2DBF16ToBF16(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xbf16>, memref<*xbf16>, memref<*xbf16>,
// CHECK:         %[[GRAD:.*]] = memref.alloc() : memref<2x3x8x8xbf16>
// CHECK:         call @ampCpuConv2DBackwardDataBF16ToBF16(
// CHECK:         linalg.generic {{.*}} ins(%[[GRAD]] : memref<2x3x8x8xbf16>)
// CHECK-NEXT:    ^bb0(%[[G:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT:      arith.extf %[[G]] : bf16 to f32
// CHECK-NOT:     memref<2x4x8x8xf32>
// CHECK:         return
func.func @low_output_convolutions(%x: memref<2x3x10x10xbf16>, %w: memref<4x3x3x3xbf16>, %y: memref<2x4x8x8xbf16>,
                                   %dy: memref<2x4x4x4xbf16>, %wr: memref<3x4x3x3xbf16>, %dx: memref<2x3x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %zerob = arith.constant 0.0 : bf16
  %c = memref.alloc() : memref<2x4x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x4x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : memref<2x3x10x10xbf16>, memref<4x3x3x3xbf16>) outs(%c : memref<2x4x8x8xf32>)
  %image = memref.alloc() : memref<2x4x8x8xbf16>
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : memref<2x4x8x8xf32>) outs(%image : memref<2x4x8x8xbf16>) {
  ^bb0(%p: f32, %out: bf16):
    %t = arith.truncf %p : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %c : memref<2x4x8x8xf32>
  memref.copy %image, %y : memref<2x4x8x8xbf16> to memref<2x4x8x8xbf16>
  %spread = memref.alloc() : memref<2x4x10x10xbf16>
  linalg.fill ins(%zerob : bf16) outs(%spread : memref<2x4x10x10xbf16>)
  %interior = memref.subview %spread[0, 0, 1, 1] [2, 4, 4, 4] [1, 1, 2, 2] : memref<2x4x10x10xbf16> to memref<2x4x4x4xbf16, strided<[400, 100, 20, 2], offset: 11>>
  memref.copy %dy, %interior : memref<2x4x4x4xbf16> to memref<2x4x4x4xbf16, strided<[400, 100, 20, 2], offset: 11>>
  %g = memref.alloc() : memref<2x3x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<2x3x8x8xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%spread, %wr : memref<2x4x10x10xbf16>, memref<3x4x3x3xbf16>) outs(%g : memref<2x3x8x8xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%g : memref<2x3x8x8xf32>) outs(%dx : memref<2x3x8x8xf32>) {
  ^bb0(%p: f32, %out: f32):
    %t = arith.truncf %p : f32 to bf16
    %e = arith.extf %t : bf16 to f32
    linalg.yield %e : f32
  }
  memref.dealloc %spread : memref<2x4x10x10xbf16>
  memref.dealloc %g : memref<2x3x8x8xf32>
  return
}

// -----

// An f16 batch matmul read by two ops that both round it to f16 (an input
// gradient and a reduction over it), one of them twice.
// CHECK-LABEL: func.func @low_output_f16_two_readers(
// CHECK:         %[[LOW:.*]] = memref.alloc() : memref<2x3x17xf16>
// CHECK:         call @ampCpuMatmulF16ToF16(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xf16>, memref<*xf16>, memref<*xf16>) -> ()
// CHECK:         linalg.generic {{.*}} ins(%[[LOW]] : memref<2x3x17xf16>)
// CHECK-NOT:       arith.truncf
// CHECK:         linalg.generic {{.*}} ins(%[[LOW]], %[[LOW]] : memref<2x3x17xf16>, memref<2x3x17xf16>)
// CHECK-NOT:       arith.truncf
// CHECK:         return
func.func @low_output_f16_two_readers(%a: memref<2x3x5xf16>, %b: memref<2x5x17xf16>, %y: memref<2x3x17xf16>, %sum: memref<2x17xf16>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<2x3x17xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x3x17xf32>)
  linalg.batch_matmul ins(%a, %b : memref<2x3x5xf16>, memref<2x5x17xf16>) outs(%c : memref<2x3x17xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c : memref<2x3x17xf32>) outs(%y : memref<2x3x17xf16>) {
  ^bb0(%p: f32, %out: f16):
    %t = arith.truncf %p : f32 to f16
    linalg.yield %t : f16
  }
  linalg.generic {indexing_maps = [affine_map<(b, j, i) -> (b, i, j)>, affine_map<(b, j, i) -> (b, i, j)>, affine_map<(b, j, i) -> (b, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%c, %c : memref<2x3x17xf32>, memref<2x3x17xf32>) outs(%sum : memref<2x17xf16>) {
  ^bb0(%p: f32, %p2: f32, %out: f16):
    %t = arith.truncf %p : f32 to f16
    %t2 = arith.truncf %p2 : f32 to f16
    %s = arith.addf %t, %out : f16
    %s2 = arith.addf %s, %t2 : f16
    linalg.yield %s2 : f16
  }
  return
}

// -----

// The f32 product has another reader that uses it as f32: nothing is fused,
// the product stays f32 and both readers keep their code.
// CHECK-LABEL: func.func @no_fusion_f32_reader(
// CHECK:         %[[C:.*]] = memref.alloc() : memref<5x9xf32>
// CHECK:         call @ampCpuMatmulBF16(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (memref<*xbf16>, memref<*xbf16>, memref<*xf32>, i32) -> ()
// CHECK:         linalg.generic {{.*}} ins(%[[C]] : memref<5x9xf32>)
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK:         linalg.generic {{.*}} ins(%[[C]] : memref<5x9xf32>)
// CHECK:           arith.mulf
// CHECK-NOT:   ampCpuMatmulBF16ToBF16
func.func @no_fusion_f32_reader(%a: memref<5x7xbf16>, %b: memref<7x9xbf16>, %y: memref<5x9xbf16>, %z: memref<5x9xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<5x9xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<5x9xf32>)
  linalg.matmul ins(%a, %b : memref<5x7xbf16>, memref<7x9xbf16>) outs(%c : memref<5x9xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<5x9xf32>) outs(%y : memref<5x9xbf16>) {
  ^bb0(%p: f32, %out: bf16):
    %t = arith.truncf %p : f32 to bf16
    linalg.yield %t : bf16
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<5x9xf32>) outs(%z : memref<5x9xf32>) {
  ^bb0(%p: f32, %out: f32):
    %m = arith.mulf %p, %p : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A product that accumulates into its output is not fused: the truncf
// reads the sum.
// CHECK-LABEL: func.func @no_fusion_accumulating(
// CHECK:         %[[YES:.*]] = arith.constant 1 : i32
// CHECK:         call @ampCpuMatmulBF16(%{{.*}}, %{{.*}}, %{{.*}}, %[[YES]])
// CHECK:         arith.truncf
func.func @no_fusion_accumulating(%a: memref<5x7xbf16>, %b: memref<7x9xbf16>, %y: memref<5x9xbf16>) {
  %c = memref.alloc() : memref<5x9xf32>
  linalg.matmul ins(%a, %b : memref<5x7xbf16>, memref<7x9xbf16>) outs(%c : memref<5x9xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<5x9xf32>) outs(%y : memref<5x9xbf16>) {
  ^bb0(%p: f32, %out: bf16):
    %t = arith.truncf %p : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// -----

// A bias added in f32 to a product read by nothing else: one call writes the
// sum into the generic's output; the generic and the f32 buffer go.
// CHECK-LABEL: func.func @bias_f32(
// CHECK-SAME:      %[[A:.*]]: memref<5x7xf32>, %[[B:.*]]: memref<7x9xf32>, %[[BIAS:.*]]: memref<9xf32>, %[[Y:.*]]: memref<5x9xf32>)
// CHECK-NOT:     memref.alloc
// CHECK:         %[[UY:.*]] = memref.cast %[[Y]] : memref<5x9xf32> to memref<*xf32>
// CHECK:         %[[UBIAS:.*]] = memref.cast %[[BIAS]] : memref<9xf32> to memref<*xf32>
// CHECK:         call @ampCpuMatmulF32Bias(%{{.*}}, %{{.*}}, %[[UY]], %[[UBIAS]]) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) -> ()
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     memref.dealloc
// CHECK:         return
// CHECK:       func.func private @ampCpuMatmulF32Bias(memref<*xf32>, memref<*xf32>, memref<*xf32>, memref<*xf32>) attributes {llvm.emit_c_interface}
func.func @bias_f32(%a: memref<5x7xf32>, %b: memref<7x9xf32>, %bias: memref<9xf32>, %y: memref<5x9xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<5x9xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<5x9xf32>)
  linalg.matmul ins(%a, %b : memref<5x7xf32>, memref<7x9xf32>) outs(%c : memref<5x9xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%bias, %c : memref<9xf32>, memref<5x9xf32>) outs(%y : memref<5x9xf32>) {
  ^bb0(%q: f32, %p: f32, %out: f32):
    %s = arith.addf %q, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<5x9xf32>
  return
}

// -----

// The matmul's input is overwritten before the bias is added: the fused call
// goes where the matmul was, before the fill.
// CHECK-LABEL: func.func @bias_at_the_matmul(
// CHECK-SAME:      %[[A:.*]]: memref<5x7xbf16>, %{{.*}}: memref<7x9xbf16>, %[[BIAS:.*]]: memref<9xf32>, %[[Y:.*]]: memref<5x9xf32>)
// CHECK:         call @ampCpuMatmulBF16Bias(
// CHECK:         linalg.fill {{.*}} outs(%[[A]] : memref<5x7xbf16>)
// CHECK-NOT:     linalg.generic
func.func @bias_at_the_matmul(%a: memref<5x7xbf16>, %b: memref<7x9xbf16>, %bias: memref<9xf32>, %y: memref<5x9xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : bf16
  %c = memref.alloc() : memref<5x9xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<5x9xf32>)
  linalg.matmul ins(%a, %b : memref<5x7xbf16>, memref<7x9xbf16>) outs(%c : memref<5x9xf32>)
  linalg.fill ins(%one : bf16) outs(%a : memref<5x7xbf16>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<5x9xf32>, memref<9xf32>) outs(%y : memref<5x9xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  memref.dealloc %c : memref<5x9xf32>
  return
}

// -----

// Neither place works: the matmul's input and the bias are both written in
// between. Nor is a bias along the rows, or one with a scale, an epilogue.
// CHECK-LABEL: func.func @no_bias_fusion(
// CHECK-COUNT-3: call @ampCpuMatmulF32(
// CHECK-NOT:     Bias
func.func @no_bias_fusion(%a: memref<5x7xf32>, %b: memref<7x9xf32>, %bias: memref<9xf32>, %rows: memref<5xf32>, %y: memref<5x9xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<5x9xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<5x9xf32>)
  linalg.matmul ins(%a, %b : memref<5x7xf32>, memref<7x9xf32>) outs(%c : memref<5x9xf32>)
  linalg.fill ins(%zero : f32) outs(%a : memref<5x7xf32>)
  linalg.fill ins(%zero : f32) outs(%bias : memref<9xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<5x9xf32>, memref<9xf32>) outs(%y : memref<5x9xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  %d = memref.alloc() : memref<5x9xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<5x9xf32>)
  linalg.matmul ins(%a, %b : memref<5x7xf32>, memref<7x9xf32>) outs(%d : memref<5x9xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%d, %rows : memref<5x9xf32>, memref<5xf32>) outs(%y : memref<5x9xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  }
  %e = memref.alloc() : memref<5x9xf32>
  linalg.fill ins(%zero : f32) outs(%e : memref<5x9xf32>)
  linalg.matmul ins(%a, %b : memref<5x7xf32>, memref<7x9xf32>) outs(%e : memref<5x9xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%e, %bias : memref<5x9xf32>, memref<9xf32>) outs(%y : memref<5x9xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %s = arith.addf %p, %q : f32
    %m = arith.mulf %s, %q : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// With epilogues=false nothing is fused.
// NOFUSE-LABEL: func.func @option_off(
// NOFUSE:         call @ampCpuMatmulBF16(
// NOFUSE:         arith.truncf
// CHECK-LABEL: func.func @option_off(
// CHECK:         call @ampCpuMatmulBF16ToBF16(
func.func @option_off(%a: memref<5x7xbf16>, %b: memref<7x9xbf16>, %y: memref<5x9xbf16>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<5x9xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<5x9xf32>)
  linalg.matmul ins(%a, %b : memref<5x7xbf16>, memref<7x9xbf16>) outs(%c : memref<5x9xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<5x9xf32>) outs(%y : memref<5x9xbf16>) {
  ^bb0(%p: f32, %out: bf16):
    %t = arith.truncf %p : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
