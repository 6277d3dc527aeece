//===- LinalgToGPUMatmul.cpp - Contractions to runtime matmuls ------------===//
//
// Implements `amp-linalg-to-gpu-matmul`. A contraction's indexing maps say
// which operand dimension is batch, M, N or K; each operand becomes a view
// in the order the runtime expects ([batch,] M x K, K x N, M x N), which is
// the operand itself or a memref.transpose of it: a layout, never a copy.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPLINALGTOGPUMATMUL
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// The dimensions of each operand in the runtime's order, when `op` is a
/// matrix product (or a batch of them) the runtime can compute.
struct MatmulPlan {
  SmallVector<unsigned> a, b, c;
};

std::optional<MatmulPlan> planMatmul(linalg::LinalgOp op, bool matmulF32) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
      !op.hasPureBufferSemantics())
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->batch.size() > 1 || dims->m.size() != 1 ||
      dims->n.size() != 1 || dims->k.size() != 1)
    return std::nullopt;
  Type a = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type b = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
  Type c = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  bool lowPrecision = a.isF16() || a.isBF16();
  if (a != b || !(lowPrecision || (a.isF32() && matmulF32)) ||
      !(c == a || c.isF32()))
    return std::nullopt;
  MatmulPlan plan;
  for (SmallVector<unsigned> *order : {&plan.a, &plan.b, &plan.c})
    llvm::append_range(*order, dims->batch);
  plan.a.append({dims->m[0], dims->k[0]});
  plan.b.append({dims->k[0], dims->n[0]});
  plan.c.append({dims->m[0], dims->n[0]});
  return plan;
}

/// `operand`, read through `map`, as a view whose dimensions are the loops
/// `order`: the operand itself, or a transposed view of it.
Value viewInOrder(OpBuilder &builder, Location loc, Value operand,
                  AffineMap map, ArrayRef<unsigned> order) {
  SmallVector<unsigned> permutation;
  for (unsigned loop : order)
    for (unsigned position = 0; position < map.getNumResults(); ++position)
      if (map.getDimPosition(position) == loop)
        permutation.push_back(position);
  if (llvm::equal(permutation, llvm::seq<unsigned>(0, permutation.size())))
    return operand;
  AffineMap transpose =
      AffineMap::getPermutationMap(permutation, builder.getContext());
  return memref::TransposeOp::create(builder, loc, operand,
                                     AffineMapAttr::get(transpose));
}

/// The `linalg.fill` of zero into `output` right before `op` (skipping ops
/// without memory effects), which a product with beta = 0 makes redundant.
linalg::FillOp getZeroFillBefore(Operation *op, Value output) {
  Operation *previous = op->getPrevNode();
  while (previous && isMemoryEffectFree(previous))
    previous = previous->getPrevNode();
  auto fill = dyn_cast_if_present<linalg::FillOp>(previous);
  if (!fill || fill.getOutputs()[0] != output ||
      !matchPattern(fill.value(), m_AnyZeroFloat()))
    return nullptr;
  return fill;
}

struct LinalgToGPUMatmulPass
    : public amp::impl::AmpLinalgToGPUMatmulBase<LinalgToGPUMatmulPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, MatmulPlan>> products;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<MatmulPlan> plan = planMatmul(op, matmulF32))
        products.emplace_back(op, std::move(*plan));
    });

    int64_t callSite = 0;
    for (auto &[op, plan] : products) {
      OpBuilder builder(op);
      Location loc = op.getLoc();
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      Value output = op.getDpsInits()[0];
      linalg::FillOp fill = getZeroFillBefore(op, output);
      Value a = viewInOrder(builder, loc, op.getDpsInputs()[0], maps[0],
                            plan.a);
      Value b = viewInOrder(builder, loc, op.getDpsInputs()[1], maps[1],
                            plan.b);
      Value c = viewInOrder(builder, loc, output, maps[2], plan.c);
      amp_gpu::MatmulOp::create(
          builder, loc, /*asyncToken=*/Type(),
          /*asyncDependencies=*/ValueRange(), a, b, c,
          builder.getF32FloatAttr(1.0f), builder.getF32FloatAttr(fill ? 0.0f : 1.0f),
          builder.getI64IntegerAttr(callSite++));
      if (fill)
        fill.erase();
      op.erase();
    }
  }
};

} // namespace
