// The JSON report counts ops per category and precision, the casts the
// pass inserted and the data they convert per step, next to naive per-op
// casting; the DOT picture colors ops by precision and marks casts, and
// Graphviz renders it.
// RUN: amp-opt %s --amp-insert-casts="report=%t.json dot=%t.dot" -o /dev/null
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: FileCheck %s --check-prefix=DOT < %t.dot
// RUN: dot -Tsvg %t.dot -o %t.svg
// RUN: amp-opt %s --amp-insert-casts="dtype=bf16 report=%t.bf16.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=BF16 < %t.bf16.json
// RUN: not amp-opt %s --amp-insert-casts="report=%t.missing/r.json" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOWRITE

// Four truncf: %x and %w (32 elements each), %u (16, cast before the clear
// ops that lead to the second matmul) and the first matmul's accumulator
// (16, read by the low relu): 96 elements, 2 + 4 bytes each. Naive casting
// converts both matmuls' inputs and results: 128 elements.
// JSON:      "casts": {
// JSON-NEXT:   "bytes": 576,
// JSON-NEXT:   "casts": 4,
// JSON-NEXT:   "dynamic_casts": 0,
// JSON-NEXT:   "elements": 96,
// JSON-NEXT:   "extf": 0,
// JSON-NEXT:   "truncf": 4
// JSON-NEXT: },
// JSON-NEXT: "constants_converted": 0,
// JSON-NEXT: "decisions": [
// JSON-NEXT:   {
// JSON-NEXT:     "location": "{{.*}}insert-casts-report.mlir:[[@LINE+73]]:8",
// JSON-NEXT:     "op": "tensor.empty",
// JSON-NEXT:     "precision": "f32",
// JSON-NEXT:     "reason": "source: holds no data: built again in each type its users need",
// JSON-NEXT:     "role": "source"
// JSON-NEXT:   },
// JSON:          "category": "allow",
// JSON-NEXT:     "location": "{{.*}}insert-casts-report.mlir:[[@LINE+68]]:8",
// JSON-NEXT:     "op": "linalg.matmul",
// JSON-NEXT:     "precision": "f16",
// JSON-NEXT:     "reason": "f16 allow: default of linalg.matmul: a linalg contraction; accumulates in f32",
// JSON-NEXT:     "role": "painted"
// JSON-NEXT:   },
// JSON:      ],
// JSON-NEXT: "dtype": "f16",
// JSON-NEXT: "naive": {
// JSON-NEXT:   "bytes": 768,
// JSON-NEXT:   "casts": 6,
// JSON-NEXT:   "dynamic_casts": 0,
// JSON-NEXT:   "elements": 128,
// JSON-NEXT:   "extf": 2,
// JSON-NEXT:   "truncf": 4
// JSON-NEXT: },
// JSON-NEXT: "ops": {
// JSON-NEXT:   "categories": {
// JSON-NEXT:     "allow": {
// JSON-NEXT:       "f16": 2,
// JSON-NEXT:       "f32": 0
// JSON-NEXT:     },
// JSON-NEXT:     "clear": {
// JSON-NEXT:       "f16": 2,
// JSON-NEXT:       "f32": 0
// JSON-NEXT:     },
// JSON-NEXT:     "deny": {
// JSON-NEXT:       "f16": 0,
// JSON-NEXT:       "f32": 1
// JSON-NEXT:     },
// JSON-NEXT:     "infer": {
// JSON-NEXT:       "f16": 1,
// JSON-NEXT:       "f32": 0
// JSON-NEXT:     }
// JSON-NEXT:   },
// JSON-NEXT:   "f16": 5,
// JSON-NEXT:   "f32": 1,
// JSON-NEXT:   "fixed": 0,
// JSON-NEXT:   "painted": 6,
// JSON-NEXT:   "sources": 2
// JSON-NEXT: },
// JSON-NEXT: "policy": "torch"

// BF16: "dtype": "bf16",

// DOT:      digraph amp {
// DOT:        subgraph cluster_0 {
// DOT-NEXT:     label="@step";
// DOT-NEXT:     arg0 [label="%arg0\ntensor<4x8xf32>", shape=ellipse];
// DOT:          op0 [label="arith.truncf\ntensor<4x4xf16>", shape=diamond, style=filled, fillcolor=gold];
// DOT-NEXT:     arg2 -> op0;
// DOT:          op6 [label="linalg.matmul\nf16 allow", shape=box, style=filled, fillcolor=palegreen];
// DOT:          op7 [label="arith.truncf\ntensor<4x4xf16>", shape=diamond, style=filled, fillcolor=gold];
// DOT-NEXT:     op6 -> op7;
// DOT-NEXT:     op8 [label="linalg.generic\nf16 infer", shape=box, style=filled, fillcolor=palegreen];
// DOT-NEXT:     op7 -> op8;
// DOT:          op9 [label="tensor.collapse_shape\nf16 clear", shape=box, style=filled, fillcolor=palegreen];
// DOT:          op12 [label="math.exp\nf32 deny", shape=box, style=filled, fillcolor=lightpink];
// DOT-NEXT:     op11 -> op12;
// DOT:        }
// DOT-NEXT: }

// NOWRITE: error: option 'report': cannot write '{{.*}}missing/r.json'
#id = affine_map<(i, j) -> (i, j)>
func.func @step(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>, %u: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = arith.maximumf %v, %zero : f32
    linalg.yield %y : f32
  } -> tensor<4x4xf32>
  %v1 = tensor.collapse_shape %u [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %v2 = tensor.expand_shape %v1 [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  %n = linalg.matmul ins(%r, %v2 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = math.exp %n : tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}
