//===- SplitReductions.cpp - Reductions split into partial results --------===//
//
// Implements the rewrite of SplitReductions.h.
//
//===----------------------------------------------------------------------===//

#include "SplitReductions.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::amp;

namespace {

/// The value partial results start from: the combiner's neutral element
/// (-0.0 for a sum: -0.0 + x is x even for x = -0.0), also for `acc - x`
/// (the loss of a step that subtracts), whose partials are then added to the
/// accumulator.
std::optional<TypedAttr> getPartialIdentity(Operation *combiner, Value acc) {
  if (isa<arith::AddFOp>(combiner) ||
      (isa<arith::SubFOp>(combiner) && combiner->getOperand(0) == acc))
    return TypedAttr(FloatAttr::get(combiner->getResult(0).getType(), -0.0));
  if (isa<arith::SubFOp>(combiner))
    return std::nullopt;
  return arith::getNeutralElement(combiner);
}

/// Accumulates a partial result into `acc` the way `combiner` accumulates
/// elements (every combiner with a neutral element is commutative).
Value combinePartial(OpBuilder &b, Location loc, Operation *combiner, Value acc,
                     Value partial) {
  if (auto sub = dyn_cast<arith::SubFOp>(combiner))
    return arith::AddFOp::create(b, loc, acc, partial, sub.getFastmath());
  Operation *clone = b.clone(*combiner);
  clone->setOperands({acc, partial});
  return clone->getResult(0);
}

/// The loops of the split op: the parallel ones in their order and the
/// thread part of each reduction loop (parallel), in the order the split
/// asks for, then the serial part of each reduction loop.
struct SplitLoops {
  SmallVector<std::optional<unsigned>> threadDim, serialDim;
  SmallVector<utils::IteratorType> iterators;
  unsigned numParallel = 0;

  explicit SplitLoops(const ReductionSplit &split) {
    unsigned numLoops = split.loops.size();
    threadDim.resize(numLoops);
    serialDim.resize(numLoops);
    auto number = [&](bool reductions) {
      for (unsigned loop = 0; loop < numLoops; ++loop)
        if (split.loops[loop].reduction == reductions &&
            (!reductions || split.loops[loop].hasThreadLoop()))
          threadDim[loop] = numParallel++;
    };
    number(/*reductions=*/split.threadLoopsFirst);
    number(/*reductions=*/!split.threadLoopsFirst);
    unsigned next = numParallel;
    for (unsigned loop = 0; loop < numLoops; ++loop)
      if (split.loops[loop].reduction && split.loops[loop].hasSerialLoop())
        serialDim[loop] = next++;
    iterators.assign(numParallel, utils::IteratorType::parallel);
    iterators.append(next - numParallel, utils::IteratorType::reduction);
  }

  /// The thread dims of the reduction loops, with their sizes.
  void getReductionThreadDims(const ReductionSplit &split,
                              SmallVectorImpl<unsigned> &dims,
                              SmallVectorImpl<int64_t> &sizes) const {
    for (auto [loop, loopSplit] : llvm::enumerate(split.loops))
      if (loopSplit.reduction && loopSplit.hasThreadLoop()) {
        dims.push_back(*threadDim[loop]);
        sizes.push_back(loopSplit.threads);
      }
  }
};

/// `value` indexed by `map` in the split loops: a reduction loop of size
/// serial * threads becomes two dimensions (serial, threads) of an
/// expand_shape view where it has both parts.
struct SplitOperand {
  Value value;
  AffineMap map;
  SmallVector<ReassociationIndices> reassociation;
  bool expanded = false;
};

SplitOperand splitOperand(RewriterBase &rewriter, linalg::GenericOp op,
                          const ReductionSplit &split, const SplitLoops &loops,
                          Value value, AffineMap map) {
  auto type = cast<RankedTensorType>(value.getType());
  SplitOperand result;
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> exprs;
  for (auto [position, expr] : llvm::enumerate(map.getResults())) {
    ReassociationIndices group;
    auto addDim = [&](AffineExpr dimExpr, int64_t size) {
      group.push_back(shape.size());
      shape.push_back(size);
      exprs.push_back(dimExpr);
    };
    auto dimExpr = dyn_cast<AffineDimExpr>(expr);
    if (!dimExpr) { // a unit dim read at 0
      addDim(expr, 1);
      result.reassociation.push_back(group);
      continue;
    }
    unsigned loop = dimExpr.getPosition();
    if (loops.serialDim[loop])
      addDim(rewriter.getAffineDimExpr(*loops.serialDim[loop]),
             split.loops[loop].serial);
    if (loops.threadDim[loop])
      addDim(rewriter.getAffineDimExpr(*loops.threadDim[loop]),
             split.loops[loop].reduction ? split.loops[loop].threads
                                         : type.getDimSize(position));
    result.expanded |= group.size() > 1;
    result.reassociation.push_back(group);
  }
  result.map =
      AffineMap::get(loops.iterators.size(), 0, exprs, rewriter.getContext());
  result.value = value;
  if (result.expanded)
    result.value = tensor::ExpandShapeOp::create(
        rewriter, op.getLoc(), type.clone(shape), value, result.reassociation);
  return result;
}

} // namespace

