//===- MergeEqualReductions.cpp - One pass for reductions computed twice --===//
//
// Implements `amp-merge-equal-reductions`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/Matchers.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPMERGEEQUALREDUCTIONS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// A reduction on tensors into a fill: the kind of op this pass merges.
bool isFilledReduction(linalg::GenericOp generic) {
  return generic.hasPureTensorSemantics() && generic.getNumDpsInits() == 1 &&
         generic.getNumReductionLoops() > 0 &&
         generic.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
}

/// Whether two fills write the same value.
bool fillSameValue(linalg::FillOp a, linalg::FillOp b) {
  Value x = a.getInputs()[0], y = b.getInputs()[0];
  Attribute first, second;
  return x == y || (matchPattern(x, m_Constant(&first)) &&
                    matchPattern(y, m_Constant(&second)) && first == second);
}

/// The output's dimensions that the loops write, without the unit ones
/// that a constant 0 indexes: the same sums in the same order when equal.
SmallVector<std::pair<AffineExpr, int64_t>>
getWrittenDims(linalg::GenericOp generic) {
  OpOperand *init = generic.getDpsInitOperand(0);
  AffineMap map = generic.getMatchingIndexingMap(init);
  ArrayRef<int64_t> shape = cast<ShapedType>(init->get().getType()).getShape();
  SmallVector<std::pair<AffineExpr, int64_t>> dims;
  for (auto [result, size] : llvm::zip(map.getResults(), shape)) {
    auto constant = dyn_cast<AffineConstantExpr>(result);
    if (constant && constant.getValue() == 0 && size == 1)
      continue;
    dims.emplace_back(result, size);
  }
  return dims;
}

/// Whether `later` computes the values `earlier` does, up to unit
/// dimensions of its output: the same inputs through the same maps, the
/// same loops and body, a fill of the same value, and the same output
/// dimensions written.
bool computeSameValues(linalg::GenericOp earlier, linalg::GenericOp later) {
  if (!llvm::equal(earlier.getDpsInputs(), later.getDpsInputs()) ||
      earlier.getIteratorTypesArray() != later.getIteratorTypesArray() ||
      getElementTypeOrSelf(earlier.getResultTypes()[0]) !=
          getElementTypeOrSelf(later.getResultTypes()[0]))
    return false;
  for (auto [a, b] :
       llvm::zip(earlier.getDpsInputOperands(), later.getDpsInputOperands()))
    if (earlier.getMatchingIndexingMap(a) != later.getMatchingIndexingMap(b))
      return false;
  return fillSameValue(
             earlier.getDpsInits()[0].getDefiningOp<linalg::FillOp>(),
             later.getDpsInits()[0].getDefiningOp<linalg::FillOp>()) &&
         getWrittenDims(earlier) == getWrittenDims(later) &&
         OperationEquivalence::isRegionEquivalentTo(
             &earlier.getRegion(), &later.getRegion(),
             OperationEquivalence::IgnoreLocations);
}

/// `value` reshaped to `type`, which has the same elements with other
/// unit dimensions.
Value reshapeUnitDims(OpBuilder &builder, Location loc, Value value,
                      RankedTensorType type) {
  auto from = cast<RankedTensorType>(value.getType());
  if (from == type)
    return value;
  std::optional<SmallVector<ReassociationIndices>> groups =
      getReassociationIndicesForReshape(from, type);
  if (!groups)
    return nullptr;
  if (from.getRank() > type.getRank())
    return tensor::CollapseShapeOp::create(builder, loc, type, value, *groups);
  return tensor::ExpandShapeOp::create(builder, loc, type, value, *groups);
}

/// Replaces each reduction that computes what an earlier one in its block
/// does by a reshape of the earlier one's result; returns how many went.
unsigned mergeEqualReductions(Block &block) {
  SmallVector<linalg::GenericOp> reductions;
  unsigned merged = 0;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic || !isFilledReduction(generic))
      continue;
    auto type = dyn_cast<RankedTensorType>(generic.getResultTypes()[0]);
    Value same;
    for (linalg::GenericOp earlier : reductions) {
      if (!type || !computeSameValues(earlier, generic))
        continue;
      OpBuilder builder(generic);
      same = reshapeUnitDims(builder, generic.getLoc(), earlier->getResult(0),
                             type);
      if (same)
        break;
    }
    if (!same) {
      reductions.push_back(generic);
      continue;
    }
    generic->getResult(0).replaceAllUsesWith(same);
    generic.erase();
    ++merged;
  }
  return merged;
}

struct MergeEqualReductionsPass
    : public amp::impl::AmpMergeEqualReductionsBase<MergeEqualReductionsPass> {
  void runOnOperation() override {
    getOperation()->walk([](Block *block) { mergeEqualReductions(*block); });
  }
};

} // namespace
