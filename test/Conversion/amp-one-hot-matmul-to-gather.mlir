// RUN: amp-opt %s --split-input-file --amp-one-hot-matmul-to-gather | FileCheck %s

// An embedding lookup as amp_mlir.torch writes it: the token ids compared
// with an iota of the vocabulary into an i8 one-hot, made f32, times the
// table. It becomes a gather of table rows; an id outside the table gives a
// zero row.
// CHECK-LABEL: func.func @lookup(
// CHECK-SAME:      %[[IDS:.*]]: tensor<6x1xi64>, %[[TABLE:.*]]: tensor<10x4xf32>)
// CHECK-DAG:     %[[ROWS:.*]] = arith.constant 10 : index
// CHECK:         %[[EMPTY:.*]] = tensor.empty() : tensor<6x4xf32>
// CHECK:         %[[GATHER:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[IDS]] : tensor<6x1xi64>) outs(%[[EMPTY]] : tensor<6x4xf32>)
// CHECK-NEXT:    ^bb0(%[[ID:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT:      %[[ROW:.*]] = arith.index_cast %[[ID]] : i64 to index
// CHECK-NEXT:      %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %[[ROWS]] : index
// CHECK:           %[[SAFE:.*]] = arith.select %[[IN]], %[[ROW]], %{{.*}} : index
// CHECK:           %[[COLUMN:.*]] = linalg.index 1 : index
// CHECK:           %[[ENTRY:.*]] = tensor.extract %[[TABLE]][%[[SAFE]], %[[COLUMN]]] : tensor<10x4xf32>
// CHECK:           %[[VALUE:.*]] = arith.select %[[IN]], %[[ENTRY]], %{{.*}} : f32
// CHECK:           linalg.yield %[[VALUE]] : f32
// CHECK-NOT:     linalg.matmul
// CHECK:         return %[[GATHER]]
#rows = affine_map<(d0, d1) -> (d0, 0)>
#columns = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @lookup(%ids: tensor<6x1xi64>, %table: tensor<10x4xf32>) -> tensor<6x4xf32> {
  %zero = arith.constant 0.0 : f32
  %iota_init = tensor.empty() : tensor<10xi64>
  %iota = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%iota_init : tensor<10xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<10xi64>
  %mask_init = tensor.empty() : tensor<6x10xi8>
  %mask = linalg.generic {indexing_maps = [#rows, #columns, #id], iterator_types = ["parallel", "parallel"]} ins(%ids, %iota : tensor<6x1xi64>, tensor<10xi64>) outs(%mask_init : tensor<6x10xi8>) {
  ^bb0(%id: i64, %v: i64, %out: i8):
    %eq = arith.cmpi eq, %id, %v : i64
    %b = arith.extui %eq : i1 to i8
    linalg.yield %b : i8
  } -> tensor<6x10xi8>
  %hot_init = tensor.empty() : tensor<6x10xf32>
  %hot = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%mask : tensor<6x10xi8>) outs(%hot_init : tensor<6x10xf32>) {
  ^bb0(%m: i8, %out: f32):
    %t = arith.trunci %m : i8 to i1
    %f = arith.uitofp %t : i1 to f32
    linalg.yield %f : f32
  } -> tensor<6x10xf32>
  %init = tensor.empty() : tensor<6x4xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%init : tensor<6x4xf32>) -> tensor<6x4xf32>
  %out = linalg.matmul ins(%hot, %table : tensor<6x10xf32>, tensor<10x4xf32>) outs(%filled : tensor<6x4xf32>) -> tensor<6x4xf32>
  return %out : tensor<6x4xf32>
}

// -----

