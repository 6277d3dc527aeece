// RUN: amp-opt %s --split-input-file --amp-drop-contract-attributes | FileCheck %s

// The contract's amp.* attributes go from the arguments and results of every
// function; other attributes stay.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %{{.*}}: tensor<4xf32> {llvm.noalias}, %{{.*}}: tensor<f32>)
// CHECK-SAME:      -> (tensor<4xf32>, tensor<i1>)
// CHECK-NOT:     amp.
func.func @step(%w: tensor<4xf32> {amp.name = "w", llvm.noalias}, %s: tensor<f32> {amp.state = "scale"})
    -> (tensor<4xf32> {amp.name = "w"}, tensor<i1> {amp.state = "found_inf"}) {
  %false = arith.constant dense<false> : tensor<i1>
  return %w, %false : tensor<4xf32>, tensor<i1>
}

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:      %{{.*}}: tensor<4xf32>) -> tensor<4xf32>
func.func @forward(%x: tensor<4xf32> {amp.name = "input0"}) -> (tensor<4xf32> {amp.name = "logits"}) {
  return %x : tensor<4xf32>
}
