// RUN: amp-opt %s --split-input-file --amp-lower-to-llvm="library=false" -o %t.default
// RUN: amp-opt %s --split-input-file --amp-lower-to-llvm="library=false threads=1" -o %t.one
// RUN: cmp %t.default %t.one
// RUN: FileCheck %s --check-prefix=ONE < %t.one
// RUN: amp-opt %s --split-input-file --amp-lower-to-llvm="library=false threads=2" | FileCheck %s

// threads=1 (the default) is the sequential lowering, unchanged. With
// threads=2 the elementwise op's tiles (512 rows of 16 vectors) are split
// into two blocks of rows: a function of the rows, called by the step for one
// block and by a coroutine that libmlir_async_runtime.so runs for the other,
// which the step waits for; all in the LLVM dialect.

// ONE-LABEL:   llvm.func @relu(
// ONE-NOT:       mlirAsync
// ONE:           llvm.intr.maximum({{.*}}) : (vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// ONE-NOT:       mlirAsync
// ONE-NOT:       relu_parallel
// CHECK-LABEL: llvm.func @relu(
// CHECK:         llvm.call @mlirAsyncRuntimeCreateGroup(
// CHECK:         llvm.call @async_execute_fn(
// CHECK:         llvm.call @mlirAsyncRuntimeAddTokenToGroup(
// CHECK:         llvm.call @relu_parallel(
// CHECK:         llvm.call @mlirAsyncRuntimeAwaitAllInGroup(
// CHECK-LABEL: llvm.func @relu_parallel(
// CHECK:         llvm.intr.maximum({{.*}}) : (vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK-LABEL: llvm.func @async_execute_fn(
// CHECK:         llvm.call @mlirAsyncRuntimeExecute(
// CHECK:         llvm.call @relu_parallel(
// CHECK-NOT:     async.
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
// ONE-NOT:       mlirAsync
// CHECK-LABEL: llvm.func @total(
// CHECK-NOT:     mlirAsync
// CHECK:         llvm.fadd
// CHECK-NOT:     mlirAsync
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
