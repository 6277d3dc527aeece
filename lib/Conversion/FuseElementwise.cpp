//===- FuseElementwise.cpp - Elementwise chains in one loop nest ----------===//
//
// Implements `amp-fuse-elementwise`.
//
//===----------------------------------------------------------------------===//

#include "LinalgLibraryCalls.h"
#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPFUSEELEMENTWISE
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// At most this many arith ops in a producer that is computed again in each
/// consumer (a BatchNorm's `x - mean`, a scale and shift, a cast).
constexpr unsigned kMaxRecomputedOps = 8;

/// At most this many consumers compute a producer again. BatchNorm's
/// `x - mean` has two; allowing more (its backward's producers have up to
/// five) made the benchmark's CNN and GPT steps compile 40-50% slower (more
/// vector code in each consumer) for no faster step.
constexpr unsigned kMaxRecomputedUses = 2;

/// At most this many ops compute again a producer that widens its input
/// (reads it whole in a narrower type than it writes, as BatchNorm's
/// `x - mean` of a bf16 image): each of them then reads fewer bytes than
/// the producer's buffer would hold. The bf16 CNN's `x - mean` has four
/// readers, two in the forward and two in the backward.
constexpr unsigned kMaxRecomputedWideningUsers = 4;

/// Below this many elements a producer's buffer costs less than computing
/// it again for every element of its consumers (a scalar factor).
constexpr int64_t kMinRecomputedElements = 4096;

/// Whether `producer`, an elementwise generic with several uses, costs less
/// computed again inside each of them than written to memory and read back:
/// a large result of a few arith ops, at most one input read whole (the
/// others broadcast, so each consumer reads no more than it did), and at
/// most two uses (four readers where it widens the input it reads whole),
/// each an input of a generic, so that it goes once all have fused it.
bool isRecomputable(Operation *producer) {
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic || generic.getNumResults() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops())
    return false;
  auto type = cast<ShapedType>(generic->getResult(0).getType());
  if (type.hasStaticShape() && type.getNumElements() < kMinRecomputedElements)
    return false;
  unsigned whole = 0;
  bool widens = false;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (!map.isPermutation() || map.getNumDims() != map.getNumResults())
      continue;
    ++whole;
    widens =
        getElementTypeOrSelf(input->get().getType()).getIntOrFloatBitWidth() <
        type.getElementTypeBitWidth();
  }
  Block *body = generic.getBody();
  unsigned ops = body->getOperations().size() - 1;
  bool arithOnly = llvm::all_of(body->without_terminator(), [](Operation &op) {
    return isa<arith::ArithDialect>(op.getDialect());
  });
  bool inputsOfGenerics =
      llvm::all_of(generic->getResult(0).getUses(), [](OpOperand &use) {
        auto user = dyn_cast<linalg::GenericOp>(use.getOwner());
        return user && user.isDpsInput(&use);
      });
  Value result = generic->getResult(0);
  bool fewUses =
      widens ? llvm::hasNItemsOrLess(
                   llvm::SmallPtrSet<Operation *, 8>(result.getUsers().begin(),
                                                     result.getUsers().end()),
                   kMaxRecomputedWideningUsers)
             : !result.hasNUsesOrMore(kMaxRecomputedUses + 1);
  return whole <= 1 && ops <= kMaxRecomputedOps && arithOnly &&
         inputsOfGenerics && fewUses;
}

/// Whether `op` is a cast of a contraction's or convolution's result to its
/// inputs' type, read whole: a library call writes the cast type in its
/// place.
bool isProductCast(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || !isWholeTruncation(generic))
    return false;
  auto product = generic.getDpsInputs()[0].getDefiningOp<linalg::LinalgOp>();
  return product &&
         (linalg::isaContractionOpInterface(product) ||
          linalg::isaConvolutionOpInterface(product)) &&
         llvm::all_of(product.getDpsInputs(), [&](Value input) {
           return getElementTypeOrSelf(input.getType()) ==
                  getElementTypeOrSelf(generic.getResult(0).getType());
         });
}