std::optional<ReductionSplit>
mlir::amp::analyzeReductionSplit(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.hasIndexSemantics() ||
      op.getNumReductionLoops() == 0 ||
      !llvm::all_of(op->getOperandTypes(), llvm::IsaPred<RankedTensorType>))
    return std::nullopt;
  // Maps are projected permutations, but for unit dims read at 0 (keepdim),
  // which the split operands and partials keep or drop as unit dims.
  auto isSplittableMap = [&](OpOperand &operand) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    auto type = cast<RankedTensorType>(operand.get().getType());
    return map.isProjectedPermutation(/*allowZeroInResults=*/true) &&
           llvm::all_of(llvm::enumerate(map.getResults()), [&](auto result) {
             return isa<AffineDimExpr>(result.value()) ||
                    type.getDimSize(result.index()) == 1;
           });
  };
  if (ShapedType::isDynamicShape(op.getStaticLoopRanges()) ||
      !llvm::all_of(op->getOpOperands(), isSplittableMap))
    return std::nullopt;

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  ReductionSplit split;
  for (auto [size, iterator] : llvm::zip(op.getStaticLoopRanges(), iterators))
    (iterator == utils::IteratorType::parallel ? split.parallelExtent
                                               : split.reductionExtent) *= size;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (map.isPermutation())
      continue;
    if (llvm::any_of(map.getResults(), [&](AffineExpr expr) {
          auto dim = dyn_cast<AffineDimExpr>(expr);
          return dim &&
                 iterators[dim.getPosition()] != utils::IteratorType::parallel;
        }))
      return std::nullopt;
    unsigned index = init.getOperandNumber() - op.getNumDpsInputs();
    BlockArgument acc = op.getRegionOutputArgs()[index];
    SmallVector<Operation *> combiners;
    if (!matchReduction(op.getRegionOutputArgs(), index, combiners) ||
        combiners.size() != 1 || !acc.hasOneUse() ||
        !combiners.front()->getResult(0).hasOneUse())
      return std::nullopt;
    std::optional<TypedAttr> identity =
        getPartialIdentity(combiners.front(), acc);
    if (!identity)
      return std::nullopt;
    split.reduced.push_back({index, combiners.front(), *identity});
  }
  return split;
}

