// Linear regression y = x w + b on batches of any size (the data-parallel
// tests give each rank its share): mean squared error over the batch, a
// hand-written backward from amp.seed, SGD with momentum (lr 0.1, momentum
// 0.9). %w, %b are parameters, %mw, %mb optimizer state, %x, %y data.

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#all = affine_map<(i, j) -> ()>
#scalar = affine_map<() -> ()>
#xt = affine_map<(i, j, k) -> (k, i)>
#dp = affine_map<(i, j, k) -> (k, j)>
#gw = affine_map<(i, j, k) -> (i, j)>

func.func @step(%w: tensor<3x1xf32> {amp.name = "w"},
                %b: tensor<1xf32> {amp.name = "b"},
                %mw: tensor<3x1xf32> {amp.name = "w.momentum"},
                %mb: tensor<1xf32> {amp.name = "b.momentum"},
                %x: tensor<?x3xf32> {amp.name = "x"},
                %y: tensor<?x1xf32> {amp.name = "y"})
    -> (tensor<f32>, tensor<3x1xf32>, tensor<1xf32>, tensor<3x1xf32>,
        tensor<1xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3xf32>
  %n_i64 = arith.index_cast %n : index to i64
  %n_f32 = arith.sitofp %n_i64 : i64 to f32
  %inv_n = arith.divf %one, %n_f32 : f32

  %en1 = tensor.empty(%n) : tensor<?x1xf32>
  %zn1 = linalg.fill ins(%zero : f32) outs(%en1 : tensor<?x1xf32>) -> tensor<?x1xf32>
  %xw = linalg.matmul ins(%x, %w : tensor<?x3xf32>, tensor<3x1xf32>)
                      outs(%zn1 : tensor<?x1xf32>) -> tensor<?x1xf32>
  %diff = linalg.generic {indexing_maps = [#id, #col, #id, #id],
                          iterator_types = ["parallel", "parallel"]}
      ins(%xw, %b, %y : tensor<?x1xf32>, tensor<1xf32>, tensor<?x1xf32>)
      outs(%en1 : tensor<?x1xf32>) {
  ^bb0(%p: f32, %bb: f32, %t: f32, %o: f32):
    %q = arith.addf %p, %bb : f32
    %d = arith.subf %q, %t : f32
    linalg.yield %d : f32
  } -> tensor<?x1xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sq = linalg.generic {indexing_maps = [#id, #all],
                        iterator_types = ["reduction", "reduction"]}
      ins(%diff : tensor<?x1xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%d: f32, %o: f32):
    %m = arith.mulf %d, %d : f32
    %a = arith.addf %o, %m : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
      ins(%sq : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%s: f32, %o: f32):
    %m = arith.mulf %s, %inv_n : f32
    linalg.yield %m : f32
  } -> tensor<f32>

  %seed = amp.seed %loss : tensor<f32>
  %dpred = linalg.generic {indexing_maps = [#id, #all, #id],
                           iterator_types = ["parallel", "parallel"]}
      ins(%diff, %seed : tensor<?x1xf32>, tensor<f32>)
      outs(%en1 : tensor<?x1xf32>) {
  ^bb0(%d: f32, %s: f32, %o: f32):
    %m = arith.mulf %d, %s : f32
    %t = arith.mulf %m, %two : f32
    %r = arith.mulf %t, %inv_n : f32
    linalg.yield %r : f32
  } -> tensor<?x1xf32>
  %e31 = tensor.empty() : tensor<3x1xf32>
  %z31 = linalg.fill ins(%zero : f32) outs(%e31 : tensor<3x1xf32>) -> tensor<3x1xf32>
  %gw = linalg.generic {indexing_maps = [#xt, #dp, #gw],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dpred : tensor<?x3xf32>, tensor<?x1xf32>)
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
      ins(%dpred : tensor<?x1xf32>) outs(%z1 : tensor<1xf32>) {
  ^bb0(%g: f32, %o: f32):
    %s = arith.addf %o, %g : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>

  %new:4 = amp.update grads(%gw, %gb : tensor<3x1xf32>, tensor<1xf32>)
      state(%w, %b, %mw, %mb : tensor<3x1xf32>, tensor<1xf32>, tensor<3x1xf32>, tensor<1xf32>) {
  ^bb0(%dw: tensor<3x1xf32>, %db: tensor<1xf32>, %w0: tensor<3x1xf32>,
       %b0: tensor<1xf32>, %mw0: tensor<3x1xf32>, %mb0: tensor<1xf32>):
    %mu = arith.constant dense<0.9> : tensor<3x1xf32>
    %lr = arith.constant dense<0.1> : tensor<3x1xf32>
    %mu1 = arith.constant dense<0.9> : tensor<1xf32>
    %lr1 = arith.constant dense<0.1> : tensor<1xf32>
    %a = arith.mulf %mu, %mw0 : tensor<3x1xf32>
    %mw1 = arith.addf %a, %dw : tensor<3x1xf32>
    %sw = arith.mulf %lr, %mw1 : tensor<3x1xf32>
    %w1 = arith.subf %w0, %sw : tensor<3x1xf32>
    %c = arith.mulf %mu1, %mb0 : tensor<1xf32>
    %mb1 = arith.addf %c, %db : tensor<1xf32>
    %sb = arith.mulf %lr1, %mb1 : tensor<1xf32>
    %b1 = arith.subf %b0, %sb : tensor<1xf32>
    amp.yield %w1, %b1, %mw1, %mb1 : tensor<3x1xf32>, tensor<1xf32>, tensor<3x1xf32>, tensor<1xf32>
  } : tensor<3x1xf32>, tensor<1xf32>, tensor<3x1xf32>, tensor<1xf32>
  return %loss, %new#0, %new#1, %new#2, %new#3
      : tensor<f32>, tensor<3x1xf32>, tensor<1xf32>, tensor<3x1xf32>, tensor<1xf32>
}
