//===- GPUSplitReductions.cpp - Reductions over many threads --------------===//
//
// Implements `amp-gpu-split-reductions`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUSPLITREDUCTIONS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// Each thread of a split reduction reduces about this many elements: enough
/// to pay for writing and re-reading its partial result.
constexpr int64_t kElementsPerThread = 64;
/// Reductions of fewer elements per output are left to one thread: a split
/// adds two launches (filling the partials, combining them), a few
/// microseconds, which a serial loop this short costs about as much as.
constexpr int64_t kMinReductionExtent = 512;
/// Ops with this many outputs in parallel already occupy the GPU.
constexpr int64_t kMaxParallelExtent = 1024;

/// How a loop is split: `serial` iterations in each of `threads` threads
/// (serial * threads is its size). A parallel loop is not split.
struct LoopSplit {
  bool reduction;
  int64_t serial;
  int64_t threads;
  bool hasSerialLoop() const { return serial > 1 || threads == 1; }
  bool hasThreadLoop() const { return threads > 1; }
};

/// An output the op accumulates into (its indexing map has no reduction
/// loop), with the body op that accumulates and its partial results' start.
struct ReducedOutput {
  unsigned index;
  Operation *combiner;
  TypedAttr identity;
};

struct ReductionSplit {
  SmallVector<LoopSplit> loops;
  SmallVector<ReducedOutput> reduced;
};

/// The smallest divisor of `n` that is at least `atLeast` (`n` if none).
int64_t getSmallestDivisorAtLeast(int64_t n, int64_t atLeast) {
  int64_t best = n;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0)
      continue;
    for (int64_t divisor : {d, n / d})
      if (divisor >= atLeast)
        best = std::min(best, divisor);
  }
  return best;
}

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
Value combinePartial(OpBuilder &b, Location loc, Operation *combiner,
                     Value acc, Value partial) {
  if (auto sub = dyn_cast<arith::SubFOp>(combiner))
    return arith::AddFOp::create(b, loc, acc, partial, sub.getFastmath());
  Operation *clone = b.clone(*combiner);
  clone->setOperands({acc, partial});
  return clone->getResult(0);
}

