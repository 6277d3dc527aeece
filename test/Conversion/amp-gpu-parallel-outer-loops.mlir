// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-gpu-parallel-outer-loops))" | FileCheck %s

// A column sum (the bias gradient over a batch) starts with its reduction:
// its loops are interchanged so that the parallel one is outermost.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @column_sum
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
func.func @column_sum(%g: memref<64x10xf32>, %db: memref<10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
      ins(%g : memref<64x10xf32>) outs(%db : memref<10xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A full reduction and a 0-d update get a one-iteration parallel loop; a
// parallel op is left as it is.
// CHECK-LABEL: func.func @serial
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]]) {
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK: scf.parallel
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = []
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["parallel"]
func.func @serial(%x: memref<64xf32>, %loss: memref<f32>, %scale: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : memref<64xf32>) outs(%loss : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} outs(%scale : memref<f32>) {
  ^bb0(%s: f32):
    %d = arith.addf %s, %s : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%x : memref<64xf32>) {
  ^bb0(%v: f32):
    %d = arith.addf %v, %v : f32
    linalg.yield %d : f32
  }
  return
}
