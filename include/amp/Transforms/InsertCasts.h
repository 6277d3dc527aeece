//===- InsertCasts.h - Apply precision decisions to the IR ------*- C++ -*-===//
//
// The rewrite half of amp-insert-casts, as a library call: it applies the
// decisions of a PrecisionAnalysis through a rewriter and returns what it
// did. Ops whose results change type are built again with their new types;
// operands whose type an op ties to a result (destination-style inits, a
// fill's value, an inserted slice) take that result's type by construction,
// and every other boundary gets one shared cast.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TRANSFORMS_INSERTCASTS_H
#define AMP_TRANSFORMS_INSERTCASTS_H

#include "amp/Analysis/PrecisionAnalysis.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::amp {

/// What insertCasts did to the IR.
struct CastInsertion {
  /// The tensor casts it inserted that survive the rewrite.
  llvm::DenseSet<Operation *> casts;
  /// Constants converted to the low type at compile time.
  unsigned constantsConverted = 0;
  /// For each op built again with new types, the op of the analyzed IR it
  /// replaces (whose decision it carries).
  llvm::DenseMap<Operation *, Operation *> analyzedOpOf;

  /// The op of the analyzed IR that `op` stands for.
  Operation *getAnalyzedOp(Operation *op) const {
    return analyzedOpOf.lookup(op) ? analyzedOpOf.lookup(op) : op;
  }
};

/// Applies the decisions of `analysis`, computed on `root` as it is, to
/// `root`. Fails, with a located error, only if an op it built again does
/// not verify (a type tie of an op it does not know).
FailureOr<CastInsertion> insertCasts(RewriterBase &rewriter, Operation *root,
                                     const PrecisionAnalysis &analysis);

} // namespace mlir::amp

#endif // AMP_TRANSFORMS_INSERTCASTS_H
