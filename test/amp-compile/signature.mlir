// REQUIRES: cuda-toolkit
// RUN: amp-compile %amp_src_root/examples/mlp.mlir --amp "dtype=f16" --emit=llvm -o - | FileCheck %s
// RUN: amp-compile %amp_src_root/examples/mlp.mlir --emit=llvm --symbol=mlp_fp32 -o - | FileCheck %s --check-prefix=FP32
// RUN: amp-compile %amp_src_root/examples/mlp.mlir --amp "dtype=bf16" -o %t.o
// RUN: llvm-nm %t.o | FileCheck %s --check-prefix=OBJECT

// The buffers of the MLP step after the AMP pipeline (f16, dynamic
// scaling): parameters (glorot weights, zero biases), two data batches, the
// scaler state at its initial values, then the results: the loss, the new
// parameters and scaler state with the argument each feeds, found_inf.
// CHECK: @amp_compiled_step_signature = internal constant {{.*}} c"arg param arg0 f32 64,128 init=glorot\0Aarg param arg1 f32 128 init=zeros\0Aarg param arg2 f32 128,10 init=glorot\0Aarg param arg3 f32 10 init=zeros\0Aarg data arg4 f32 64,64\0Aarg data arg5 f32 64,10\0Aarg scaler scale f32 scalar init=6.553600e+04\0Aarg scaler growth_tracker i32 scalar init=0.000000e+00\0Aresult loss loss f32 scalar\0Aresult state result1 f32 64,128 feeds=0\0Aresult state result2 f32 128 feeds=1\0Aresult state result3 f32 128,10 feeds=2\0Aresult state result4 f32 10 feeds=3\0Aresult state result5 f32 scalar feeds=6\0Aresult state result6 i32 scalar feeds=7\0Aresult found_inf found_inf i1 scalar\0A\00"
// CHECK: @amp_compiled_step = constant { i32, ptr, ptr } { i32 1, ptr @amp_compiled_step_signature, ptr @amp_compiled_step_invoke }
// The entry point passes one descriptor per buffer to the step's C interface.
// CHECK: define void @amp_compiled_step_invoke(ptr %0)
// CHECK-COUNT-16: load ptr, ptr
// CHECK: call void @_mlir_ciface_train_step(ptr %{{.*}}
// Only the step is compiled, not @predict.
// CHECK-NOT: define {{.*}}@predict

// Without --amp the step runs in fp32 as written: no scaler state.
// FP32: @mlp_fp32_signature = internal constant {{.*}} c"arg param arg0 f32 64,128 init=glorot\0Aarg param arg1 f32 128 init=zeros\0Aarg param arg2 f32 128,10 init=glorot\0Aarg param arg3 f32 10 init=zeros\0Aarg data arg4 f32 64,64\0Aarg data arg5 f32 64,10\0Aresult loss loss f32 scalar\0Aresult state result1 f32 64,128 feeds=0\0Aresult state result2 f32 128 feeds=1\0Aresult state result3 f32 128,10 feeds=2\0Aresult state result4 f32 10 feeds=3\0A\00"
// FP32: @mlp_fp32 = constant { i32, ptr, ptr }

// OBJECT: U ampMatmul
// OBJECT: D amp_compiled_step
// OBJECT: T amp_compiled_step_invoke
// OBJECT: U mgpuLaunchKernel
// OBJECT: U mgpuModuleLoad
