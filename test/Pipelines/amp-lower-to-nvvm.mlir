// REQUIRES: cuda-toolkit
// The MLP example after the AMP pipeline (f16, dynamic loss scaling),
// lowered for the GPU.
// RUN: amp-opt %amp_src_root/examples/mlp.mlir --amp-pipeline="dtype=f16" --amp-lower-to-nvvm \
// RUN:   --mlir-print-ir-after=gpu-async-region -o %t.mlir 2> %t.host.mlir
// RUN: FileCheck %s --implicit-check-not=@malloc --implicit-check-not=gpu.module < %t.mlir
// RUN: FileCheck %s --check-prefix=HOST < %t.host.mlir
// RUN: amp-opt %amp_src_root/examples/mlp.mlir --amp-pipeline="dtype=f16" --amp-lower-to-nvvm="chip=sm_80" \
// RUN:   | FileCheck %s --check-prefix=SM80

// Before the LLVM lowering, the host code of the step only allocates,
// copies and frees device memory and launches work on one stream: no host
// allocation, no host access to a buffer, no linalg op left on the host.
// HOST-LABEL: func.func @train_step
// HOST-SAME: %arg6: memref<f32>, %arg7: memref<i32>,
// HOST-SAME: %arg13: memref<f32>, %arg14: memref<i32>, %arg15: memref<i1>)
// HOST-NOT: memref.alloc
// HOST-NOT: memref.load
// HOST-NOT: memref.store
// HOST-NOT: memref.copy
// HOST-NOT: linalg.
// HOST: %[[STREAM:.*]] = gpu.wait async
// HOST: amp_gpu.matmul async
// The scaler update is a kernel: it reads found_inf, the scale and the
// growth tracker on the device and writes the new scaler state there.
// HOST: gpu.launch_func async {{.*}} args({{.*}}%arg15 : memref<i1>, %arg6 : memref<f32>, %arg7 : memref<i32>{{.*}}%arg13 : memref<f32>, %arg14 : memref<i32>)
// HOST-NOT: memref.alloc
// HOST-NOT: memref.load
// HOST-NOT: memref.store
// HOST-NOT: linalg.
// HOST: gpu.wait [
// HOST-NEXT: return

// After it: five f16 products with f32 results through the runtime (type
// codes 1, 1, 0), each with beta = 0 (its own zero fill folded, though the
// step shares one fill among them), no malloc, the kernels in sm_90 fatbins.
// CHECK-LABEL: llvm.func @train_step
// CHECK-DAG: %[[F32:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG: %[[F16:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-DAG: %[[RANK2:.*]] = llvm.mlir.constant(2 : i64) : i64
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK: %[[STREAM:.*]] = llvm.call @mgpuStreamCreate()
// CHECK-COUNT-5: llvm.call @ampMatmul(%[[RANK2]], %{{.*}}, %{{.*}}, %{{.*}}, %[[F16]], %[[F16]], %[[F32]], %[[ONE]], %[[ZERO]], %[[STREAM]], %{{.*}})
// CHECK-NOT: llvm.call @ampMatmul
// CHECK: llvm.call @mgpuStreamSynchronize(%[[STREAM]])
// CHECK-NEXT: llvm.call @mgpuStreamDestroy(%[[STREAM]])
// CHECK-NEXT: llvm.return
// CHECK: gpu.binary @train_step_kernel [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">
// CHECK-LABEL: llvm.func @predict

// SM80: gpu.binary @train_step_kernel [#gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx80">
