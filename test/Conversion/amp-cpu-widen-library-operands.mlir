// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-cpu-widen-library-operands{matmul-types=bf16 convolution-types=bf16}))" | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-cpu-widen-library-operands))" | FileCheck %s --check-prefix=NONE
// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-cpu-widen-library-operands{matmul-types=bf16}))" | FileCheck %s --check-prefix=MATMUL
// RUN: not amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-cpu-widen-library-operands{convolution-types=f64}))" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: amp-cpu-widen-library-operands: unknown type 'f64' in `convolution-types` (bf16, f16)

// A weight's bf16 copy read by a matmul through a transpose, and by a loop
// that extends it: the extension goes where the copy is made, the transpose
// moves f32 values, and the loop reads the f32 copy as it is.

// CHECK-LABEL: func.func @weight(
// CHECK-SAME:      %[[X:.*]]: tensor<4x8xbf16>, %[[W:.*]]: tensor<16x8xf32>
// CHECK-DAG:     %[[XW:.*]] = arith.extf %[[X]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-DAG:     %[[LOW:.*]] = arith.truncf %[[W]] : tensor<16x8xf32> to tensor<16x8xbf16>
// CHECK:         %[[WIDE:.*]] = arith.extf %[[LOW]] : tensor<16x8xbf16> to tensor<16x8xf32>
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<8x16xf32>
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%[[WIDE]] : tensor<16x8xf32>) outs(%[[EMPTY]] : tensor<8x16xf32>) permutation = [1, 0]
// CHECK:         %[[P:.*]] = linalg.matmul ins(%[[XW]], %[[WT]] : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK-NOT:     bf16
// CHECK:         linalg.generic {{.*}} ins(%[[WIDE]] : tensor<16x8xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[TWICE:.*]] = arith.addf %[[IN]], %[[IN]] : f32
// CHECK-NEXT:      linalg.yield %[[TWICE]]
// CHECK:         return %[[P]]

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @weight(%x: tensor<4x8xbf16>, %w: tensor<16x8xf32>) -> (tensor<4x16xf32>, tensor<16x8xf32>) {
  %low = arith.truncf %w : tensor<16x8xf32> to tensor<16x8xbf16>
  %e = tensor.empty() : tensor<8x16xbf16>
  %wt = linalg.transpose ins(%low : tensor<16x8xbf16>) outs(%e : tensor<8x16xbf16>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<4x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = linalg.matmul ins(%x, %wt : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  %o = tensor.empty() : tensor<16x8xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%low : tensor<16x8xbf16>) outs(%o : tensor<16x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %wide = arith.extf %in : bf16 to f32
    %sum = arith.addf %wide, %wide : f32
    linalg.yield %sum : f32
  } -> tensor<16x8xf32>
  return %p, %twice : tensor<4x16xf32>, tensor<16x8xf32>
}

// NONE-LABEL: func.func @weight(
// NONE:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x16xbf16>)

// -----

// An activation computed in bf16 and read by two matmuls (the next layer and
// a weight gradient) and by a loop that computes with it in bf16: the loop
// that computes it stores it once, in f32, and the bf16 reader rounds it
// back (exactly) in its own loop.

// CHECK-LABEL: func.func @activation(
// CHECK:         %[[H:.*]] = linalg.generic
// CHECK:         %[[HW:.*]] = arith.extf %[[H]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK:         linalg.matmul ins(%[[HW]], %{{.*}} : tensor<4x8xf32>, tensor<8x16xf32>)
// CHECK:         linalg.matmul ins(%{{.*}}, %[[HW]] : tensor<8x4xf32>, tensor<4x8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[HW]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT:      %[[ROUNDED:.*]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[ROUNDED]] : bf16
// CHECK-NEXT:      linalg.yield %[[NEG]]

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @activation(%a: tensor<4x8xf32>, %w: tensor<8x16xbf16>, %g: tensor<8x4xbf16>)
    -> (tensor<4x16xf32>, tensor<8x8xf32>, tensor<4x8xbf16>) {
  %h0 = tensor.empty() : tensor<4x8xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%h0 : tensor<4x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<4x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %next = linalg.matmul ins(%h, %w : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  %d0 = tensor.empty() : tensor<8x8xf32>
  %d = linalg.fill ins(%zero : f32) outs(%d0 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %grad = linalg.matmul ins(%g, %h : tensor<8x4xbf16>, tensor<4x8xbf16>) outs(%d : tensor<8x8xf32>) -> tensor<8x8xf32>
  %n0 = tensor.empty() : tensor<4x8xbf16>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xbf16>) outs(%n0 : tensor<4x8xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %n = arith.negf %in : bf16
    linalg.yield %n : bf16
  } -> tensor<4x8xbf16>
  return %next, %grad, %neg : tensor<4x16xf32>, tensor<8x8xf32>, tensor<4x8xbf16>
}

// -----

// A convolution's input gradient as torch-mlir writes it (the output
// gradient interleaved with zeros, then padded) and its weight gradient (the
// image transposed through a unit group dimension): the zeros, the padding
// and the transposes are f32, so the library still reads them in place.

// With matmuls only, the convolutions keep their bf16 inputs.

// MATMUL-LABEL: func.func @convolutions(
// MATMUL-NOT:     arith.extf
// MATMUL:         linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x4x10x10xbf16>, tensor<3x4x3x3xbf16>)
// MATMUL:         linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<3x2x8x8xbf16>, tensor<4x2x3x3xbf16>)

// CHECK-LABEL: func.func @convolutions(
// CHECK-SAME:      %[[DY:.*]]: tensor<2x4x3x3xbf16>, %[[F:.*]]: tensor<3x4x3x3xbf16>, %[[X:.*]]: tensor<2x3x8x8xbf16>
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[DYW:.*]] = arith.extf %[[DY]] : tensor<2x4x3x3xbf16> to tensor<2x4x3x3xf32>
// CHECK-DAG:     %[[XW:.*]] = arith.extf %[[X]] : tensor<2x3x8x8xbf16> to tensor<2x3x8x8xf32>
// CHECK:         %[[ZEROS:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x4x6x6xf32>)
// CHECK:         %[[SPREAD:.*]] = tensor.insert_slice %[[DYW]] into %[[ZEROS]][0, 0, 0, 0] [2, 4, 3, 3] [1, 1, 2, 2] : tensor<2x4x3x3xf32> into tensor<2x4x6x6xf32>
// CHECK:         %[[PADDED:.*]] = tensor.pad %[[SPREAD]] low[0, 0, 2, 2] high[0, 0, 2, 2]
// CHECK:           tensor.yield %[[ZERO]] : f32
// CHECK:         } : tensor<2x4x6x6xf32> to tensor<2x4x10x10xf32>
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} ins(%[[PADDED]], %{{.*}} : tensor<2x4x10x10xf32>, tensor<3x4x3x3xf32>)
// CHECK:         %[[XE:.*]] = tensor.expand_shape %[[XW]] {{.*}} : tensor<2x3x8x8xf32> into tensor<2x1x3x8x8xf32>
// CHECK:         %[[XT:.*]] = linalg.transpose ins(%[[XE]] : tensor<2x1x3x8x8xf32>)
// CHECK:         %[[XC:.*]] = tensor.collapse_shape %[[XT]] {{.*}} : tensor<3x1x2x8x8xf32> into tensor<3x2x8x8xf32>
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} ins(%[[XC]], %{{.*}} : tensor<3x2x8x8xf32>, tensor<4x2x3x3xf32>)
// CHECK-NOT:     bf16

