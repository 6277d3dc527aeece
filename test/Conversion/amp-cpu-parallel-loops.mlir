// RUN: amp-opt %s --split-input-file --amp-cpu-parallel-loops="threads=2" | FileCheck %s
// RUN: amp-opt %s --split-input-file --amp-cpu-parallel-loops="threads=1" | FileCheck %s --check-prefix=ONE

// An elementwise op's tiles, 512 rows of 16 vectors (3 ops of 16 elements and
// the terminator each): the rows are split into 2 blocks of 256, one run by
// the calling thread, the other by the async runtime, which it waits for. The
// outlined function runs the rows of a block, in order. With threads=1, plain
// loops.

// CHECK-LABEL: func.func @relu(
// CHECK-NOT:     scf.parallel
// CHECK:         %[[GROUP:.*]] = async.create_group
// CHECK:         scf.for %[[BLOCK:.*]] = %c1{{.*}} to %c2{{.*}} step %c1
// CHECK:           %[[SPAN:.*]] = arith.muli %[[BLOCK]], %c256{{.*}} : index
// CHECK:           %[[FIRST:.*]] = arith.addi %c0, %[[SPAN]] : index
// CHECK:           %[[TOKEN:.*]] = async.execute {
// CHECK:             %[[END:.*]] = arith.addi %[[FIRST]], %c256{{.*}} : index
// CHECK:             %[[LAST:.*]] = arith.minsi %[[END]], %c512 : index
// CHECK:             func.call @relu_parallel(%[[FIRST]], %[[LAST]], %arg0, %arg1)
// CHECK:           async.add_to_group %[[TOKEN]], %[[GROUP]]
// CHECK:         func.call @relu_parallel(%c0, %c256{{.*}}, %arg0, %arg1)
// CHECK:         async.await_all %[[GROUP]]
// CHECK-LABEL: func.func private @relu_parallel(
// CHECK-SAME:      %[[FROM:[^:]*]]: index, %[[TO:[^:]*]]: index, %{{.*}}: memref<512x256xf32>, %{{.*}}: memref<512x256xf32>)
// CHECK:         scf.for %[[I:.*]] = %[[FROM]] to %[[TO]] step %c1 {
// CHECK-NEXT:      scf.for %[[J:.*]] = %c0 to %c256 step %c16 {
// CHECK-NEXT:        vector.load %{{.*}}[%[[I]], %[[J]]]
// CHECK-NEXT:        arith.maximumf
// CHECK-NEXT:        vector.store
// ONE-LABEL:   func.func @relu(
// ONE-NOT:       async
// ONE:           scf.for %{{.*}} = %c0 to %c512 step %c1 {
// ONE-NEXT:        scf.for %{{.*}} = %c0 to %c256 step %c16 {
// ONE-NEXT:          vector.load
// ONE-NEXT:          arith.maximumf
// ONE-NEXT:          vector.store
// ONE-NOT:       scf.parallel
// ONE-NOT:       async

func.func @relu(%a: memref<512x256xf32>, %b: memref<512x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %zero = arith.constant dense<0.0> : vector<16xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c512, %c256) step (%c1, %c16) {
    %x = vector.load %a[%i, %j] : memref<512x256xf32>, vector<16xf32>
    %y = arith.maximumf %x, %zero : vector<16xf32>
    vector.store %y, %b[%i, %j] : memref<512x256xf32>, vector<16xf32>
    scf.reduce
  }
  return
}

// -----

// Too little work for two blocks (64 iterations of 49): sequential loops.

// CHECK-LABEL: func.func @small(
// CHECK-NOT:     async
// CHECK:         scf.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %c256 step %c16 {
// CHECK-NEXT:        vector.load
// CHECK-NOT:     scf.parallel
// CHECK-NOT:     async
// ONE-LABEL:   func.func @small(
// ONE:           scf.for
// ONE-NOT:       scf.parallel

func.func @small(%a: memref<4x256xf32>, %b: memref<4x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant dense<0.0> : vector<16xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c256) step (%c1, %c16) {
    %x = vector.load %a[%i, %j] : memref<4x256xf32>, vector<16xf32>
    %y = arith.maximumf %x, %zero : vector<16xf32>
    vector.store %y, %b[%i, %j] : memref<4x256xf32>, vector<16xf32>
    scf.reduce
  }
  return
}

