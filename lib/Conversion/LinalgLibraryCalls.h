//===- LinalgLibraryCalls.h - Linalg ops as library calls -------*- C++ -*-===//
//
// What the CPU and GPU lowerings share when they hand contractions to a
// vendor library (oneDNN, cuBLASLt): which loops of a matmul are batch, M,
// N and K, views of the operands in the library's order (transposes, never
// copies), and the zero fill a beta = 0 product makes redundant.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_LINALGLIBRARYCALLS_H
#define AMP_LIB_CONVERSION_LINALGLIBRARYCALLS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include <optional>

namespace mlir::amp {

/// The loops of each operand in the library's order: [batch,] M x K,
/// [batch,] K x N, [batch,] M x N.
struct MatmulPlan {
  SmallVector<unsigned> a, b, c;
};

/// The plan of `op` when it is a linalg.matmul or linalg.batch_matmul on
/// memrefs (any transposed indexing maps) with at most one batch dimension;
/// the element types are the caller's to check.
std::optional<MatmulPlan> planMatmul(linalg::LinalgOp op);

/// `operand`, read through `map`, as a view whose dimensions are the loops
/// `order`: the operand itself, or a memref.transpose of it.
Value viewInOrder(OpBuilder &builder, Location loc, Value operand,
                  AffineMap map, ArrayRef<unsigned> order);

/// The `linalg.fill` of zero into `output` right before `op` (skipping ops
/// without memory effects), which a product with beta = 0 makes redundant.
linalg::FillOp getZeroFillBefore(Operation *op, Value output);

} // namespace mlir::amp

#endif // AMP_LIB_CONVERSION_LINALGLIBRARYCALLS_H
