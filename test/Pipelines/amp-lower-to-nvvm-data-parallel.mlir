// REQUIRES: cuda-toolkit
// A data-parallel step (the MLP with a dynamic batch, one bucket of 212
// gradient elements) lowered for the GPU: f16 sums with dynamic scaling,
// bf16 sums, and f32 sums at level=O0.
// RUN: amp-opt %S/../Inputs/mlp-dynamic-batch.mlir --amp-pipeline="dtype=f16 data-parallel=mpi" --amp-lower-to-nvvm \
// RUN:   --mlir-print-ir-after=gpu-async-region -o %t.f16.mlir 2> %t.f16.host.mlir
// RUN: FileCheck %s --check-prefix=HOST < %t.f16.host.mlir
// RUN: FileCheck %s --check-prefixes=CHECK,SCALED -DTYPE=1 --implicit-check-not=mpi. --implicit-check-not=@MPI_ < %t.f16.mlir
// RUN: amp-opt %S/../Inputs/mlp-dynamic-batch.mlir --amp-pipeline="dtype=bf16 data-parallel=mpi" --amp-lower-to-nvvm \
// RUN:   | FileCheck %s -DTYPE=2 --implicit-check-not=mpi. --implicit-check-not=@MPI_
// RUN: amp-opt %S/../Inputs/mlp-dynamic-batch.mlir --amp-pipeline="level=O0 data-parallel=mpi" --amp-lower-to-nvvm \
// RUN:   | FileCheck %s -DTYPE=0 --implicit-check-not=mpi. --implicit-check-not=@MPI_

// On the step's one stream: the kernels that pack the bucket, its sum into a
// device buffer, the kernels that read the sum; the world size, a host value
// from the runtime, goes into the kernel of the unscale factor 1/(S * N)
// with the scale S; the receive buffer is freed on the stream.
// HOST-LABEL: func.func @train_step
// HOST-NOT: mpi.
// HOST: %[[STREAM:.*]] = gpu.wait async
// HOST: %[[PACK:.*]] = gpu.launch_func async {{.*}} args({{.*}}memref<4xf16, strided<[1], offset: 208>>)
// HOST-NEXT: %[[RECV:.*]], %[[ALLOC:.*]] = gpu.alloc async [%[[PACK]]] () : memref<212xf16>
// HOST-NEXT: %[[SUM:.*]] = amp_gpu.all_reduce_sum async [%[[ALLOC]]] %{{.*}}, %[[RECV]] : memref<212xf16>, memref<212xf16>
// HOST: memref.subview %[[RECV]][0] [128] [1]
// HOST: gpu.alloc async [%[[SUM]]]
// HOST: %[[N:.*]] = amp_gpu.world_size : i32
// HOST-NEXT: %[[NF:.*]] = arith.sitofp %[[N]] : i32 to f32
// HOST: gpu.launch_func async {{.*}} args({{.*}}%arg6 : memref<f32>, %[[NF]] : f32, {{.*}})
// HOST: gpu.dealloc async [%{{.*}}] %[[RECV]] : memref<212xf16>
// HOST-NOT: mpi.
// HOST: gpu.wait [

// After it: the runtime's sum of the 212 elements in the communication type
// (f32 0, f16 1, bf16 2) on the stream, and its world size into the kernel
// that computes the unscale factor (with the scale) or the 1/N factor.
// CHECK-DAG: llvm.func @ampRuntimeWorldSize() -> i32
// CHECK-DAG: llvm.func @ampAllReduceSum(!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr)
// CHECK-LABEL: llvm.func @train_step
// CHECK-DAG: %[[COUNT:.*]] = llvm.mlir.constant(212 : index) : i64
// CHECK-DAG: %[[CODE:.*]] = llvm.mlir.constant([[TYPE]] : i32) : i32
// CHECK: %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// CHECK: llvm.call @ampAllReduceSum(%{{.*}}, %{{.*}}, %[[COUNT]], %[[CODE]], %[[STREAM]]) : (!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr) -> ()
// CHECK-NOT: @ampAllReduceSum
// CHECK: %[[N:.*]] = llvm.call @ampRuntimeWorldSize() : () -> i32
// CHECK-NEXT: %[[NF:.*]] = llvm.sitofp %[[N]] : i32 to f32
// SCALED-NEXT: gpu.launch_func <%[[STREAM]] : !llvm.ptr> {{.*}} args({{.*}}, %[[NF]] : f32, {{.*}})
// CHECK: llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// CHECK: gpu.binary @train_step_kernel {{.*}}chip = "sm_90"
