// REQUIRES: cuda-toolkit
// RUN: amp-compile %s --amp "dtype=f16" --emit=llvm -o - | FileCheck %s
// RUN: amp-compile %amp_src_root/test/Inputs/mlp-dynamic-batch.mlir --amp "dtype=bf16" --emit=llvm -o - | FileCheck %s --check-prefix=MLP
// RUN: amp-compile %amp_src_root/test/Inputs/mlp-dynamic-batch.mlir --amp "dtype=f16" -o %t.o
// RUN: llvm-nm %t.o | FileCheck %s --check-prefix=OBJECT

// A step whose data batch is dynamic: its data argument and its per-sample
// output have AMP_STEP_DYNAMIC_DIM (-1) as dimension 0; the parameter, the
// loss, the new state and the scaler state stay static. Entries are {name, shape, initValue,
// role, elementType, rank, feeds, initKind} (AmpStepABI.h).
// CHECK-DAG: @amp_compiled_step_name0 = internal constant [2 x i8] c"w\00"
// CHECK-DAG: @amp_compiled_step_shape0 = internal constant [1 x i64] [i64 4]
// CHECK-DAG: @amp_compiled_step_name1 = internal constant [2 x i8] c"x\00"
// CHECK-DAG: @amp_compiled_step_shape1 = internal constant [2 x i64] [i64 -1, i64 4]
// CHECK-DAG: @amp_compiled_step_shape6 = internal constant [2 x i64] [i64 -1, i64 4]
// CHECK: @amp_compiled_step_buffers = internal constant [10 x
// CHECK-SAME: { ptr @amp_compiled_step_name0, ptr @amp_compiled_step_shape0, double 0.000000e+00, i32 0, i32 0, i32 1, i32 -1, i32 1 }
// CHECK-SAME: { ptr @amp_compiled_step_name1, ptr @amp_compiled_step_shape1, double 0.000000e+00, i32 2, i32 0, i32 2, i32 -1, i32 0 }
// CHECK-SAME: { ptr @amp_compiled_step_name4, ptr null, double 0.000000e+00, i32 4, i32 0, i32 0, i32 -1, i32 0 }
// CHECK-SAME: { ptr @amp_compiled_step_name5, ptr @amp_compiled_step_shape5, double 0.000000e+00, i32 5, i32 0, i32 1, i32 0, i32 0 }
// CHECK-SAME: { ptr @amp_compiled_step_name6, ptr @amp_compiled_step_shape6, double 0.000000e+00, i32 7, i32 0, i32 2, i32 -1, i32 0 }
// CHECK: @amp_compiled_step = constant { i32, i32, ptr, ptr } { i32 2, i32 10, ptr @amp_compiled_step_buffers, ptr @amp_compiled_step_invoke }
// The descriptors' sizes, not the IR, give the batch: nothing is left of
// the amp.* attributes.
// CHECK-NOT: amp.name
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#all = affine_map<(i, j) -> ()>
func.func @train_step(%w: tensor<4xf32> {amp.name = "w"},
                      %x: tensor<?x4xf32> {amp.name = "x"})
    -> (tensor<f32>, tensor<4xf32> {amp.name = "w"}, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %y = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : tensor<?x4xf32>, tensor<4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<?x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id2, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<?x4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %seed = amp.seed %loss : tensor<f32>
  %new = amp.update grads(%w : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %loss, %new, %y : tensor<f32>, tensor<4xf32>, tensor<?x4xf32>
}

// The MLP of test/Inputs/mlp-dynamic-batch.mlir: named parameters, two
// dynamic data batches.
// MLP-DAG: @amp_compiled_step_name0 = internal constant [11 x i8] c"fc1.weight\00"
// MLP-DAG: @amp_compiled_step_shape4 = internal constant [2 x i64] [i64 -1, i64 8]
// MLP-DAG: @amp_compiled_step_shape5 = internal constant [2 x i64] [i64 -1, i64 4]
// MLP: @amp_compiled_step_buffers = internal constant [11 x
// MLP-SAME: { ptr @amp_compiled_step_name4, ptr @amp_compiled_step_shape4, double 0.000000e+00, i32 2, i32 0, i32 2, i32 -1, i32 0 }
// MLP-SAME: { ptr @amp_compiled_step_name5, ptr @amp_compiled_step_shape5, double 0.000000e+00, i32 2, i32 0, i32 2, i32 -1, i32 0 }

// OBJECT: D amp_compiled_step
// OBJECT: T amp_compiled_step_invoke
