// REQUIRES: cuda-toolkit
// RUN: amp-compile %amp_src_root/examples/mlp.mlir --amp "dtype=f16" --emit=llvm -o - | FileCheck %s
// RUN: amp-compile %amp_src_root/examples/mlp.mlir --emit=llvm --symbol=mlp_fp32 -o - | FileCheck %s --check-prefix=FP32
// RUN: amp-compile %amp_src_root/examples/mlp.mlir --amp "dtype=bf16" -o %t.o
// RUN: llvm-nm %t.o | FileCheck %s --check-prefix=OBJECT

// The AmpStepBuffer table of the MLP step after the AMP pipeline (f16,
// dynamic scaling), in the codes of runtime/include/amp/Runtime/AmpStepABI.h.
// Each entry is {name, shape, initValue, role, elementType, rank, feeds,
// initKind}: parameters (role 0) of f32 (0), glorot (3) weights and zero (1)
// biases; two data batches (2) without init (0); the scaler state (3) at its
// initial values (constant, 5), the growth tracker an i32 (3); then the
// results: the loss (4), the new parameters and scaler state (5) with the
// argument each feeds, found_inf (6) an i1 (4).
// CHECK-DAG: @amp_compiled_step_name0 = internal constant [5 x i8] c"arg0\00"
// CHECK-DAG: @amp_compiled_step_shape0 = internal constant [2 x i64] [i64 64, i64 128]
// CHECK-DAG: @amp_compiled_step_shape4 = internal constant [2 x i64] [i64 64, i64 64]
// CHECK-DAG: @amp_compiled_step_name6 = internal constant [6 x i8] c"scale\00"
// CHECK-DAG: @amp_compiled_step_name7 = internal constant [15 x i8] c"growth_tracker\00"
// CHECK-DAG: @amp_compiled_step_name8 = internal constant [5 x i8] c"loss\00"
// CHECK-DAG: @amp_compiled_step_name9 = internal constant [8 x i8] c"result1\00"
// CHECK-DAG: @amp_compiled_step_name15 = internal constant [10 x i8] c"found_inf\00"
// CHECK: @amp_compiled_step_buffers = internal constant [16 x { ptr, ptr, double, i32, i32, i32, i32, i32 }]
// CHECK-SAME: { ptr @amp_compiled_step_name0, ptr @amp_compiled_step_shape0, double 0.000000e+00, i32 0, i32 0, i32 2, i32 -1, i32 3 }
// CHECK-SAME: { ptr @amp_compiled_step_name1, ptr @amp_compiled_step_shape1, double 0.000000e+00, i32 0, i32 0, i32 1, i32 -1, i32 1 }
// CHECK-SAME: { ptr @amp_compiled_step_name2, ptr @amp_compiled_step_shape2, double 0.000000e+00, i32 0, i32 0, i32 2, i32 -1, i32 3 }
// CHECK-SAME: { ptr @amp_compiled_step_name3, ptr @amp_compiled_step_shape3, double 0.000000e+00, i32 0, i32 0, i32 1, i32 -1, i32 1 }
// CHECK-SAME: { ptr @amp_compiled_step_name4, ptr @amp_compiled_step_shape4, double 0.000000e+00, i32 2, i32 0, i32 2, i32 -1, i32 0 }
// CHECK-SAME: { ptr @amp_compiled_step_name5, ptr @amp_compiled_step_shape5, double 0.000000e+00, i32 2, i32 0, i32 2, i32 -1, i32 0 }
// CHECK-SAME: { ptr @amp_compiled_step_name6, ptr null, double 6.553600e+04, i32 3, i32 0, i32 0, i32 -1, i32 5 }
// CHECK-SAME: { ptr @amp_compiled_step_name7, ptr null, double 0.000000e+00, i32 3, i32 3, i32 0, i32 -1, i32 5 }
// CHECK-SAME: { ptr @amp_compiled_step_name8, ptr null, double 0.000000e+00, i32 4, i32 0, i32 0, i32 -1, i32 0 }
// CHECK-SAME: { ptr @amp_compiled_step_name9, ptr @amp_compiled_step_shape9, double 0.000000e+00, i32 5, i32 0, i32 2, i32 0, i32 0 }
// CHECK-SAME: { ptr @amp_compiled_step_name10, ptr @amp_compiled_step_shape10, double 0.000000e+00, i32 5, i32 0, i32 1, i32 1, i32 0 }
// CHECK-SAME: { ptr @amp_compiled_step_name11, ptr @amp_compiled_step_shape11, double 0.000000e+00, i32 5, i32 0, i32 2, i32 2, i32 0 }
// CHECK-SAME: { ptr @amp_compiled_step_name12, ptr @amp_compiled_step_shape12, double 0.000000e+00, i32 5, i32 0, i32 1, i32 3, i32 0 }
// CHECK-SAME: { ptr @amp_compiled_step_name13, ptr null, double 0.000000e+00, i32 5, i32 0, i32 0, i32 6, i32 0 }
// CHECK-SAME: { ptr @amp_compiled_step_name14, ptr null, double 0.000000e+00, i32 5, i32 3, i32 0, i32 7, i32 0 }
// CHECK-SAME: { ptr @amp_compiled_step_name15, ptr null, double 0.000000e+00, i32 6, i32 4, i32 0, i32 -1, i32 0 }]
// The step: ABI version 2, 16 buffers, the table, the entry point.
// CHECK: @amp_compiled_step = constant { i32, i32, ptr, ptr } { i32 2, i32 16, ptr @amp_compiled_step_buffers, ptr @amp_compiled_step_invoke }
// The entry point passes one descriptor per buffer to the step's C interface.
// CHECK: define void @amp_compiled_step_invoke(ptr %0)
// CHECK-COUNT-16: load ptr, ptr
// CHECK: call void @_mlir_ciface_train_step(ptr %{{.*}}
// Only the step is compiled, not @predict.
// CHECK-NOT: define {{.*}}@predict

// Without --amp the step runs in fp32 as written: no scaler state, and the
// results follow the data directly.
// FP32: @mlp_fp32_buffers = internal constant [11 x
// FP32-SAME: { ptr @mlp_fp32_name5, ptr @mlp_fp32_shape5, double 0.000000e+00, i32 2, i32 0, i32 2, i32 -1, i32 0 }
// FP32-SAME: { ptr @mlp_fp32_name6, ptr null, double 0.000000e+00, i32 4, i32 0, i32 0, i32 -1, i32 0 }
// FP32-SAME: { ptr @mlp_fp32_name10, ptr @mlp_fp32_shape10, double 0.000000e+00, i32 5, i32 0, i32 1, i32 3, i32 0 }]
// FP32: @mlp_fp32 = constant { i32, i32, ptr, ptr } { i32 2, i32 11, ptr @mlp_fp32_buffers, ptr @mlp_fp32_invoke }

// OBJECT: U ampMatmul
// OBJECT: D amp_compiled_step
// OBJECT: T amp_compiled_step_invoke
// OBJECT: U mgpuLaunchKernel
// OBJECT: U mgpuModuleLoad
