// RUN: amp-opt %s --split-input-file --amp-gpu-bufferize | FileCheck %s

// Temporaries are device allocations freed at the end of the step; results
// become out-parameters computed into directly; no host allocation remains.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: memref<64xf32>, %[[OUT:.*]]: memref<64xf32>, %[[SUM:.*]]: memref<f32>)
// CHECK-NOT: memref.alloc
// CHECK: %[[TMP:.*]] = gpu.alloc () : memref<64xf16>
// CHECK: linalg.generic {{.*}} ins(%[[X]] : memref<64xf32>) outs(%[[TMP]] : memref<64xf16>)
// CHECK: linalg.generic {{.*}} ins(%[[TMP]] : memref<64xf16>) outs(%[[OUT]] : memref<64xf32>)
// CHECK: linalg.fill {{.*}} outs(%[[SUM]] : memref<f32>)
// CHECK: gpu.dealloc %[[TMP]] : memref<64xf16>
// CHECK-NEXT: return
// CHECK-NOT: memref.alloc
#id = affine_map<(i) -> (i)>
#sum = affine_map<(i) -> ()>
func.func @step(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<f32>) {
  %e16 = tensor.empty() : tensor<64xf16>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e16 : tensor<64xf16>) {
  ^bb0(%v: f32, %o: f16):
    %t = arith.truncf %v : f32 to f16
    linalg.yield %t : f16
  } -> tensor<64xf16>
  %e32 = tensor.empty() : tensor<64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%h : tensor<64xf16>) outs(%e32 : tensor<64xf32>) {
  ^bb0(%v: f16, %o: f32):
    %t = arith.extf %v : f16 to f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["reduction"]}
      ins(%y : tensor<64xf32>) outs(%z : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %v, %acc : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %y, %s : tensor<64xf32>, tensor<f32>
}

// -----

// An argument returned as it is, and a tensor constant (a host global after
// bufferization), are copied on the device.
// CHECK-LABEL: func.func @copies
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[OUT0:.*]]: memref<4xf32>, %[[OUT1:.*]]: memref<i1>)
// CHECK: %[[GLOBAL:.*]] = memref.get_global
// CHECK: %[[DEV:.*]] = gpu.alloc () : memref<i1>
// CHECK: gpu.memcpy %[[DEV]], %[[GLOBAL]] : memref<i1>, memref<i1>
// CHECK: gpu.memcpy %[[OUT0]], %[[A]] : memref<4xf32>, memref<4xf32>
// CHECK: gpu.memcpy %[[OUT1]], %[[DEV]] : memref<i1>, memref<i1>
// CHECK: gpu.dealloc %[[DEV]] : memref<i1>
// CHECK-NEXT: return
func.func @copies(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<i1>) {
  %c = arith.constant dense<false> : tensor<i1>
  return %a, %c : tensor<4xf32>, tensor<i1>
}

// -----

// One zero fill that two reductions accumulate into: each gets its own
// fill, right before it (into its out-parameter), and nothing is copied.
// CHECK-LABEL: func.func @shared_fill
// CHECK-SAME: %[[OUT0:[^:]*]]: memref<8xf32>, %[[OUT1:[^:]*]]: memref<8xf32>)
// CHECK-NOT: gpu.memcpy
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT0]] : memref<8xf32>)
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[OUT0]] : memref<8xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT1]] : memref<8xf32>)
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[OUT1]] : memref<8xf32>)
// CHECK-NOT: gpu.memcpy
func.func @shared_fill(%x: tensor<16x8xf32>, %y: tensor<16x8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sx = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %sy = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
      ins(%y : tensor<16x8xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %sx, %sy : tensor<8xf32>, tensor<8xf32>
}

// -----

// A writer inside a loop keeps the shared fill, copied into its buffer on
// each iteration as before (cloned, it would be filled there as often); the
// writer beside the fill gets its own, into its out-parameter.
// CHECK-LABEL: func.func @fill_and_loop
// CHECK-SAME: (%[[X:.*]]: memref<16x8xf32>, %{{.*}}: index, %[[OUT0:.*]]: memref<8xf32>, %{{.*}}: memref<8xf32>)
// CHECK: %[[SHARED:.*]] = gpu.alloc () : memref<8xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[SHARED]] : memref<8xf32>)
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT0]] : memref<8xf32>)
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[OUT0]] : memref<8xf32>)
// CHECK: scf.for
// CHECK-NOT: linalg.fill
// CHECK: gpu.memcpy %{{.*}}, %[[SHARED]]
// CHECK: scf.yield
func.func @fill_and_loop(%x: tensor<16x8xf32>, %n: index) -> (tensor<8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %sx = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %total = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%sum = %total) -> tensor<8xf32> {
    %sy = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]}
        ins(%x : tensor<16x8xf32>) outs(%z : tensor<8xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    %next = linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> (j)>], iterator_types = ["parallel"]}
        ins(%sy : tensor<8xf32>) outs(%sum : tensor<8xf32>) {
    ^bb0(%v: f32, %acc: f32):
      %s = arith.addf %v, %acc : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    scf.yield %next : tensor<8xf32>
  }
  return %sx, %last : tensor<8xf32>, tensor<8xf32>
}
