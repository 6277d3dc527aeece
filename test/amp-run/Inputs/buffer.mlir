// Linear regression (as linear.mlir, plain SGD with lr 0.1) with a buffer
// the forward updates, as BatchNorm does its running statistics: the running
// mean of the input columns, 0.9 * mean + 0.1 * batch mean. The result named
// like the argument is its next value; it is computed outside the update, so
// the argument is a buffer, never guarded. Arguments carry amp.names.

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#all = affine_map<(i, j) -> ()>
#xt = affine_map<(i, j, k) -> (k, i)>
#dp = affine_map<(i, j, k) -> (k, j)>
#gw = affine_map<(i, j, k) -> (i, j)>
#id1 = affine_map<(i) -> (i)>

func.func @step(%w: tensor<3x1xf32> {amp.name = "fc.weight"},
                %b: tensor<1xf32> {amp.name = "fc.bias"},
                %mean: tensor<3xf32> {amp.name = "norm.running_mean"},
                %x: tensor<4x3xf32> {amp.name = "x"},
                %y: tensor<4x1xf32> {amp.name = "y"})
    -> (tensor<f32> {amp.name = "loss"}, tensor<3x1xf32> {amp.name = "fc.weight"},
        tensor<1xf32> {amp.name = "fc.bias"},
        tensor<3xf32> {amp.name = "norm.running_mean"}) {
  %zero = arith.constant 0.0 : f32
  // The buffer: 0.9 * mean + 0.1 * (sum of the batch rows) / 4.
  %e3 = tensor.empty() : tensor<3xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %colsum = linalg.generic {indexing_maps = [#id, #col],
                            iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<4x3xf32>) outs(%z3 : tensor<3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %o, %v : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  %new_mean = linalg.generic {indexing_maps = [#id1, #id1, #id1],
                              iterator_types = ["parallel"]}
      ins(%mean, %colsum : tensor<3xf32>, tensor<3xf32>) outs(%e3 : tensor<3xf32>) {
  ^bb0(%m: f32, %s: f32, %o: f32):
    %keep = arith.constant 0.9 : f32
    %take = arith.constant 0.025 : f32
    %a = arith.mulf %keep, %m : f32
    %c = arith.mulf %take, %s : f32
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>

  %e41 = tensor.empty() : tensor<4x1xf32>
  %z41 = linalg.fill ins(%zero : f32) outs(%e41 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x1xf32>)
                      outs(%z41 : tensor<4x1xf32>) -> tensor<4x1xf32>
  %diff = linalg.generic {indexing_maps = [#id, #col, #id, #id],
                          iterator_types = ["parallel", "parallel"]}
      ins(%xw, %b, %y : tensor<4x1xf32>, tensor<1xf32>, tensor<4x1xf32>)
      outs(%e41 : tensor<4x1xf32>) {
  ^bb0(%p: f32, %bb: f32, %t: f32, %o: f32):
    %q = arith.addf %p, %bb : f32
    %d = arith.subf %q, %t : f32
    linalg.yield %d : f32
  } -> tensor<4x1xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sq = linalg.generic {indexing_maps = [#id, #all],
                        iterator_types = ["reduction", "reduction"]}
      ins(%diff : tensor<4x1xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%d: f32, %o: f32):
    %m = arith.mulf %d, %d : f32
    %a = arith.addf %o, %m : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  %quarter = arith.constant dense<0.25> : tensor<f32>
  %loss = arith.mulf %sq, %quarter : tensor<f32>

  %seed = amp.seed %loss : tensor<f32>
  %dpred = linalg.generic {indexing_maps = [#id, #all, #id],
                           iterator_types = ["parallel", "parallel"]}
      ins(%diff, %seed : tensor<4x1xf32>, tensor<f32>)
      outs(%e41 : tensor<4x1xf32>) {
  ^bb0(%d: f32, %s: f32, %o: f32):
    %half = arith.constant 0.5 : f32
    %m = arith.mulf %d, %s : f32
    %r = arith.mulf %m, %half : f32
    linalg.yield %r : f32
  } -> tensor<4x1xf32>
  %e31 = tensor.empty() : tensor<3x1xf32>
  %z31 = linalg.fill ins(%zero : f32) outs(%e31 : tensor<3x1xf32>) -> tensor<3x1xf32>
  %gw = linalg.generic {indexing_maps = [#xt, #dp, #gw],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dpred : tensor<4x3xf32>, tensor<4x1xf32>)
      outs(%z31 : tensor<3x1xf32>) {
  ^bb0(%a: f32, %g: f32, %o: f32):
    %m = arith.mulf %a, %g : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x1xf32>
  %e1 = tensor.empty() : tensor<1xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1xf32>) -> tensor<1xf32>
  %gb = linalg.generic {indexing_maps = [#id, #col],
                        iterator_types = ["reduction", "parallel"]}
      ins(%dpred : tensor<4x1xf32>) outs(%z1 : tensor<1xf32>) {
  ^bb0(%g: f32, %o: f32):
    %s = arith.addf %o, %g : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>

  %new:2 = amp.update grads(%gw, %gb : tensor<3x1xf32>, tensor<1xf32>)
      state(%w, %b : tensor<3x1xf32>, tensor<1xf32>) {
  ^bb0(%dw: tensor<3x1xf32>, %db: tensor<1xf32>, %w0: tensor<3x1xf32>,
       %b0: tensor<1xf32>):
    %lr = arith.constant dense<0.1> : tensor<3x1xf32>
    %lr1 = arith.constant dense<0.1> : tensor<1xf32>
    %sw = arith.mulf %lr, %dw : tensor<3x1xf32>
    %w1 = arith.subf %w0, %sw : tensor<3x1xf32>
    %sb = arith.mulf %lr1, %db : tensor<1xf32>
    %b1 = arith.subf %b0, %sb : tensor<1xf32>
    amp.yield %w1, %b1 : tensor<3x1xf32>, tensor<1xf32>
  } : tensor<3x1xf32>, tensor<1xf32>
  return %loss, %new#0, %new#1, %new_mean
      : tensor<f32>, tensor<3x1xf32>, tensor<1xf32>, tensor<3xf32>
}
