// RUN: amp-opt %s --split-input-file --amp-import-step | FileCheck %s

// An imported SGD step with momentum: the seed argument becomes amp.seed of
// the loss, the optimizer (the ops from the gradient, the state and the
// learning rate to the new state) moves into amp.update with the rate as an
// input, the gradient result leaves the signature, and the buffer stays.
// CHECK-LABEL: func.func @sgd(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4xf32> {amp.name = "w"}, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4xf32> {amp.init = "zeros", amp.name = "mean"}, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4xf32> {amp.name = "w.momentum_buffer"}, %[[ARG3:[A-Za-z0-9_]+]]: tensor<f32> {amp.name = "lr", amp.value = 1.000000e-01 : f32}, %[[ARG4:[A-Za-z0-9_]+]]: tensor<4xf32> {amp.name = "input0"}) -> (tensor<f32> {amp.name = "loss"}, tensor<4xf32> {amp.name = "w"}, tensor<4xf32> {amp.name = "w.momentum_buffer"}, tensor<4xf32> {amp.name = "mean"}) {
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.mulf %[[ARG0]], %[[ARG4]] : tensor<4xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = tensor.empty() : tensor<f32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V1]] : tensor<f32>) -> tensor<f32>
// CHECK-NEXT: %[[REDUCED:[A-Za-z0-9_]+]] = linalg.reduce ins(%[[V0]] : tensor<4xf32>) outs(%[[V2]] : tensor<f32>) dimensions = [0]
// CHECK-NEXT: (%[[IN:[A-Za-z0-9_]+]]: f32, %[[INIT:[A-Za-z0-9_]+]]: f32) {
// CHECK-NEXT: %[[V8:[A-Za-z0-9_]+]] = arith.addf %[[IN]], %[[INIT]] : f32
// CHECK-NEXT: linalg.yield %[[V8]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = amp.seed %[[REDUCED]] : tensor<f32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = arith.addf %[[ARG1]], %[[ARG4]] : tensor<4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[BROADCASTED:[A-Za-z0-9_]+]] = linalg.broadcast ins(%[[V3]] : tensor<f32>) outs(%[[V5]] : tensor<4xf32>) dimensions = [0]
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = arith.mulf %[[BROADCASTED]], %[[ARG4]] : tensor<4xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]]:2 = amp.update grads(%[[V6]] : tensor<4xf32>) state(%[[ARG0]], %[[ARG2]] : tensor<4xf32>, tensor<4xf32>) inputs(%[[ARG3]] : tensor<f32>) {
// CHECK-NEXT: ^bb0(%[[ARG5:[A-Za-z0-9_]+]]: tensor<4xf32>, %[[ARG6:[A-Za-z0-9_]+]]: tensor<4xf32>, %[[ARG7:[A-Za-z0-9_]+]]: tensor<4xf32>, %[[ARG8:[A-Za-z0-9_]+]]: tensor<f32>):
// CHECK-NEXT: %[[V8]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[CST_0:[A-Za-z0-9_]+]] = arith.constant dense<0.899999976> : tensor<4xf32>
// CHECK-NEXT: %[[V9:[A-Za-z0-9_]+]] = arith.mulf %[[CST_0]], %[[ARG7]] : tensor<4xf32>
// CHECK-NEXT: %[[V10:[A-Za-z0-9_]+]] = arith.addf %[[V9]], %[[ARG5]] : tensor<4xf32>
// CHECK-NEXT: %[[BROADCASTED_1:[A-Za-z0-9_]+]] = linalg.broadcast ins(%[[ARG8]] : tensor<f32>) outs(%[[V8]] : tensor<4xf32>) dimensions = [0]
// CHECK-NEXT: %[[V11:[A-Za-z0-9_]+]] = arith.mulf %[[BROADCASTED_1]], %[[V10]] : tensor<4xf32>
// CHECK-NEXT: %[[V12:[A-Za-z0-9_]+]] = arith.subf %[[ARG6]], %[[V11]] : tensor<4xf32>
// CHECK-NEXT: amp.yield %[[V12]], %[[V10]] : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: } : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: return %[[REDUCED]], %[[V7]]#0, %[[V7]]#1, %[[V4]] : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: }
func.func @sgd(%w: tensor<4xf32> {amp.import_role = "parameter", amp.name = "w"},
               %mean: tensor<4xf32> {amp.import_role = "buffer", amp.name = "mean", amp.init = "zeros"},
               %m: tensor<4xf32> {amp.import_role = "optimizer_state", amp.name = "w.momentum_buffer"},
               %lr: tensor<f32> {amp.import_role = "hyperparameter", amp.name = "lr", amp.value = 1.0e-01 : f32},
               %x: tensor<4xf32> {amp.import_role = "data", amp.name = "input0"},
               %seed: tensor<f32> {amp.import_role = "seed", amp.name = "seed"})
    -> (tensor<f32> {amp.import_role = "loss", amp.name = "loss"},
        tensor<4xf32> {amp.import_role = "gradient", amp.name = "w"},
        tensor<4xf32> {amp.import_role = "parameter", amp.name = "w"},
        tensor<4xf32> {amp.import_role = "optimizer_state", amp.name = "w.momentum_buffer"},
        tensor<4xf32> {amp.import_role = "buffer", amp.name = "mean"}) {
  %zero = arith.constant 0.0 : f32
  %y = arith.mulf %w, %x : tensor<4xf32>
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<4xf32>) outs(%z : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %new_mean = arith.addf %mean, %x : tensor<4xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %seed4 = linalg.broadcast ins(%seed : tensor<f32>) outs(%e4 : tensor<4xf32>) dimensions = [0]
  %grad = arith.mulf %seed4, %x : tensor<4xf32>
  %mu = arith.constant dense<0.9> : tensor<4xf32>
  %m1 = arith.mulf %mu, %m : tensor<4xf32>
  %m2 = arith.addf %m1, %grad : tensor<4xf32>
  %lr4 = linalg.broadcast ins(%lr : tensor<f32>) outs(%e4 : tensor<4xf32>) dimensions = [0]
  %step = arith.mulf %lr4, %m2 : tensor<4xf32>
  %w1 = arith.subf %w, %step : tensor<4xf32>
  return %loss, %grad, %w1, %m2, %new_mean : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// An optimizer state the update leaves as it is (a frozen counter) is
// yielded as its block argument; functions without import roles stay.
// CHECK-LABEL: func.func @untouched_state(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<2xf32> {amp.name = "w"}, %[[ARG1:[A-Za-z0-9_]+]]: tensor<f32> {amp.name = "t"}) -> (tensor<f32>, tensor<2xf32> {amp.name = "w"}, tensor<f32> {amp.name = "t"}) {
// CHECK-NEXT: %[[EXTRACTED_SLICE:[A-Za-z0-9_]+]] = tensor.extract_slice %[[ARG0]][0] [1] [1] : tensor<2xf32> to tensor<1xf32>
// CHECK-NEXT: %[[COLLAPSED:[A-Za-z0-9_]+]] = tensor.collapse_shape %[[EXTRACTED_SLICE]] [] : tensor<1xf32> into tensor<f32>
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = amp.seed %[[COLLAPSED]] : tensor<f32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = tensor.empty() : tensor<2xf32>
// CHECK-NEXT: %[[BROADCASTED:[A-Za-z0-9_]+]] = linalg.broadcast ins(%[[V0]] : tensor<f32>) outs(%[[V1]] : tensor<2xf32>) dimensions = [0]
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]]:2 = amp.update grads(%[[BROADCASTED]] : tensor<2xf32>) state(%[[ARG0]], %[[ARG1]] : tensor<2xf32>, tensor<f32>) {
// CHECK-NEXT: ^bb0(%[[ARG2:[A-Za-z0-9_]+]]: tensor<2xf32>, %[[ARG3:[A-Za-z0-9_]+]]: tensor<2xf32>, %[[ARG4:[A-Za-z0-9_]+]]: tensor<f32>):
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.subf %[[ARG3]], %[[ARG2]] : tensor<2xf32>
// CHECK-NEXT: amp.yield %[[V3]], %[[ARG4]] : tensor<2xf32>, tensor<f32>
// CHECK-NEXT: } : tensor<2xf32>, tensor<f32>
// CHECK-NEXT: return %[[COLLAPSED]], %[[V2]]#0, %[[V2]]#1 : tensor<f32>, tensor<2xf32>, tensor<f32>
// CHECK-NEXT: }
// CHECK-LABEL: func.func @plain(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<2xf32>) -> tensor<2xf32> {
// CHECK-NEXT: return %[[ARG0]] : tensor<2xf32>
// CHECK-NEXT: }
func.func @untouched_state(%w: tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"},
                           %t: tensor<f32> {amp.import_role = "optimizer_state", amp.name = "t"},
                           %seed: tensor<f32> {amp.import_role = "seed", amp.name = "seed"})
    -> (tensor<f32> {amp.import_role = "loss"},
        tensor<2xf32> {amp.import_role = "gradient", amp.name = "w"},
        tensor<2xf32> {amp.import_role = "parameter", amp.name = "w"},
        tensor<f32> {amp.import_role = "optimizer_state", amp.name = "t"}) {
  %first = tensor.extract_slice %w[0] [1] [1] : tensor<2xf32> to tensor<1xf32>
  %loss = tensor.collapse_shape %first [] : tensor<1xf32> into tensor<f32>
  %e = tensor.empty() : tensor<2xf32>
  %g = linalg.broadcast ins(%seed : tensor<f32>) outs(%e : tensor<2xf32>) dimensions = [0]
  %w1 = arith.subf %w, %g : tensor<2xf32>
  return %loss, %g, %w1, %t : tensor<f32>, tensor<2xf32>, tensor<2xf32>, tensor<f32>
}

func.func @plain(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
