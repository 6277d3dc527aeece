// RUN: amp-opt %s --split-input-file --amp-cpu-approximate-math | FileCheck %s

// f32 exp, expm1, log, log1p, tanh and erf, on vectors and scalars, become
// polynomial approximations: arithmetic on the operand's own type.

// CHECK-LABEL: func.func @approximated(
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.log
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.erf
// CHECK:         arith.mulf {{.*}} : vector<16xf32>
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.log
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.erf
// CHECK:         return
func.func @approximated(%v: vector<16xf32>, %s: f32) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, f32) {
  %e = math.exp %v : vector<16xf32>
  %m = math.expm1 %v : vector<16xf32>
  %l = math.log %v : vector<16xf32>
  %p = math.log1p %v : vector<16xf32>
  %t = math.tanh %v : vector<16xf32>
  %r = math.erf %s : f32
  return %e, %m, %l, %p, %t, %r : vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, f32
}

// -----

// Inside a linalg body too (the ops amp-cpu-vectorize leaves as loops).

// CHECK-LABEL: func.func @in_a_body(
// CHECK:         linalg.generic
// CHECK-NOT:     math.erf
// CHECK:         linalg.yield
func.func @in_a_body(%x: memref<7xf32>, %y: memref<7xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<7xf32>) outs(%y : memref<7xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Other functions, and other element types, stay for convert-math-to-llvm
// and convert-math-to-libm.

// CHECK-LABEL: func.func @kept(
// CHECK:         math.sin %{{.*}} : vector<16xf32>
// CHECK:         math.exp %{{.*}} : vector<16xf16>
// CHECK:         math.exp %{{.*}} : f64
func.func @kept(%v: vector<16xf32>, %h: vector<16xf16>, %d: f64) -> (vector<16xf32>, vector<16xf16>, f64) {
  %s = math.sin %v : vector<16xf32>
  %e = math.exp %h : vector<16xf16>
  %f = math.exp %d : f64
  return %s, %e, %f : vector<16xf32>, vector<16xf16>, f64
}
