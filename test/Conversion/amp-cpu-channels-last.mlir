// RUN: amp-opt %s --split-input-file --amp-cpu-channels-last | FileCheck %s

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
func.func private @ampCpuConv2DBF16(memref<*xbf16>, memref<*xbf16>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) attributes {llvm.emit_c_interface}
func.func private @consume(memref<2x16x5x7xf32>)

// A convolution's f32 output, its channel sums (a BatchNorm's), and its
// ReLU in bf16, which the next convolution reads, all channels-last: the
// loops over the channels move innermost, the reduction's order kept, and
// the channel sums are written through a 1 x 1 x 1 x 16 view; the calls read
// transposed views with the layout's strides.
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[SUMS:.*]] = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>
// CHECK-LABEL: func.func @conv_chain(
// CHECK-SAME:      %[[S:[^:]*]]: memref<1x16x1x1xf32>
// CHECK:         %[[Y:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x5x7x16xf32>
// CHECK:         %[[YV:.*]] = memref.transpose %[[Y]] (d0, d1, d2, d3) -> (d0, d3, d1, d2) : memref<2x5x7x16xf32> to memref<2x16x5x7xf32, strided<[560, 1, 112, 16]>>
// CHECK:         %[[UY:.*]] = memref.cast %[[YV]] : memref<2x16x5x7xf32, strided<[560, 1, 112, 16]>> to memref<*xf32>
// CHECK:         call @ampCpuConv2DBF16(%{{.*}}, %{{.*}}, %[[UY]],
// CHECK:         %[[SV:.*]] = memref.transpose %[[S]] (d0, d1, d2, d3) -> (d0, d2, d3, d1) : memref<1x16x1x1xf32> to memref<1x1x1x16xf32, strided<[16, 1, 1, 1]>>
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[SUMS]]], iterator_types = ["reduction", "reduction", "reduction", "parallel"]} ins(%[[Y]] : memref<2x5x7x16xf32>) outs(%[[SV]] : memref<1x1x1x16xf32, strided<[16, 1, 1, 1]>>)
// CHECK:         %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x5x7x16xbf16>
// CHECK:         %[[RV:.*]] = memref.transpose %[[R]]
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[Y]] : memref<2x5x7x16xf32>) outs(%[[R]] : memref<2x5x7x16xbf16>)
// CHECK:         memref.dealloc %[[Y]] : memref<2x5x7x16xf32>
// CHECK:         %[[UR:.*]] = memref.cast %[[RV]] : memref<2x16x5x7xbf16, strided<[560, 1, 112, 16]>> to memref<*xbf16>
// CHECK:         call @ampCpuConv2DBF16(%[[UR]],
// CHECK:         memref.dealloc %[[R]] : memref<2x5x7x16xbf16>
func.func @conv_chain(%x: memref<2x16x5x7xbf16>, %w: memref<16x16x3x3xbf16>,
                      %sums: memref<1x16x1x1xf32>, %out: memref<2x16x5x7xf32>) {
  %one = arith.constant 1 : i64
  %no = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() {alignment = 64 : i64} : memref<2x16x5x7xf32>
  %ux = memref.cast %x : memref<2x16x5x7xbf16> to memref<*xbf16>
  %uw = memref.cast %w : memref<16x16x3x3xbf16> to memref<*xbf16>
  %uy = memref.cast %y : memref<2x16x5x7xf32> to memref<*xf32>
  call @ampCpuConv2DBF16(%ux, %uw, %uy, %one, %one, %one, %one, %one, %one, %one, %one, %no) : (memref<*xbf16>, memref<*xbf16>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) -> ()
  linalg.generic {indexing_maps = [#id, #channel], iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%y : memref<2x16x5x7xf32>) outs(%sums : memref<1x16x1x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  }
  %r = memref.alloc() {alignment = 64 : i64} : memref<2x16x5x7xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : memref<2x16x5x7xf32>) outs(%r : memref<2x16x5x7xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %m = arith.maximumf %in, %zero : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %y : memref<2x16x5x7xf32>
  %ur = memref.cast %r : memref<2x16x5x7xbf16> to memref<*xbf16>
  %uo = memref.cast %out : memref<2x16x5x7xf32> to memref<*xf32>
  call @ampCpuConv2DBF16(%ur, %uw, %uo, %one, %one, %one, %one, %one, %one, %one, %one, %no) : (memref<*xbf16>, memref<*xbf16>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) -> ()
  memref.dealloc %r : memref<2x16x5x7xbf16>
  return
}

// -----

func.func private @ampCpuConv2DF32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) attributes {llvm.emit_c_interface}
func.func private @consume(memref<2x16x5x7xf32>)

// Buffers that stay NCHW: one that a function other than the runtime's
// reads, one of 8 channels, one that no convolution reaches, and one that
// a convolution reads with its first two dims swapped (a batch of 16 as
// channels).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     memref.transpose
// CHECK:         %[[A:.*]] = memref.alloc() : memref<2x16x5x7xf32>
// CHECK:         call @consume(%[[A]])
// CHECK:         memref.alloc() : memref<2x8x5x7xf32>
// CHECK:         memref.alloc() : memref<2x16x5x7xf32>
// CHECK:         %[[D:.*]] = memref.alloc() : memref<16x32x5x7xf32>
// CHECK:         memref.transpose %[[D]] (d0, d1, d2, d3) -> (d1, d0, d2, d3)
// CHECK-NOT:     memref.transpose
// CHECK:         return
func.func @kept(%w: memref<16x16x3x3xf32>, %w8: memref<8x8x3x3xf32>, %out: memref<2x16x5x7xf32>, %out8: memref<2x8x5x7xf32>) {
  %one = arith.constant 1 : i64
  %no = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<2x16x5x7xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<2x16x5x7xf32>)
  call @consume(%a) : (memref<2x16x5x7xf32>) -> ()
  %ua = memref.cast %a : memref<2x16x5x7xf32> to memref<*xf32>
  %uw = memref.cast %w : memref<16x16x3x3xf32> to memref<*xf32>
  %uo = memref.cast %out : memref<2x16x5x7xf32> to memref<*xf32>
  call @ampCpuConv2DF32(%ua, %uw, %uo, %one, %one, %one, %one, %one, %one, %one, %one, %no) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) -> ()
  %b = memref.alloc() : memref<2x8x5x7xf32>
  linalg.fill ins(%zero : f32) outs(%b : memref<2x8x5x7xf32>)
  %ub = memref.cast %b : memref<2x8x5x7xf32> to memref<*xf32>
  %uw8 = memref.cast %w8 : memref<8x8x3x3xf32> to memref<*xf32>
  %uo8 = memref.cast %out8 : memref<2x8x5x7xf32> to memref<*xf32>
  call @ampCpuConv2DF32(%ub, %uw8, %uo8, %one, %one, %one, %one, %one, %one, %one, %one, %no) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) -> ()
  %c = memref.alloc() : memref<2x16x5x7xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x16x5x7xf32>)
  %d = memref.alloc() : memref<16x32x5x7xf32>
  linalg.fill ins(%zero : f32) outs(%d : memref<16x32x5x7xf32>)
  %swapped = memref.transpose %d (d0, d1, d2, d3) -> (d1, d0, d2, d3) : memref<16x32x5x7xf32> to memref<32x16x5x7xf32, strided<[35, 1120, 7, 1]>>
  %ud = memref.cast %swapped : memref<32x16x5x7xf32, strided<[35, 1120, 7, 1]>> to memref<*xf32>
  call @ampCpuConv2DF32(%ud, %uw, %uo, %one, %one, %one, %one, %one, %one, %one, %one, %no) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) -> ()
  memref.dealloc %a : memref<2x16x5x7xf32>
  memref.dealloc %b : memref<2x8x5x7xf32>
  memref.dealloc %c : memref<2x16x5x7xf32>
  memref.dealloc %d : memref<16x32x5x7xf32>
  return
}