/// A producer is fused when it has one use, or when computing it again in
/// each of its consumers is cheaper than its buffer (isRecomputable), but
/// not into a consumer that reads it broadcast (a scalar such as Adam's
/// bias correction `1 - beta^t` would be computed again for every element),
/// nor a product's cast that is kept for the library to write
/// (`keepProductCasts`). Upstream's pattern then leaves the producer to its
/// other users.
bool shouldFuse(OpOperand *fused, bool keepProductCasts) {
  Operation *producer = fused->get().getDefiningOp();
  if (!producer || (keepProductCasts && isProductCast(producer)))
    return false;
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  if (consumer && !consumer.getMatchingIndexingMap(fused).isPermutation())
    return false;
  return producer->hasOneUse() || isRecomputable(producer);
}

/// Whether the consumer of `fused` is an elementwise op over the producer's
/// elements, one each, that reads the producer through `fused` alone (the
/// fused op must not read its own results), and the first user of the
/// producer's results in its block: every other user comes after the
/// consumer's place.
bool isFirstElementwiseUser(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  auto consumer = cast<linalg::GenericOp>(fused->getOwner());
  auto readsProducer = [&](Value operand) {
    return operand.getDefiningOp() == producer;
  };
  if (consumer->getBlock() != producer->getBlock() ||
      llvm::count_if(consumer->getOperands(), readsProducer) != 1 ||
      consumer.getNumParallelLoops() != consumer.getNumLoops() ||
      !consumer.getMatchingIndexingMap(fused).isPermutation())
    return false;
  Block *block = consumer->getBlock();
  return llvm::all_of(producer->getUsers(), [&](Operation *user) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    return inBlock &&
           (inBlock == consumer || consumer->isBeforeInBlock(inBlock));
  });
}

/// A producer that neither rule above fuses, computed in one loop nest with
/// its first elementwise user, which takes the consumer's place and writes
/// the producer's results for the later users too: one pass over memory
/// fewer, no computation twice. A cast of an activation that the backward
/// reads in f32 is one; Adam's moments, stored and read by the parameter's
/// update, are others.
struct FuseIntoFirstElementwiseUser
    : public OpRewritePattern<linalg::GenericOp> {
  FuseIntoFirstElementwiseUser(MLIRContext *context, bool keepProductCasts)
      : OpRewritePattern(context), keepProductCasts(keepProductCasts) {}

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    for (OpOperand &operand : consumer->getOpOperands()) {
      Operation *producer = operand.get().getDefiningOp();
      if (!linalg::areElementwiseOpsFusable(&operand) ||
          (keepProductCasts && isProductCast(producer)) ||
          shouldFuse(&operand, keepProductCasts) ||
          !isFirstElementwiseUser(&operand))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        return failure();
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      rewriter.eraseOp(consumer);
      rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }

private:
  bool keepProductCasts;
};

struct FuseElementwisePass
    : public amp::impl::AmpFuseElementwiseBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    // Producers that fuse whole (one use) or are computed again first, to a
    // fixpoint, so that a producer that took in a cast is judged with it;
    // then the first readers take in what is left.
    auto keep = keepProductCasts.getValue();
    RewritePatternSet fusion(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        fusion, [keep](OpOperand *fused) { return shouldFuse(fused, keep); });
    RewritePatternSet firstUsers(&getContext());
    firstUsers.add<FuseIntoFirstElementwiseUser>(&getContext(), keep);
    linalg::populateElementwiseOpsFusionPatterns(
        firstUsers,
        [keep](OpOperand *fused) { return shouldFuse(fused, keep); });
    GreedyRewriteConfig producersFirst;
    producersFirst.setUseTopDownTraversal(true);
    if (failed(applyPatternsGreedily(getOperation(), std::move(fusion),
                                     producersFirst)) ||
        failed(applyPatternsGreedily(getOperation(), std::move(firstUsers))))
      return signalPassFailure();
  }
};

} // namespace
