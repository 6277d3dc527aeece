// RUN: amp-opt %s --amp-gpu-bufferize --verify-diagnostics

// A branch yielding a fresh buffer: its block cannot free it, and nothing
// after the branch knows which buffer to free.
func.func @branch(%x: tensor<4xf32>, %p: i1) -> tensor<4xf32> {
  %r = scf.if %p -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    // expected-error@+1 {{'gpu.alloc' op holds a buffer that leaves its block}}
    %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
        ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%v: f32, %o: f32):
      %d = arith.addf %v, %v : f32
      linalg.yield %d : f32
    } -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
