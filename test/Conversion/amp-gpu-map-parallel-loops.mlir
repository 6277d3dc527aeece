// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-gpu-map-parallel-loops))" | FileCheck %s --check-prefix=MAP
// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-gpu-map-parallel-loops),convert-parallel-loops-to-gpu,canonicalize)" | FileCheck %s

// A [64, 128] loop: the innermost dimension takes 128 threads, mapped to x
// (a warp writes 32 neighbouring elements), the rows the other 2 of the
// block's 256, mapped to y; blocks step over the rows in x.
// MAP-LABEL: func.func @rows
// MAP: %[[ROWS:.*]] = arith.muli %{{.*}}, %c2 : index
// MAP: %[[COLUMNS:.*]] = arith.muli %{{.*}}, %c128{{.*}} : index
// MAP: scf.parallel ({{.*}}) step (%[[ROWS]], %[[COLUMNS]])
// MAP-NEXT: scf.parallel ({{.*}}) to (%[[ROWS]], %[[COLUMNS]])
// MAP: } {mapping = [#gpu.loop_dim_map<processor = thread_y, {{.*}}>, #gpu.loop_dim_map<processor = thread_x, {{.*}}>]}
// MAP: } {mapping = [#gpu.loop_dim_map<processor = block_x, {{.*}}>, #gpu.loop_dim_map<processor = block_y, {{.*}}>]}
// CHECK-LABEL: func.func @rows
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c32, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[TX:.*]], %[[TY:.*]], %{{.*}}) in (%{{.*}} = %c128, %{{.*}} = %c2, %{{.*}} = %c1)
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[TX]]]
func.func @rows(%out: memref<64x128xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c128) step (%c1, %c1) {
    memref.store %v, %out[%i, %j] : memref<64x128xf32>
  }
  return
}

// -----

// A narrow innermost dimension (10 classes) takes 16 threads, rounded up to
// a power of two; the rows the other 16 of the block. Extra threads are
// guarded.
// CHECK-LABEL: func.func @narrow
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c4, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c16, %{{.*}} = %c16, %{{.*}} = %c1)
// CHECK: scf.if
// CHECK: memref.store
func.func @narrow(%out: memref<64x10xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c10) step (%c1, %c1) {
    memref.store %v, %out[%i, %j] : memref<64x10xf32>
  }
  return
}

// -----

// A 1-D loop takes up to 256 threads; a one-iteration loop (a scalar
// update) one thread.
// CHECK-LABEL: func.func @one_dimension
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c16, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1, %{{.*}} = %c1)
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1)
func.func @one_dimension(%a: memref<4096xf32>, %s: memref<f32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  scf.parallel (%i) = (%c0) to (%c4096) step (%c1) {
    memref.store %v, %a[%i] : memref<4096xf32>
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %v, %s[] : memref<f32>
  }
  return
}

// -----

// Four dimensions (attention heads): the first three are collapsed into
// one of 1024, so the innermost (16) still maps to x threads and the
// block has 16 x 16 threads; the store recovers the indices.
// CHECK-LABEL: func.func @four_dimensions
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c64, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c16, %{{.*}} = %c16, %{{.*}} = %c1)
// CHECK: arith.divsi
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %[[TX]]] : memref<64x8x2x16xf32>
func.func @four_dimensions(%out: memref<64x8x2x16xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j, %k, %l) = (%c0, %c0, %c0, %c0) to (%c64, %c8, %c2, %c16) step (%c1, %c1, %c1, %c1) {
    memref.store %v, %out[%i, %j, %k, %l] : memref<64x8x2x16xf32>
  }
  return
}

// -----

// Unknown sizes get 64 threads in x and 4 in y.
// CHECK-LABEL: func.func @dynamic
// CHECK: gpu.launch blocks({{.*}}) threads({{.*}}) in (%{{.*}} = %c64, %{{.*}} = %c4, %{{.*}} = %c1)
func.func @dynamic(%d: memref<?x?xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %d, %c0 : memref<?x?xf32>
  %n = memref.dim %d, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    memref.store %v, %d[%i, %j] : memref<?x?xf32>
  }
  return
}

// -----

// A loop that does not start at 0 with steps of 1 is normalized first: 20
// iterations, 32 threads, the extra 12 guarded.
// CHECK-LABEL: func.func @strided
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c1, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c32, %{{.*}} = %c1, %{{.*}} = %c1)
// CHECK: arith.cmpi ult, %[[TX]], %c20 : index
// CHECK: %[[I:.*]] = affine.apply #{{.*}}()[%[[TX]]]
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[I]]]
func.func @strided(%out: memref<64xf32>, %v: f32) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c61 = arith.constant 61 : index
  scf.parallel (%i) = (%c1) to (%c61) step (%c3) {
    memref.store %v, %out[%i] : memref<64xf32>
  }
  return
}

// -----

// An innermost dimension that needs more than the 65535 blocks y allows
// steps its blocks in x instead.
// CHECK-LABEL: func.func @wide
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c131072, %{{.*}} = %c2, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c256, %{{.*}} = %c1, %{{.*}} = %c1)
func.func @wide(%out: memref<2x33554432xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = arith.constant 33554432 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %n) step (%c1, %c1) {
    memref.store %v, %out[%i, %j] : memref<2x33554432xf32>
  }
  return
}

// -----

// An innermost dimension of unknown size may need more blocks than y holds:
// its blocks step in x, as the rows (2, all in one block) fit in y.
// CHECK-LABEL: func.func @dynamic_columns
// CHECK: %[[N:.*]] = memref.dim
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %c1, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c64, %{{.*}} = %c2, %{{.*}} = %c1)
func.func @dynamic_columns(%d: memref<2x?xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %d, %c1 : memref<2x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %n) step (%c1, %c1) {
    memref.store %v, %d[%i, %j] : memref<2x?xf32>
  }
  return
}
