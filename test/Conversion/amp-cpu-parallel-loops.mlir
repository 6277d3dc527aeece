// RUN: amp-opt %s --split-input-file --amp-cpu-parallel-loops="threads=2" | FileCheck %s
// RUN: amp-opt %s --split-input-file --amp-cpu-parallel-loops="threads=1" | FileCheck %s --check-prefix=ONE

// An elementwise op's tiles, 512 rows of 16 vectors (3 ops of 16 elements and
// the terminator each): the rows are split into 2 blocks of 256, which the
// CPU runtime's ampCpuParallelFor runs on two threads. The context on the
// step's stack (allocated at its entry) holds the span of a block and the
// captured memrefs as descriptors; the outlined function reads them back and
// runs the rows of its block, in order. With threads=1, plain loops.

// CHECK-LABEL: func.func @relu(
// CHECK:         %[[CONTEXT:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(i64, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>)>
// CHECK-NOT:     scf.parallel
// CHECK:         %[[SPAN:.*]] = builtin.unrealized_conversion_cast %c256{{.*}} : index to i64
// CHECK:         %[[WITH_SPAN:.*]] = llvm.insertvalue %[[SPAN]], %{{.*}}[0]
// CHECK:         %[[X:.*]] = builtin.unrealized_conversion_cast %arg0 : memref<512x256xf32> to !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK:         %[[WITH_X:.*]] = llvm.insertvalue %[[X]], %[[WITH_SPAN]][1]
// CHECK:         %[[Y:.*]] = builtin.unrealized_conversion_cast %arg1 : memref<512x256xf32> to !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK:         %[[FILLED:.*]] = llvm.insertvalue %[[Y]], %[[WITH_X]][2]
// CHECK:         llvm.store %[[FILLED]], %[[CONTEXT]]
// CHECK:         %[[BODY:.*]] = constant @relu_parallel : (!llvm.ptr, i64) -> ()
// CHECK:         %[[BLOCKS:.*]] = arith.constant 2 : i64
// CHECK:         call @ampCpuParallelFor(%[[BODY]], %[[CONTEXT]], %[[BLOCKS]])
// CHECK-LABEL: func.func private @relu_parallel(
// CHECK-SAME:      %[[POINTER:[^:]*]]: !llvm.ptr, %[[BLOCK:[^:]*]]: i64)
// CHECK:         %[[LOADED:.*]] = llvm.load %[[POINTER]]
// CHECK:         %[[A:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<512x256xf32>
// CHECK:         %[[B:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<512x256xf32>
// CHECK:         %[[S:.*]] = builtin.unrealized_conversion_cast %{{.*}} : i64 to index
// CHECK:         %[[N:.*]] = arith.index_cast %[[BLOCK]] : i64 to index
// CHECK:         %[[OFFSET:.*]] = arith.muli %[[N]], %[[S]] : index
// CHECK:         %[[FROM:.*]] = arith.addi %c0, %[[OFFSET]] : index
// CHECK:         %[[END:.*]] = arith.addi %[[FROM]], %[[S]] : index
// CHECK:         %[[TO:.*]] = arith.minsi %c512, %[[END]] : index
// CHECK:         scf.for %[[I:.*]] = %[[FROM]] to %[[TO]] step %c1 {
// CHECK-NEXT:      scf.for %[[J:.*]] = %c0 to %c256 step %c16 {
// CHECK-NEXT:        vector.load %[[A]][%[[I]], %[[J]]]
// CHECK-NEXT:        arith.maximumf
// CHECK-NEXT:        vector.store %{{.*}}, %[[B]][%[[I]], %[[J]]]
// CHECK-LABEL: func.func private @ampCpuParallelFor((!llvm.ptr, i64) -> (), !llvm.ptr, i64)
// ONE-LABEL:   func.func @relu(
// ONE-NOT:       ampCpuParallelFor
// ONE:           scf.for %{{.*}} = %c0 to %c512 step %c1 {
// ONE-NEXT:        scf.for %{{.*}} = %c0 to %c256 step %c16 {
// ONE-NEXT:          vector.load
// ONE-NEXT:          arith.maximumf
// ONE-NEXT:          vector.store
// ONE-NOT:       scf.parallel
// ONE-NOT:       ampCpuParallelFor

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
// CHECK-NOT:     ampCpuParallelFor
// CHECK:         scf.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %c256 step %c16 {
// CHECK-NEXT:        vector.load
// CHECK-NOT:     scf.parallel
// CHECK-NOT:     ampCpuParallelFor
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
// CHECK:         %[[BODY:.*]] = constant @nested_parallel
// CHECK:         %[[BLOCKS:.*]] = arith.constant 2 : i64
// CHECK:         call @ampCpuParallelFor(%[[BODY]], %{{.*}}, %[[BLOCKS]])
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
// 65536 / (16 x 49) = 84 rows (rounded up): one block, which the runtime runs
// in the calling thread, when there are fewer than 2 x 84 rows. The row count
// (the upper bound) crosses in the context.

// CHECK-LABEL: func.func @dynamic_batch(
// CHECK:         %[[ROWS:.*]] = memref.dim %arg0, %c0
// CHECK:         %[[BLOCK:.*]] = arith.maxsi %{{.*}}, %c84 : index
// CHECK:         %[[BLOCKS:.*]] = arith.select
// CHECK:         %[[SPAN:.*]] = builtin.unrealized_conversion_cast %[[BLOCK]] : index to i64
// CHECK:         llvm.insertvalue %[[SPAN]], %{{.*}}[0]
// CHECK:         %[[UPPER:.*]] = builtin.unrealized_conversion_cast %[[ROWS]] : index to i64
// CHECK:         llvm.insertvalue %[[UPPER]], %{{.*}}[1]
// CHECK:         %[[COUNT:.*]] = arith.index_cast %[[BLOCKS]] : index to i64
// CHECK:         call @ampCpuParallelFor(%{{.*}}, %{{.*}}, %[[COUNT]])

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
// CHECK-NOT:     ampCpuParallelFor

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
// CHECK-NOT:     ampCpuParallelFor
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

// -----

// A captured value without an LLVM type (a tensor here) cannot cross to
// another thread in the context: the loop runs in order, on the calling one.

// CHECK-LABEL: func.func @tensor_capture(
// CHECK-NOT:     ampCpuParallelFor
// CHECK:         scf.for %{{.*}} = %c0 to %c1024 step %c1 {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %c256 step %c16 {
// CHECK-NEXT:        tensor.extract
// CHECK-NOT:     scf.parallel
// CHECK-NOT:     ampCpuParallelFor

func.func @tensor_capture(%t: tensor<1024xf32>, %b: memref<1024x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1024, %c256) step (%c1, %c16) {
    %x = tensor.extract %t[%i] : tensor<1024xf32>
    %v = vector.broadcast %x : f32 to vector<16xf32>
    vector.store %v, %b[%i, %j] : memref<1024x256xf32>, vector<16xf32>
    scf.reduce
  }
  return
}
