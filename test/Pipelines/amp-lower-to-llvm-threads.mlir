// RUN: amp-opt %s --split-input-file --amp-lower-to-llvm="library=false" -o %t.default
// RUN: amp-opt %s --split-input-file --amp-lower-to-llvm="library=false threads=1" -o %t.one
// RUN: cmp %t.default %t.one
// RUN: FileCheck %s --check-prefix=ONE < %t.one
// RUN: amp-opt %s --split-input-file --amp-lower-to-llvm="library=false threads=2" | FileCheck %s

// threads=1 (the default) is the sequential lowering, unchanged. With
// threads=2 the elementwise op's tiles (512 rows of 16 vectors) are split
// into two blocks of rows: a function of one block, which the CPU runtime's
// ampCpuParallelFor calls on two threads with a context on the step's stack
// (the block's span and the two memref descriptors); all in the LLVM dialect,
// the casts between memrefs and their descriptors resolved.

// ONE-LABEL:   llvm.func @relu(
// ONE-NOT:       ampCpuParallelFor
// ONE:           llvm.intr.maximum({{.*}}) : (vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// ONE-NOT:       ampCpuParallelFor
// ONE-NOT:       relu_parallel
// CHECK-LABEL: llvm.func @relu(
// CHECK-DAG:     %[[BODY:.*]] = llvm.mlir.addressof @relu_parallel : !llvm.ptr
// CHECK-DAG:     %[[BLOCKS:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG:     %[[CONTEXT:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(i64, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>)>
// CHECK:         llvm.store %{{.*}}, %[[CONTEXT]]
// CHECK:         llvm.call @ampCpuParallelFor(%[[BODY]], %[[CONTEXT]], %[[BLOCKS]]) : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK-LABEL: llvm.func @relu_parallel(
// CHECK-SAME:      %{{.*}}: !llvm.ptr, %{{.*}}: i64)
// CHECK:         llvm.load
// CHECK:         llvm.intr.maximum({{.*}}) : (vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-LABEL: llvm.func @ampCpuParallelFor(!llvm.ptr, !llvm.ptr, i64)
// CHECK-NOT:     unrealized_conversion_cast
// CHECK-NOT:     memref.

func.func @relu(%x: tensor<512x256xf32>) -> tensor<512x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<512x256xf32>) outs(%e : tensor<512x256xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<512x256xf32>
  return %r : tensor<512x256xf32>
}

// -----

// A float reduction to one value (the loss) stays one sequential loop: no
// parallel dims.

// ONE-LABEL:   llvm.func @total(
// ONE-NOT:       ampCpuParallelFor
// CHECK-LABEL: llvm.func @total(
// CHECK-NOT:     ampCpuParallelFor
// CHECK:         llvm.fadd
// CHECK-NOT:     ampCpuParallelFor
// CHECK:         llvm.return

func.func @total(%x: tensor<65536xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%x : tensor<65536xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