// Its gradient: the transposed one-hot times the output gradient. Each row
// i of the gradient is added into the table gradient's row ids[i], in the
// order of i, into the zero fill.
// CHECK-LABEL: func.func @lookup_gradient(
// CHECK-SAME:      %[[IDS:.*]]: tensor<6xi32>, %[[DY:.*]]: tensor<6x4xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG:     %[[C10:.*]] = arith.constant 10 : index
// CHECK:         %[[ZEROS:.*]] = linalg.fill
// CHECK:         %[[SUM:.*]] = scf.for %[[I:.*]] = %[[C0]] to %[[C6]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[ZEROS]]) -> (tensor<10x4xf32>) {
// CHECK:           %[[ID:.*]] = tensor.extract %[[IDS]][%[[I]]] : tensor<6xi32>
// CHECK:           %[[ROW:.*]] = arith.index_cast %[[ID]] : i32 to index
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[ROW]], %[[C10]] : index
// CHECK:           %[[NEW:.*]] = scf.if %[[IN]] -> (tensor<10x4xf32>) {
// CHECK:             %[[TARGET:.*]] = tensor.extract_slice %[[ACC]][%[[ROW]], 0] [1, 4] [1, 1]
// CHECK:             %[[SOURCE:.*]] = tensor.extract_slice %[[DY]][%[[I]], 0] [1, 4] [1, 1]
// CHECK:             %[[ADDED:.*]] = linalg.generic {{.*}} ins(%[[SOURCE]] : tensor<1x4xf32>) outs(%[[TARGET]] : tensor<1x4xf32>)
// CHECK:               arith.addf
// CHECK:             %[[INSERTED:.*]] = tensor.insert_slice %[[ADDED]] into %[[ACC]][%[[ROW]], 0] [1, 4] [1, 1]
// CHECK:             scf.yield %[[INSERTED]]
// CHECK:           } else {
// CHECK:             scf.yield %[[ACC]]
// CHECK:           }
// CHECK:           scf.yield %[[NEW]]
// CHECK-NOT:     linalg.matmul
// CHECK:         return %[[SUM]]
#rows = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @lookup_gradient(%ids: tensor<6xi32>, %dy: tensor<6x4xf32>) -> tensor<10x4xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %hot_init = tensor.empty() : tensor<6x10xf32>
  %hot = linalg.generic {indexing_maps = [#rows, #id], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<6xi32>) outs(%hot_init : tensor<6x10xf32>) {
  ^bb0(%id: i32, %out: f32):
    %v = linalg.index 1 : index
    %vi = arith.index_cast %v : index to i32
    %eq = arith.cmpi eq, %vi, %id : i32
    %f = arith.select %eq, %one, %zero : f32
    linalg.yield %f : f32
  } -> tensor<6x10xf32>
  %t_init = tensor.empty() : tensor<10x6xf32>
  %t = linalg.transpose ins(%hot : tensor<6x10xf32>) outs(%t_init : tensor<10x6xf32>) permutation = [1, 0]
  %init = tensor.empty() : tensor<10x4xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%init : tensor<10x4xf32>) -> tensor<10x4xf32>
  %out = linalg.matmul ins(%t, %dy : tensor<10x6xf32>, tensor<6x4xf32>) outs(%filled : tensor<10x4xf32>) -> tensor<10x4xf32>
  return %out : tensor<10x4xf32>
}

// -----

// A bf16 table or gradient into an f32 product: the entries extended, as
// the product extends its inputs.
// CHECK-LABEL: func.func @low_precision(
// CHECK:         linalg.generic
// CHECK:           %[[ENTRY:.*]] = tensor.extract %{{.*}} : tensor<10x4xbf16>
// CHECK:           arith.extf %[[ENTRY]] : bf16 to f32
// CHECK:         scf.for
// CHECK:           linalg.generic
// CHECK:             %[[WIDE:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:             arith.addf %{{.*}}, %[[WIDE]] : f32
// CHECK-NOT:     linalg.matmul
#rows = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @low_precision(%ids: tensor<6xi64>, %table: tensor<10x4xbf16>, %dy: tensor<6x4xbf16>) -> (tensor<6x4xf32>, tensor<10x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %hot_init = tensor.empty() : tensor<6x10xbf16>
  %hot = linalg.generic {indexing_maps = [#rows, #id], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<6xi64>) outs(%hot_init : tensor<6x10xbf16>) {
  ^bb0(%id: i64, %out: bf16):
    %v = linalg.index 1 : index
    %vi = arith.index_cast %v : index to i64
    %eq = arith.cmpi eq, %id, %vi : i64
    %f = arith.uitofp %eq : i1 to bf16
    linalg.yield %f : bf16
  } -> tensor<6x10xbf16>
  %init = tensor.empty() : tensor<6x4xf32>
  %filled = linalg.fill ins(%zero : f32) outs(%init : tensor<6x4xf32>) -> tensor<6x4xf32>
  %out = linalg.matmul ins(%hot, %table : tensor<6x10xbf16>, tensor<10x4xbf16>) outs(%filled : tensor<6x4xf32>) -> tensor<6x4xf32>
  %t_init = tensor.empty() : tensor<10x6xbf16>
  %t = linalg.transpose ins(%hot : tensor<6x10xbf16>) outs(%t_init : tensor<10x6xbf16>) permutation = [1, 0]
  %ginit = tensor.empty() : tensor<10x4xf32>
  %gfilled = linalg.fill ins(%zero : f32) outs(%ginit : tensor<10x4xf32>) -> tensor<10x4xf32>
  %grad = linalg.matmul ins(%t, %dy : tensor<10x6xbf16>, tensor<6x4xbf16>) outs(%gfilled : tensor<10x4xf32>) -> tensor<10x4xf32>
  return %out, %grad : tensor<6x4xf32>, tensor<10x4xf32>
}