func.func @convolutions(%dy: tensor<2x4x3x3xbf16>, %f: tensor<3x4x3x3xbf16>, %x: tensor<2x3x8x8xbf16>, %dyt: tensor<4x2x3x3xbf16>)
    -> (tensor<2x3x8x8xf32>, tensor<3x4x3x3xf32>) {
  %zero = arith.constant 0.0 : bf16
  %zero32 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x6x6xbf16>
  %zeros = linalg.fill ins(%zero : bf16) outs(%e : tensor<2x4x6x6xbf16>) -> tensor<2x4x6x6xbf16>
  %spread = tensor.insert_slice %dy into %zeros[0, 0, 0, 0] [2, 4, 3, 3] [1, 1, 2, 2] : tensor<2x4x3x3xbf16> into tensor<2x4x6x6xbf16>
  %padded = tensor.pad %spread low[0, 0, 2, 2] high[0, 0, 2, 2] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : bf16
  } : tensor<2x4x6x6xbf16> to tensor<2x4x10x10xbf16>
  %o0 = tensor.empty() : tensor<2x3x8x8xf32>
  %o = linalg.fill ins(%zero32 : f32) outs(%o0 : tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  %dx = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%padded, %f : tensor<2x4x10x10xbf16>, tensor<3x4x3x3xbf16>) outs(%o : tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  %xe = tensor.expand_shape %x [[0], [1, 2], [3], [4]] output_shape [2, 1, 3, 8, 8] : tensor<2x3x8x8xbf16> into tensor<2x1x3x8x8xbf16>
  %t0 = tensor.empty() : tensor<3x1x2x8x8xbf16>
  %xt = linalg.transpose ins(%xe : tensor<2x1x3x8x8xbf16>) outs(%t0 : tensor<3x1x2x8x8xbf16>) permutation = [2, 1, 0, 3, 4]
  %xc = tensor.collapse_shape %xt [[0], [1, 2], [3], [4]] : tensor<3x1x2x8x8xbf16> into tensor<3x2x8x8xbf16>
  %w0 = tensor.empty() : tensor<3x4x3x3xf32>
  %w = linalg.fill ins(%zero32 : f32) outs(%w0 : tensor<3x4x3x3xf32>) -> tensor<3x4x3x3xf32>
  %dw = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xc, %dyt : tensor<3x2x8x8xbf16>, tensor<4x2x3x3xbf16>) outs(%w : tensor<3x4x3x3xf32>) -> tensor<3x4x3x3xf32>
  return %dx, %dw : tensor<2x3x8x8xf32>, tensor<3x4x3x3xf32>
}

