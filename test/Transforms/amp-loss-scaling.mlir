// RUN: amp-opt %s --split-input-file --amp-loss-scaling | FileCheck %s --check-prefixes=CHECK,DYN
// RUN: amp-opt %s --split-input-file --amp-loss-scaling="scaling=dynamic hysteresis=2" | FileCheck %s --check-prefixes=CHECK,HYST
// RUN: amp-opt %s --split-input-file --amp-loss-scaling="scaling=static init-scale=1024" | FileCheck %s --check-prefixes=CHECK,STATIC
// RUN: amp-opt %s --split-input-file --amp-loss-scaling="scaling=none" | FileCheck %s --check-prefixes=CHECK,NONE
// RUN: amp-opt %s --split-input-file --amp-loss-scaling="dtype=bf16" | FileCheck %s --check-prefixes=CHECK,NONE

// The default for f16 is dynamic scaling: the scale and the growth tracker
// become arguments after the original ones, then the hysteresis counter when
// hysteresis > 1; the seed becomes the scale. Static scaling uses the
// constant init-scale, no scaling (and bf16's default) ones; neither adds
// arguments. The loss and the results do not change.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[X:[^:]*]]: tensor<4xf32>,
// DYN-SAME:        %[[W:[^:]*]]: tensor<4xf32>, %[[S:[^:]*]]: tensor<f32> {amp.state = "scale"}, %{{[^:]*}}: tensor<i32> {amp.state = "growth_tracker"})
// HYST-SAME:       %[[W:[^:]*]]: tensor<4xf32>, %[[S:[^:]*]]: tensor<f32> {amp.state = "scale"}, %{{[^:]*}}: tensor<i32> {amp.state = "growth_tracker"}, %{{[^:]*}}: tensor<i32> {amp.state = "hysteresis"})
// STATIC-SAME:     %[[W:[^:]*]]: tensor<4xf32>)
// NONE-SAME:       %[[W:[^:]*]]: tensor<4xf32>)
// CHECK-SAME:      -> (tensor<f32>, tensor<4xf32>)
// CHECK-NOT:     amp.seed
// STATIC:        %[[S:.*]] = arith.constant dense<1.024000e+03> : tensor<f32>
// NONE:          %[[S:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK:         %[[G:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[X]] : tensor<f32>, tensor<4xf32>)
// CHECK:         amp.update grads(%[[G]] : tensor<4xf32>) state(%[[W]] : tensor<4xf32>)
// CHECK:         return %{{.*}}, %{{.*}} : tensor<f32>, tensor<4xf32>
func.func @step(%x: tensor<4xf32>, %w: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%x : tensor<4xf32>) outs(%acc : tensor<f32>) dimensions = [0]
    (%in: f32, %out: f32) {
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  %seed = amp.seed %loss : tensor<f32>
  %e4 = tensor.empty() : tensor<4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i) -> ()>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%seed, %x : tensor<f32>, tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
  ^bb0(%s: f32, %v: f32, %o: f32):
    %m = arith.mulf %s, %v : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %new = amp.update grads(%g : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%dw: tensor<4xf32>, %w0: tensor<4xf32>):
    %w1 = arith.subf %w0, %dw : tensor<4xf32>
    amp.yield %w1 : tensor<4xf32>
  } : tensor<4xf32>
  return %loss, %new : tensor<f32>, tensor<4xf32>
}

// -----

// A loss of another shape and type: the f32 scale is broadcast and rounded
// to f16 on the device; constants are rounded at compile time.

// CHECK-LABEL: func.func @f16_vector_loss(
// DYN-SAME:        %[[S:[^:]*]]: tensor<f32> {amp.state = "scale"}
// DYN:           %[[E:.*]] = tensor.empty() : tensor<4xf16>
// DYN:           %[[B:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel"]} ins(%[[S]] : tensor<f32>) outs(%[[E]] : tensor<4xf16>)
// DYN-NEXT:      ^bb0(%[[IN:.*]]: f32, %{{.*}}: f16):
// DYN-NEXT:        %[[T:.*]] = arith.truncf %[[IN]] : f32 to f16
// DYN-NEXT:        linalg.yield %[[T]] : f16
// DYN:           return %[[B]]
// STATIC:        %[[C:.*]] = arith.constant dense<1.024000e+03> : tensor<4xf16>
// STATIC:        return %[[C]]
// NONE:          %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<4xf16>
// NONE:          return %[[C]]
func.func @f16_vector_loss(%loss: tensor<4xf16>) -> tensor<4xf16> {
  %seed = amp.seed %loss : tensor<4xf16>
  return %seed : tensor<4xf16>
}

// -----

// A loss of dynamic shape: the seed takes the loss's sizes.

// CHECK-LABEL: func.func @dynamic_loss(
// CHECK-SAME:      %[[L:[^:]*]]: tensor<?xf32>
// DYN:           %[[C0:.*]] = arith.constant 0 : index
// DYN:           %[[D:.*]] = tensor.dim %[[L]], %[[C0]] : tensor<?xf32>
// DYN:           %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?xf32>
// DYN:           %[[B:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<?xf32>)
// DYN:           return %[[B]]
// STATIC:        %[[V:.*]] = arith.constant 1.024000e+03 : f32
// STATIC:        %[[D:.*]] = tensor.dim %[[L]], %{{.*}} : tensor<?xf32>
// STATIC:        %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?xf32>
// STATIC:        %[[F:.*]] = linalg.fill ins(%[[V]] : f32) outs(%[[E]] : tensor<?xf32>)
// STATIC:        return %[[F]]
// NONE:          %[[V:.*]] = arith.constant 1.000000e+00 : f32
// NONE:          %[[F:.*]] = linalg.fill ins(%[[V]] : f32)
// NONE:          return %[[F]]
func.func @dynamic_loss(%loss: tensor<?xf32>) -> tensor<?xf32> {
  %seed = amp.seed %loss : tensor<?xf32>
  return %seed : tensor<?xf32>
}

// -----

// A function without markers is not a step and stays as it is.

// CHECK-LABEL: func.func @not_a_step(
// CHECK-SAME:      %{{[^:]*}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    return
func.func @not_a_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
