// A recurrent step written with scf: an Elman RNN over 4 time steps,
// h' = tanh(x_t Wx + h Wh), from a hidden state that starts as a fill of
// zeros, then logits = h_T Wo + bo and softmax cross-entropy against one-hot
// labels, mean over the batch of 4. The forward loop carries the hidden state
// and the stack of hidden states the backward reads; the backward runs the
// loop in reverse (backpropagation through time), with an scf.if choosing the
// previous hidden state (the initial fill at t = 0). Plain SGD, lr 0.1.
// test/python/test_real_ir.py checks its gradients by finite differences.

#mA  = affine_map<(m, n, k) -> (m, k)>
#mAt = affine_map<(m, n, k) -> (k, m)>
#mB  = affine_map<(m, n, k) -> (k, n)>
#mBt = affine_map<(m, n, k) -> (n, k)>
#mC  = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#scalar2 = affine_map<(i, j) -> ()>
#id1 = affine_map<(i) -> (i)>

func.func @rnn_step(%wx: tensor<3x8xf32> {amp.name = "rnn.weight_ih"},
                    %wh: tensor<8x8xf32> {amp.name = "rnn.weight_hh"},
                    %wo: tensor<8x2xf32> {amp.name = "head.weight"},
                    %bo: tensor<2xf32> {amp.name = "head.bias"},
                    %x: tensor<4x4x3xf32> {amp.name = "x"},
                    %y: tensor<4x2xf32> {amp.name = "y"})
    -> (tensor<f32>, tensor<3x8xf32>, tensor<8x8xf32>, tensor<8x2xf32>, tensor<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %inv_batch = arith.constant 0.25 : f32

  // ---- forward: the hidden state starts as a fill; the loop carries it and
  // the stack of the states it computes ----
  %e_h = tensor.empty() : tensor<4x8xf32>
  %h0 = linalg.fill ins(%zero : f32) outs(%e_h : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e_stack = tensor.empty() : tensor<4x4x8xf32>
  %stack0 = linalg.fill ins(%zero : f32) outs(%e_stack : tensor<4x4x8xf32>) -> tensor<4x4x8xf32>
  %hT, %stack = scf.for %t = %c0 to %c4 step %c1
      iter_args(%h = %h0, %s = %stack0) -> (tensor<4x8xf32>, tensor<4x4x8xf32>) {
    %xt = tensor.extract_slice %x[0, %t, 0] [4, 1, 3] [1, 1, 1]
        : tensor<4x4x3xf32> to tensor<4x3xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e_h : tensor<4x8xf32>) -> tensor<4x8xf32>
    %xw = linalg.matmul ins(%xt, %wx : tensor<4x3xf32>, tensor<3x8xf32>)
                        outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
    %a = linalg.matmul ins(%h, %wh : tensor<4x8xf32>, tensor<8x8xf32>)
                       outs(%xw : tensor<4x8xf32>) -> tensor<4x8xf32>
    %h1 = math.tanh %a : tensor<4x8xf32>
    %s1 = tensor.insert_slice %h1 into %s[%t, 0, 0] [1, 4, 8] [1, 1, 1]
        : tensor<4x8xf32> into tensor<4x4x8xf32>
    scf.yield %h1, %s1 : tensor<4x8xf32>, tensor<4x4x8xf32>
  }

  // ---- logits and softmax cross-entropy ----
  %e_l = tensor.empty() : tensor<4x2xf32>
  %z_l = linalg.fill ins(%zero : f32) outs(%e_l : tensor<4x2xf32>) -> tensor<4x2xf32>
  %hw = linalg.matmul ins(%hT, %wo : tensor<4x8xf32>, tensor<8x2xf32>)
                      outs(%z_l : tensor<4x2xf32>) -> tensor<4x2xf32>
  %logits = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%hw, %bo : tensor<4x2xf32>, tensor<2xf32>) outs(%e_l : tensor<4x2xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %r = arith.addf %v, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %e_r = tensor.empty() : tensor<4xf32>
  %ninf_r = linalg.fill ins(%ninf : f32) outs(%e_r : tensor<4xf32>) -> tensor<4xf32>
  %rmax = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%logits : tensor<4x2xf32>) outs(%ninf_r : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%logits, %rmax : tensor<4x2xf32>, tensor<4xf32>) outs(%e_l : tensor<4x2xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<4x2xf32>
  %zero_r = linalg.fill ins(%zero : f32) outs(%e_r : tensor<4xf32>) -> tensor<4xf32>
  %rsum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<4x2xf32>) outs(%zero_r : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e_s = tensor.empty() : tensor<f32>
  %zero_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id2, #row, #row, #id2, #scalar2], iterator_types = ["reduction", "reduction"]}
      ins(%logits, %rmax, %rsum, %y : tensor<4x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x2xf32>)
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

  // ---- backward of the head ----
  %seed = amp.seed %loss : tensor<f32>
  %dlogits = linalg.generic {indexing_maps = [#id2, #row, #id2, #scalar2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %rsum, %y, %seed : tensor<4x2xf32>, tensor<4xf32>, tensor<4x2xf32>, tensor<f32>)
      outs(%e_l : tensor<4x2xf32>) {
  ^bb0(%e: f32, %s: f32, %t: f32, %g: f32, %o: f32):
    %p = arith.divf %e, %s : f32
    %d = arith.subf %p, %t : f32
    %gb = arith.mulf %g, %inv_batch : f32
    %r = arith.mulf %d, %gb : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %e_wo = tensor.empty() : tensor<8x2xf32>
  %z_wo = linalg.fill ins(%zero : f32) outs(%e_wo : tensor<8x2xf32>) -> tensor<8x2xf32>
  %dwo = linalg.matmul indexing_maps = [#mAt, #mB, #mC]
      ins(%hT, %dlogits : tensor<4x8xf32>, tensor<4x2xf32>)
      outs(%z_wo : tensor<8x2xf32>) -> tensor<8x2xf32>
  %e_bo = tensor.empty() : tensor<2xf32>
  %z_bo = linalg.fill ins(%zero : f32) outs(%e_bo : tensor<2xf32>) -> tensor<2xf32>
  %dbo = linalg.generic {indexing_maps = [#id2, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dlogits : tensor<4x2xf32>) outs(%z_bo : tensor<2xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  %z_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<4x8xf32>) -> tensor<4x8xf32>
  %dhT = linalg.matmul indexing_maps = [#mA, #mBt, #mC]
      ins(%dlogits, %wo : tensor<4x2xf32>, tensor<8x2xf32>)
      outs(%z_h : tensor<4x8xf32>) -> tensor<4x8xf32>

  // ---- backward through time: t = 3, 2, 1, 0 ----
  %e_wx = tensor.empty() : tensor<3x8xf32>
  %dwx0 = linalg.fill ins(%zero : f32) outs(%e_wx : tensor<3x8xf32>) -> tensor<3x8xf32>
  %e_wh = tensor.empty() : tensor<8x8xf32>
  %dwh0 = linalg.fill ins(%zero : f32) outs(%e_wh : tensor<8x8xf32>) -> tensor<8x8xf32>
  %dh_end, %dwx, %dwh = scf.for %i = %c0 to %c4 step %c1
      iter_args(%dh = %dhT, %gx = %dwx0, %gh = %dwh0)
      -> (tensor<4x8xf32>, tensor<3x8xf32>, tensor<8x8xf32>) {
    %t = arith.subi %c3, %i : index
    %ht = tensor.extract_slice %stack[%t, 0, 0] [1, 4, 8] [1, 1, 1]
        : tensor<4x4x8xf32> to tensor<4x8xf32>
    // da = dh * (1 - h_t^2)
    %da = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%dh, %ht : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e_h : tensor<4x8xf32>) {
    ^bb0(%g: f32, %hv: f32, %o: f32):
      %sq = arith.mulf %hv, %hv : f32
      %d = arith.subf %one, %sq : f32
      %r = arith.mulf %g, %d : f32
      linalg.yield %r : f32
    } -> tensor<4x8xf32>
    %first = arith.cmpi eq, %t, %c0 : index
    %hprev = scf.if %first -> (tensor<4x8xf32>) {
      scf.yield %h0 : tensor<4x8xf32>
    } else {
      %tp = arith.subi %t, %c1 : index
      %hp = tensor.extract_slice %stack[%tp, 0, 0] [1, 4, 8] [1, 1, 1]
          : tensor<4x4x8xf32> to tensor<4x8xf32>
      scf.yield %hp : tensor<4x8xf32>
    }
    %xt = tensor.extract_slice %x[0, %t, 0] [4, 1, 3] [1, 1, 1]
        : tensor<4x4x3xf32> to tensor<4x3xf32>
    %gx1 = linalg.matmul indexing_maps = [#mAt, #mB, #mC]
        ins(%xt, %da : tensor<4x3xf32>, tensor<4x8xf32>)
        outs(%gx : tensor<3x8xf32>) -> tensor<3x8xf32>
    %gh1 = linalg.matmul indexing_maps = [#mAt, #mB, #mC]
        ins(%hprev, %da : tensor<4x8xf32>, tensor<4x8xf32>)
        outs(%gh : tensor<8x8xf32>) -> tensor<8x8xf32>
    %zero_dh = linalg.fill ins(%zero : f32) outs(%e_h : tensor<4x8xf32>) -> tensor<4x8xf32>
    %dh1 = linalg.matmul indexing_maps = [#mA, #mBt, #mC]
        ins(%da, %wh : tensor<4x8xf32>, tensor<8x8xf32>)
        outs(%zero_dh : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.yield %dh1, %gx1, %gh1 : tensor<4x8xf32>, tensor<3x8xf32>, tensor<8x8xf32>
  }

  // ---- SGD ----
  %new:4 = amp.update grads(%dwx, %dwh, %dwo, %dbo : tensor<3x8xf32>, tensor<8x8xf32>, tensor<8x2xf32>, tensor<2xf32>)
                      state(%wx, %wh, %wo, %bo : tensor<3x8xf32>, tensor<8x8xf32>, tensor<8x2xf32>, tensor<2xf32>) {
  ^bb0(%gwx: tensor<3x8xf32>, %gwh: tensor<8x8xf32>, %gwo: tensor<8x2xf32>, %gbo: tensor<2xf32>,
       %pwx: tensor<3x8xf32>, %pwh: tensor<8x8xf32>, %pwo: tensor<8x2xf32>, %pbo: tensor<2xf32>):
    %lr = arith.constant 0.1 : f32
    %uwx = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%pwx, %gwx : tensor<3x8xf32>, tensor<3x8xf32>) outs(%pwx : tensor<3x8xf32>) {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %lr, %g : f32
      %r = arith.subf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<3x8xf32>
    %uwh = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%pwh, %gwh : tensor<8x8xf32>, tensor<8x8xf32>) outs(%pwh : tensor<8x8xf32>) {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %lr, %g : f32
      %r = arith.subf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32>
    %uwo = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%pwo, %gwo : tensor<8x2xf32>, tensor<8x2xf32>) outs(%pwo : tensor<8x2xf32>) {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %lr, %g : f32
      %r = arith.subf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<8x2xf32>
    %ubo = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
        ins(%pbo, %gbo : tensor<2xf32>, tensor<2xf32>) outs(%pbo : tensor<2xf32>) {
    ^bb0(%p: f32, %g: f32, %o: f32):
      %s = arith.mulf %lr, %g : f32
      %r = arith.subf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<2xf32>
    amp.yield %uwx, %uwh, %uwo, %ubo : tensor<3x8xf32>, tensor<8x8xf32>, tensor<8x2xf32>, tensor<2xf32>
  } : tensor<3x8xf32>, tensor<8x8xf32>, tensor<8x2xf32>, tensor<2xf32>

  return %loss, %new#0, %new#1, %new#2, %new#3
      : tensor<f32>, tensor<3x8xf32>, tensor<8x8xf32>, tensor<8x2xf32>, tensor<2xf32>
}
