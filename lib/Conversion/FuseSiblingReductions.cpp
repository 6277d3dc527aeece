//===- FuseSiblingReductions.cpp - Reductions of one input in one pass ----===//
//
// Implements `amp-fuse-sibling-reductions`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPFUSESIBLINGREDUCTIONS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// A reduction on tensors over static loops: the kind of op this pass fuses.
bool isStaticReduction(linalg::GenericOp generic) {
  return generic.hasPureTensorSemantics() &&
         generic.getNumReductionLoops() > 0 &&
         !ShapedType::isDynamicShape(generic.getStaticLoopRanges());
}

/// Whether `a` and `b` run the same loops and both read one tensor whole
/// through the same map: one pass over it computes both.
bool shareLoopsAndAnInput(linalg::GenericOp a, linalg::GenericOp b) {
  if (a.getIteratorTypesArray() != b.getIteratorTypesArray() ||
      a.getStaticLoopRanges() != b.getStaticLoopRanges())
    return false;
  return llvm::any_of(a.getDpsInputOperands(), [&](OpOperand *x) {
    AffineMap map = a.getMatchingIndexingMap(x);
    return map.isPermutation() &&
           llvm::any_of(b.getDpsInputOperands(), [&](OpOperand *y) {
             return x->get() == y->get() && b.getMatchingIndexingMap(y) == map;
           });
  });
}

/// The ops between `earlier` and `later` in their block that `later`
/// depends on, in block order, when `later` does not depend on `earlier` and
/// all of them are free of memory effects (they can move above `earlier`).
FailureOr<SmallVector<Operation *>> getMovableOperands(Operation *earlier,
                                                       Operation *later) {
  Block *block = later->getBlock();
  BackwardSliceOptions options;
  options.filter = [&](Operation *op) {
    return op->getBlock() == block && earlier->isBeforeInBlock(op);
  };
  options.omitBlockArguments = true;
  options.omitUsesFromAbove = false;
  SetVector<Operation *> slice;
  if (failed(getBackwardSlice(later, &slice, options)))
    return failure();
  for (Operation *user : earlier->getUsers()) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (ancestor == later || slice.contains(ancestor))
      return failure();
  }
  if (!llvm::all_of(slice, isMemoryEffectFree))
    return failure();
  SmallVector<Operation *> ops(slice.begin(), slice.end());
  llvm::sort(ops,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  return ops;
}

/// Replaces `earlier` and `later` by one generic at `earlier`'s place that
/// computes the results of both: the inputs of both (those they share read
/// once), the outputs of both, both bodies one after the other. Each result
/// is summed in the order it was. Returns the new op.
linalg::GenericOp fuse(RewriterBase &rewriter, linalg::GenericOp earlier,
                       linalg::GenericOp later) {
  SmallVector<Value> inputs, outputs;
  SmallVector<AffineMap> inputMaps, outputMaps;
  // Where each op's operands are among the fused op's inputs or outputs.
  SmallVector<unsigned> positions[2];
  linalg::GenericOp ops[2] = {earlier, later};
  for (auto [index, op] : llvm::enumerate(ops)) {
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      unsigned position = 0;
      while (position < inputs.size() &&
             (inputs[position] != input->get() || inputMaps[position] != map))
        ++position;
      if (position == inputs.size()) {
        inputs.push_back(input->get());
        inputMaps.push_back(map);
      }
      positions[index].push_back(position);
    }
  }
  for (auto [index, op] : llvm::enumerate(ops))
    for (OpOperand &init : op.getDpsInitsMutable()) {
      positions[index].push_back(inputs.size() + outputs.size());
      outputs.push_back(init.get());
      outputMaps.push_back(op.getMatchingIndexingMap(&init));
    }
  SmallVector<AffineMap> maps(inputMaps);
  llvm::append_range(maps, outputMaps);

  rewriter.setInsertionPoint(earlier);
  auto fused = linalg::GenericOp::create(
      rewriter, earlier.getLoc(), ValueRange(outputs).getTypes(), inputs,
      outputs, maps, earlier.getIteratorTypesArray(),
      [&](OpBuilder &builder, Location loc, ValueRange arguments) {
        SmallVector<Value> yielded;
        for (auto [index, op] : llvm::enumerate(ops)) {
          IRMapping mapping;
          for (auto [argument, position] :
               llvm::zip_equal(op.getBody()->getArguments(), positions[index]))
            mapping.map(argument, arguments[position]);
          for (Operation &bodyOp : op.getBody()->without_terminator())
            builder.clone(bodyOp, mapping);
          for (Value value : op.getBody()->getTerminator()->getOperands())
            yielded.push_back(mapping.lookup(value));
        }
        linalg::YieldOp::create(builder, loc, yielded);
      });
  unsigned split = earlier->getNumResults();
  rewriter.replaceOp(earlier, fused->getResults().take_front(split));
  rewriter.replaceOp(later, fused->getResults().drop_front(split));
  return fused;
}

/// Fuses each reduction of `block` with the later ones that share its loops
/// and an input read whole; returns how many ops went.
unsigned fuseSiblingReductions(Block &block, RewriterBase &rewriter) {
  SmallVector<linalg::GenericOp> reductions;
  for (auto generic : block.getOps<linalg::GenericOp>())
    if (isStaticReduction(generic))
      reductions.push_back(generic);
  unsigned fusedCount = 0;
  for (size_t i = 0; i < reductions.size(); ++i) {
    for (size_t j = i + 1; j < reductions.size();) {
      linalg::GenericOp earlier = reductions[i], later = reductions[j];
      FailureOr<SmallVector<Operation *>> moved = failure();
      if (shareLoopsAndAnInput(earlier, later))
        moved = getMovableOperands(earlier, later);
      if (failed(moved)) {
        ++j;
        continue;
      }
      for (Operation *op : *moved)
        op->moveBefore(earlier);
      reductions[i] = fuse(rewriter, earlier, later);
      reductions.erase(reductions.begin() + j);
      ++fusedCount;
    }
  }
  return fusedCount;
}

struct FuseSiblingReductionsPass
    : public amp::impl::AmpFuseSiblingReductionsBase<
          FuseSiblingReductionsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation()->walk(
        [&](Block *block) { fuseSiblingReductions(*block, rewriter); });
  }
};

} // namespace
