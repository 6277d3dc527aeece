// RUN: amp-opt %s --amp-insert-casts=explain=true --mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s
// RUN: amp-opt %s --amp-insert-casts=explain=true -o /dev/null 2>&1 | grep -c "remark:" | FileCheck %s --check-prefix=COUNT
// One remark per op: its precision, category and the reason (policy entry,
// op default, body op of a generic, pin, or the op a rule propagated from).
// COUNT: 12
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @explain(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>, %h: tensor<4x4xf64>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf64>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %0 = math.exp %x : tensor<4x4xf32>
  %1 = arith.addf %0, %x : tensor<4x4xf32>
  %2 = linalg.matmul ins(%1, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%2 : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %4 = linalg.matmul ins(%3, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %er = tensor.empty() : tensor<4xf32>
  %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %5 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%3 : tensor<4x4xf32>) outs(%zr : tensor<4xf32>) {
  ^bb0(%v: f32, %s: f32):
    %r = arith.addf %v, %s : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %6 = arith.mulf %4, %4 {amp.precision = "f16"} : tensor<4x4xf32>
  %7 = arith.addf %h, %h : tensor<4x4xf64>
  return %6, %5, %7 : tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf64>
}


// CHECK: :10:8: remark: source: holds no data: built again in each type its users need
// CHECK: :11:10: remark: source: holds no data: built again in each type its users need
// CHECK: :12:8: remark: f32 deny: preset torch: exp (autocast fp32 list)
// CHECK: :13:8: remark: f32 infer: default of arith.addf: computes elementwise in its inputs' type; deny spreads forward through infer and clear ops, propagated from 'math.exp' at loc("{{.*}}explain.mlir":12:8)
// CHECK: :14:8: remark: f16 allow: default of linalg.matmul: a linalg contraction; accumulates in f32
// CHECK: :15:8: remark: f16 infer: default of linalg.generic: an elementwise op whose strictest body op 'arith.maximumf' is infer (default of arith.maximumf: {{.*}}); infer and clear ops between allow ops become allow, propagated from 'linalg.matmul' at loc("{{.*}}explain.mlir":21:8)
// CHECK: :21:8: remark: f16 allow: default of linalg.matmul: {{.*}}; accumulates in f32
// CHECK: :22:9: remark: source: holds no data
// CHECK: :23:9: remark: source: holds no data
// CHECK: :24:8: remark: f16 infer: default of linalg.generic: a reduction whose strictest body op 'arith.addf' is infer ({{.*}}); accumulates in f32; follows its inputs, all low, e.g. 'linalg.generic' at loc("{{.*}}explain.mlir":15:8)
// CHECK: :30:8: remark: f16 allow: pinned by amp.precision = "f16"
// CHECK: :31:8: remark: f32 fixed: has f64 values, which are never converted
// CHECK-NOT: remark
