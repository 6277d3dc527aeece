// RUN: amp-opt %s --split-input-file | amp-opt --split-input-file | FileCheck %s
// RUN: amp-opt %s --split-input-file --mlir-print-op-generic | amp-opt --split-input-file | FileCheck %s
// RUN: amp-opt %s --split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// A full step in the spec's custom form: the printed form parses back to the
// same IR, and the generic form parses to the custom form.

// CHECK-LABEL: func.func @sgd_step
// CHECK:         %[[SEED:.*]] = amp.seed %{{.*}} : tensor<f32>
// CHECK:         %[[NEW:.*]]:2 = amp.update grads(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<4xf32>) state(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<4xf32>) {
// CHECK-NEXT:    ^bb0(%[[DW:.*]]: tensor<8x4xf32>, %[[DB:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<4xf32>):
// CHECK:           arith.subf %[[W]], %{{.*}} : tensor<8x4xf32>
// CHECK:           amp.yield %{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<4xf32>
// CHECK-NEXT:    } : tensor<8x4xf32>, tensor<4xf32>
// GENERIC-LABEL: "func.func"
// GENERIC:         "amp.seed"(%{{.*}}) : (tensor<f32>) -> tensor<f32>
// GENERIC:         "amp.update"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 2, 2, 0>}> ({
// GENERIC:         "amp.yield"(%{{.*}}, %{{.*}}) : (tensor<8x4xf32>, tensor<4xf32>) -> ()
// GENERIC-NEXT:    }) : (tensor<8x4xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<4xf32>) -> (tensor<8x4xf32>, tensor<4xf32>)
func.func @sgd_step(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>)
    -> (tensor<f32>, tensor<8x4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %loss = linalg.reduce ins(%x : tensor<2x8xf32>) outs(%acc : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %out: f32) {
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  %seed = amp.seed %loss : tensor<f32>
  %gw = linalg.fill ins(%zero : f32) outs(%w : tensor<8x4xf32>) -> tensor<8x4xf32>
  %gb = linalg.fill ins(%zero : f32) outs(%b : tensor<4xf32>) -> tensor<4xf32>
  %new:2 = amp.update grads(%gw, %gb : tensor<8x4xf32>, tensor<4xf32>)
                      state(%w, %b : tensor<8x4xf32>, tensor<4xf32>) {
  ^bb0(%dw: tensor<8x4xf32>, %db: tensor<4xf32>, %w0: tensor<8x4xf32>, %b0: tensor<4xf32>):
    %w1 = arith.subf %w0, %dw : tensor<8x4xf32>
    %b1 = arith.subf %b0, %db : tensor<4xf32>
    amp.yield %w1, %b1 : tensor<8x4xf32>, tensor<4xf32>
  } : tensor<8x4xf32>, tensor<4xf32>
  return %loss, %new#0, %new#1 : tensor<f32>, tensor<8x4xf32>, tensor<4xf32>
}

// -----

// The same kind of step written in the generic form.

// CHECK-LABEL: func.func @generic_form
// CHECK:         amp.seed %{{.*}} : tensor<4xf16>
// CHECK:         amp.update grads(%{{.*}} : tensor<4xf16>) state(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<i32>) {
// CHECK:           amp.yield %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<i32>
// CHECK:         } : tensor<4xf32>, tensor<i32>
// GENERIC-LABEL: "func.func"
// GENERIC:         <{operandSegmentSizes = array<i32: 1, 2, 0>}>
func.func @generic_form(%loss: tensor<4xf16>, %p: tensor<4xf32>, %t: tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
  %seed = "amp.seed"(%loss) : (tensor<4xf16>) -> tensor<4xf16>
  %new:2 = "amp.update"(%seed, %p, %t) <{operandSegmentSizes = array<i32: 1, 2, 0>}> ({
  ^bb0(%g: tensor<4xf16>, %p0: tensor<4xf32>, %t0: tensor<i32>):
    "amp.yield"(%p0, %t0) : (tensor<4xf32>, tensor<i32>) -> ()
  }) : (tensor<4xf16>, tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<i32>)
  return %new#0, %new#1 : tensor<4xf32>, tensor<i32>
}

// -----

// An update with no gradients (a pure state transition) prints without the
// grads group; attributes of the dialect round-trip on ops, arguments and
// results.

// CHECK-LABEL: func.func @attributes
// CHECK-SAME:    (%{{.*}}: tensor<4xf32> {amp.init = "normal:0.02", amp.name = "fc.weight"}, %{{.*}}: tensor<f32> {amp.state = "scale"})
// CHECK-SAME:    -> (tensor<4xf32> {amp.name = "fc.weight"}, tensor<i1> {amp.state = "found_inf"})
// CHECK:         arith.addf %{{.*}} {amp.precision = "f16"} : tensor<4xf32>
// CHECK:         amp.update state(%{{.*}} : tensor<4xf32>) {
// CHECK:         } : tensor<4xf32>
func.func @attributes(%p: tensor<4xf32> {amp.init = "normal:0.02", amp.name = "fc.weight"}, %s: tensor<f32> {amp.state = "scale"})
    -> (tensor<4xf32> {amp.name = "fc.weight"}, tensor<i1> {amp.state = "found_inf"}) {
  %twice = arith.addf %p, %p {amp.precision = "f16"} : tensor<4xf32>
  %new = amp.update state(%twice : tensor<4xf32>) {
  ^bb0(%p0: tensor<4xf32>):
    amp.yield %p0 : tensor<4xf32>
  } : tensor<4xf32>
  %false = arith.constant dense<false> : tensor<i1>
  return %new, %false : tensor<4xf32>, tensor<i1>
}

// -----

// Inputs: values the update only reads (a learning rate fed at every step),
// block arguments after the state.

// CHECK-LABEL: func.func @inputs
// CHECK:         amp.update grads(%{{.*}} : tensor<4xf32>) state(%{{.*}} : tensor<4xf32>) inputs(%{{.*}} : tensor<f32>) {
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %[[LR:.*]]: tensor<f32>):
// GENERIC-LABEL: "func.func"
// GENERIC:         "amp.update"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1>}> ({
func.func @inputs(%w: tensor<4xf32>, %lr: tensor<f32>) -> tensor<4xf32> {
  %new = amp.update grads(%w : tensor<4xf32>) state(%w : tensor<4xf32>) inputs(%lr : tensor<f32>) {
  ^bb0(%g: tensor<4xf32>, %w0: tensor<4xf32>, %rate: tensor<f32>):
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.broadcast ins(%rate : tensor<f32>) outs(%e : tensor<4xf32>) dimensions = [0]
    %s = arith.mulf %r, %g : tensor<4xf32>
    %n = arith.subf %w0, %s : tensor<4xf32>
    amp.yield %n : tensor<4xf32>
  } : tensor<4xf32>
  return %new : tensor<4xf32>
}
