//===- LinalgToCPULibrary.cpp - Contractions to oneDNN calls --------------===//
//
// Implements `amp-linalg-to-cpu-library`: matmuls, batch matmuls and 2-d
// convolutions on memrefs become calls of the CPU runtime (CpuRuntime.h),
// operands in the runtime's order as views of their own strides.
//
//===----------------------------------------------------------------------===//

#include "LinalgLibraryCalls.h"
#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPLINALGTOCPULIBRARY
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// The suffix of the runtime's entry points for inputs of `type` into f32
/// outputs ("F32", "F16", "BF16"), or empty when the runtime has none.
StringRef getEntrySuffix(Type input, Type output) {
  if (!output.isF32())
    return {};
  if (input.isF32())
    return "F32";
  if (input.isF16())
    return "F16";
  if (input.isBF16())
    return "BF16";
  return {};
}

/// The suffix of a linalg op's entry points, when it is a matmul, batch
/// matmul or 2-d convolution whose two inputs share a type the runtime takes.
StringRef getEntrySuffix(linalg::LinalgOp op) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp>(
          op.getOperation()))
    return {};
  Type a = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type b = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
  Type c = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  return a == b ? getEntrySuffix(a, c) : StringRef();
}

/// The output and whether the call accumulates into it: not when a fill of
/// zero right before `op` (erased here) is all it would accumulate into.
Value takeAccumulation(OpBuilder &builder, linalg::LinalgOp op) {
  Value output = op.getDpsInits()[0];
  linalg::FillOp fill = getZeroFillBefore(op, output);
  if (fill)
    fill.erase();
  return arith::ConstantIntOp::create(builder, op.getLoc(), fill ? 0 : 1, 32);
}

struct LinalgToCPULibraryPass
    : public amp::impl::AmpLinalgToCPULibraryBase<LinalgToCPULibraryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    LibraryCallBuilder calls(module);
    SmallVector<linalg::LinalgOp> ops;
    module.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics())
        continue;
      StringRef suffix = getEntrySuffix(op);
      if (suffix.empty())
        continue;
      OpBuilder builder(op);
      Location loc = op.getLoc();
      if (std::optional<MatmulPlan> plan = planMatmul(op)) {
        SmallVector<AffineMap> maps = op.getIndexingMapsArray();
        Value accumulate = takeAccumulation(builder, op);
        Value a = viewInOrder(builder, loc, op.getDpsInputs()[0], maps[0],
                              plan->a);
        Value b = viewInOrder(builder, loc, op.getDpsInputs()[1], maps[1],
                              plan->b);
        Value c = viewInOrder(builder, loc, op.getDpsInits()[0], maps[2],
                              plan->c);
        calls.call(builder, loc, ("ampCpuMatmul" + suffix).str(), {a, b, c},
                   {accumulate});
        op.erase();
        continue;
      }
      auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation());
      if (!conv)
        continue;
      Value accumulate = takeAccumulation(builder, op);
      auto index = [&](int64_t value) -> Value {
        return arith::ConstantIntOp::create(builder, loc, value, 64);
      };
      SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
      SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
      calls.call(builder, loc, ("ampCpuConv2D" + suffix).str(),
                 {conv.getDpsInputs()[0], conv.getDpsInputs()[1],
                  conv.getDpsInits()[0]},
                 {index(strides[0]), index(strides[1]), index(dilations[0]),
                  index(dilations[1]), accumulate});
      op.erase();
    }
  }
};

} // namespace
