// A complete fp32 training step of an MLP classifier for the scikit-learn digits
// data (build/data/digits_*.npy): 64 inputs (8x8 pixels), 128 hidden units with
// ReLU, 10 classes, softmax cross-entropy against one-hot f32 labels, mean over
// a static batch of 64. The backward is written by hand and starts from
// `amp.seed`; plain SGD (lr 0.1) updates all four parameters in one
// `amp.update`. Returns the loss, then the new parameters.
//
// A runner reads it per docs/spec: %w1, %b1, %w2, %b2 are carried parameters
// (state of the update, read by the forward, returned); %x and %y are data.
// Reference in numpy: examples/reference/mlp.py.

#id2     = affine_map<(i, j) -> (i, j)>
#row     = affine_map<(i, j) -> (i)>
#col     = affine_map<(i, j) -> (j)>
#scalar2 = affine_map<(i, j) -> ()>
#id1     = affine_map<(i) -> (i)>
// matmul operand maps: C(m, n) += A(m, k) * B(k, n), with A or B transposed.
#mA  = affine_map<(m, n, k) -> (m, k)>
#mAt = affine_map<(m, n, k) -> (k, m)>
#mB  = affine_map<(m, n, k) -> (k, n)>
#mBt = affine_map<(m, n, k) -> (n, k)>
#mC  = affine_map<(m, n, k) -> (m, n)>

