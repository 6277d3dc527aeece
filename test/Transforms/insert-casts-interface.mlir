// RUN: amp-opt %s --amp-insert-casts | FileCheck %s
// RUN: amp-opt %s --amp-insert-casts=explain=true --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: amp-opt %s --amp-insert-casts="explain=true policy=%S/Inputs/amp-test-policy.json" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: amp-opt %s --amp-insert-casts="explain=true policy=tensor-cores-only" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=TCO
// RUN: amp-opt %s --amp-insert-casts="explain=true policy=mindspore-o2" --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=O2

// The ops of amp_test (test/lib), a dialect amp does not know, give their
// category through PrecisionOpInterface in C++: contract is allow with an f32
// accumulator, scale infer, logsumexp deny. No policy names them.

// CHECK-LABEL: func.func @by_the_interface
// CHECK-SAME:  (%[[X:.*]]: tensor<4x4xf32>, %[[W:.*]]: tensor<4x4xf32>, %[[ACC:.*]]: tensor<4x4xf32>)
// CHECK-DAG:   %[[W16:.*]] = arith.truncf %[[W]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-DAG:   %[[X16:.*]] = arith.truncf %[[X]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK:       %[[C0:.*]] = amp_test.contract %[[X16]], %[[W16]], %[[ACC]] : tensor<4x4xf16>, tensor<4x4xf16>, tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK:       %[[C016:.*]] = arith.truncf %[[C0]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK:       %[[S:.*]] = amp_test.scale %[[C016]], %[[C016]] : tensor<4x4xf16>, tensor<4x4xf16> -> tensor<4x4xf16>
// CHECK:       %[[C1:.*]] = amp_test.contract %[[S]], %[[W16]], %[[ACC]] : tensor<4x4xf16>, tensor<4x4xf16>, tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK:       %[[L:.*]] = amp_test.logsumexp %[[C1]] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK:       return %[[L]]

// EXPLAIN: :41:8: remark: f16 allow: default of amp_test.contract: a contraction into f32; accumulates in f32
// EXPLAIN: :42:8: remark: f16 infer: default of amp_test.scale: computes in its inputs' type; infer and clear ops between allow ops become allow
// EXPLAIN: :43:8: remark: f16 allow: default of amp_test.contract
// EXPLAIN: :44:8: remark: f32 deny: default of amp_test.logsumexp: its exponentials overflow the low types

// A policy file overrides the defaults by name.
// POLICY: :41:8: remark: f32 deny: {{.*}}amp-test-policy.json:3: add.deny; accumulates in f32
// POLICY: :42:8: remark: f32 infer: default of amp_test.scale: {{.*}}; deny spreads forward
// POLICY: :44:8: remark: f16 allow: {{.*}}amp-test-policy.json:4: add.allow

// A preset takes only some categories of defaults: tensor-cores-only the
// allow ones, mindspore-o2 also the deny ones, never the infer ones.
// TCO: :41:8: remark: f16 allow: default of amp_test.contract
// TCO: :42:8: remark: f32 deny: 'amp_test.scale' is in no list (unknown-ops=deny)
// TCO: :44:8: remark: f32 deny: 'amp_test.logsumexp' is in no list (unknown-ops=deny)
// O2: :42:8: remark: f16 allow: 'amp_test.scale' is in no list (unknown-ops=allow)
// O2: :44:8: remark: f32 deny: default of amp_test.logsumexp

func.func @by_the_interface(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = amp_test.contract %x, %w, %acc : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %1 = amp_test.scale %0, %0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %2 = amp_test.contract %1, %w, %acc : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %3 = amp_test.logsumexp %2 : tensor<4x4xf32> -> tensor<4x4xf32>
  return %3 : tensor<4x4xf32>
}
