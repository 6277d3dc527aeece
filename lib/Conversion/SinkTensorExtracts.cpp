//===- SinkTensorExtracts.cpp - Keep scalar reads on the device -----------===//
//
// Implements `amp-sink-tensor-extracts`. The analysis (which ops compute
// from an extracted scalar, which generics use them) is separate from the
// rewrite that threads the tensor into those generics.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPSINKTENSOREXTRACTS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// An extracted scalar, the host ops computing from it, and the generics
/// whose bodies use any of them.
struct ScalarSlice {
  tensor::ExtractOp extract;
  /// Pure scalar ops in the extract's block, in block order.
  SmallVector<Operation *> hostOps;
  llvm::SetVector<linalg::GenericOp> users;
};

/// A host op that can be recomputed inside a kernel.
bool isScalarComputation(Operation *op) {
  return op->getNumRegions() == 0 && op->getNumResults() > 0 && isPure(op) &&
         llvm::none_of(op->getResultTypes(), llvm::IsaPred<ShapedType>);
}

FailureOr<ScalarSlice> analyzeExtract(tensor::ExtractOp extract) {
  ScalarSlice slice{extract, {}, {}};
  Block *block = extract->getBlock();
  llvm::SetVector<Operation *> computed;
  computed.insert(extract);
  // `computed` grows while it is walked: every user joins or is classified.
  for (size_t i = 0; i < computed.size(); ++i) {
    for (OpOperand &use : computed[i]->getUses()) {
      Operation *ancestor = block->findAncestorOpInBlock(*use.getOwner());
      auto generic = dyn_cast_if_present<linalg::GenericOp>(ancestor);
      if (generic && ancestor != use.getOwner()) {
        slice.users.insert(generic);
        continue;
      }
      if (ancestor == use.getOwner() && isScalarComputation(ancestor)) {
        computed.insert(ancestor);
        continue;
      }
      InFlightDiagnostic diag = extract.emitOpError(
          "reads a device tensor into a scalar that the host would use; the "
          "GPU lowering supports scalars used by pure scalar ops and "
          "linalg.generic bodies only");
      diag.attachNote(use.getOwner()->getLoc()) << "used here";
      return diag;
    }
  }
  for (Operation *op : computed.getArrayRef().drop_front())
    slice.hostOps.push_back(op);
  llvm::sort(slice.hostOps,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return slice;
}

/// Gives `generic` the extracted tensor as one more input and recomputes the
/// slice's scalars at the start of its body.
void sinkInto(RewriterBase &rewriter, const ScalarSlice &slice,
              linalg::GenericOp generic) {
  tensor::ExtractOp extract = slice.extract;
  MLIRContext *ctx = generic.getContext();
  SmallVector<AffineExpr> position;
  for (Value index : extract.getIndices())
    position.push_back(getAffineConstantExpr(
        *getConstantIntValue(getAsOpFoldResult(index)), ctx));
  AffineMap map = AffineMap::get(generic.getNumLoops(), 0, position, ctx);

  SmallVector<Value> inputs = generic.getInputs();
  inputs.push_back(extract.getTensor());
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  unsigned numInputs = generic.getNumDpsInputs();
  maps.insert(maps.begin() + numInputs, map);

  rewriter.setInsertionPoint(generic);
  auto sunk = linalg::GenericOp::create(
      rewriter, generic.getLoc(), generic.getResultTypes(), inputs,
      generic.getOutputs(), maps, generic.getIteratorTypesArray());
  sunk->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
  rewriter.inlineRegionBefore(generic.getRegion(), sunk.getRegion(),
                              sunk.getRegion().end());
  Block &body = sunk.getRegion().front();
  Value element = body.insertArgument(
      numInputs, extract.getType(), extract.getLoc());

  IRMapping mapping;
  mapping.map(extract.getResult(), element);
  rewriter.setInsertionPointToStart(&body);
  for (Operation *op : slice.hostOps)
    rewriter.clone(*op, mapping);
  for (auto [from, to] : mapping.getValueMap())
    rewriter.replaceUsesWithIf(from, to, [&](OpOperand &use) {
      return sunk->isProperAncestor(use.getOwner());
    });
  rewriter.replaceOp(generic, sunk->getResults());
}

struct SinkTensorExtractsPass
    : public amp::impl::AmpSinkTensorExtractsBase<SinkTensorExtractsPass> {
  void runOnOperation() override {
    SmallVector<tensor::ExtractOp> extracts;
    getOperation().walk([&](tensor::ExtractOp extract) {
      // Extracts inside kernels-to-be read on the device already.
      if (!extract->getParentOfType<linalg::LinalgOp>())
        extracts.push_back(extract);
    });
    IRRewriter rewriter(&getContext());
    for (tensor::ExtractOp extract : extracts) {
      if (!llvm::all_of(extract.getIndices(), [](Value index) {
            return getConstantIntValue(getAsOpFoldResult(index)).has_value();
          })) {
        extract.emitOpError("reads a device tensor at indices that are not "
                            "constants, which the GPU lowering cannot move "
                            "into a kernel");
        return signalPassFailure();
      }
      FailureOr<ScalarSlice> slice = analyzeExtract(extract);
      if (failed(slice))
        return signalPassFailure();
      for (linalg::GenericOp generic : slice->users)
        sinkInto(rewriter, *slice, generic);
      for (Operation *op : llvm::reverse(slice->hostOps))
        rewriter.eraseOp(op);
      rewriter.eraseOp(extract);
    }
  }
};

} // namespace