// -----

func.func private @ampCpuConv2DF32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) attributes {llvm.emit_c_interface}

// A strided convolution reads a subview of its input: the subview takes the
// channels-last strides; a copy from a function argument becomes a generic.
// CHECK-DAG:   #[[NCHW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @subview_and_copy(
// CHECK-SAME:      %[[X:.*]]: memref<2x16x6x6xf32>,
// CHECK:         %[[A:.*]] = memref.alloc() : memref<2x6x6x16xf32>
// CHECK:         %[[AV:.*]] = memref.transpose %[[A]]
// CHECK-NOT:     memref.copy
// CHECK:         linalg.generic {indexing_maps = [#[[NCHW]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X]] : memref<2x16x6x6xf32>) outs(%[[A]] : memref<2x6x6x16xf32>)
// CHECK:         %[[V:.*]] = memref.subview %[[AV]][0, 0, 0, 0] [2, 16, 5, 5] [1, 1, 1, 1] : memref<2x16x6x6xf32, strided<[576, 1, 96, 16]>> to memref<2x16x5x5xf32, strided<[576, 1, 96, 16]>>
// CHECK:         memref.cast %[[V]] : memref<2x16x5x5xf32, strided<[576, 1, 96, 16]>> to memref<*xf32>
// CHECK:         memref.dealloc %[[A]] : memref<2x6x6x16xf32>
func.func @subview_and_copy(%x: memref<2x16x6x6xf32>, %w: memref<32x16x3x3xf32>, %out: memref<2x32x2x2xf32>) {
  %one = arith.constant 1 : i64
  %two = arith.constant 2 : i64
  %no = arith.constant 0 : i32
  %a = memref.alloc() : memref<2x16x6x6xf32>
  memref.copy %x, %a : memref<2x16x6x6xf32> to memref<2x16x6x6xf32>
  %v = memref.subview %a[0, 0, 0, 0] [2, 16, 5, 5] [1, 1, 1, 1] : memref<2x16x6x6xf32> to memref<2x16x5x5xf32, strided<[576, 36, 6, 1]>>
  %ua = memref.cast %v : memref<2x16x5x5xf32, strided<[576, 36, 6, 1]>> to memref<*xf32>
  %uw = memref.cast %w : memref<32x16x3x3xf32> to memref<*xf32>
  %uo = memref.cast %out : memref<2x32x2x2xf32> to memref<*xf32>
  call @ampCpuConv2DF32(%ua, %uw, %uo, %two, %two, %one, %one, %one, %one, %one, %one, %no) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) -> ()
  memref.dealloc %a : memref<2x16x6x6xf32>
  return
}

