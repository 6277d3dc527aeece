//===- FillPerDestination.cpp - One fill for each op that writes into it -===//
//
// Implements `amp-fill-per-destination`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPFILLPERDESTINATION
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// A fill with more than one use: each use as the destination of an op gets
/// its own fill (of its own tensor.empty), right before that op.
struct CloneFillForDestinations : public OpRewritePattern<linalg::FillOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::FillOp fill,
                                PatternRewriter &rewriter) const override {
    if (!fill.hasPureTensorSemantics() || fill->getResult(0).hasOneUse())
      return failure();
    SmallVector<OpOperand *> destinations;
    for (OpOperand &use : fill->getResult(0).getUses()) {
      auto writer = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
      if (writer && writer.isDpsInit(&use))
        destinations.push_back(&use);
    }
    // All of them at once: the driver does not revisit the fill after a
    // rewrite of its users.
    if (destinations.empty())
      return failure();
    for (OpOperand *use : destinations) {
      Operation *writer = use->getOwner();
      rewriter.setInsertionPoint(writer);
      Value init = fill.getOutputs()[0];
      if (auto empty = init.getDefiningOp<tensor::EmptyOp>())
        init = rewriter.clone(*empty)->getResult(0);
      auto copy = linalg::FillOp::create(rewriter, fill.getLoc(),
                                         fill.getInputs()[0], init);
      rewriter.modifyOpInPlace(writer, [&] { use->set(copy->getResult(0)); });
    }
    return success();
  }
};

struct FillPerDestinationPass
    : public amp::impl::AmpFillPerDestinationBase<FillPerDestinationPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<CloneFillForDestinations>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
