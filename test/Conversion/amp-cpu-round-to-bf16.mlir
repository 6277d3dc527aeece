// RUN: amp-opt %s --split-input-file --amp-cpu-round-to-bf16 | FileCheck %s

// f32 -> bf16 on vectors: integer rounding to nearest even on the f32 bits,
// NaNs replaced by the quiet NaN of their sign, with integer selects only.

// CHECK-LABEL: func.func @vector(
// CHECK-SAME:      %[[X:.*]]: vector<16xf32>
// CHECK-NOT:     arith.truncf
// CHECK-DAG:     %[[SIXTEEN:.*]] = arith.constant dense<16> : vector<16xi32>
// CHECK-DAG:     %[[ONE:.*]] = arith.constant dense<1> : vector<16xi32>
// CHECK-DAG:     %[[HALF:.*]] = arith.constant dense<32767> : vector<16xi32>
// CHECK-DAG:     %[[SIGN:.*]] = arith.constant dense<-2147483648> : vector<16xi32>
// CHECK-DAG:     %[[QUIET:.*]] = arith.constant dense<2143289344> : vector<16xi32>
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[X]] : vector<16xf32> to vector<16xi32>
// CHECK:         %[[SHIFTED:.*]] = arith.shrui %[[BITS]], %[[SIXTEEN]]
// CHECK:         %[[LOWEST:.*]] = arith.andi %[[SHIFTED]], %[[ONE]]
// CHECK:         %[[BIAS:.*]] = arith.addi %[[LOWEST]], %[[HALF]]
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : vector<16xf32>
// CHECK:         %[[SIGNBIT:.*]] = arith.andi %[[BITS]], %[[SIGN]]
// CHECK:         %[[QNAN:.*]] = arith.ori %[[SIGNBIT]], %[[QUIET]]
// CHECK:         %[[SUM:.*]] = arith.addi %[[BITS]], %[[BIAS]]
// CHECK:         %[[ROUNDED:.*]] = arith.select %[[NAN]], %[[QNAN]], %[[SUM]] : vector<16xi1>, vector<16xi32>
// CHECK:         %[[UPPER:.*]] = arith.shrui %[[ROUNDED]], %[[SIXTEEN]]
// CHECK:         %[[HIGH:.*]] = arith.trunci %[[UPPER]] : vector<16xi32> to vector<16xi16>
// CHECK:         %[[R:.*]] = arith.bitcast %[[HIGH]] : vector<16xi16> to vector<16xbf16>
// CHECK:         return %[[R]]
func.func @vector(%x: vector<16xf32>) -> vector<16xbf16> {
  %h = arith.truncf %x : vector<16xf32> to vector<16xbf16>
  return %h : vector<16xbf16>
}

// -----

// Scalars too; the extension back is left to LLVM (a shift on every x86).

// CHECK-LABEL: func.func @scalar(
// CHECK-NOT:     arith.truncf
// CHECK:         arith.bitcast %{{.*}} : f32 to i32
// CHECK:         arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK:         %[[H:.*]] = arith.bitcast %{{.*}} : i16 to bf16
// CHECK:         arith.extf %[[H]] : bf16 to f32
func.func @scalar(%x: f32) -> f32 {
  %h = arith.truncf %x : f32 to bf16
  %e = arith.extf %h : bf16 to f32
  return %e : f32
}

// -----

// Other truncations stay: f16 (F16C rounds it), f64 -> bf16, and rounding
// modes other than to nearest even.

// CHECK-LABEL: func.func @kept(
// CHECK:         arith.truncf %{{.*}} : vector<8xf32> to vector<8xf16>
// CHECK:         arith.truncf %{{.*}} : f64 to bf16
// CHECK:         arith.truncf %{{.*}} toward_zero : f32 to bf16
// CHECK-NOT:     arith.bitcast
func.func @kept(%x: vector<8xf32>, %d: f64, %s: f32) -> (vector<8xf16>, bf16, bf16) {
  %h = arith.truncf %x : vector<8xf32> to vector<8xf16>
  %b = arith.truncf %d : f64 to bf16
  %z = arith.truncf %s toward_zero : f32 to bf16
  return %h, %b, %z : vector<8xf16>, bf16, bf16
}