// -----

// A value read by slices alone, which cover it without overlapping (the QKV
// projection's q, k and v): the value is widened once, where it is
// computed, and every slice is taken out of the f32 one, that of a loop too,
// which reads it as it is.

// CHECK-LABEL: func.func @sliced(
// CHECK-SAME:      %[[QKV:.*]]: tensor<4x24xbf16>
// CHECK:         %[[WIDE:.*]] = arith.extf %[[QKV]] : tensor<4x24xbf16> to tensor<4x24xf32>
// CHECK-DAG:     %[[Q:.*]] = tensor.extract_slice %[[WIDE]][0, 0] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
// CHECK-DAG:     %[[K:.*]] = tensor.extract_slice %[[WIDE]][0, 8] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
// CHECK-DAG:     %[[V:.*]] = tensor.extract_slice %[[WIDE]][0, 16] [4, 8] [1, 1] : tensor<4x24xf32> to tensor<4x8xf32>
// CHECK-DAG:     linalg.matmul ins(%[[Q]], %{{.*}} : tensor<4x8xf32>, tensor<8x4xf32>)
// CHECK-DAG:     linalg.matmul ins(%[[K]], %{{.*}} : tensor<4x8xf32>, tensor<8x4xf32>)
// CHECK-DAG:     linalg.generic {{.*}} ins(%[[V]] : tensor<4x8xf32>)
// CHECK-NOT:     arith.extf
// CHECK:         return

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @sliced(%qkv: tensor<4x24xbf16>, %w: tensor<8x4xbf16>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x8xf32>) {
  %q = tensor.extract_slice %qkv[0, 0] [4, 8] [1, 1] : tensor<4x24xbf16> to tensor<4x8xbf16>
  %k = tensor.extract_slice %qkv[0, 8] [4, 8] [1, 1] : tensor<4x24xbf16> to tensor<4x8xbf16>
  %v = tensor.extract_slice %qkv[0, 16] [4, 8] [1, 1] : tensor<4x24xbf16> to tensor<4x8xbf16>
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<4x4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%c0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %pq = linalg.matmul ins(%q, %w : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  %pk = linalg.matmul ins(%k, %w : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o = tensor.empty() : tensor<4x8xf32>
  %vw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v : tensor<4x8xbf16>) outs(%o : tensor<4x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %wide = arith.extf %in : bf16 to f32
    linalg.yield %wide : f32
  } -> tensor<4x8xf32>
  return %pq, %pk, %vw : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x8xf32>
}

// -----

// Slices that do not let the value's bf16 copy go: a quarter of a value, a
// slice of a value a loop reads too, two slices that overlap, and two that
// cover a value but one is returned (it would need a rounding back made for
// it). Each slice read by a product is extended itself.

// CHECK-LABEL: func.func @uncovered(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<16x8xbf16>, %[[B:[^:]*]]: tensor<8x8xbf16>, %[[C:[^:]*]]: tensor<8x8xbf16>, %[[D:[^:]*]]: tensor<8x8xbf16>
// CHECK-NOT:     arith.extf %[[A]] :
// CHECK-NOT:     arith.extf %[[B]] :
// CHECK-NOT:     arith.extf %[[C]] :
// CHECK-NOT:     arith.extf %[[D]] :
// CHECK-DAG:     %[[AS:.*]] = tensor.extract_slice %[[A]][0, 0] [4, 8] [1, 1] : tensor<16x8xbf16> to tensor<4x8xbf16>
// CHECK-DAG:     %[[BS:.*]] = tensor.extract_slice %[[B]][0, 0] [8, 4] [1, 1] : tensor<8x8xbf16> to tensor<8x4xbf16>
// CHECK-DAG:     arith.extf %[[AS]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-DAG:     arith.extf %[[BS]] : tensor<8x4xbf16> to tensor<8x4xf32>
// CHECK-DAG:     %[[C1:.*]] = tensor.extract_slice %[[C]][0, 0] [4, 8] [1, 1] : tensor<8x8xbf16> to tensor<4x8xbf16>
// CHECK-DAG:     %[[C2:.*]] = tensor.extract_slice %[[C]][2, 0] [4, 8] [1, 1] : tensor<8x8xbf16> to tensor<4x8xbf16>
// CHECK-DAG:     arith.extf %[[C1]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-DAG:     arith.extf %[[C2]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-DAG:     %[[D1:.*]] = tensor.extract_slice %[[D]][0, 0] [4, 8] [1, 1] : tensor<8x8xbf16> to tensor<4x8xbf16>
// CHECK-DAG:     %[[D2:.*]] = tensor.extract_slice %[[D]][4, 0] [4, 8] [1, 1] : tensor<8x8xbf16> to tensor<4x8xbf16>
// CHECK-DAG:     arith.extf %[[D1]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-DAG:     linalg.generic {{.*}} ins(%[[B]] : tensor<8x8xbf16>)
// CHECK:         return {{.*}}, %[[D2]] :

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @uncovered(%a: tensor<16x8xbf16>, %b: tensor<8x8xbf16>, %c: tensor<8x8xbf16>, %d: tensor<8x8xbf16>, %w: tensor<8x4xbf16>)
    -> (tensor<4x4xf32>, tensor<8x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x8xbf16>) {
  %zero = arith.constant 0.0 : f32
  %c0 = tensor.empty() : tensor<4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%c0 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %as = tensor.extract_slice %a[0, 0] [4, 8] [1, 1] : tensor<16x8xbf16> to tensor<4x8xbf16>
  %bs = tensor.extract_slice %b[0, 0] [8, 4] [1, 1] : tensor<8x8xbf16> to tensor<8x4xbf16>
  %p = linalg.matmul ins(%as, %bs : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %o = tensor.empty() : tensor<8x8xf32>
  %bw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8x8xbf16>) outs(%o : tensor<8x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %wide = arith.extf %in : bf16 to f32
    linalg.yield %wide : f32
  } -> tensor<8x8xf32>
  %c1 = tensor.extract_slice %c[0, 0] [4, 8] [1, 1] : tensor<8x8xbf16> to tensor<4x8xbf16>
  %c2 = tensor.extract_slice %c[2, 0] [4, 8] [1, 1] : tensor<8x8xbf16> to tensor<4x8xbf16>
  %pc1 = linalg.matmul ins(%c1, %w : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %pc2 = linalg.matmul ins(%c2, %w : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %d1 = tensor.extract_slice %d[0, 0] [4, 8] [1, 1] : tensor<8x8xbf16> to tensor<4x8xbf16>
  %d2 = tensor.extract_slice %d[4, 0] [4, 8] [1, 1] : tensor<8x8xbf16> to tensor<4x8xbf16>
  %pd = linalg.matmul ins(%d1, %w : tensor<4x8xbf16>, tensor<8x4xbf16>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %p, %bw, %pc1, %pc2, %pd, %d2 : tensor<4x4xf32>, tensor<8x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x8xbf16>
}

// -----

// A slice extended before a product that reads its source itself (which
// widens the source), and a slice after it: the first keeps its extension,
// the second is taken out of the widened source.

// CHECK-LABEL: func.func @source_widened_between(
// CHECK:         %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<8x16xf32>)
// CHECK:         %[[LOW:.*]] = arith.truncf %[[T]] : tensor<16x8xf32> to tensor<16x8xbf16>
// CHECK:         %[[A:.*]] = tensor.extract_slice %[[LOW]][0, 0] [8, 8] [1, 1]
// CHECK:         %[[AW:.*]] = arith.extf %[[A]] : tensor<8x8xbf16> to tensor<8x8xf32>
// CHECK:         linalg.matmul ins(%[[AW]], %{{.*}} : tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK:         linalg.matmul ins(%[[T]], %{{.*}} : tensor<16x8xf32>, tensor<8x8xf32>)
// CHECK:         %[[B:.*]] = tensor.extract_slice %[[T]][8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
// CHECK:         linalg.matmul ins(%[[B]], %{{.*}} : tensor<8x8xf32>, tensor<8x8xf32>)

func.func @source_widened_between(%x: tensor<8x16xbf16>, %w: tensor<8x8xbf16>, %acc: tensor<8x8xf32>, %acc2: tensor<16x8xf32>)
    -> (tensor<8x8xf32>, tensor<16x8xf32>, tensor<8x8xf32>) {
  %e = tensor.empty() : tensor<16x8xbf16>
  %s = linalg.transpose ins(%x : tensor<8x16xbf16>) outs(%e : tensor<16x8xbf16>) permutation = [1, 0]
  %a = tensor.extract_slice %s[0, 0] [8, 8] [1, 1] : tensor<16x8xbf16> to tensor<8x8xbf16>
  %p0 = linalg.matmul ins(%a, %w : tensor<8x8xbf16>, tensor<8x8xbf16>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  %p1 = linalg.matmul ins(%s, %w : tensor<16x8xbf16>, tensor<8x8xbf16>) outs(%acc2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %b = tensor.extract_slice %s[8, 0] [8, 8] [1, 1] : tensor<16x8xbf16> to tensor<8x8xbf16>
  %p2 = linalg.matmul ins(%b, %w : tensor<8x8xbf16>, tensor<8x8xbf16>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %p0, %p1, %p2 : tensor<8x8xf32>, tensor<16x8xf32>, tensor<8x8xf32>
}

// -----

// Not widened: f16 inputs (not in `types`), a low-precision output, and
// inputs of two types.

// CHECK-LABEL: func.func @untouched(
// CHECK-NOT:     arith.extf
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<8x16xf16>) outs(%{{.*}} : tensor<4x16xf32>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%{{.*}} : tensor<4x16xbf16>)
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x8xbf16>, tensor<2x8x16xf32>)

func.func @untouched(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>, %c: tensor<4x16xf32>,
                     %x: tensor<4x8xbf16>, %y: tensor<8x16xbf16>, %z: tensor<4x16xbf16>,
                     %u: tensor<2x4x8xbf16>, %v: tensor<2x8x16xf32>, %r: tensor<2x4x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xbf16>, tensor<2x4x16xf32>) {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf16>, tensor<8x16xf16>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = linalg.matmul ins(%x, %y : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%z : tensor<4x16xbf16>) -> tensor<4x16xbf16>
  %2 = linalg.batch_matmul ins(%u, %v : tensor<2x4x8xbf16>, tensor<2x8x16xf32>) outs(%r : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %0, %1, %2 : tensor<4x16xf32>, tensor<4x16xbf16>, tensor<2x4x16xf32>
}

// -----

// A batch matmul of bf16 attention scores (a transposed matmul through
// indexing maps) keeps its maps.

// CHECK-DAG:   #[[BT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @batch(
// CHECK-DAG:     %[[Q:.*]] = arith.extf %{{.*}} : tensor<2x4x8xbf16> to tensor<2x4x8xf32>
// CHECK-DAG:     %[[K:.*]] = arith.extf %{{.*}} : tensor<2x16x8xbf16> to tensor<2x16x8xf32>
// CHECK:         linalg.batch_matmul indexing_maps = [#{{.*}}, #[[BT]], #{{.*}}] ins(%[[Q]], %[[K]] : tensor<2x4x8xf32>, tensor<2x16x8xf32>)

func.func @batch(%q: tensor<2x4x8xbf16>, %k: tensor<2x16x8xbf16>, %s: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = linalg.batch_matmul indexing_maps = [
         affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>,
         affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>,
         affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
       ins(%q, %k : tensor<2x4x8xbf16>, tensor<2x16x8xbf16>) outs(%s : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// A transpose that a loop reads too: the loop reads its f32 copy and the bf16
// transpose goes. A value a non-loop op reads (here the insert of a parallel
// loop's result, where nothing but inserts may stand) is rounded back once,
// next to its extension.

// CHECK-LABEL: func.func @other_readers(
// CHECK:         %[[V:.*]] = arith.truncf %{{.*}} : tensor<8x8xf32> to tensor<8x8xbf16>
// CHECK-NEXT:    %[[W:.*]] = arith.extf %[[V]] : tensor<8x8xbf16> to tensor<8x8xf32>
// CHECK-NEXT:    %[[BACK:.*]] = arith.truncf %[[W]] : tensor<8x8xf32> to tensor<8x8xbf16>
// CHECK-NOT:     linalg.transpose ins(%{{.*}} : tensor<8x8xbf16>)
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<8x8xf32>)
// CHECK:         linalg.matmul ins(%{{.*}}, %[[T]] : tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[T]] : tensor<8x8xf32>)
// CHECK:         scf.forall.in_parallel {
// CHECK-NEXT:      tensor.parallel_insert_slice %[[BACK]] into

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @other_readers(%a: tensor<8x8xf32>, %b: tensor<8x8xbf16>, %c: tensor<8x8xf32>, %out: tensor<16x8xbf16>)
    -> (tensor<16x8xbf16>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %v = arith.truncf %a : tensor<8x8xf32> to tensor<8x8xbf16>
  %e = tensor.empty() : tensor<8x8xbf16>
  %t = linalg.transpose ins(%v : tensor<8x8xbf16>) outs(%e : tensor<8x8xbf16>) permutation = [1, 0]
  %p = linalg.matmul ins(%b, %t : tensor<8x8xbf16>, tensor<8x8xbf16>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  %o = tensor.empty() : tensor<8x8xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<8x8xbf16>) outs(%o : tensor<8x8xf32>) {
  ^bb0(%in: bf16, %out2: f32):
    %w = arith.extf %in : bf16 to f32
    %s = arith.addf %w, %w : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %r = scf.forall (%i) in (2) shared_outs(%s = %out) -> (tensor<16x8xbf16>) {
    %c8 = arith.constant 8 : index
    %off = arith.muli %i, %c8 : index
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %v into %s[%off, 0] [8, 8] [1, 1] : tensor<8x8xbf16> into tensor<16x8xbf16>
    }
  }
  return %r, %p, %twice : tensor<16x8xbf16>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// A padding value made in the pad's own region, and a fill of a buffer that
// is not empty: the padded value is extended as it is, the fill writes a new
// f32 buffer of the same shape (what it overwrites does not matter).

// CHECK-LABEL: func.func @pad_and_fill(
// CHECK-SAME:      %{{.*}}: tensor<4x4xbf16>, %[[OLD:.*]]: tensor<?x8xbf16>
// CHECK:         %[[P:.*]] = tensor.pad
// CHECK:           arith.constant 5.000000e-01 : bf16
// CHECK:         } : tensor<4x4xbf16> to tensor<8x8xbf16>
// CHECK:         %[[PW:.*]] = arith.extf %[[P]] : tensor<8x8xbf16> to tensor<8x8xf32>
// CHECK:         %[[ROWS:.*]] = tensor.dim %[[OLD]], %{{.*}} : tensor<?x8xbf16>
// CHECK:         %[[EMPTY:.*]] = tensor.empty(%[[ROWS]]) : tensor<?x8xf32>
// CHECK:         %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[EMPTY]] : tensor<?x8xf32>)
// CHECK:         linalg.matmul ins(%[[F]], %[[PW]] : tensor<?x8xf32>, tensor<8x8xf32>)

func.func @pad_and_fill(%a: tensor<4x4xbf16>, %old: tensor<?x8xbf16>, %c: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %p = tensor.pad %a low[2, 2] high[2, 2] {
  ^bb0(%i: index, %j: index):
    %z = arith.constant 0.5 : bf16
    tensor.yield %z : bf16
  } : tensor<4x4xbf16> to tensor<8x8xbf16>
  %one = arith.constant 1.0 : bf16
  %f = linalg.fill ins(%one : bf16) outs(%old : tensor<?x8xbf16>) -> tensor<?x8xbf16>
  %r = linalg.matmul ins(%f, %p : tensor<?x8xbf16>, tensor<8x8xbf16>) outs(%c : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
