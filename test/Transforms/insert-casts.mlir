// RUN: amp-opt %s --split-input-file --amp-insert-casts | FileCheck %s
// RUN: amp-opt %s --split-input-file --amp-insert-casts=policy=tf | FileCheck %s --check-prefix=TF
// RUN: amp-opt %s --split-input-file --amp-insert-casts=policy=mindspore | FileCheck %s --check-prefix=MS
// RUN: amp-opt %s --split-input-file --amp-insert-casts=policy=tensor-cores-only | FileCheck %s --check-prefix=TCO
// RUN: amp-opt %s --split-input-file --amp-insert-casts=unknown-ops=infer | FileCheck %s --check-prefix=INFER

// Each function checks one rule of precision assignment; every line of the
// rewritten function is checked, so a cast too many or too few fails.

// allow: a matmul reads f16 inputs and keeps its f32 accumulator; nothing
// after it because its only user is f32.
// CHECK-LABEL: func.func @allow_matmul(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<8x16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<8x16xf32> to tensor<8x16xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V2]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x8xf16>, tensor<8x16xf16>) outs(%[[V3]] : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[V4]] : tensor<4x16xf32>
// CHECK-NEXT: }
func.func @allow_matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// infer and clear ops between allow ops become allow: one truncf after the
// first matmul, none between the ops of the chain.
// CHECK-LABEL: func.func @between_allow(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.truncf %[[V2]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = arith.mulf %[[V3]], %[[V3]] : tensor<4x4xf16>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x4xf16>
// CHECK-NEXT: %[[TRANSPOSED:[A-Za-z0-9_]+]] = linalg.transpose ins(%[[V4]] : tensor<4x4xf16>) outs(%[[V5]] : tensor<4x4xf16>) permutation = [1, 0]
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[TRANSPOSED]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: return %[[V6]] : tensor<4x4xf32>
// CHECK-NEXT: }
func.func @between_allow(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = arith.mulf %m, %m : tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %tt = linalg.transpose ins(%t : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  %n = linalg.matmul ins(%tt, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %n : tensor<4x4xf32>
}

// -----

// The loss seed is deny: loss scaling turns it into S (2^16 by default, out
// of f16's range), so the backward starts in f32 and is cast to the low type
// only at the next allow op.
// CHECK-LABEL: func.func @seed_stays_f32(
// CHECK:         %[[SEED:.*]] = amp.seed %{{.*}} : tensor<4x4xf32>
// CHECK-NEXT:    %[[GRAD:.*]] = arith.mulf %[[SEED]], %{{.*}} : tensor<4x4xf32>
// CHECK-NEXT:    %[[LOW:.*]] = arith.truncf %[[GRAD]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT:    linalg.matmul ins(%[[LOW]], %{{.*}} : tensor<4x4xf16>, tensor<4x4xf16>)
func.func @seed_stays_f32(%loss: tensor<4x4xf32>, %a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %seed = amp.seed %loss : tensor<4x4xf32>
  %g = arith.mulf %seed, %m : tensor<4x4xf32>
  %n = linalg.matmul ins(%g, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %n : tensor<4x4xf32>
}

// -----

// deny: exp stays f32 and reads the f32 accumulator directly.
// CHECK-LABEL: func.func @deny_exp(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = math.exp %[[V2]] : tensor<4x4xf32>
// CHECK-NEXT: return %[[V3]] : tensor<4x4xf32>
// CHECK-NEXT: }
func.func @deny_exp(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = math.exp %m : tensor<4x4xf32>
  return %e : tensor<4x4xf32>
}

// -----

// grappler's example chain deny -> infer -> clear -> infer -> clear -> allow
// -> infer becomes f32 f32 f32 f32 low low f32: deny spreads through the
// infer ops and the clear op between them, the clear op before the matmul
// joins it, and the last infer op reads the f32 accumulator.
// CHECK-LABEL: func.func @grappler_chain(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = math.exp %[[ARG0]] : tensor<4x4xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = arith.addf %[[V1]], %[[ARG0]] : tensor<4x4xf32>
// CHECK-NEXT: %[[COLLAPSED:[A-Za-z0-9_]+]] = tensor.collapse_shape %[[V2]] {{\[\[}}0, 1]] : tensor<4x4xf32> into tensor<16xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.negf %[[COLLAPSED]] : tensor<16xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = arith.truncf %[[V3]] : tensor<16xf32> to tensor<16xf16>
// CHECK-NEXT: %[[EXPANDED:[A-Za-z0-9_]+]] = tensor.expand_shape %[[V4]] {{\[\[}}0, 1]] output_shape [4, 4] : tensor<16xf16> into tensor<4x4xf16>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[EXPANDED]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = arith.addf %[[V5]], %[[V5]] : tensor<4x4xf32>
// CHECK-NEXT: return %[[V6]] : tensor<4x4xf32>
// CHECK-NEXT: }
func.func @grappler_chain(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = math.exp %x : tensor<4x4xf32>
  %1 = arith.addf %0, %x : tensor<4x4xf32>
  %2 = tensor.collapse_shape %1 [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  %3 = arith.negf %2 : tensor<16xf32>
  %4 = tensor.expand_shape %3 [[0, 1]] output_shape [4, 4] : tensor<16xf32> into tensor<4x4xf32>
  %5 = linalg.matmul ins(%4, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %6 = arith.addf %5, %5 : tensor<4x4xf32>
  return %6 : tensor<4x4xf32>
}

// -----

// deny spreading wins over "between allow": the add reads exp's f32 result
// and is denied although it lies between two matmuls, so it runs in f32 and
// one truncf stands before the second matmul.
// CHECK-LABEL: func.func @deny_before_between(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = math.exp %[[ARG0]] : tensor<4x4xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = arith.addf %[[V2]], %[[V3]] : tensor<4x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.truncf %[[V4]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V5]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: return %[[V6]] : tensor<4x4xf32>
// CHECK-NEXT: }
func.func @deny_before_between(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = math.exp %a : tensor<4x4xf32>
  %s = arith.addf %m, %e : tensor<4x4xf32>
  %n = linalg.matmul ins(%s, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %n : tensor<4x4xf32>
}

// -----

// allow expands through clear ops upstream: the weight is cast before the
// transpose. Downstream, a clear op after a matmul with no low user stays
// f32 and reads the accumulator.
// CHECK-LABEL: func.func @allow_through_clear(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> tensor<16xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = tensor.empty() : tensor<8x4xf16>
// CHECK-NEXT: %[[TRANSPOSED:[A-Za-z0-9_]+]] = linalg.transpose ins(%[[V1]] : tensor<4x8xf16>) outs(%[[V2]] : tensor<8x4xf16>) permutation = [1, 0]
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V0]], %[[TRANSPOSED]] : tensor<4x8xf16>, tensor<8x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[COLLAPSED:[A-Za-z0-9_]+]] = tensor.collapse_shape %[[V3]] {{\[\[}}0, 1]] : tensor<4x4xf32> into tensor<16xf32>
// CHECK-NEXT: return %[[COLLAPSED]] : tensor<16xf32>
// CHECK-NEXT: }
func.func @allow_through_clear(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>, %acc: tensor<4x4xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<8x4xf32>
  %wt = linalg.transpose ins(%w : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
  %m = linalg.matmul ins(%x, %wt : tensor<4x8xf32>, tensor<8x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = tensor.collapse_shape %m [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----

// A weight used by the forward and the backward matmul is cast once.
// CHECK-LABEL: func.func @shared_weight(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<8x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x8xf32>) {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG2]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<8x4xf32> to tensor<8x4xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V3]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V2]], %[[V1]] : tensor<4x8xf16>, tensor<8x4xf16>) outs(%[[V4]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V6]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[V8:[A-Za-z0-9_]+]] = linalg.matmul indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}] ins(%[[V0]], %[[V1]] : tensor<4x4xf16>, tensor<8x4xf16>) outs(%[[V7]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[V5]], %[[V8]] : tensor<4x4xf32>, tensor<4x8xf32>
// CHECK-NEXT: }
func.func @shared_weight(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>, %dy: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %dx = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%dy, %w : tensor<4x4xf32>, tensor<8x4xf32>) outs(%acc2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y, %dx : tensor<4x4xf32>, tensor<4x8xf32>
}

// -----

// Loop-carried values agree: the iter_arg, its block argument, the yield
// and the result are all f16, with the init cast before the loop.
// CHECK-LABEL: func.func @scf_for(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[C0:[A-Za-z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[C4:[A-Za-z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = scf.for %[[ARG3:[A-Za-z0-9_]+]] = %[[C0]] to %[[C4]] step %[[C1]] iter_args(%[[ARG4:[A-Za-z0-9_]+]] = %[[V0]]) -> (tensor<4x4xf16>) {
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[ARG4]], %[[V1]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.truncf %[[V4]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = math.tanh %[[V5]] : tensor<4x4xf16>
// CHECK-NEXT: scf.yield %[[V6]] : tensor<4x4xf16>
// CHECK-NEXT: }
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.extf %[[V2]] : tensor<4x4xf16> to tensor<4x4xf32>
// CHECK-NEXT: return %[[V3]] : tensor<4x4xf32>
// CHECK-NEXT: }
func.func @scf_for(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> (tensor<4x4xf32>) {
    %m = linalg.matmul ins(%h, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
    %t = math.tanh %m : tensor<4x4xf32>
    scf.yield %t : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// A loop whose carried value meets deny stays f32 throughout.
// CHECK-LABEL: func.func @scf_for_deny(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[C0:[A-Za-z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[C4:[A-Za-z0-9_]+]] = arith.constant 4 : index
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = scf.for %[[ARG1:[A-Za-z0-9_]+]] = %[[C0]] to %[[C4]] step %[[C1]] iter_args(%[[ARG2:[A-Za-z0-9_]+]] = %[[ARG0]]) -> (tensor<4xf32>) {
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = math.exp %[[ARG2]] : tensor<4xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = arith.addf %[[V1]], %[[ARG2]] : tensor<4xf32>
// CHECK-NEXT: scf.yield %[[V2]] : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[V0]] : tensor<4xf32>
// CHECK-NEXT: }
func.func @scf_for_deny(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%h = %x) -> (tensor<4xf32>) {
    %e = math.exp %h : tensor<4xf32>
    %s = arith.addf %e, %h : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Pins win over the policy: a pinned matmul stays f32, a pinned add runs
// in f16.
// CHECK-LABEL: func.func @pins(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul {amp.precision = "f32"} ins(%[[ARG0]], %[[ARG1]] : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.addf %[[V1]], %[[V0]] {amp.precision = "f16"} : tensor<4x4xf16>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = arith.extf %[[V3]] : tensor<4x4xf16> to tensor<4x4xf32>
// CHECK-NEXT: return %[[V2]], %[[V4]] : tensor<4x4xf32>, tensor<4x4xf32>
// CHECK-NEXT: }
func.func @pins(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %m = linalg.matmul {amp.precision = "f32"} ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = arith.addf %a, %b {amp.precision = "f16"} : tensor<4x4xf32>
  return %m, %s : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// An op in no list is deny by default: f32, and its f32-ness spreads to the
// infer op after it.
// CHECK-LABEL: func.func @unknown_op(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.mulf %[[V2]], %[[V2]] : tensor<4x4xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = math.cbrt %[[V3]] : tensor<4x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.addf %[[V4]], %[[V4]] : tensor<4x4xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = arith.truncf %[[V5]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V6]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: return %[[V7]] : tensor<4x4xf32>
// CHECK-NEXT: }
// INFER-LABEL: func.func @unknown_op(
// INFER-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> tensor<4x4xf32> {
// INFER-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// INFER-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// INFER-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// INFER-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.truncf %[[V2]] : tensor<4x4xf32> to tensor<4x4xf16>
// INFER-NEXT: %[[V4:[A-Za-z0-9_]+]] = arith.mulf %[[V3]], %[[V3]] : tensor<4x4xf16>
// INFER-NEXT: %[[V5:[A-Za-z0-9_]+]] = math.cbrt %[[V4]] : tensor<4x4xf16>
// INFER-NEXT: %[[V6:[A-Za-z0-9_]+]] = arith.addf %[[V5]], %[[V5]] : tensor<4x4xf16>
// INFER-NEXT: %[[V7:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V6]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// INFER-NEXT: return %[[V7]] : tensor<4x4xf32>
// INFER-NEXT: }
func.func @unknown_op(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = arith.mulf %m, %m : tensor<4x4xf32>
  %u = math.cbrt %t : tensor<4x4xf32>
  %v = arith.addf %u, %u : tensor<4x4xf32>
  %n = linalg.matmul ins(%v, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %n : tensor<4x4xf32>
}

// -----

// f64 and integer values are never touched, even next to a matmul.
// CHECK-LABEL: func.func @f64_and_integers(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf64>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf64>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf64>, %[[ARG3:[A-Za-z0-9_]+]]: tensor<4xi32>) -> (tensor<4x4xf64>, tensor<4xi32>) {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[ARG0]], %[[ARG1]] : tensor<4x4xf64>, tensor<4x4xf64>) outs(%[[ARG2]] : tensor<4x4xf64>) -> tensor<4x4xf64>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.addi %[[ARG3]], %[[ARG3]] : tensor<4xi32>
// CHECK-NEXT: return %[[V0]], %[[V1]] : tensor<4x4xf64>, tensor<4xi32>
// CHECK-NEXT: }
func.func @f64_and_integers(%a: tensor<4x4xf64>, %b: tensor<4x4xf64>, %acc: tensor<4x4xf64>, %i: tensor<4xi32>) -> (tensor<4x4xf64>, tensor<4xi32>) {
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf64>, tensor<4x4xf64>) outs(%acc : tensor<4x4xf64>) -> tensor<4x4xf64>
  %j = arith.addi %i, %i : tensor<4xi32>
  return %m, %j : tensor<4x4xf64>, tensor<4xi32>
}

// -----

// Dynamic shapes: casts and empty tensors keep their dynamic sizes.
// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<?x?xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<?x?xf32>) -> tensor<?x?xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<?x?xf32> to tensor<?x?xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<?x?xf32> to tensor<?x?xf16>
// CHECK-NEXT: %[[C0:[A-Za-z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[DIM:[A-Za-z0-9_]+]] = tensor.dim %[[ARG0]], %[[C0]] : tensor<?x?xf32>
// CHECK-NEXT: %[[DIM_0:[A-Za-z0-9_]+]] = tensor.dim %[[ARG1]], %[[C1]] : tensor<?x?xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = tensor.empty(%[[DIM]], %[[DIM_0]]) : tensor<?x?xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V2]] : tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<?x?xf16>, tensor<?x?xf16>) outs(%[[V3]] : tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.truncf %[[V4]] : tensor<?x?xf32> to tensor<?x?xf16>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = arith.mulf %[[V5]], %[[V5]] : tensor<?x?xf16>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V6]], %[[V0]] : tensor<?x?xf16>, tensor<?x?xf16>) outs(%[[V3]] : tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK-NEXT: return %[[V7]] : tensor<?x?xf32>
// CHECK-NEXT: }
func.func @dynamic(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = arith.mulf %r, %r : tensor<?x?xf32>
  %r2 = linalg.matmul ins(%s, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r2 : tensor<?x?xf32>
}

// -----

// Constants are converted at compile time; one outside the f16 range keeps
// its user in f32.
// CHECK-LABEL: func.func @constants(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<2x2xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<2x2xf32> to tensor<2x2xf16>
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf16>
// CHECK-NEXT: %[[CST_0:[A-Za-z0-9_]+]] = arith.constant dense<1.000000e+06> : tensor<2x2xf32>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V0]], %[[CST]] : tensor<2x2xf16>, tensor<2x2xf16>) outs(%[[ARG1]] : tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = arith.mulf %[[V1]], %[[CST_0]] : tensor<2x2xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.truncf %[[V2]] : tensor<2x2xf32> to tensor<2x2xf16>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V3]], %[[CST]] : tensor<2x2xf16>, tensor<2x2xf16>) outs(%[[ARG1]] : tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: return %[[V1]], %[[V4]] : tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT: }
func.func @constants(%x: tensor<2x2xf32>, %acc: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %big = arith.constant dense<1.0e+06> : tensor<2x2xf32>
  %m = linalg.matmul ins(%x, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<2x2xf32>) -> tensor<2x2xf32>
  %s = arith.mulf %m, %big : tensor<2x2xf32>
  %n = linalg.matmul ins(%s, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %m, %n : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// The results of scf.if and the values carried by scf.while are nodes as
// well: both branches yield f16, the while loop carries f16.
// CHECK-LABEL: func.func @ifs(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: i1, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG3:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG2]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = scf.if %[[ARG0]] -> (tensor<4x4xf16>) {
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG3]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.truncf %[[V4]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = arith.mulf %[[V5]], %[[V5]] : tensor<4x4xf16>
// CHECK-NEXT: scf.yield %[[V6]] : tensor<4x4xf16>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[V1]] : tensor<4x4xf16>
// CHECK-NEXT: }
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V2]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG3]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: return %[[V3]] : tensor<4x4xf32>
// CHECK-NEXT: }
func.func @ifs(%c: i1, %a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = scf.if %c -> tensor<4x4xf32> {
    %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
    %t = arith.mulf %m, %m : tensor<4x4xf32>
    scf.yield %t : tensor<4x4xf32>
  } else {
    scf.yield %a : tensor<4x4xf32>
  }
  %n = linalg.matmul ins(%r, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %n : tensor<4x4xf32>
}

// -----

// CHECK-LABEL: func.func @whiles(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG3:[A-Za-z0-9_]+]]: index) -> tensor<4x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[C0:[A-Za-z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]]:2 = scf.while (%[[ARG4:[A-Za-z0-9_]+]] = %[[C0]], %[[ARG5:[A-Za-z0-9_]+]] = %[[V0]]) : (index, tensor<4x4xf16>) -> (index, tensor<4x4xf16>) {
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = arith.cmpi slt, %[[ARG4]], %[[ARG3]] : index
// CHECK-NEXT: scf.condition(%[[V4]]) %[[ARG4]], %[[ARG5]] : index, tensor<4x4xf16>
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[ARG4:[A-Za-z0-9_]+]]: index, %[[ARG5:[A-Za-z0-9_]+]]: tensor<4x4xf16>):
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[ARG5]], %[[V1]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.truncf %[[V4]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = math.tanh %[[V5]] : tensor<4x4xf16>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = arith.addi %[[ARG4]], %[[C1]] : index
// CHECK-NEXT: scf.yield %[[V7]], %[[V6]] : index, tensor<4x4xf16>
// CHECK-NEXT: }
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.extf %[[V2]]#1 : tensor<4x4xf16> to tensor<4x4xf32>
// CHECK-NEXT: return %[[V3]] : tensor<4x4xf32>
// CHECK-NEXT: }
func.func @whiles(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %acc: tensor<4x4xf32>, %n: index) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.while (%i = %c0, %x = %a) : (index, tensor<4x4xf32>) -> (index, tensor<4x4xf32>) {
    %cond = arith.cmpi slt, %i, %n : index
    scf.condition(%cond) %i, %x : index, tensor<4x4xf32>
  } do {
  ^bb0(%j: index, %y: tensor<4x4xf32>):
    %m = linalg.matmul ins(%y, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
    %t = math.tanh %m : tensor<4x4xf32>
    %k = arith.addi %j, %c1 : index
    scf.yield %k, %t : index, tensor<4x4xf32>
  }
  return %r#1 : tensor<4x4xf32>
}

// -----

// A reduction reads its low input and accumulates in f32: the bias
// gradient of a low activation needs no cast.
// CHECK-LABEL: func.func @reduction(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.truncf %[[V2]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = arith.mulf %[[V3]], %[[V3]] : tensor<4x4xf16>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V4]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V6]] : tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[V8:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["reduction", "parallel"]} ins(%[[V4]] : tensor<4x4xf16>) outs(%[[V7]] : tensor<4xf32>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f16, %[[OUT:[A-Za-z0-9_]+]]: f32):
// CHECK-NEXT: %[[V9:[A-Za-z0-9_]+]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: %[[V10:[A-Za-z0-9_]+]] = arith.addf %[[V9]], %[[OUT]] : f32
// CHECK-NEXT: linalg.yield %[[V10]] : f32
// CHECK-NEXT: } -> tensor<4xf32>
// CHECK-NEXT: return %[[V8]] : tensor<4xf32>
// CHECK-NEXT: }
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @reduction(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = arith.mulf %m, %m : tensor<4x4xf32>
  %n = linalg.matmul ins(%t, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%t : tensor<4x4xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%v: f32, %s: f32):
    %r = arith.addf %v, %s : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %sum : tensor<4xf32>
}

// -----

// Nothing inside amp.update changes, and gradients reach it in f32.
// CHECK-LABEL: func.func @update_untouched(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = amp.update grads(%[[V2]] : tensor<4x4xf32>) state(%[[ARG1]] : tensor<4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[ARG3:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG4:[A-Za-z0-9_]+]]: tensor<4x4xf32>):
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[ARG3]], %[[ARG4]] : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[V4]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = arith.subf %[[ARG4]], %[[V5]] : tensor<4x4xf32>
// CHECK-NEXT: amp.yield %[[V6]] : tensor<4x4xf32>
// CHECK-NEXT: } : tensor<4x4xf32>
// CHECK-NEXT: return %[[V3]] : tensor<4x4xf32>
// CHECK-NEXT: }
func.func @update_untouched(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %g = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %new = amp.update grads(%g : tensor<4x4xf32>) state(%w : tensor<4x4xf32>) {
  ^bb0(%dw: tensor<4x4xf32>, %w0: tensor<4x4xf32>):
    %e = tensor.empty() : tensor<4x4xf32>
    %m = linalg.matmul ins(%dw, %w0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %n = arith.subf %w0, %m : tensor<4x4xf32>
    amp.yield %n : tensor<4x4xf32>
  } : tensor<4x4xf32>
  return %new : tensor<4x4xf32>
}

// -----

// Existing casts are reused and truncf(extf(x)) folds to x.
// CHECK-LABEL: func.func @existing_casts(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf16>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> tensor<4x4xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.extf %[[ARG0]] : tensor<4x4xf16> to tensor<4x4xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[ARG0]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.addf %[[V2]], %[[V1]] : tensor<4x4xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = arith.extf %[[V0]] : tensor<4x4xf16> to tensor<4x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.addf %[[V3]], %[[V4]] : tensor<4x4xf32>
// CHECK-NEXT: return %[[V5]] : tensor<4x4xf32>
// CHECK-NEXT: }
func.func @existing_casts(%h: tensor<4x4xf16>, %w: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %x = arith.extf %h : tensor<4x4xf16> to tensor<4x4xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = arith.addf %m, %x : tensor<4x4xf32>
  %wl = arith.truncf %w : tensor<4x4xf32> to tensor<4x4xf16>
  %u = arith.extf %wl : tensor<4x4xf16> to tensor<4x4xf32>
  %s = arith.addf %r, %u : tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// Presets differ: log is deny in torch, infer in tf (between two matmuls it
// becomes f16); dot is allow in torch, infer in mindspore; tensor-cores-only
// lists no mulf, which stays f32 between matmuls as an op in no list.
// CHECK-LABEL: func.func @presets(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG3:[A-Za-z0-9_]+]]: tensor<4xf32>, %[[ARG4:[A-Za-z0-9_]+]]: tensor<f32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>) {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG3]] : tensor<4xf32> to tensor<4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V2]], %[[V1]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = math.log %[[V3]] : tensor<4x4xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.truncf %[[V4]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V5]], %[[V1]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = arith.truncf %[[V6]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V8:[A-Za-z0-9_]+]] = arith.mulf %[[V7]], %[[V7]] : tensor<4x4xf16>
// CHECK-NEXT: %[[V9:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V8]], %[[V1]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V10:[A-Za-z0-9_]+]] = linalg.dot ins(%[[V0]], %[[V0]] : tensor<4xf16>, tensor<4xf16>) outs(%[[ARG4]] : tensor<f32>) -> tensor<f32>
// CHECK-NEXT: return %[[V6]], %[[V9]], %[[V10]] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>
// CHECK-NEXT: }
// TF-LABEL: func.func @presets(
// TF-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG3:[A-Za-z0-9_]+]]: tensor<4xf32>, %[[ARG4:[A-Za-z0-9_]+]]: tensor<f32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>) {
// TF-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG3]] : tensor<4xf32> to tensor<4xf16>
// TF-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// TF-NEXT: %[[V2:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// TF-NEXT: %[[V3:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V2]], %[[V1]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// TF-NEXT: %[[V4:[A-Za-z0-9_]+]] = arith.truncf %[[V3]] : tensor<4x4xf32> to tensor<4x4xf16>
// TF-NEXT: %[[V5:[A-Za-z0-9_]+]] = math.log %[[V4]] : tensor<4x4xf16>
// TF-NEXT: %[[V6:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V5]], %[[V1]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// TF-NEXT: %[[V7:[A-Za-z0-9_]+]] = arith.truncf %[[V6]] : tensor<4x4xf32> to tensor<4x4xf16>
// TF-NEXT: %[[V8:[A-Za-z0-9_]+]] = arith.mulf %[[V7]], %[[V7]] : tensor<4x4xf16>
// TF-NEXT: %[[V9:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V8]], %[[V1]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// TF-NEXT: %[[V10:[A-Za-z0-9_]+]] = linalg.dot ins(%[[V0]], %[[V0]] : tensor<4xf16>, tensor<4xf16>) outs(%[[ARG4]] : tensor<f32>) -> tensor<f32>
// TF-NEXT: return %[[V6]], %[[V9]], %[[V10]] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>
// TF-NEXT: }
// MS-LABEL: func.func @presets(
// MS-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG3:[A-Za-z0-9_]+]]: tensor<4xf32>, %[[ARG4:[A-Za-z0-9_]+]]: tensor<f32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>) {
// MS-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// MS-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// MS-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// MS-NEXT: %[[V3:[A-Za-z0-9_]+]] = math.log %[[V2]] : tensor<4x4xf32>
// MS-NEXT: %[[V4:[A-Za-z0-9_]+]] = arith.truncf %[[V3]] : tensor<4x4xf32> to tensor<4x4xf16>
// MS-NEXT: %[[V5:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V4]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// MS-NEXT: %[[V6:[A-Za-z0-9_]+]] = arith.truncf %[[V5]] : tensor<4x4xf32> to tensor<4x4xf16>
// MS-NEXT: %[[V7:[A-Za-z0-9_]+]] = arith.mulf %[[V6]], %[[V6]] : tensor<4x4xf16>
// MS-NEXT: %[[V8:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V7]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// MS-NEXT: %[[V9:[A-Za-z0-9_]+]] = linalg.dot ins(%[[ARG3]], %[[ARG3]] : tensor<4xf32>, tensor<4xf32>) outs(%[[ARG4]] : tensor<f32>) -> tensor<f32>
// MS-NEXT: return %[[V5]], %[[V8]], %[[V9]] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>
// MS-NEXT: }
// TCO-LABEL: func.func @presets(
// TCO-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG3:[A-Za-z0-9_]+]]: tensor<4xf32>, %[[ARG4:[A-Za-z0-9_]+]]: tensor<f32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>) {
// TCO-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG3]] : tensor<4xf32> to tensor<4xf16>
// TCO-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// TCO-NEXT: %[[V2:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// TCO-NEXT: %[[V3:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V2]], %[[V1]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// TCO-NEXT: %[[V4:[A-Za-z0-9_]+]] = math.log %[[V3]] : tensor<4x4xf32>
// TCO-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.truncf %[[V4]] : tensor<4x4xf32> to tensor<4x4xf16>
// TCO-NEXT: %[[V6:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V5]], %[[V1]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// TCO-NEXT: %[[V7:[A-Za-z0-9_]+]] = arith.mulf %[[V6]], %[[V6]] : tensor<4x4xf32>
// TCO-NEXT: %[[V8:[A-Za-z0-9_]+]] = arith.truncf %[[V7]] : tensor<4x4xf32> to tensor<4x4xf16>
// TCO-NEXT: %[[V9:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V8]], %[[V1]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// TCO-NEXT: %[[V10:[A-Za-z0-9_]+]] = linalg.dot ins(%[[V0]], %[[V0]] : tensor<4xf16>, tensor<4xf16>) outs(%[[ARG4]] : tensor<f32>) -> tensor<f32>
// TCO-NEXT: return %[[V6]], %[[V9]], %[[V10]] : tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>
// TCO-NEXT: }
func.func @presets(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %acc: tensor<4x4xf32>, %v: tensor<4xf32>, %s: tensor<f32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>) {
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %l = math.log %m : tensor<4x4xf32>
  %n = linalg.matmul ins(%l, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q = arith.mulf %n, %n : tensor<4x4xf32>
  %k = linalg.matmul ins(%q, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = linalg.dot ins(%v, %v : tensor<4xf32>, tensor<4xf32>) outs(%s : tensor<f32>) -> tensor<f32>
  return %n, %k, %d : tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>
}

// -----

// Rule 5: an infer op left open follows its inputs; reading a low op it
// runs in f16 and is extended for the f32 return.
// CHECK-LABEL: func.func @follow_inputs(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<4x4xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.truncf %[[V2]] : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = arith.mulf %[[V3]], %[[V3]] : tensor<4x4xf16>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V4]], %[[V0]] : tensor<4x4xf16>, tensor<4x4xf16>) outs(%[[ARG2]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = arith.negf %[[V4]] : tensor<4x4xf16>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = arith.extf %[[V6]] : tensor<4x4xf16> to tensor<4x4xf32>
// CHECK-NEXT: return %[[V5]], %[[V7]] : tensor<4x4xf32>, tensor<4x4xf32>
// CHECK-NEXT: }
func.func @follow_inputs(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = arith.mulf %m, %m : tensor<4x4xf32>
  %n = linalg.matmul ins(%t, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %u = arith.negf %t : tensor<4x4xf32>
  return %n, %u : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A fill of a scalar feeding an infer op (ReLU against a filled zero
// tensor, as torch-mlir writes it) is built again in f16 from an f16
// scalar constant.
// CHECK-LABEL: func.func @fill_feeds_infer(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<8x8xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CST_0:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f16
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x8xf16>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST_0]] : f16) outs(%[[V2]] : tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.truncf %[[V4]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = arith.maximumf %[[V5]], %[[V3]] : tensor<4x8xf16>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V6]], %[[V0]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[V7]] : tensor<4x8xf32>
// CHECK-NEXT: }
func.func @fill_feeds_infer(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = arith.maximumf %m, %zeros : tensor<4x8xf32>
  %n = linalg.matmul ins(%r, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// A fill outside the f16 range keeps its user in f32, like a dense
// constant.
// CHECK-LABEL: func.func @fill_out_of_range(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<8x8xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant 1.000000e+06 : f32
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.minimumf %[[V4]], %[[V3]] : tensor<4x8xf32>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = arith.truncf %[[V5]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V6]], %[[V0]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[V7]] : tensor<4x8xf32>
// CHECK-NEXT: }
func.func @fill_out_of_range(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %big = arith.constant 1.0e+06 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %bigs = linalg.fill ins(%big : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = arith.minimumf %m, %bigs : tensor<4x8xf32>
  %n = linalg.matmul ins(%r, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// A recurrent step whose initial hidden state is a fill: the loop carries
// f16 from a fill built in f16.
// CHECK-LABEL: func.func @fill_as_loop_init(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<8x8xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK-NEXT: %[[C0:[A-Za-z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:[A-Za-z0-9_]+]] = arith.constant 1 : index
// CHECK-NEXT: %[[C3:[A-Za-z0-9_]+]] = arith.constant 3 : index
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CST_0:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f16
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x8xf16>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST_0]] : f16) outs(%[[V2]] : tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = scf.for %[[ARG3:[A-Za-z0-9_]+]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[ARG4:[A-Za-z0-9_]+]] = %[[V3]]) -> (tensor<4x8xf16>) {
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[ARG4]], %[[V1]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = arith.truncf %[[V6]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V8:[A-Za-z0-9_]+]] = arith.addf %[[V7]], %[[V0]] : tensor<4x8xf16>
// CHECK-NEXT: %[[V9:[A-Za-z0-9_]+]] = math.tanh %[[V8]] : tensor<4x8xf16>
// CHECK-NEXT: scf.yield %[[V9]] : tensor<4x8xf16>
// CHECK-NEXT: }
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.extf %[[V4]] : tensor<4x8xf16> to tensor<4x8xf32>
// CHECK-NEXT: return %[[V5]] : tensor<4x8xf32>
// CHECK-NEXT: }
func.func @fill_as_loop_init(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %h0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %h0) -> (tensor<4x8xf32>) {
    %m = linalg.matmul ins(%h, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
    %s = arith.addf %m, %x : tensor<4x8xf32>
    %t = math.tanh %s : tensor<4x8xf32>
    scf.yield %t : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// A destination-style op made low writes into a low copy of its init:
// an elementwise generic that reads its filled outs, and a slice inserted
// into a filled destination (torch-mlir's pad and cat).
// CHECK-LABEL: func.func @low_destinations(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<8x8xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x8xf32>) -> tensor<6x8xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[CST_0:[A-Za-z0-9_]+]] = arith.constant 1.000000e+00 : f16
// CHECK-NEXT: %[[CST_1:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CST_2:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f16
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x8xf16>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST_0]] : f16) outs(%[[V2]] : tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.truncf %[[V4]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]} ins(%[[V5]] : tensor<4x8xf16>) outs(%[[V3]] : tensor<4x8xf16>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f16, %[[OUT:[A-Za-z0-9_]+]]: f16):
// CHECK-NEXT: %[[V12:[A-Za-z0-9_]+]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: %[[V13:[A-Za-z0-9_]+]] = arith.extf %[[OUT]] : f16 to f32
// CHECK-NEXT: %[[V14:[A-Za-z0-9_]+]] = arith.addf %[[V12]], %[[V13]] : f32
// CHECK-NEXT: %[[V15:[A-Za-z0-9_]+]] = arith.truncf %[[V14]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[V15]] : f16
// CHECK-NEXT: } -> tensor<4x8xf16>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = tensor.empty() : tensor<6x8xf16>
// CHECK-NEXT: %[[V8:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST_2]] : f16) outs(%[[V7]] : tensor<6x8xf16>) -> tensor<6x8xf16>
// CHECK-NEXT: %[[INSERTED_SLICE:[A-Za-z0-9_]+]] = tensor.insert_slice %[[V6]] into %[[V8]][1, 0] [4, 8] [1, 1] : tensor<4x8xf16> into tensor<6x8xf16>
// CHECK-NEXT: %[[V9:[A-Za-z0-9_]+]] = tensor.empty() : tensor<6x8xf32>
// CHECK-NEXT: %[[V10:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST_1]] : f32) outs(%[[V9]] : tensor<6x8xf32>) -> tensor<6x8xf32>
// CHECK-NEXT: %[[V11:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[INSERTED_SLICE]], %[[V0]] : tensor<6x8xf16>, tensor<8x8xf16>) outs(%[[V10]] : tensor<6x8xf32>) -> tensor<6x8xf32>
// CHECK-NEXT: return %[[V11]] : tensor<6x8xf32>
// CHECK-NEXT: }
#id = affine_map<(i, j) -> (i, j)>
func.func @low_destinations(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %acc: tensor<4x8xf32>) -> tensor<6x8xf32> {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %ones = linalg.fill ins(%one : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %plus = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<4x8xf32>) outs(%ones : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %e6 = tensor.empty() : tensor<6x8xf32>
  %z6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<6x8xf32>) -> tensor<6x8xf32>
  %padded = tensor.insert_slice %plus into %z6[1, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<6x8xf32>
  %acc6 = tensor.empty() : tensor<6x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%acc6 : tensor<6x8xf32>) -> tensor<6x8xf32>
  %n = linalg.matmul ins(%padded, %w : tensor<6x8xf32>, tensor<8x8xf32>) outs(%z : tensor<6x8xf32>) -> tensor<6x8xf32>
  return %n : tensor<6x8xf32>
}

// -----

// The shapes a dynamic batch brings: tensor.dim reads low values without a
// cast, empties keep their dynamic sizes.
// CHECK-LABEL: func.func @dynamic_batch_relu(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<?x8xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<8x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<?x8xf32> to tensor<?x8xf16>
// CHECK-NEXT: %[[C0:[A-Za-z0-9_]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[CST_0:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f16
// CHECK-NEXT: %[[DIM:[A-Za-z0-9_]+]] = tensor.dim %[[ARG0]], %[[C0]] : tensor<?x8xf32>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = tensor.empty(%[[DIM]]) : tensor<?x8xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V2]] : tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<?x8xf16>, tensor<8x8xf16>) outs(%[[V3]] : tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = arith.truncf %[[V4]] : tensor<?x8xf32> to tensor<?x8xf16>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = arith.negf %[[V5]] : tensor<?x8xf16>
// CHECK-NEXT: %[[DIM_1:[A-Za-z0-9_]+]] = tensor.dim %[[V6]], %[[C0]] : tensor<?x8xf16>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = tensor.empty(%[[DIM_1]]) : tensor<?x8xf32>
// CHECK-NEXT: %[[V8:[A-Za-z0-9_]+]] = tensor.empty(%[[DIM_1]]) : tensor<?x8xf16>
// CHECK-NEXT: %[[V9:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST_0]] : f16) outs(%[[V8]] : tensor<?x8xf16>) -> tensor<?x8xf16>
// CHECK-NEXT: %[[V10:[A-Za-z0-9_]+]] = arith.maximumf %[[V6]], %[[V9]] : tensor<?x8xf16>
// CHECK-NEXT: %[[V11:[A-Za-z0-9_]+]] = linalg.fill ins(%[[CST]] : f32) outs(%[[V7]] : tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: %[[V12:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V10]], %[[V0]] : tensor<?x8xf16>, tensor<8x8xf16>) outs(%[[V11]] : tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: return %[[V12]] : tensor<?x8xf32>
// CHECK-NEXT: }
func.func @dynamic_batch_relu(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<?x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<?x8xf32>) -> tensor<?x8xf32>
  %t = arith.negf %m : tensor<?x8xf32>
  %n2 = tensor.dim %t, %c0 : tensor<?x8xf32>
  %e2 = tensor.empty(%n2) : tensor<?x8xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = arith.maximumf %t, %zeros : tensor<?x8xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  %o = linalg.matmul ins(%r, %w : tensor<?x8xf32>, tensor<8x8xf32>) outs(%acc2 : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// Shapes torch-mlir emits. An f64 constant truncated inside a body (a
// learning rate, a scale) stays as it is; the body computes in f32 between
// an extf of the low argument and a truncf of the low yield.
// CHECK-LABEL: func.func @f64_scalar_in_body(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<8x8xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant 1.250000e-01 : f64
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.truncf %[[V2]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x8xf16>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]} ins(%[[V3]] : tensor<4x8xf16>) outs(%[[V4]] : tensor<4x8xf16>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f16, %[[OUT:[A-Za-z0-9_]+]]: f16):
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: %[[V8:[A-Za-z0-9_]+]] = arith.truncf %[[CST]] : f64 to f32
// CHECK-NEXT: %[[V9:[A-Za-z0-9_]+]] = arith.mulf %[[V7]], %[[V8]] : f32
// CHECK-NEXT: %[[V10:[A-Za-z0-9_]+]] = arith.truncf %[[V9]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[V10]] : f16
// CHECK-NEXT: } -> tensor<4x8xf16>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V5]], %[[V0]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[V6]] : tensor<4x8xf32>
// CHECK-NEXT: }
#id = affine_map<(i, j) -> (i, j)>
func.func @f64_scalar_in_body(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %scale = arith.constant 0.125 : f64
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %c = arith.truncf %scale : f64 to f32
    %r = arith.mulf %v, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %n = linalg.matmul ins(%s, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// i64 labels and i1 masks are never converted: the one-hot compare reads
// i64 labels next to low logits, the mask stays i1.
// CHECK-LABEL: func.func @integer_tensors(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<8x8xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG3:[A-Za-z0-9_]+]]: tensor<4xi64>) -> tensor<4x8xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.truncf %[[V2]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x8xi1>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]} ins(%[[ARG3]] : tensor<4xi64>) outs(%[[V4]] : tensor<4x8xi1>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: i64, %[[OUT:[A-Za-z0-9_]+]]: i1):
// CHECK-NEXT: %[[V9:[A-Za-z0-9_]+]] = linalg.index 1 : index
// CHECK-NEXT: %[[V10:[A-Za-z0-9_]+]] = arith.index_cast %[[V9]] : index to i64
// CHECK-NEXT: %[[V11:[A-Za-z0-9_]+]] = arith.cmpi eq, %[[IN]], %[[V10]] : i64
// CHECK-NEXT: linalg.yield %[[V11]] : i1
// CHECK-NEXT: } -> tensor<4x8xi1>
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x8xf16>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]} ins(%[[V5]], %[[V3]] : tensor<4x8xi1>, tensor<4x8xf16>) outs(%[[V6]] : tensor<4x8xf16>) {
// CHECK-NEXT: ^bb0(%[[IN]]: i1, %[[IN_0:[A-Za-z0-9_]+]]: f16, %[[OUT]]: f16):
// CHECK-NEXT: %[[V9]] = arith.extf %[[IN_0]] : f16 to f32
// CHECK-NEXT: %[[CST:[A-Za-z0-9_]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[V10]] = arith.select %[[IN]], %[[V9]], %[[CST]] : f32
// CHECK-NEXT: %[[V11]] = arith.truncf %[[V10]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[V11]] : f16
// CHECK-NEXT: } -> tensor<4x8xf16>
// CHECK-NEXT: %[[V8:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V7]], %[[V0]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[V8]] : tensor<4x8xf32>
// CHECK-NEXT: }
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @integer_tensors(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %acc: tensor<4x8xf32>, %labels: tensor<4xi64>) -> tensor<4x8xf32> {
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xi1>
  %mask = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%labels : tensor<4xi64>) outs(%e1 : tensor<4x8xi1>) {
  ^bb0(%l: i64, %o: i1):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %eq = arith.cmpi eq, %l, %ji : i64
    linalg.yield %eq : i1
  } -> tensor<4x8xi1>
  %e = tensor.empty() : tensor<4x8xf32>
  %picked = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mask, %m : tensor<4x8xi1>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%b: i1, %v: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.select %b, %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %n = linalg.matmul ins(%picked, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// Reshapes and transposes of low values move data in f16: no cast between
// the matmuls.
// CHECK-LABEL: func.func @reshape_transpose_low(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<8x8xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.truncf %[[V2]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = arith.negf %[[V3]] : tensor<4x8xf16>
// CHECK-NEXT: %[[COLLAPSED:[A-Za-z0-9_]+]] = tensor.collapse_shape %[[V4]] {{\[\[}}0, 1]] : tensor<4x8xf16> into tensor<32xf16>
// CHECK-NEXT: %[[EXPANDED:[A-Za-z0-9_]+]] = tensor.expand_shape %[[COLLAPSED]] {{\[\[}}0, 1]] output_shape [8, 4] : tensor<32xf16> into tensor<8x4xf16>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x8xf16>
// CHECK-NEXT: %[[TRANSPOSED:[A-Za-z0-9_]+]] = linalg.transpose ins(%[[EXPANDED]] : tensor<8x4xf16>) outs(%[[V5]] : tensor<4x8xf16>) permutation = [1, 0]
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[TRANSPOSED]], %[[V0]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[V6]] : tensor<4x8xf32>
// CHECK-NEXT: }
func.func @reshape_transpose_low(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = arith.negf %m : tensor<4x8xf32>
  %c = tensor.collapse_shape %a [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  %x2 = tensor.expand_shape %c [[0, 1]] output_shape [8, 4] : tensor<32xf32> into tensor<8x4xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.transpose ins(%x2 : tensor<8x4xf32>) outs(%e : tensor<4x8xf32>) permutation = [1, 0]
  %n = linalg.matmul ins(%t, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %n : tensor<4x8xf32>
}

// -----

// A generic with several results yields each in its own type, and a scalar
// operand stays f32 in the body, which computes in f32.
// CHECK-LABEL: func.func @several_results_scalar_operand(
// CHECK-SAME: %[[ARG0:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG1:[A-Za-z0-9_]+]]: tensor<8x8xf32>, %[[ARG2:[A-Za-z0-9_]+]]: tensor<4x8xf32>, %[[ARG3:[A-Za-z0-9_]+]]: f32) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT: %[[V0:[A-Za-z0-9_]+]] = arith.truncf %[[ARG1]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK-NEXT: %[[V1:[A-Za-z0-9_]+]] = arith.truncf %[[ARG0]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V2:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V1]], %[[V0]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[V3:[A-Za-z0-9_]+]] = arith.truncf %[[V2]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[V4:[A-Za-z0-9_]+]] = tensor.empty() : tensor<4x8xf16>
// CHECK-NEXT: %[[V5:[A-Za-z0-9_]+]]:2 = linalg.generic {indexing_maps = [#{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}, #{{[a-z0-9]+}}], iterator_types = ["parallel", "parallel"]} ins(%[[V3]], %[[ARG3]] : tensor<4x8xf16>, f32) outs(%[[V4]], %[[V4]] : tensor<4x8xf16>, tensor<4x8xf16>) {
// CHECK-NEXT: ^bb0(%[[IN:[A-Za-z0-9_]+]]: f16, %[[IN_0:[A-Za-z0-9_]+]]: f32, %[[OUT:[A-Za-z0-9_]+]]: f16, %[[OUT_1:[A-Za-z0-9_]+]]: f16):
// CHECK-NEXT: %[[V8:[A-Za-z0-9_]+]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: %[[V9:[A-Za-z0-9_]+]] = arith.mulf %[[V8]], %[[IN_0]] : f32
// CHECK-NEXT: %[[V10:[A-Za-z0-9_]+]] = arith.addf %[[V8]], %[[IN_0]] : f32
// CHECK-NEXT: %[[V11:[A-Za-z0-9_]+]] = arith.truncf %[[V9]] : f32 to f16
// CHECK-NEXT: %[[V12:[A-Za-z0-9_]+]] = arith.truncf %[[V10]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[V11]], %[[V12]] : f16, f16
// CHECK-NEXT: } -> (tensor<4x8xf16>, tensor<4x8xf16>)
// CHECK-NEXT: %[[V6:[A-Za-z0-9_]+]] = arith.extf %[[V5]]#1 : tensor<4x8xf16> to tensor<4x8xf32>
// CHECK-NEXT: %[[V7:[A-Za-z0-9_]+]] = linalg.matmul ins(%[[V5]]#0, %[[V0]] : tensor<4x8xf16>, tensor<8x8xf16>) outs(%[[ARG2]] : tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[V7]], %[[V6]] : tensor<4x8xf32>, tensor<4x8xf32>
// CHECK-NEXT: }
#id = affine_map<(i, j) -> (i, j)>
#s = affine_map<(i, j) -> ()>
func.func @several_results_scalar_operand(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %acc: tensor<4x8xf32>, %k: f32) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %m = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %r:2 = linalg.generic {indexing_maps = [#id, #s, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %k : tensor<4x8xf32>, f32) outs(%e, %e : tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%v: f32, %kk: f32, %o1: f32, %o2: f32):
    %p = arith.mulf %v, %kk : f32
    %q = arith.addf %v, %kk : f32
    linalg.yield %p, %q : f32, f32
  } -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %n = linalg.matmul ins(%r#0, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %n, %r#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A convolution's output image is stored in the low type, as autocast
// stores it: its f32 reader (exp, deny) reads it rounded and extended. A
// filter gradient (its window, an output gradient's image, larger than its
// output) stays f32 for the update.
// CHECK-LABEL: func.func @convolution_images_stored_low
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3x10x10xf16>, tensor<4x3x3x3xf16>) outs(%{{.*}} : tensor<2x4x8x8xf32>)
// CHECK: %[[LOW:.*]] = arith.truncf %[[C]] : tensor<2x4x8x8xf32> to tensor<2x4x8x8xf16>
// CHECK: %[[WIDE:.*]] = arith.extf %[[LOW]] : tensor<2x4x8x8xf16> to tensor<2x4x8x8xf32>
// CHECK: math.exp %[[WIDE]] : tensor<2x4x8x8xf32>
// CHECK: %[[G:.*]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<3x2x10x10xf16>, tensor<4x2x8x8xf16>) outs(%{{.*}} : tensor<3x4x3x3xf32>)
// CHECK-NOT: arith.truncf %[[G]]
// CHECK: return %{{.*}}, %[[G]]
func.func @convolution_images_stored_low(%x: tensor<2x3x10x10xf32>, %w: tensor<4x3x3x3xf32>,
                                         %xt: tensor<3x2x10x10xf32>, %dyt: tensor<4x2x8x8xf32>)
    -> (tensor<2x4x8x8xf32>, tensor<3x4x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<2x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %r = math.exp %c : tensor<2x4x8x8xf32>
  %eg = tensor.empty() : tensor<3x4x3x3xf32>
  %initg = linalg.fill ins(%zero : f32) outs(%eg : tensor<3x4x3x3xf32>) -> tensor<3x4x3x3xf32>
  %g = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xt, %dyt : tensor<3x2x10x10xf32>, tensor<4x2x8x8xf32>) outs(%initg : tensor<3x4x3x3xf32>) -> tensor<3x4x3x3xf32>
  return %r, %g : tensor<2x4x8x8xf32>, tensor<3x4x3x3xf32>
}

// -----

// A convolution whose only reader is low (a ReLU between two convolutions):
// one rounding cast, no extension back.
// CHECK-LABEL: func.func @convolution_image_read_low
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw
// CHECK: %[[LOW:.*]] = arith.truncf %[[C]] : tensor<2x4x8x8xf32> to tensor<2x4x8x8xf16>
// CHECK-NOT: arith.extf %[[LOW]]
// CHECK: return
func.func @convolution_image_read_low(%x: tensor<2x3x10x10xf32>, %w: tensor<4x3x3x3xf32>,
                                      %w2: tensor<4x4x1x1xf32>) -> tensor<2x4x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<2x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %r = arith.maximumf %c, %zeros : tensor<2x4x8x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%r, %w2 : tensor<2x4x8x8xf32>, tensor<4x4x1x1xf32>) outs(%init : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  return %c2 : tensor<2x4x8x8xf32>
}