// -----

// Not a one-hot, or not into zeros: the products stay. The first compares
// with `ne`; the second reads its rows' index along the columns too; the
// third compares with an input that is not the column's index; the fourth
// accumulates into ones.
// CHECK-LABEL: func.func @stays(
// CHECK-COUNT-4: linalg.matmul
// CHECK-NOT:     tensor.extract
#rows = affine_map<(d0, d1) -> (d0)>
#both = affine_map<(d0, d1) -> (d0, d1)>
#columns = affine_map<(d0, d1) -> (d1)>
func.func @stays(%ids: tensor<6xi64>, %grid: tensor<6x10xi64>, %other: tensor<10xi64>, %table: tensor<10x4xf32>)
    -> (tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %hot_init = tensor.empty() : tensor<6x10xf32>
  %ne = linalg.generic {indexing_maps = [#rows, #both], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<6xi64>) outs(%hot_init : tensor<6x10xf32>) {
  ^bb0(%id: i64, %out: f32):
    %v = linalg.index 1 : index
    %vi = arith.index_cast %v : index to i64
    %c = arith.cmpi ne, %id, %vi : i64
    %f = arith.uitofp %c : i1 to f32
    linalg.yield %f : f32
  } -> tensor<6x10xf32>
  %by_grid = linalg.generic {indexing_maps = [#both, #both], iterator_types = ["parallel", "parallel"]} ins(%grid : tensor<6x10xi64>) outs(%hot_init : tensor<6x10xf32>) {
  ^bb0(%id: i64, %out: f32):
    %v = linalg.index 1 : index
    %vi = arith.index_cast %v : index to i64
    %c = arith.cmpi eq, %id, %vi : i64
    %f = arith.uitofp %c : i1 to f32
    linalg.yield %f : f32
  } -> tensor<6x10xf32>
  %by_other = linalg.generic {indexing_maps = [#rows, #columns, #both], iterator_types = ["parallel", "parallel"]} ins(%ids, %other : tensor<6xi64>, tensor<10xi64>) outs(%hot_init : tensor<6x10xf32>) {
  ^bb0(%id: i64, %v: i64, %out: f32):
    %c = arith.cmpi eq, %id, %v : i64
    %f = arith.uitofp %c : i1 to f32
    linalg.yield %f : f32
  } -> tensor<6x10xf32>
  %hot = linalg.generic {indexing_maps = [#rows, #both], iterator_types = ["parallel", "parallel"]} ins(%ids : tensor<6xi64>) outs(%hot_init : tensor<6x10xf32>) {
  ^bb0(%id: i64, %out: f32):
    %v = linalg.index 1 : index
    %vi = arith.index_cast %v : index to i64
    %c = arith.cmpi eq, %id, %vi : i64
    %f = arith.uitofp %c : i1 to f32
    linalg.yield %f : f32
  } -> tensor<6x10xf32>
  %init = tensor.empty() : tensor<6x4xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%init : tensor<6x4xf32>) -> tensor<6x4xf32>
  %ones = linalg.fill ins(%one : f32) outs(%init : tensor<6x4xf32>) -> tensor<6x4xf32>
  %a = linalg.matmul ins(%ne, %table : tensor<6x10xf32>, tensor<10x4xf32>) outs(%zeros : tensor<6x4xf32>) -> tensor<6x4xf32>
  %b = linalg.matmul ins(%by_grid, %table : tensor<6x10xf32>, tensor<10x4xf32>) outs(%zeros : tensor<6x4xf32>) -> tensor<6x4xf32>
  %c = linalg.matmul ins(%by_other, %table : tensor<6x10xf32>, tensor<10x4xf32>) outs(%zeros : tensor<6x4xf32>) -> tensor<6x4xf32>
  %d = linalg.matmul ins(%hot, %table : tensor<6x10xf32>, tensor<10x4xf32>) outs(%ones : tensor<6x4xf32>) -> tensor<6x4xf32>
  return %a, %b, %c, %d : tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>
}
