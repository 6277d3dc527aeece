//===- LinalgToGPUMatmul.cpp - Contractions to runtime matmuls ------------===//
//
// Implements `amp-linalg-to-gpu-matmul`. A contraction's indexing maps say
// which operand dimension is batch, M, N or K; each operand becomes a view
// in the order the runtime expects ([batch,] M x K, K x N, M x N), which is
// the operand itself or a memref.transpose of it: a layout, never a copy.
//
//===----------------------------------------------------------------------===//

#include "LinalgLibraryCalls.h"
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

/// The plan of a contraction the runtime's cuBLASLt computes: f16 or bf16
/// inputs (f32 with `matmulF32`), outputs of their type or f32.
std::optional<MatmulPlan> planGPUMatmul(linalg::LinalgOp op, bool matmulF32) {
  std::optional<MatmulPlan> plan = planMatmul(op);
  if (!plan)
    return std::nullopt;
  Type a = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type b = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
  Type c = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  bool lowPrecision = a.isF16() || a.isBF16();
  if (a != b || !(lowPrecision || (a.isF32() && matmulF32)) ||
      !(c == a || c.isF32()))
    return std::nullopt;
  return plan;
}

struct LinalgToGPUMatmulPass
    : public amp::impl::AmpLinalgToGPUMatmulBase<LinalgToGPUMatmulPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, MatmulPlan>> products;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<MatmulPlan> plan = planGPUMatmul(op, matmulF32))
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
