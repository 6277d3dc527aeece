//===- CPURoundToBF16.cpp - f32 to bf16 rounding as integer code ----------===//
//
// Implements `amp-cpu-round-to-bf16`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUROUNDTOBF16
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// `arith.truncf` from f32 to bf16, rounding to nearest even, on the bits.
struct RoundToBF16 : public OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type source = getElementTypeOrSelf(op.getIn().getType());
    if (!source.isF32() || !getElementTypeOrSelf(op.getType()).isBF16())
      return rewriter.notifyMatchFailure(op, "not a truncation f32 -> bf16");
    if (std::optional<arith::RoundingMode> mode = op.getRoundingmode();
        mode && *mode != arith::RoundingMode::to_nearest_even)
      return rewriter.notifyMatchFailure(op, "not to nearest even");

    Location loc = op.getLoc();
    auto like = [&](Type element) -> Type {
      if (auto vector = dyn_cast<VectorType>(op.getType()))
        return vector.clone(element);
      return element;
    };
    Type i32 = like(rewriter.getI32Type());
    auto constant = [&](int64_t value) -> Value {
      TypedAttr scalar = rewriter.getI32IntegerAttr(value);
      if (auto vector = dyn_cast<VectorType>(i32))
        scalar = SplatElementsAttr::get(vector, scalar);
      return arith::ConstantOp::create(rewriter, loc, scalar);
    };
    Value bits = arith::BitcastOp::create(rewriter, loc, i32, op.getIn());
    Value sixteen = constant(16);
    Value lowestKept = arith::AndIOp::create(
        rewriter, loc, arith::ShRUIOp::create(rewriter, loc, bits, sixteen),
        constant(1));
    Value bias =
        arith::AddIOp::create(rewriter, loc, lowestKept, constant(0x7fff));
    // A NaN becomes the quiet NaN of its sign, as __truncsfbf2 makes it
    // (rounding could carry its payload into the exponent). The choice is
    // an integer select, never a bf16 one.
    Value isNaN = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO,
                                        op.getIn(), op.getIn());
    Value quietNaN = arith::OrIOp::create(
        rewriter, loc,
        arith::AndIOp::create(rewriter, loc, bits, constant(0x80000000)),
        constant(0x7fc00000));
    Value rounded = arith::SelectOp::create(
        rewriter, loc, isNaN, quietNaN,
        arith::AddIOp::create(rewriter, loc, bits, bias));
    Value upper = arith::TruncIOp::create(
        rewriter, loc, like(rewriter.getI16Type()),
        arith::ShRUIOp::create(rewriter, loc, rounded, sixteen));
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), upper);
    return success();
  }
};

struct CPURoundToBF16Pass
    : public amp::impl::AmpCPURoundToBF16Base<CPURoundToBF16Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<RoundToBF16>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError(
          "amp-cpu-round-to-bf16: the rewrites did not converge");
      return signalPassFailure();
    }
  }
};

} // namespace
