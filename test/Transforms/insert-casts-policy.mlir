// A policy file extends a preset and may set the low type, which an
// explicit `dtype` overrides; bad files and bad option values are errors
// that name the option (and, for files, the file, JSON path and line).
// RUN: amp-opt %s --amp-insert-casts=policy=%S/Inputs/cbrt-policy.json | FileCheck %s
// RUN: amp-opt %s --amp-insert-casts="policy=%S/Inputs/cbrt-policy.json dtype=f16" | FileCheck %s --check-prefix=F16
// RUN: not amp-opt %s --amp-insert-casts=policy=%S/Inputs/bad-policy.json 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not amp-opt %s --amp-insert-casts=policy=%S/Inputs/missing.json 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not amp-opt %s --amp-insert-casts=dtype=f32 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not amp-opt %s --amp-insert-casts=unknown-ops=maybe 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: amp-opt %s --amp-insert-casts=unknown-ops=allow | FileCheck %s --check-prefix=ALLOW
// RUN: amp-opt %s --amp-insert-casts=policy=mindspore-o3 | FileCheck %s --check-prefix=ALLOW

// The file adds math.cbrt to the allow list and sets dtype bf16.
// CHECK-LABEL: func.func @cbrt(
// CHECK-SAME: %[[A:.*]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[A]] : tensor<4xf32> to tensor<4xbf16>
// CHECK-NEXT: %[[C:.*]] = math.cbrt %[[T]] : tensor<4xbf16>
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[C]] : tensor<4xbf16> to tensor<4xf32>
// CHECK-NEXT: return %[[E]] : tensor<4xf32>

// F16-LABEL: func.func @cbrt(
// F16: math.cbrt %{{.*}} : tensor<4xf16>

// BAD: error: option 'policy': {{.*}}bad-policy.json:4:28: error: $.add.allow[1]: expected an op name such as "math.exp", got 42
// MISSING: error: option 'policy': {{.*}}missing.json: error: cannot read the policy file
// DTYPE: error: option 'dtype' must be 'f16' or 'bf16', got 'f32'
// UNKNOWN: error: option 'unknown-ops' must be 'deny', 'infer', 'allow' or 'error', got 'maybe'

// unknown-ops=allow (the mode of MindSpore's O2 and O3 presets) makes an op
// in no list low, even on f32 arguments.
// ALLOW-LABEL: func.func @cbrt(
// ALLOW-SAME: %[[A:.*]]: tensor<4xf32>) -> tensor<4xf32> {
// ALLOW-NEXT: %[[T:.*]] = arith.truncf %[[A]] : tensor<4xf32> to tensor<4xf16>
// ALLOW-NEXT: %[[C:.*]] = math.cbrt %[[T]] : tensor<4xf16>
// ALLOW-NEXT: %[[E:.*]] = arith.extf %[[C]] : tensor<4xf16> to tensor<4xf32>
// ALLOW-NEXT: return %[[E]] : tensor<4xf32>
func.func @cbrt(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = math.cbrt %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