// -----

func.func private @ampCpuConv2DBF16(memref<*xbf16>, memref<*xbf16>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) attributes {llvm.emit_c_interface}

// 32 channels, a multiple of 16: channels-last as well.
// CHECK-LABEL: func.func @wide(
// CHECK:         %[[Y:.*]] = memref.alloc() : memref<2x5x7x32xf32>
// CHECK:         %[[YV:.*]] = memref.transpose %[[Y]] (d0, d1, d2, d3) -> (d0, d3, d1, d2) : memref<2x5x7x32xf32> to memref<2x32x5x7xf32, strided<[1120, 1, 224, 32]>>
// CHECK:         memref.cast %[[YV]]
// CHECK:         memref.dealloc %[[Y]] : memref<2x5x7x32xf32>
func.func @wide(%x: memref<2x16x5x7xbf16>, %w: memref<32x16x3x3xbf16>) {
  %one = arith.constant 1 : i64
  %no = arith.constant 0 : i32
  %y = memref.alloc() : memref<2x32x5x7xf32>
  %ux = memref.cast %x : memref<2x16x5x7xbf16> to memref<*xbf16>
  %uw = memref.cast %w : memref<32x16x3x3xbf16> to memref<*xbf16>
  %uy = memref.cast %y : memref<2x32x5x7xf32> to memref<*xf32>
  call @ampCpuConv2DBF16(%ux, %uw, %uy, %one, %one, %one, %one, %one, %one, %one, %one, %no) : (memref<*xbf16>, memref<*xbf16>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) -> ()
  memref.dealloc %y : memref<2x32x5x7xf32>
  return
}

// -----

func.func private @ampCpuConv2DBackwardWeightsF32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) attributes {llvm.emit_c_interface}
func.func private @ampCpuConv2DBackwardDataF32(memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) attributes {llvm.emit_c_interface}

