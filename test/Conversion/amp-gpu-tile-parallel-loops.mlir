// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-gpu-tile-parallel-loops))" | FileCheck %s

// A [64, 128] loop: the innermost dimension takes 128 threads, the one
// before it the other 2 of the block's 256, and the blocks step over them.
// CHECK-LABEL: func.func @rows
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[C128:.*]] = arith.constant 128 : index
// CHECK-NEXT: %[[ROWS:.*]] = arith.muli %{{.*}}, %[[C2]] : index
// CHECK: %[[COLUMNS:.*]] = arith.muli %{{.*}}, %[[C128]] : index
// CHECK: scf.parallel ({{.*}}) step (%[[ROWS]], %[[COLUMNS]])
// CHECK-NEXT: scf.parallel ({{.*}}) to (%[[ROWS]], %[[COLUMNS]])
// CHECK: memref.store
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

// A narrow innermost dimension (10 classes) takes 16 threads, rounded up
// to a power of two; the rows take the other 16 of the block. The extra
// threads are guarded.
// CHECK-LABEL: func.func @narrow
// CHECK: %[[C16:.*]] = arith.constant 16 : index
// CHECK-NEXT: %[[C16_1:.*]] = arith.constant 16 : index
// CHECK-NEXT: %[[ROWS:.*]] = arith.muli %{{.*}}, %[[C16]] : index
// CHECK-NEXT: %[[COLUMNS:.*]] = arith.muli %{{.*}}, %[[C16_1]] : index
// CHECK: scf.parallel ({{.*}}) step (%[[ROWS]], %[[COLUMNS]])
// CHECK-NEXT: scf.parallel ({{.*}}) to (%[[ROWS]], %[[COLUMNS]])
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
// update) one; in 3-D loops the outer dimension gets 1; unknown sizes get
// 64 (innermost) and 4.
// CHECK-LABEL: func.func @shapes
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[T256:.*]] = arith.muli %{{.*}}, %[[C256]] : index
// CHECK: scf.parallel ({{.*}}) step (%[[T256]])
// CHECK-NEXT: scf.parallel ({{.*}}) to (%[[T256]])
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[T1:.*]] = arith.muli %{{.*}}, %[[ONE]] : index
// CHECK: scf.parallel ({{.*}}) step (%[[T1]])
// CHECK-NEXT: scf.parallel ({{.*}}) to (%[[T1]])
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[OUTER:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[ROWS:.*]] = arith.muli %{{.*}}, %[[C4]] : index
// CHECK: %[[COLUMNS:.*]] = arith.muli %{{.*}}, %[[C64]] : index
// CHECK: scf.parallel ({{.*}}) step (%[[OUTER]], %[[ROWS]], %[[COLUMNS]])
// CHECK-NEXT: scf.parallel ({{.*}}) to (%[[OUTER]], %[[ROWS]], %[[COLUMNS]])
// CHECK: %[[DC4:.*]] = arith.constant 4 : index
// CHECK: %[[DC64:.*]] = arith.constant 64 : index
// CHECK: %[[DROWS:.*]] = arith.muli %{{.*}}, %[[DC4]] : index
// CHECK: %[[DCOLUMNS:.*]] = arith.muli %{{.*}}, %[[DC64]] : index
// CHECK: scf.parallel ({{.*}}) step (%[[DROWS]], %[[DCOLUMNS]])
// CHECK-NEXT: scf.parallel ({{.*}}) to (%[[DROWS]], %[[DCOLUMNS]])
// CHECK-NOT: scf.parallel
func.func @shapes(%a: memref<4096xf32>, %s: memref<f32>, %b: memref<8x64x64xf32>, %d: memref<?x?xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  scf.parallel (%i) = (%c0) to (%c4096) step (%c1) {
    memref.store %v, %a[%i] : memref<4096xf32>
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %v, %s[] : memref<f32>
  }
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c8, %c64, %c64) step (%c1, %c1, %c1) {
    memref.store %v, %b[%i, %j, %k] : memref<8x64x64xf32>
  }
  %m = memref.dim %d, %c0 : memref<?x?xf32>
  %n = memref.dim %d, %c1 : memref<?x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
    memref.store %v, %d[%i, %j] : memref<?x?xf32>
  }
  return
}
