//===- FoldTransposesIntoMatmuls.cpp - Transposed operands in place ------===//
//
// Implements `amp-fold-transposes-into-matmuls`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPFOLDTRANSPOSESINTOMATMULS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// The map reading a transpose's input where `map` read its result: result
/// dimension d is input dimension permutation[d].
AffineMap readThroughTranspose(AffineMap map, ArrayRef<int64_t> permutation) {
  SmallVector<AffineExpr> results(permutation.size());
  for (auto [d, source] : llvm::enumerate(permutation))
    results[source] = map.getResult(d);
  return AffineMap::get(map.getNumDims(), 0, results, map.getContext());
}

/// Whether `op` takes operand maps permuted by `permutation`: a batch
/// matmul's batch dimension must stay first.
bool acceptsPermutation(linalg::LinalgOp op, ArrayRef<int64_t> permutation) {
  return !isa<linalg::BatchMatmulOp>(op.getOperation()) ||
         permutation.front() == 0;
}

template <typename MatmulLikeOp>
struct FoldTransposeOperands : public OpRewritePattern<MatmulLikeOp> {
  using OpRewritePattern<MatmulLikeOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulLikeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<std::pair<unsigned, Value>> folded;
    for (auto [index, input] : llvm::enumerate(op.getDpsInputs())) {
      auto transpose = input.template getDefiningOp<linalg::TransposeOp>();
      if (!transpose || !acceptsPermutation(op, transpose.getPermutation()))
        continue;
      maps[index] = readThroughTranspose(maps[index], transpose.getPermutation());
      folded.emplace_back(index, transpose.getInput());
    }
    if (folded.empty())
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      for (auto [index, input] : folded)
        op->setOperand(index, input);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

struct FoldTransposesIntoMatmulsPass
    : public amp::impl::AmpFoldTransposesIntoMatmulsBase<
          FoldTransposesIntoMatmulsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTransposeOperands<linalg::MatmulOp>,
                 FoldTransposeOperands<linalg::BatchMatmulOp>>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
