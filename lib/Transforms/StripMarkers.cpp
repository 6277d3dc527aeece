//===- StripMarkers.cpp - Drop the amp markers for an fp32 run ------------===//
//
// Implements `amp-strip-markers`: the fp32 reference of a training step, with
// the seed of the backward set to ones and the optimizer updates inlined.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Transforms/Passes.h"
#include "amp/Transforms/Scaling.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPSTRIPMARKERS
#include "amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

struct StripMarkersPass
    : public amp::impl::AmpStripMarkersBase<StripMarkersPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation().walk([&](SeedOp seed) {
      auto type = cast<ShapedType>(seed.getType());
      auto one = FloatAttr::get(type.getElementType(), 1.0);
      rewriter.setInsertionPoint(seed);
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          seed, DenseElementsAttr::get(type, one));
    });
    getOperation().walk([&](UpdateOp update) {
      rewriter.setInsertionPoint(update);
      SmallVector<Value> newState =
          inlineUpdateRegion(rewriter, update, update.getGrads(), update);
      rewriter.replaceOp(update, newState);
    });
  }
};

} // namespace