/// How to split `op`'s reduction loops over threads, or nullopt when it is
/// not worth it or the op is not a plain reduction: static shapes, indexing
/// maps that are projected permutations, and outputs that either take one
/// element per iteration (an unscaled gradient) or accumulate with one
/// combiner that has a neutral element (a loss, found_inf).
std::optional<ReductionSplit> planReductionSplit(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.hasIndexSemantics() ||
      op.getNumReductionLoops() == 0 ||
      !llvm::all_of(op->getOperandTypes(), llvm::IsaPred<RankedTensorType>))
    return std::nullopt;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic) ||
      !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
        return map.isProjectedPermutation();
      }))
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t parallelExtent = 1, reductionExtent = 1;
  for (auto [size, iterator] : llvm::zip(sizes, iterators))
    (iterator == utils::IteratorType::parallel ? parallelExtent
                                               : reductionExtent) *= size;
  if (parallelExtent >= kMaxParallelExtent ||
      reductionExtent < kMinReductionExtent)
    return std::nullopt;

  ReductionSplit split;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (map.isPermutation())
      continue;
    if (llvm::any_of(map.getResults(), [&](AffineExpr expr) {
          return iterators[cast<AffineDimExpr>(expr).getPosition()] !=
                 utils::IteratorType::parallel;
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

  // The outer reduction loops become serial until a thread has enough work;
  // the inner ones go to threads, so neighbouring threads read neighbouring
  // elements.
  int64_t serialExtent = 1;
  for (auto [size, iterator] : llvm::zip(sizes, iterators)) {
    if (iterator == utils::IteratorType::parallel) {
      split.loops.push_back({false, 1, size});
      continue;
    }
    int64_t wanted = llvm::divideCeil(kElementsPerThread, serialExtent);
    int64_t serial = wanted <= 1 ? 1 : getSmallestDivisorAtLeast(size, wanted);
    serialExtent *= serial;
    split.loops.push_back({true, serial, size / serial});
  }
  if (serialExtent == reductionExtent)
    return std::nullopt;
  return split;
}

/// The loops of the split op: the parallel ones in their order, then the
/// thread part of each reduction loop (parallel), then its serial part.
struct SplitLoops {
  SmallVector<std::optional<unsigned>> threadDim, serialDim;
  SmallVector<utils::IteratorType> iterators;
  unsigned numParallel = 0;

  explicit SplitLoops(const ReductionSplit &split) {
    unsigned numLoops = split.loops.size();
    threadDim.resize(numLoops);
    serialDim.resize(numLoops);
    for (unsigned loop = 0; loop < numLoops; ++loop)
      if (!split.loops[loop].reduction)
        threadDim[loop] = numParallel++;
    for (unsigned loop = 0; loop < numLoops; ++loop)
      if (split.loops[loop].reduction && split.loops[loop].hasThreadLoop())
        threadDim[loop] = numParallel++;
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
    unsigned loop = cast<AffineDimExpr>(expr).getPosition();
    ReassociationIndices group;
    auto addDim = [&](unsigned dim, int64_t size) {
      group.push_back(shape.size());
      shape.push_back(size);
      exprs.push_back(rewriter.getAffineDimExpr(dim));
    };
    if (loops.serialDim[loop])
      addDim(*loops.serialDim[loop], split.loops[loop].serial);
    if (loops.threadDim[loop])
      addDim(*loops.threadDim[loop], split.loops[loop].reduction
                                         ? split.loops[loop].threads
                                         : type.getDimSize(position));
    result.expanded |= group.size() > 1;
    result.reassociation.push_back(group);
  }
  result.map = AffineMap::get(loops.iterators.size(), 0, exprs,
                              rewriter.getContext());
  result.value = value;
  if (result.expanded)
    result.value = tensor::ExpandShapeOp::create(
        rewriter, op.getLoc(), type.clone(shape), value, result.reassociation);
  return result;
}

/// Replaces `op` by an op whose reduction loops are split as `split` says,
/// writing per-thread partial results of its reduced outputs, and one op per
/// reduced output that accumulates the partials into the original init.
/// Appends those accumulating ops to `combines`.
void applyReductionSplit(RewriterBase &rewriter, linalg::GenericOp op,
                         const ReductionSplit &split,
                         SmallVectorImpl<linalg::GenericOp> &combines) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SplitLoops loops(split);
  SmallVector<unsigned> threadDims;
  SmallVector<int64_t> threadSizes;
  loops.getReductionThreadDims(split, threadDims, threadSizes);

  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    SplitOperand operand = splitOperand(rewriter, op, split, loops,
                                        input->get(),
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
    const ReducedOutput *reduced = llvm::find_if(
        split.reduced, [&](const ReducedOutput &r) { return r.index == index; });
    if (reduced == split.reduced.end()) {
      fullOutputs[index] =
          splitOperand(rewriter, op, split, loops, init.get(), map);
      inits.push_back(fullOutputs[index].value);
      maps.push_back(fullOutputs[index].map);
      continue;
    }
    auto type = cast<RankedTensorType>(init.get().getType());
    SmallVector<int64_t> shape(type.getShape());
    SmallVector<AffineExpr> exprs;
    for (AffineExpr expr : map.getResults())
      exprs.push_back(rewriter.getAffineDimExpr(
          *loops.threadDim[cast<AffineDimExpr>(expr).getPosition()]));
    for (auto [dim, size] : llvm::zip(threadDims, threadSizes)) {
      exprs.push_back(rewriter.getAffineDimExpr(dim));
      shape.push_back(size);
    }
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape,
                                          type.getElementType());
    Value identity =
        arith::ConstantOp::create(rewriter, loc, reduced->identity);
    inits.push_back(
        linalg::FillOp::create(rewriter, loc, identity, empty).getResult(0));
    maps.push_back(AffineMap::get(loops.iterators.size(), 0, exprs,
                                  rewriter.getContext()));
  }

  auto splitOp = linalg::GenericOp::create(
      rewriter, loc, ValueRange(inits).getTypes(), inputs, inits, maps,
      loops.iterators);
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
    unsigned rank = cast<RankedTensorType>(init.getType()).getRank();
    unsigned numDims = rank + threadDims.size();
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    iterators.append(threadDims.size(), utils::IteratorType::reduction);
    AffineMap partialMap = rewriter.getMultiDimIdentityMap(numDims);
    AffineMap outputMap =
        AffineMap::get(numDims, 0, partialMap.getResults().take_front(rank),
                       rewriter.getContext());
    auto combine = linalg::GenericOp::create(
        rewriter, loc, init.getType(), results[reduced.index], init,
        {partialMap, outputMap}, iterators,
        [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
          linalg::YieldOp::create(
              b, bodyLoc,
              combinePartial(b, bodyLoc, reduced.combiner, args[1], args[0]));
        });
    results[reduced.index] = combine.getResult(0);
    combines.push_back(combine);
  }
  rewriter.replaceOp(op, results);
}

struct GPUSplitReductionsPass
    : public amp::impl::AmpGPUSplitReductionsBase<GPUSplitReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> worklist;
    getOperation().walk([&](linalg::GenericOp op) { worklist.push_back(op); });
    IRRewriter rewriter(&getContext());
    // The ops accumulating the partials are split again while they qualify.
    while (!worklist.empty()) {
      linalg::GenericOp op = worklist.pop_back_val();
      if (std::optional<ReductionSplit> split = planReductionSplit(op))
        applyReductionSplit(rewriter, op, *split, worklist);
    }
  }
};

} // namespace