func.func @train_step(%w1: tensor<64x128xf32>, %b1: tensor<128xf32>,
                      %w2: tensor<128x10xf32>, %b2: tensor<10xf32>,
                      %x: tensor<64x64xf32>, %y: tensor<64x10xf32>)
    -> (tensor<f32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inv_batch = arith.constant 0.015625 : f32  // 1/64

  // ---- forward: hidden = relu(x @ w1 + b1) ----
  %e_h = tensor.empty() : tensor<64x128xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<64x128xf32>) -> tensor<64x128xf32>
  %xw1 = linalg.matmul ins(%x, %w1 : tensor<64x64xf32>, tensor<64x128xf32>)
                       outs(%z_h : tensor<64x128xf32>) -> tensor<64x128xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xw1, %b1 : tensor<64x128xf32>, tensor<128xf32>) outs(%e_h : tensor<64x128xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<64x128xf32>
  %h = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a1 : tensor<64x128xf32>) outs(%e_h : tensor<64x128xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x128xf32>

  // ---- forward: logits = hidden @ w2 + b2 ----
  %e_l = tensor.empty() : tensor<64x10xf32>
  %z_l = linalg.fill ins(%zero : f32) outs(%e_l : tensor<64x10xf32>) -> tensor<64x10xf32>
  %hw2 = linalg.matmul ins(%h, %w2 : tensor<64x128xf32>, tensor<128x10xf32>)
                       outs(%z_l : tensor<64x10xf32>) -> tensor<64x10xf32>
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%hw2, %b2 : tensor<64x10xf32>, tensor<10xf32>) outs(%e_l : tensor<64x10xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<64x10xf32>

  // ---- softmax cross-entropy: loss = -mean_i sum_j y log softmax(logits) ----
  %e_r = tensor.empty() : tensor<64xf32>
  %ninf_r = linalg.fill ins(%ninf : f32) outs(%e_r : tensor<64xf32>) -> tensor<64xf32>
  %rmax = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%logits : tensor<64x10xf32>) outs(%ninf_r : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %rmax : tensor<64x10xf32>, tensor<64xf32>) outs(%e_l : tensor<64x10xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<64x10xf32>
  %zero_r = linalg.fill ins(%zero : f32) outs(%e_r : tensor<64xf32>) -> tensor<64xf32>
  %rsum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<64x10xf32>) outs(%zero_r : tensor<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e_s = tensor.empty() : tensor<f32>
  %zero_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  // sum_ij y * (logits - max - log(sum)) / -64
  %loss = linalg.generic {indexing_maps = [#id2, #row, #row, #id2, #scalar2], iterator_types = ["reduction", "reduction"]}
      ins(%logits, %rmax, %rsum, %y : tensor<64x10xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64x10xf32>)
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

  // ---- backward, from d(loss)/d(loss) ----
  %seed = amp.seed %loss : tensor<f32>
  // dlogits = (softmax - y) * seed / 64
  %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #scalar2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %rsum, %y, %seed : tensor<64x10xf32>, tensor<64xf32>, tensor<64x10xf32>, tensor<f32>)
      outs(%e_l : tensor<64x10xf32>) {
  ^bb0(%e: f32, %s: f32, %t: f32, %g: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %t : f32
    %gb = arith.mulf %g, %inv_batch : f32
    %r = arith.mulf %d, %gb : f32
    linalg.yield %r : f32
  } -> tensor<64x10xf32>
  // dw2 = hidden^T @ dlogits, db2 = sum over the batch
  %e_w2 = tensor.empty() : tensor<128x10xf32>
  %z_w2 = linalg.fill ins(%zero : f32) outs(%e_w2 : tensor<128x10xf32>) -> tensor<128x10xf32>
  %dw2 = linalg.matmul indexing_maps = [#mAt, #mB, #mC]
      ins(%h, %dlogits : tensor<64x128xf32>, tensor<64x10xf32>)
      outs(%z_w2 : tensor<128x10xf32>) -> tensor<128x10xf32>
  %e_b2 = tensor.empty() : tensor<10xf32>
  %z_b2 = linalg.fill ins(%zero : f32) outs(%e_b2 : tensor<10xf32>) -> tensor<10xf32>
  %db2 = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dlogits : tensor<64x10xf32>) outs(%z_b2 : tensor<10xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  // dhidden = dlogits @ w2^T, through the ReLU
  %dh = linalg.matmul indexing_maps = [#mA, #mBt, #mC]
      ins(%dlogits, %w2 : tensor<64x10xf32>, tensor<128x10xf32>)
      outs(%z_h : tensor<64x128xf32>) -> tensor<64x128xf32>
  %da1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%dh, %a1 : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e_h : tensor<64x128xf32>) {
  ^bb0(%g: f32, %a: f32, %o: f32):
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x128xf32>
  // dw1 = x^T @ da1, db1 = sum over the batch
  %e_w1 = tensor.empty() : tensor<64x128xf32>
  %z_w1 = linalg.fill ins(%zero : f32) outs(%e_w1 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %dw1 = linalg.matmul indexing_maps = [#mAt, #mB, #mC]
      ins(%x, %da1 : tensor<64x64xf32>, tensor<64x128xf32>)
      outs(%z_w1 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %e_b1 = tensor.empty() : tensor<128xf32>
  %z_b1 = linalg.fill ins(%zero : f32) outs(%e_b1 : tensor<128xf32>) -> tensor<128xf32>
  %db1 = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%da1 : tensor<64x128xf32>) outs(%z_b1 : tensor<128xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<128xf32>

  // ---- SGD: p <- p - lr * g ----
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

// The forward alone, for evaluation (amp-run --eval): the parameters of
// @train_step in argument order, then a batch of inputs; returns the logits.
func.func @predict(%w1: tensor<64x128xf32>, %b1: tensor<128xf32>,
                   %w2: tensor<128x10xf32>, %b2: tensor<10xf32>,
                   %x: tensor<64x64xf32>) -> tensor<64x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e_h = tensor.empty() : tensor<64x128xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<64x128xf32>) -> tensor<64x128xf32>
  %xw1 = linalg.matmul ins(%x, %w1 : tensor<64x64xf32>, tensor<64x128xf32>)
                       outs(%z_h : tensor<64x128xf32>) -> tensor<64x128xf32>
  %h = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%xw1, %b1 : tensor<64x128xf32>, tensor<128xf32>) outs(%e_h : tensor<64x128xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x128xf32>
  %e_l = tensor.empty() : tensor<64x10xf32>
  %z_l = linalg.fill ins(%zero : f32) outs(%e_l : tensor<64x10xf32>) -> tensor<64x10xf32>
  %hw2 = linalg.matmul ins(%h, %w2 : tensor<64x128xf32>, tensor<128x10xf32>)
                       outs(%z_l : tensor<64x10xf32>) -> tensor<64x10xf32>
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%hw2, %b2 : tensor<64x10xf32>, tensor<10xf32>) outs(%e_l : tensor<64x10xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    linalg.yield %s : f32
  } -> tensor<64x10xf32>
  return %logits : tensor<64x10xf32>
}
