// A complete fp32 training step of a small CNN for the scikit-learn digits data
// (build/data/digits_*.npy, rows of 64 pixels seen as 8x8x1 NHWC images):
// 3x3 convolution to 8 channels (linalg.conv_2d_nhwc_hwcf) + bias + ReLU,
// 2x2 average pooling (linalg.pooling_nhwc_sum, then x 1/4), a dense layer
// 72 -> 10, softmax cross-entropy against one-hot f32 labels, mean over a
// static batch of 64. The backward is written by hand from `amp.seed`: the
// filter gradient is itself a convolution (of the transposed input by the
// transposed output gradient), the pooling gradient a broadcast over each
// window. Momentum SGD (lr 0.05, momentum 0.9: v <- 0.9 v + g, p <- p - lr v)
// in one `amp.update`. Returns the loss, the new parameters, the new velocities.
//
// A runner reads it per docs/spec: %k, %bk, %wd, %bd are parameters (read by
// the forward); %vk, %vbk, %vwd, %vbd are optimizer state (read only by the
// update: zeros at start); %x and %y are data.
// Reference in numpy: examples/reference/cnn.py.

#id1  = affine_map<(i) -> (i)>
#id2  = affine_map<(i, j) -> (i, j)>
#col  = affine_map<(i, j) -> (j)>
#row  = affine_map<(i, j) -> (i)>
#s2   = affine_map<(i, j) -> ()>
#id4  = affine_map<(n, h, w, c) -> (n, h, w, c)>
#ch4  = affine_map<(n, h, w, c) -> (c)>
#id6  = affine_map<(n, i, a, j, b, c) -> (n, i, a, j, b, c)>
#win6 = affine_map<(n, i, a, j, b, c) -> (n, i, j, c)>
#mA  = affine_map<(m, n, k) -> (m, k)>
#mAt = affine_map<(m, n, k) -> (k, m)>
#mB  = affine_map<(m, n, k) -> (k, n)>
#mBt = affine_map<(m, n, k) -> (n, k)>
#mC  = affine_map<(m, n, k) -> (m, n)>