// The images of an input and a weight gradient (not the filter gradient), a
// zero fill and a named op reading one buffer twice (both become generics),
// a copy between two such buffers, and a sum over the channels, whose
// reduction loop stays where it is, with a per-channel input.
// CHECK-DAG:   #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG:   #[[NHWC:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
// CHECK-DAG:   #[[SCALE:.*]] = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d1)>
// CHECK-LABEL: func.func @backward(
// CHECK-SAME:      %[[W:[^:]*]]: memref<16x16x3x3xf32>, %[[S:[^:]*]]: memref<1x16x1x1xf32>, %[[DW:[^:]*]]: memref<16x16x3x3xf32>, %[[SUMS:[^:]*]]: memref<2x1x5x7xf32>)
// CHECK:         %[[DY:.*]] = memref.alloc() : memref<2x5x7x16xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[DY]] : memref<2x5x7x16xf32>)
// CHECK:         %[[SQ:.*]] = memref.alloc() : memref<2x5x7x16xf32>
// CHECK:         %[[SQV:.*]] = memref.transpose %[[SQ]]
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]], {{.*}} ins(%[[DY]], %[[DY]] : memref<2x5x7x16xf32>, memref<2x5x7x16xf32>) outs(%[[SQ]] : memref<2x5x7x16xf32>)
// CHECK:           arith.mulf
// CHECK:         %[[DX:.*]] = memref.alloc() : memref<2x5x7x16xf32>
// CHECK:         %[[DXV:.*]] = memref.transpose %[[DX]]
// CHECK:         %[[USQ:.*]] = memref.cast %[[SQV]]
// CHECK:         %[[UW:.*]] = memref.cast %[[W]] : memref<16x16x3x3xf32> to memref<*xf32>
// CHECK:         %[[UDX:.*]] = memref.cast %[[DXV]]
// CHECK:         call @ampCpuConv2DBackwardDataF32(%[[USQ]], %[[UW]], %[[UDX]],
// CHECK:         %[[COPY:.*]] = memref.alloc() : memref<2x5x7x16xf32>
// CHECK:         %[[COPYV:.*]] = memref.transpose %[[COPY]]
// CHECK-NOT:     memref.copy
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], {{.*}} ins(%[[DX]] : memref<2x5x7x16xf32>) outs(%[[COPY]] : memref<2x5x7x16xf32>)
// CHECK:         %[[UCOPY:.*]] = memref.cast %[[COPYV]]
// CHECK:         %[[UDW:.*]] = memref.cast %[[DW]] : memref<16x16x3x3xf32> to memref<*xf32>
// CHECK:         call @ampCpuConv2DBackwardWeightsF32(%[[UCOPY]], %[[USQ]], %[[UDW]],
// CHECK:         %[[SV:.*]] = memref.transpose %[[S]] (d0, d1, d2, d3) -> (d0, d2, d3, d1)
// CHECK:         linalg.generic {indexing_maps = [#[[NHWC]], #[[SCALE]], #{{.*}}], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%[[COPY]], %[[SV]] : memref<2x5x7x16xf32>, memref<1x1x1x16xf32, strided<[16, 1, 1, 1]>>) outs(%[[SUMS]] : memref<2x1x5x7xf32>)
// CHECK:         memref.dealloc %[[DY]] : memref<2x5x7x16xf32>
func.func @backward(%w: memref<16x16x3x3xf32>, %scale: memref<1x16x1x1xf32>,
                    %dw: memref<16x16x3x3xf32>, %sums: memref<2x1x5x7xf32>) {
  %one = arith.constant 1 : i64
  %no = arith.constant 0 : i32
  %zero = arith.constant 0.0 : f32
  %dy = memref.alloc() : memref<2x16x5x7xf32>
  linalg.fill ins(%zero : f32) outs(%dy : memref<2x16x5x7xf32>)
  %sq = memref.alloc() : memref<2x16x5x7xf32>
  linalg.mul ins(%dy, %dy : memref<2x16x5x7xf32>, memref<2x16x5x7xf32>) outs(%sq : memref<2x16x5x7xf32>)
  %dx = memref.alloc() : memref<2x16x5x7xf32>
  %usq = memref.cast %sq : memref<2x16x5x7xf32> to memref<*xf32>
  %uw = memref.cast %w : memref<16x16x3x3xf32> to memref<*xf32>
  %udx = memref.cast %dx : memref<2x16x5x7xf32> to memref<*xf32>
  call @ampCpuConv2DBackwardDataF32(%usq, %uw, %udx, %one, %one, %one, %one, %one, %one, %one, %one, %no) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) -> ()
  %copy = memref.alloc() : memref<2x16x5x7xf32>
  memref.copy %dx, %copy : memref<2x16x5x7xf32> to memref<2x16x5x7xf32>
  %ucopy = memref.cast %copy : memref<2x16x5x7xf32> to memref<*xf32>
  %udw = memref.cast %dw : memref<16x16x3x3xf32> to memref<*xf32>
  call @ampCpuConv2DBackwardWeightsF32(%ucopy, %usq, %udw, %one, %one, %one, %one, %one, %one, %one, %one, %no) : (memref<*xf32>, memref<*xf32>, memref<*xf32>, i64, i64, i64, i64, i64, i64, i64, i64, i32) -> ()
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>],
                  iterator_types = ["parallel", "reduction", "parallel", "parallel"]}
      ins(%copy, %scale : memref<2x16x5x7xf32>, memref<1x16x1x1xf32>) outs(%sums : memref<2x1x5x7xf32>) {
  ^bb0(%in: f32, %s: f32, %acc: f32):
    %p = arith.mulf %in, %s : f32
    %a = arith.addf %acc, %p : f32
    linalg.yield %a : f32
  }
  memref.dealloc %dy : memref<2x16x5x7xf32>
  memref.dealloc %sq : memref<2x16x5x7xf32>
  memref.dealloc %dx : memref<2x16x5x7xf32>
  memref.dealloc %copy : memref<2x16x5x7xf32>
  return
}
