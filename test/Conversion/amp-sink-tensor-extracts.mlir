// RUN: amp-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(amp-sink-tensor-extracts))" | FileCheck %s

// Adam's bias correction: a scalar computed on the host from a step counter
// tensor moves into the update kernel, which reads the counter itself.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @bias_correction
// CHECK-NOT: tensor.extract
// CHECK-NOT: math.powf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[ID]]], iterator_types = ["parallel"]} ins(%arg1, %arg0 : tensor<8xf32>, tensor<f32>)
// CHECK-NEXT: ^bb0(%[[M:.*]]: f32, %[[T:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[P:.*]] = math.powf %{{.*}}, %[[T]] : f32
// CHECK: %[[C:.*]] = arith.subf %{{.*}}, %[[P]] : f32
// CHECK: arith.divf %[[M]], %[[C]] : f32
func.func @bias_correction(%t: tensor<f32>, %m: tensor<8xf32>) -> tensor<8xf32> {
  %step = tensor.extract %t[] : tensor<f32>
  %one = arith.constant 1.0 : f32
  %beta = arith.constant 0.9 : f32
  %power = math.powf %beta, %step : f32
  %correction = arith.subf %one, %power : f32
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%m : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %d = arith.divf %v, %correction : f32
    linalg.yield %d : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// An element at constant indices of a ranked tensor, used by two kernels.
// CHECK-DAG: #[[ELEMENT:.*]] = affine_map<(d0, d1) -> (1, 0)>
// CHECK-LABEL: func.func @element
// CHECK-NOT: tensor.extract
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[ELEMENT]], #{{.*}}]{{.*}} ins(%arg1, %arg0 : tensor<4x4xf32>, tensor<2x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[ELEMENT]], #{{.*}}]{{.*}} ins(%arg1, %arg0 : tensor<4x4xf32>, tensor<2x3xf32>)
func.func @element(%s: tensor<2x3xf32>, %x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = tensor.extract %s[%c1, %c0] : tensor<2x3xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %v : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.addf %in, %v : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
}
