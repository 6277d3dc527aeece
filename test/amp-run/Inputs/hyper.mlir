// Linear regression with SGD whose learning rate is an input of the update
// (a hyperparameter, as an LR scheduler feeds it): amp.value 0.1 unless set.

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#all = affine_map<(i, j) -> ()>
#xt = affine_map<(i, j, k) -> (k, i)>
#dp = affine_map<(i, j, k) -> (k, j)>
#gw = affine_map<(i, j, k) -> (i, j)>

func.func @step(%w: tensor<3x1xf32> {amp.name = "fc.weight"},
                %b: tensor<1xf32> {amp.name = "fc.bias"},
                %x: tensor<4x3xf32> {amp.name = "x"},
                %y: tensor<4x1xf32> {amp.name = "y"},
                %lr: tensor<f32> {amp.name = "lr", amp.value = 0.1 : f32})
    -> (tensor<f32> {amp.name = "loss"}, tensor<3x1xf32> {amp.name = "fc.weight"},
        tensor<1xf32> {amp.name = "fc.bias"}) {
  %zero = arith.constant 0.0 : f32
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
      state(%w, %b : tensor<3x1xf32>, tensor<1xf32>) inputs(%lr : tensor<f32>) {
  ^bb0(%dw: tensor<3x1xf32>, %db: tensor<1xf32>, %w0: tensor<3x1xf32>,
       %b0: tensor<1xf32>, %rate: tensor<f32>):
    %u31 = tensor.empty() : tensor<3x1xf32>
    %u1 = tensor.empty() : tensor<1xf32>
    %lr31 = linalg.broadcast ins(%rate : tensor<f32>) outs(%u31 : tensor<3x1xf32>) dimensions = [0, 1]
    %lr1 = linalg.broadcast ins(%rate : tensor<f32>) outs(%u1 : tensor<1xf32>) dimensions = [0]
    %sw = arith.mulf %lr31, %dw : tensor<3x1xf32>
    %w1 = arith.subf %w0, %sw : tensor<3x1xf32>
    %sb = arith.mulf %lr1, %db : tensor<1xf32>
    %b1 = arith.subf %b0, %sb : tensor<1xf32>
    amp.yield %w1, %b1 : tensor<3x1xf32>, tensor<1xf32>
  } : tensor<3x1xf32>, tensor<1xf32>
  return %loss, %new#0, %new#1 : tensor<f32>, tensor<3x1xf32>, tensor<1xf32>
}