// -----

// A matmul's loops (convert-linalg-to-parallel-loops): the output's dims
// parallel, the reduction a loop inside each iteration, which the work
// estimate counts by its trip count. The rows are split into 2 blocks of 512;
// the parallel loop nested inside is run in order by its block's thread.

// CHECK-LABEL: func.func @nested(
// CHECK:         async.create_group
// CHECK:         async.execute
// CHECK:           func.call @nested_parallel(
// CHECK:         func.call @nested_parallel(%c0, %c512{{.*}}, %arg0, %arg1, %arg2)
// CHECK-LABEL: func.func private @nested_parallel(
// CHECK:         scf.for
// CHECK:           scf.for %{{.*}} = %c0{{.*}} to %c32{{.*}} step %c1
// CHECK:             scf.for %[[C:.*]] = %c0{{.*}} to %c64{{.*}} step %c1
// CHECK:               memref.load %{{.*}}[%{{.*}}, %[[C]]]
// CHECK-NOT:     scf.parallel

func.func @nested(%x: memref<1024x64xf32>, %w: memref<64x32xf32>, %y: memref<1024x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c32) step (%c1) {
      scf.for %c = %c0 to %c64 step %c1 {
        %a = memref.load %x[%i, %c] : memref<1024x64xf32>
        %b = memref.load %w[%c, %j] : memref<64x32xf32>
        %acc = memref.load %y[%i, %j] : memref<1024x32xf32>
        %p = arith.mulf %a, %b : f32
        %s = arith.addf %acc, %p : f32
        memref.store %s, %y[%i, %j] : memref<1024x32xf32>
      }
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// A dynamic batch: split at run time into at most 2 blocks of at least
// 65536 / (16 x 49) = 84 rows (rounded up), or run in one call when there are
// fewer than 2 x 84 rows.

// CHECK-LABEL: func.func @dynamic_batch(
// CHECK:         %[[ROWS:.*]] = memref.dim %arg0, %c0
// CHECK:         %[[BLOCK:.*]] = arith.maxsi %{{.*}}, %c84 : index
// CHECK:         %[[SEVERAL:.*]] = arith.cmpi sgt, %{{.*}}, %c1{{.*}} : index
// CHECK:         scf.if %[[SEVERAL]] {
// CHECK:           async.create_group
// CHECK:           async.await_all
// CHECK:         } else {
// CHECK:           func.call @dynamic_batch_parallel(%c0, %[[ROWS]],

func.func @dynamic_batch(%a: memref<?x256xf32>, %b: memref<?x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %rows = memref.dim %a, %c0 : memref<?x256xf32>
  %zero = arith.constant dense<0.0> : vector<16xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %c256) step (%c1, %c16) {
    %x = vector.load %a[%i, %j] : memref<?x256xf32>, vector<16xf32>
    %y = arith.maximumf %x, %zero : vector<16xf32>
    vector.store %y, %b[%i, %j] : memref<?x256xf32>, vector<16xf32>
    scf.reduce
  }
  return
}

// -----

// A parallel loop inside a reduction loop (a column sum, its columns in
// vectors): too little work per reduction step, so sequential.

// CHECK-LABEL: func.func @column_sum(
// CHECK:         scf.for %{{.*}} = %c0 to %c64 step %c1 {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %c32 step %c16 {
// CHECK-NOT:     async

func.func @column_sum(%x: memref<64x32xf32>, %s: memref<32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.for %r = %c0 to %c64 step %c1 {
    scf.parallel (%j) = (%c0) to (%c32) step (%c16) {
      %v = vector.load %x[%r, %j] : memref<64x32xf32>, vector<16xf32>
      %acc = vector.load %s[%j] : memref<32xf32>, vector<16xf32>
      %sum = arith.addf %acc, %v : vector<16xf32>
      vector.store %sum, %s[%j] : memref<32xf32>, vector<16xf32>
      scf.reduce
    }
  }
  return
}

// -----

// A loop with reductions is left as it is, whatever the thread count.

// CHECK-LABEL: func.func @reduction(
// CHECK:         scf.parallel
// CHECK:         scf.reduce(
// CHECK-NOT:     async
// ONE-LABEL:   func.func @reduction(
// ONE:           scf.parallel

func.func @reduction(%x: memref<1048576xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1048576 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<1048576xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %sum : f32
}