func.func @train_step(%k: tensor<3x3x1x8xf32>, %bk: tensor<8xf32>,
                      %wd: tensor<72x10xf32>, %bd: tensor<10xf32>,
                      %vk: tensor<3x3x1x8xf32>, %vbk: tensor<8xf32>,
                      %vwd: tensor<72x10xf32>, %vbd: tensor<10xf32>,
                      %x: tensor<64x64xf32>, %y: tensor<64x10xf32>)
    -> (tensor<f32>, tensor<3x3x1x8xf32>, tensor<8xf32>, tensor<72x10xf32>, tensor<10xf32>,
        tensor<3x3x1x8xf32>, tensor<8xf32>, tensor<72x10xf32>, tensor<10xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %quarter = arith.constant 0.25 : f32
  %inv_batch = arith.constant 0.015625 : f32  // 1/64

  // ---- forward: conv 3x3 (8x8x1 -> 6x6x8) + bias + ReLU ----
  %img = tensor.expand_shape %x [[0], [1, 2, 3]] output_shape [64, 8, 8, 1]
      : tensor<64x64xf32> into tensor<64x8x8x1xf32>
  %e_c = tensor.empty() : tensor<64x6x6x8xf32>
  %z_c = linalg.fill ins(%zero : f32) outs(%e_c : tensor<64x6x6x8xf32>) -> tensor<64x6x6x8xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%img, %k : tensor<64x8x8x1xf32>, tensor<3x3x1x8xf32>)
      outs(%z_c : tensor<64x6x6x8xf32>) -> tensor<64x6x6x8xf32>
  %act = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %bk : tensor<64x6x6x8xf32>, tensor<8xf32>) outs(%e_c : tensor<64x6x6x8xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x6x6x8xf32>

  // ---- forward: 2x2 average pooling (6x6x8 -> 3x3x8), flatten to 72 ----
  %window = tensor.empty() : tensor<2x2xf32>
  %e_p = tensor.empty() : tensor<64x3x3x8xf32>
  %z_p = linalg.fill ins(%zero : f32) outs(%e_p : tensor<64x3x3x8xf32>) -> tensor<64x3x3x8xf32>
  %psum = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%act, %window : tensor<64x6x6x8xf32>, tensor<2x2xf32>)
      outs(%z_p : tensor<64x3x3x8xf32>) -> tensor<64x3x3x8xf32>
  %pool = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%psum : tensor<64x3x3x8xf32>) outs(%e_p : tensor<64x3x3x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %quarter : f32
    linalg.yield %r : f32
  } -> tensor<64x3x3x8xf32>
  %flat = tensor.collapse_shape %pool [[0], [1, 2, 3]] : tensor<64x3x3x8xf32> into tensor<64x72xf32>

  // ---- forward: logits = flat @ wd + bd ----
  %e_l = tensor.empty() : tensor<64x10xf32>
  %z_l = linalg.fill ins(%zero : f32) outs(%e_l : tensor<64x10xf32>) -> tensor<64x10xf32>
  %fw = linalg.matmul ins(%flat, %wd : tensor<64x72xf32>, tensor<72x10xf32>)
                      outs(%z_l : tensor<64x10xf32>) -> tensor<64x10xf32>
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%fw, %bd : tensor<64x10xf32>, tensor<10xf32>) outs(%e_l : tensor<64x10xf32>) {
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
  %loss = linalg.generic {indexing_maps = [#id2, #row, #row, #id2, #s2], iterator_types = ["reduction", "reduction"]}
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
  %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #s2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %rsum, %y, %seed : tensor<64x10xf32>, tensor<64xf32>, tensor<64x10xf32>, tensor<f32>)
      outs(%e_l : tensor<64x10xf32>) {
  ^bb0(%e: f32, %s: f32, %t: f32, %g: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %t : f32
    %gb = arith.mulf %g, %inv_batch : f32
    %r = arith.mulf %d, %gb : f32
    linalg.yield %r : f32
  } -> tensor<64x10xf32>
  // dense: dwd = flat^T @ dlogits, dbd = sum over the batch, dflat = dlogits @ wd^T
  %e_wd = tensor.empty() : tensor<72x10xf32>
  %z_wd = linalg.fill ins(%zero : f32) outs(%e_wd : tensor<72x10xf32>) -> tensor<72x10xf32>
  %dwd = linalg.matmul indexing_maps = [#mAt, #mB, #mC]
      ins(%flat, %dlogits : tensor<64x72xf32>, tensor<64x10xf32>)
      outs(%z_wd : tensor<72x10xf32>) -> tensor<72x10xf32>
  %e_bd = tensor.empty() : tensor<10xf32>
  %z_bd = linalg.fill ins(%zero : f32) outs(%e_bd : tensor<10xf32>) -> tensor<10xf32>
  %dbd = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dlogits : tensor<64x10xf32>) outs(%z_bd : tensor<10xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  %e_f = tensor.empty() : tensor<64x72xf32>
  %z_f = linalg.fill ins(%zero : f32) outs(%e_f : tensor<64x72xf32>) -> tensor<64x72xf32>
  %dflat = linalg.matmul indexing_maps = [#mA, #mBt, #mC]
      ins(%dlogits, %wd : tensor<64x10xf32>, tensor<72x10xf32>)
      outs(%z_f : tensor<64x72xf32>) -> tensor<64x72xf32>
  // pooling: each of the 4 inputs of a window gets 1/4 of its gradient; the
  // 6x6 grid seen as 3x2x3x2 makes the window an affine broadcast.
  %dpool = tensor.expand_shape %dflat [[0], [1, 2, 3]] output_shape [64, 3, 3, 8]
      : tensor<64x72xf32> into tensor<64x3x3x8xf32>
  %act6 = tensor.expand_shape %act [[0], [1, 2], [3, 4], [5]] output_shape [64, 3, 2, 3, 2, 8]
      : tensor<64x6x6x8xf32> into tensor<64x3x2x3x2x8xf32>
  %e_6 = tensor.empty() : tensor<64x3x2x3x2x8xf32>
  // through the ReLU too: act > 0 exactly where conv + bias > 0
  %dconv6 = linalg.generic {indexing_maps = [#win6, #id6, #id6], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%dpool, %act6 : tensor<64x3x3x8xf32>, tensor<64x3x2x3x2x8xf32>)
      outs(%e_6 : tensor<64x3x2x3x2x8xf32>) {
  ^bb0(%g: f32, %a: f32, %o: f32):
    %q = arith.mulf %g, %quarter : f32
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %q, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x3x2x3x2x8xf32>
  %dconv = tensor.collapse_shape %dconv6 [[0], [1, 2], [3, 4], [5]]
      : tensor<64x3x2x3x2x8xf32> into tensor<64x6x6x8xf32>
  // conv bias: dbk = sum over n, h, w
  %e_bk = tensor.empty() : tensor<8xf32>
  %z_bk = linalg.fill ins(%zero : f32) outs(%e_bk : tensor<8xf32>) -> tensor<8xf32>
  %dbk = linalg.generic {indexing_maps = [#id4, #ch4], iterator_types = ["reduction", "reduction", "reduction", "parallel"]}
      ins(%dconv : tensor<64x6x6x8xf32>) outs(%z_bk : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  // filter: dk[a, b, ci, co] = sum_{n, oh, ow} img[n, oh + a, ow + b, ci] * dconv[n, oh, ow, co],
  // a convolution with the batch as channels: img^T (ci, h, w, n) by dconv^T (oh, ow, n, co).
  %e_it = tensor.empty() : tensor<1x8x8x64xf32>
  %img_t = linalg.transpose ins(%img : tensor<64x8x8x1xf32>) outs(%e_it : tensor<1x8x8x64xf32>)
      permutation = [3, 1, 2, 0]
  %e_dt = tensor.empty() : tensor<6x6x64x8xf32>
  %dconv_t = linalg.transpose ins(%dconv : tensor<64x6x6x8xf32>) outs(%e_dt : tensor<6x6x64x8xf32>)
      permutation = [1, 2, 0, 3]
  %e_kt = tensor.empty() : tensor<1x3x3x8xf32>
  %z_kt = linalg.fill ins(%zero : f32) outs(%e_kt : tensor<1x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  %dk_t = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%img_t, %dconv_t : tensor<1x8x8x64xf32>, tensor<6x6x64x8xf32>)
      outs(%z_kt : tensor<1x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  %e_k = tensor.empty() : tensor<3x3x1x8xf32>
  %dk = linalg.transpose ins(%dk_t : tensor<1x3x3x8xf32>) outs(%e_k : tensor<3x3x1x8xf32>)
      permutation = [1, 2, 0, 3]

  // ---- momentum SGD: v <- 0.9 v + g, p <- p - 0.05 v ----
  %new:8 = amp.update grads(%dk, %dbk, %dwd, %dbd : tensor<3x3x1x8xf32>, tensor<8xf32>, tensor<72x10xf32>, tensor<10xf32>)
                      state(%k, %bk, %wd, %bd, %vk, %vbk, %vwd, %vbd : tensor<3x3x1x8xf32>, tensor<8xf32>, tensor<72x10xf32>, tensor<10xf32>, tensor<3x3x1x8xf32>, tensor<8xf32>, tensor<72x10xf32>, tensor<10xf32>) {
  ^bb0(%gk: tensor<3x3x1x8xf32>, %gbk: tensor<8xf32>, %gwd: tensor<72x10xf32>, %gbd: tensor<10xf32>,
       %pk: tensor<3x3x1x8xf32>, %pbk: tensor<8xf32>, %pwd: tensor<72x10xf32>, %pbd: tensor<10xf32>,
       %mk: tensor<3x3x1x8xf32>, %mbk: tensor<8xf32>, %mwd: tensor<72x10xf32>, %mbd: tensor<10xf32>):
    %lr = arith.constant 0.05 : f32
    %mu = arith.constant 0.9 : f32
    %uk:2 = linalg.generic {indexing_maps = [#id4, #id4, #id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%pk, %gk, %mk : tensor<3x3x1x8xf32>, tensor<3x3x1x8xf32>, tensor<3x3x1x8xf32>)
        outs(%pk, %mk : tensor<3x3x1x8xf32>, tensor<3x3x1x8xf32>) {
    ^bb0(%p: f32, %g: f32, %m: f32, %o1: f32, %o2: f32):
      %mm = arith.mulf %mu, %m : f32
      %m1 = arith.addf %mm, %g : f32
      %s = arith.mulf %lr, %m1 : f32
      %p1 = arith.subf %p, %s : f32
      linalg.yield %p1, %m1 : f32, f32
    } -> (tensor<3x3x1x8xf32>, tensor<3x3x1x8xf32>)
    %ubk:2 = linalg.generic {indexing_maps = [#id1, #id1, #id1, #id1, #id1], iterator_types = ["parallel"]}
        ins(%pbk, %gbk, %mbk : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
        outs(%pbk, %mbk : tensor<8xf32>, tensor<8xf32>) {
    ^bb0(%p: f32, %g: f32, %m: f32, %o1: f32, %o2: f32):
      %mm = arith.mulf %mu, %m : f32
      %m1 = arith.addf %mm, %g : f32
      %s = arith.mulf %lr, %m1 : f32
      %p1 = arith.subf %p, %s : f32
      linalg.yield %p1, %m1 : f32, f32
    } -> (tensor<8xf32>, tensor<8xf32>)
    %uwd:2 = linalg.generic {indexing_maps = [#id2, #id2, #id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%pwd, %gwd, %mwd : tensor<72x10xf32>, tensor<72x10xf32>, tensor<72x10xf32>)
        outs(%pwd, %mwd : tensor<72x10xf32>, tensor<72x10xf32>) {
    ^bb0(%p: f32, %g: f32, %m: f32, %o1: f32, %o2: f32):
      %mm = arith.mulf %mu, %m : f32
      %m1 = arith.addf %mm, %g : f32
      %s = arith.mulf %lr, %m1 : f32
      %p1 = arith.subf %p, %s : f32
      linalg.yield %p1, %m1 : f32, f32
    } -> (tensor<72x10xf32>, tensor<72x10xf32>)
    %ubd:2 = linalg.generic {indexing_maps = [#id1, #id1, #id1, #id1, #id1], iterator_types = ["parallel"]}
        ins(%pbd, %gbd, %mbd : tensor<10xf32>, tensor<10xf32>, tensor<10xf32>)
        outs(%pbd, %mbd : tensor<10xf32>, tensor<10xf32>) {
    ^bb0(%p: f32, %g: f32, %m: f32, %o1: f32, %o2: f32):
      %mm = arith.mulf %mu, %m : f32
      %m1 = arith.addf %mm, %g : f32
      %s = arith.mulf %lr, %m1 : f32
      %p1 = arith.subf %p, %s : f32
      linalg.yield %p1, %m1 : f32, f32
    } -> (tensor<10xf32>, tensor<10xf32>)
    amp.yield %uk#0, %ubk#0, %uwd#0, %ubd#0, %uk#1, %ubk#1, %uwd#1, %ubd#1
        : tensor<3x3x1x8xf32>, tensor<8xf32>, tensor<72x10xf32>, tensor<10xf32>,
          tensor<3x3x1x8xf32>, tensor<8xf32>, tensor<72x10xf32>, tensor<10xf32>
  } : tensor<3x3x1x8xf32>, tensor<8xf32>, tensor<72x10xf32>, tensor<10xf32>,
      tensor<3x3x1x8xf32>, tensor<8xf32>, tensor<72x10xf32>, tensor<10xf32>

  return %loss, %new#0, %new#1, %new#2, %new#3, %new#4, %new#5, %new#6, %new#7
      : tensor<f32>, tensor<3x3x1x8xf32>, tensor<8xf32>, tensor<72x10xf32>, tensor<10xf32>,
        tensor<3x3x1x8xf32>, tensor<8xf32>, tensor<72x10xf32>, tensor<10xf32>
}

// The forward alone, for evaluation (amp-run --eval): the parameters of
// @train_step in argument order, then a batch of inputs; returns the logits.
func.func @predict(%k: tensor<3x3x1x8xf32>, %bk: tensor<8xf32>,
                   %wd: tensor<72x10xf32>, %bd: tensor<10xf32>,
                   %x: tensor<64x64xf32>) -> tensor<64x10xf32> {
  %zero = arith.constant 0.0 : f32
  %quarter = arith.constant 0.25 : f32
  %img = tensor.expand_shape %x [[0], [1, 2, 3]] output_shape [64, 8, 8, 1]
      : tensor<64x64xf32> into tensor<64x8x8x1xf32>
  %e_c = tensor.empty() : tensor<64x6x6x8xf32>
  %z_c = linalg.fill ins(%zero : f32) outs(%e_c : tensor<64x6x6x8xf32>) -> tensor<64x6x6x8xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%img, %k : tensor<64x8x8x1xf32>, tensor<3x3x1x8xf32>)
      outs(%z_c : tensor<64x6x6x8xf32>) -> tensor<64x6x6x8xf32>
  %act = linalg.generic {indexing_maps = [#id4, #ch4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv, %bk : tensor<64x6x6x8xf32>, tensor<8xf32>) outs(%e_c : tensor<64x6x6x8xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x6x6x8xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %e_p = tensor.empty() : tensor<64x3x3x8xf32>
  %z_p = linalg.fill ins(%zero : f32) outs(%e_p : tensor<64x3x3x8xf32>) -> tensor<64x3x3x8xf32>
  %psum = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%act, %window : tensor<64x6x6x8xf32>, tensor<2x2xf32>)
      outs(%z_p : tensor<64x3x3x8xf32>) -> tensor<64x3x3x8xf32>
  %flat = tensor.collapse_shape %psum [[0], [1, 2, 3]] : tensor<64x3x3x8xf32> into tensor<64x72xf32>
  %e_l = tensor.empty() : tensor<64x10xf32>
  %z_l = linalg.fill ins(%zero : f32) outs(%e_l : tensor<64x10xf32>) -> tensor<64x10xf32>
  %fw = linalg.matmul ins(%flat, %wd : tensor<64x72xf32>, tensor<72x10xf32>)
                      outs(%z_l : tensor<64x10xf32>) -> tensor<64x10xf32>
  // the 1/4 of the average pooling folded into the bias add: (sum/4) @ wd = (sum @ wd)/4
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%fw, %bd : tensor<64x10xf32>, tensor<10xf32>) outs(%e_l : tensor<64x10xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %q = arith.mulf %v, %quarter : f32
    %s = arith.addf %q, %b : f32
    linalg.yield %s : f32
  } -> tensor<64x10xf32>
  return %logits : tensor<64x10xf32>
}
