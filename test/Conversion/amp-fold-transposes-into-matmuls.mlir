// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-fold-transposes-into-matmuls))" | FileCheck %s

// torch-mlir's x @ w.T, with both operands transposed: the matmul reads both
// inputs in place through permuted maps and the transposes go.

// CHECK-DAG: #[[A_T:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[B_T:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @both(
// CHECK-SAME:      %[[A:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<16x8xf32>, %[[OUT:.*]]: tensor<4x16xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.matmul indexing_maps = [#[[A_T]], #[[B_T]], #[[C]]] ins(%[[A]], %[[B]] : tensor<8x4xf32>, tensor<16x8xf32>) outs(%[[OUT]] : tensor<4x16xf32>)

func.func @both(%a: tensor<8x4xf32>, %b: tensor<16x8xf32>, %c: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %ea = tensor.empty() : tensor<4x8xf32>
  %at = linalg.transpose ins(%a : tensor<8x4xf32>) outs(%ea : tensor<4x8xf32>) permutation = [1, 0]
  %eb = tensor.empty() : tensor<8x16xf32>
  %bt = linalg.transpose ins(%b : tensor<16x8xf32>) outs(%eb : tensor<8x16xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%at, %bt : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// A batch matmul whose A is transposed in its last two dimensions.

// CHECK-DAG: #[[A_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-LABEL: func.func @batch(
// CHECK-SAME:      %[[A:.*]]: tensor<2x8x4xbf16>
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.batch_matmul indexing_maps = [#[[A_T]], {{.*}}] ins(%[[A]], %{{.*}} : tensor<2x8x4xbf16>, tensor<2x8x16xbf16>)

func.func @batch(%a: tensor<2x8x4xbf16>, %b: tensor<2x8x16xbf16>, %c: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %ea = tensor.empty() : tensor<2x4x8xbf16>
  %at = linalg.transpose ins(%a : tensor<2x8x4xbf16>) outs(%ea : tensor<2x4x8xbf16>) permutation = [0, 2, 1]
  %r = linalg.batch_matmul ins(%at, %b : tensor<2x4x8xbf16>, tensor<2x8x16xbf16>) outs(%c : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

// A batch matmul keeps its batch dimension first: a transpose that moves it
// stays.

// CHECK-LABEL: func.func @batch_moved(
// CHECK:         %[[T:.*]] = linalg.transpose
// CHECK:         linalg.batch_matmul ins(%[[T]], %{{.*}} : tensor<2x4x8xbf16>, tensor<2x8x16xbf16>)

func.func @batch_moved(%a: tensor<4x2x8xbf16>, %b: tensor<2x8x16xbf16>, %c: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %ea = tensor.empty() : tensor<2x4x8xbf16>
  %at = linalg.transpose ins(%a : tensor<4x2x8xbf16>) outs(%ea : tensor<2x4x8xbf16>) permutation = [1, 0, 2]
  %r = linalg.batch_matmul ins(%at, %b : tensor<2x4x8xbf16>, tensor<2x8x16xbf16>) outs(%c : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// -----

// A transpose with another use stays for it; the matmul still reads the
// transpose's input.

// CHECK-LABEL: func.func @shared(
// CHECK-SAME:      %[[A:[^:]*]]: tensor<8x4xf32>
// CHECK:         %[[T:.*]] = linalg.transpose ins(%[[A]]
// CHECK:         %[[R:.*]] = linalg.matmul indexing_maps = [{{.*}}] ins(%[[A]], %{{.*}} : tensor<8x4xf32>, tensor<8x16xf32>)
// CHECK:         return %[[R]], %[[T]]

func.func @shared(%a: tensor<8x4xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x8xf32>) {
  %ea = tensor.empty() : tensor<4x8xf32>
  %at = linalg.transpose ins(%a : tensor<8x4xf32>) outs(%ea : tensor<4x8xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%at, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r, %at : tensor<4x16xf32>, tensor<4x8xf32>
}
