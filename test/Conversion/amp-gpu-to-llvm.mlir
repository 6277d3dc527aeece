// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(gpu-async-region),gpu-to-llvm)" | FileCheck %s

// gpu-async-region puts the matmul on the step's stream; gpu-to-llvm lowers
// it (through the dialect's ConvertToLLVMPatternInterface) to ampMatmul on
// that stream, with descriptors passed by pointer and the runtime's type
// codes (f16 = 1, bf16 = 2, f32 = 0).
// CHECK-LABEL: llvm.func @f16_f32
// CHECK: %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// CHECK: %[[RANK:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK: %[[A:.*]] = llvm.alloca {{.*}} x !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK: %[[B:.*]] = llvm.alloca
// CHECK: %[[C:.*]] = llvm.alloca
// CHECK: %[[F16:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: %[[F16B:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: %[[F32:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[ALPHA:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK: %[[BETA:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK: %[[SITE:.*]] = llvm.mlir.constant(7 : i64) : i64
// CHECK: llvm.call @ampMatmul(%[[RANK]], %[[A]], %[[B]], %[[C]], %[[F16]], %[[F16B]], %[[F32]], %[[ALPHA]], %[[BETA]], %[[STREAM]], %[[SITE]]) : (i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, f32, f32, !llvm.ptr, i64) -> ()
// CHECK: llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// CHECK: llvm.call @mgpuStreamDestroy(%[[STREAM]])
// CHECK: llvm.func @ampMatmul(i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, f32, f32, !llvm.ptr, i64)
func.func @f16_f32(%a: memref<8x4xf16>, %b: memref<4x2xf16>, %c: memref<8x2xf32>) {
  amp_gpu.matmul %a, %b, %c {alpha = 1.0 : f32, beta = 0.0 : f32, call_site = 7 : i64}
      : memref<8x4xf16>, memref<4x2xf16>, memref<8x2xf32>
  return
}

// -----

// Batched bf16 with a transposed B view: rank 3, bf16 = 2 everywhere.
// CHECK-LABEL: llvm.func @batched_bf16
// CHECK: %[[RANK:.*]] = llvm.mlir.constant(3 : i64) : i64
// CHECK: %[[BF16:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: llvm.call @ampMatmul(%[[RANK]], %{{.*}}, %{{.*}}, %{{.*}}, %[[BF16]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
func.func @batched_bf16(%a: memref<3x8x4xbf16>, %b: memref<3x2x4xbf16>, %c: memref<3x8x2xbf16>) {
  %bt = memref.transpose %b (d0, d1, d2) -> (d0, d2, d1) : memref<3x2x4xbf16> to memref<3x4x2xbf16, strided<[8, 1, 4]>>
  amp_gpu.matmul %a, %bt, %c {alpha = 1.0 : f32, beta = 1.0 : f32, call_site = 0 : i64}
      : memref<3x8x4xbf16>, memref<3x4x2xbf16, strided<[8, 1, 4]>>, memref<3x8x2xbf16>
  return
}

// -----

// A sum of a data-parallel step: ampAllReduceSum on the step's stream with
// the buffers' first elements (offset included), the count from the
// descriptor and the type code (f16 = 1); the world size from the runtime.
// Both are declared once, at the top of the module.
// CHECK: llvm.func @ampRuntimeWorldSize() -> i32
// CHECK: llvm.func @ampAllReduceSum(!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr)
// CHECK-LABEL: llvm.func @sum_f16
// CHECK: %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// CHECK: %[[COUNT:.*]] = llvm.extractvalue %[[SENDD:.*]][3, 0]
// CHECK: %[[SEND:.*]] = llvm.extractvalue %[[SENDD]][1]
// CHECK: %[[RECVBASE:.*]] = llvm.extractvalue %{{.*}}[1]
// CHECK: %[[OFFSET:.*]] = llvm.mlir.constant(16 : index) : i64
// CHECK: %[[RECV:.*]] = llvm.getelementptr %[[RECVBASE]][%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, f16
// CHECK: %[[F16:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.call @ampAllReduceSum(%[[SEND]], %[[RECV]], %[[COUNT]], %[[F16]], %[[STREAM]]) : (!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr) -> ()
// CHECK: %[[N:.*]] = llvm.call @ampRuntimeWorldSize() : () -> i32
// CHECK: llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// CHECK: llvm.return %[[N]] : i32
func.func @sum_f16(%send: memref<212xf16>, %recv: memref<212xf16, strided<[1], offset: 16>>) -> i32 {
  amp_gpu.all_reduce_sum %send, %recv : memref<212xf16>, memref<212xf16, strided<[1], offset: 16>>
  %n = amp_gpu.world_size : i32
  return %n : i32
}

// -----

// Dynamic sizes are read from the descriptor; bf16 = 2, f32 = 0.
// CHECK-LABEL: llvm.func @sums_dynamic
// CHECK: %[[COUNT:.*]] = llvm.extractvalue %{{.*}}[3, 0] : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[BF16:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: llvm.call @ampAllReduceSum(%{{.*}}, %{{.*}}, %[[COUNT]], %[[BF16]], %{{.*}})
// CHECK: %[[F32:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: llvm.call @ampAllReduceSum(%{{.*}}, %{{.*}}, %{{.*}}, %[[F32]], %{{.*}})
func.func @sums_dynamic(%a: memref<?xbf16>, %b: memref<?xbf16>, %c: memref<6xf32>, %d: memref<6xf32>) {
  amp_gpu.all_reduce_sum %a, %b : memref<?xbf16>, memref<?xbf16>
  amp_gpu.all_reduce_sum %c, %d : memref<6xf32>, memref<6xf32>
  return
}