SmallVector<linalg::GenericOp>
mlir::amp::applyReductionSplit(RewriterBase &rewriter, linalg::GenericOp op,
                               const ReductionSplit &split) {
  SmallVector<linalg::GenericOp> combines;
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SplitLoops loops(split);
  SmallVector<unsigned> threadDims;
  SmallVector<int64_t> threadSizes;
  loops.getReductionThreadDims(split, threadDims, threadSizes);

  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    SplitOperand operand =
        splitOperand(rewriter, op, split, loops, input->get(),
                     op.getMatchingIndexingMap(input));
    inputs.push_back(operand.value);
    maps.push_back(operand.map);
  }

  // Full outputs are split like inputs; reduced ones get partial results
  // with one more dimension per thread loop.
  SmallVector<Value> inits;
  SmallVector<SplitOperand> fullOutputs(op.getNumDpsInits());
  for (OpOperand &init : op.getDpsInitsMutable()) {
    unsigned index = init.getOperandNumber() - op.getNumDpsInputs();
    AffineMap map = op.getMatchingIndexingMap(&init);
    const ReducedOutput *reduced =
        llvm::find_if(split.reduced,
                      [&](const ReducedOutput &r) { return r.index == index; });
    if (reduced == split.reduced.end()) {
      fullOutputs[index] =
          splitOperand(rewriter, op, split, loops, init.get(), map);
      inits.push_back(fullOutputs[index].value);
      maps.push_back(fullOutputs[index].map);
      continue;
    }
    // The partial results: the thread dims and the init's dims read along
    // loops (not its unit dims read at 0: the linalg vectorizer rejects a
    // unit dim after the vector's), in the split op's order of the two.
    auto type = cast<RankedTensorType>(init.get().getType());
    SmallVector<int64_t> shape;
    SmallVector<AffineExpr> exprs;
    auto addThreadDims = [&] {
      for (auto [dim, size] : llvm::zip(threadDims, threadSizes)) {
        exprs.push_back(rewriter.getAffineDimExpr(dim));
        shape.push_back(size);
      }
    };
    if (split.threadLoopsFirst)
      addThreadDims();
    for (auto [size, expr] : llvm::zip(type.getShape(), map.getResults()))
      if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
        exprs.push_back(
            rewriter.getAffineDimExpr(*loops.threadDim[dim.getPosition()]));
        shape.push_back(size);
      }
    if (!split.threadLoopsFirst)
      addThreadDims();
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
    Value identity =
        arith::ConstantOp::create(rewriter, loc, reduced->identity);
    inits.push_back(
        linalg::FillOp::create(rewriter, loc, identity, empty).getResult(0));
    maps.push_back(AffineMap::get(loops.iterators.size(), 0, exprs,
                                  rewriter.getContext()));
  }

  auto splitOp =
      linalg::GenericOp::create(rewriter, loc, ValueRange(inits).getTypes(),
                                inputs, inits, maps, loops.iterators);
  rewriter.inlineRegionBefore(op.getRegion(), splitOp.getRegion(),
                              splitOp.getRegion().end());

  SmallVector<Value> results(splitOp.getResults());
  for (auto [index, full] : llvm::enumerate(fullOutputs))
    if (full.expanded)
      results[index] = tensor::CollapseShapeOp::create(
          rewriter, loc, op.getResult(index).getType(), results[index],
          full.reassociation);
  for (const ReducedOutput &reduced : split.reduced) {
    Value init = op.getDpsInits()[reduced.index];
    // The combining op reduces the partials over the thread dims into the
    // init without its unit dims read at 0, a collapse_shape view of it:
    // the linalg vectorizer takes no map with more results than loops.
    AffineMap initMap =
        op.getMatchingIndexingMap(&op.getDpsInitsMutable()[reduced.index]);
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices pending;
    for (auto [position, expr] : llvm::enumerate(initMap.getResults())) {
      pending.push_back(position);
      if (isa<AffineDimExpr>(expr))
        groups.push_back(std::exchange(pending, {}));
    }
    if (!groups.empty())
      groups.back().append(pending);
    Value target = init;
    if (groups.size() != initMap.getNumResults())
      target = tensor::CollapseShapeOp::create(rewriter, loc, init, groups);
    unsigned numThreadDims = threadDims.size();
    unsigned numInitDims = groups.size();
    unsigned numDims = numThreadDims + numInitDims;
    unsigned firstThreadDim = split.threadLoopsFirst ? 0 : numInitDims;
    unsigned firstInitDim = split.threadLoopsFirst ? numThreadDims : 0;
    SmallVector<utils::IteratorType> iterators(numDims,
                                               utils::IteratorType::parallel);
    std::fill_n(iterators.begin() + firstThreadDim, numThreadDims,
                utils::IteratorType::reduction);
    AffineMap partialMap = rewriter.getMultiDimIdentityMap(numDims);
    AffineMap outputMap = AffineMap::get(
        numDims, 0, partialMap.getResults().slice(firstInitDim, numInitDims),
        rewriter.getContext());
    auto combine = linalg::GenericOp::create(
        rewriter, loc, target.getType(), results[reduced.index], target,
        {partialMap, outputMap}, iterators,
        [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
          linalg::YieldOp::create(
              b, bodyLoc,
              combinePartial(b, bodyLoc, reduced.combiner, args[1], args[0]));
        });
    Value combined = combine.getResult(0);
    if (target != init)
      combined = tensor::ExpandShapeOp::create(rewriter, loc, init.getType(),
                                               combined, groups);
    results[reduced.index] = combined;
    combines.push_back(combine);
  }
  rewriter.replaceOp(op, results);
  return combines;
}
