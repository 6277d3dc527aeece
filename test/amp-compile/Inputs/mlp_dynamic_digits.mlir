// The MLP of examples/mlp.mlir (64 inputs, 128 hidden units with ReLU, 10
// classes, softmax cross-entropy against one-hot labels, SGD with lr 0.1)
// with a dynamic batch dimension, written as test/Inputs/mlp-dynamic-batch.mlir
// is: every batch-sized tensor is sized with `tensor.dim`, the mean divides by
// the batch size at run time. scripts/gpu-check.sh trains it on the digits
// data in batches of 64 with the last partial batch kept (22 of 64, one of
// 29), so that one compiled step runs at two batch sizes.

#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#scalar2 = affine_map<(i, j) -> ()>
#id1 = affine_map<(i) -> (i)>
#mA  = affine_map<(m, n, k) -> (m, k)>
#mAt = affine_map<(m, n, k) -> (k, m)>
#mB  = affine_map<(m, n, k) -> (k, n)>
#mBt = affine_map<(m, n, k) -> (n, k)>
#mC  = affine_map<(m, n, k) -> (m, n)>

func.func @train_step(%w1: tensor<64x128xf32> {amp.name = "fc1.weight"},
                      %b1: tensor<128xf32> {amp.name = "fc1.bias"},
                      %w2: tensor<128x10xf32> {amp.name = "fc2.weight"},
                      %b2: tensor<10xf32> {amp.name = "fc2.bias"},
                      %x: tensor<?x64xf32> {amp.name = "x"},
                      %y: tensor<?x10xf32> {amp.name = "y"})
    -> (tensor<f32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %n = tensor.dim %x, %c0 : tensor<?x64xf32>
  %n_i64 = arith.index_cast %n : index to i64
  %n_f32 = arith.sitofp %n_i64 : i64 to f32
  %inv_batch = arith.divf %one, %n_f32 : f32

  // ---- forward: hidden = relu(x @ w1 + b1) ----
  %e_h = tensor.empty(%n) : tensor<?x128xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<?x128xf32>) -> tensor<?x128xf32>
  %xw1 = linalg.matmul ins(%x, %w1 : tensor<?x64xf32>, tensor<64x128xf32>)
                       outs(%z_h : tensor<?x128xf32>) -> tensor<?x128xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xw1, %b1 : tensor<?x128xf32>, tensor<128xf32>) outs(%e_h : tensor<?x128xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x128xf32>
  %zeros_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<?x128xf32>) -> tensor<?x128xf32>
  %h = arith.maximumf %a1, %zeros_h : tensor<?x128xf32>

  // ---- forward: logits = hidden @ w2 + b2 ----
  %e_l = tensor.empty(%n) : tensor<?x10xf32>
  %z_l = linalg.fill ins(%zero : f32) outs(%e_l : tensor<?x10xf32>) -> tensor<?x10xf32>
  %hw2 = linalg.matmul ins(%h, %w2 : tensor<?x128xf32>, tensor<128x10xf32>)
                       outs(%z_l : tensor<?x10xf32>) -> tensor<?x10xf32>
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%hw2, %b2 : tensor<?x10xf32>, tensor<10xf32>) outs(%e_l : tensor<?x10xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<?x10xf32>

  // ---- softmax cross-entropy, mean over the batch ----
  %e_r = tensor.empty(%n) : tensor<?xf32>
  %ninf_r = linalg.fill ins(%ninf : f32) outs(%e_r : tensor<?xf32>) -> tensor<?xf32>
  %rmax = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%logits : tensor<?x10xf32>) outs(%ninf_r : tensor<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  } -> tensor<?xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %rmax : tensor<?x10xf32>, tensor<?xf32>) outs(%e_l : tensor<?x10xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<?x10xf32>
  %zero_r = linalg.fill ins(%zero : f32) outs(%e_r : tensor<?xf32>) -> tensor<?xf32>
  %rsum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<?x10xf32>) outs(%zero_r : tensor<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %e_s = tensor.empty() : tensor<f32>
  %zero_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id2, #row, #row, #id2, #scalar2], iterator_types = ["reduction", "reduction"]}
      ins(%logits, %rmax, %rsum, %y : tensor<?x10xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x10xf32>)
      outs(%zero_s : tensor<f32>) {
  ^bb0(%v: f32, %m: f32, %s: f32, %t: f32, %acc: f32):
    %ls = math.log %s : f32
    %d = arith.subf %v, %m : f32
    %lp = arith.subf %d, %ls : f32
    %tl = arith.mulf %t, %lp : f32
    %sc = arith.mulf %tl, %inv_batch : f32
    %r = arith.subf %acc, %sc : f32
    linalg.yield %r : f32
  } -> tensor<f32>

  // ---- backward ----
  %seed = amp.seed %loss : tensor<f32>
  %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #scalar2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %rsum, %y, %seed : tensor<?x10xf32>, tensor<?xf32>, tensor<?x10xf32>, tensor<f32>)
      outs(%e_l : tensor<?x10xf32>) {
  ^bb0(%e: f32, %s: f32, %t: f32, %g: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %t : f32
    %gb = arith.mulf %g, %inv_batch : f32
    %r = arith.mulf %d, %gb : f32
    linalg.yield %r : f32
  } -> tensor<?x10xf32>
  %e_w2 = tensor.empty() : tensor<128x10xf32>
  %z_w2 = linalg.fill ins(%zero : f32) outs(%e_w2 : tensor<128x10xf32>) -> tensor<128x10xf32>
  %dw2 = linalg.matmul indexing_maps = [#mAt, #mB, #mC]
      ins(%h, %dlogits : tensor<?x128xf32>, tensor<?x10xf32>)
      outs(%z_w2 : tensor<128x10xf32>) -> tensor<128x10xf32>
  %e_b2 = tensor.empty() : tensor<10xf32>
  %z_b2 = linalg.fill ins(%zero : f32) outs(%e_b2 : tensor<10xf32>) -> tensor<10xf32>
  %db2 = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dlogits : tensor<?x10xf32>) outs(%z_b2 : tensor<10xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  %dh = linalg.matmul indexing_maps = [#mA, #mBt, #mC]
      ins(%dlogits, %w2 : tensor<?x10xf32>, tensor<128x10xf32>)
      outs(%z_h : tensor<?x128xf32>) -> tensor<?x128xf32>
  %da1 = linalg.generic {indexing_maps = [#id2, #id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%dh, %a1, %zeros_h : tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>) outs(%e_h : tensor<?x128xf32>) {
  ^bb0(%g: f32, %a: f32, %z: f32, %o: f32):
    %pos = arith.cmpf ogt, %a, %z : f32
    %r = arith.select %pos, %g, %z : f32
    linalg.yield %r : f32
  } -> tensor<?x128xf32>
  %e_w1 = tensor.empty() : tensor<64x128xf32>
  %z_w1 = linalg.fill ins(%zero : f32) outs(%e_w1 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %dw1 = linalg.matmul indexing_maps = [#mAt, #mB, #mC]
      ins(%x, %da1 : tensor<?x64xf32>, tensor<?x128xf32>)
      outs(%z_w1 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %e_b1 = tensor.empty() : tensor<128xf32>
  %z_b1 = linalg.fill ins(%zero : f32) outs(%e_b1 : tensor<128xf32>) -> tensor<128xf32>
  %db1 = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%da1 : tensor<?x128xf32>) outs(%z_b1 : tensor<128xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<128xf32>

  // ---- SGD ----
  %new:4 = amp.update grads(%dw1, %db1, %dw2, %db2 : tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>)
                      state(%w1, %b1, %w2, %b2 : tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>) {
  ^bb0(%gw1: tensor<64x128xf32>, %gb1: tensor<128xf32>, %gw2: tensor<128x10xf32>, %gb2: tensor<10xf32>,
       %pw1: tensor<64x128xf32>, %pb1: tensor<128xf32>, %pw2: tensor<128x10xf32>, %pb2: tensor<10xf32>):
    %lr = arith.constant 0.1 : f32
    %uw1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%pw1, %gw1 : tensor<64x128xf32>, tensor<64x128xf32>) outs(%pw1 : tensor<64x128xf32>) {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %lr, %g : f32
      %r = arith.subf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<64x128xf32>
    %ub1 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
        ins(%pb1, %gb1 : tensor<128xf32>, tensor<128xf32>) outs(%pb1 : tensor<128xf32>) {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %lr, %g : f32
      %r = arith.subf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<128xf32>
    %uw2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%pw2, %gw2 : tensor<128x10xf32>, tensor<128x10xf32>) outs(%pw2 : tensor<128x10xf32>) {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %lr, %g : f32
      %r = arith.subf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<128x10xf32>
    %ub2 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
        ins(%pb2, %gb2 : tensor<10xf32>, tensor<10xf32>) outs(%pb2 : tensor<10xf32>) {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %lr, %g : f32
      %r = arith.subf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<10xf32>
    amp.yield %uw1, %ub1, %uw2, %ub2 : tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>
  } : tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>

  return %loss, %new#0, %new#1, %new#2, %new#3
      : tensor<f32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>
}
