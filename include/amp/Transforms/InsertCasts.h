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

#include "amp/Analysis/Policy.h"
#include "amp/Analysis/PrecisionAnalysis.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include <optional>
#include <string>
#include <vector>

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

/// What amp-insert-casts is asked to do.
struct CastInsertionOptions {
  /// A preset name or a JSON policy file.
  std::string policy = "torch";
  /// The low type given by the user, which wins over the policy file's own;
  /// unset: the policy file's, else f16.
  std::optional<Precision> dtype;
  /// What an op in no list gets; unset: the policy's own, else deny.
  std::optional<UnknownOpMode> unknownOps;
  /// Whether to write the JSON report and the Graphviz picture into the
  /// result (amp-opt's `report` and `dot` options).
  bool report = false;
  bool dot = false;
};

/// Why one op, or one value carried by an scf op, got its precision.
struct Explanation {
  Location location;
  /// "linalg.matmul"; the scf op for a carried value.
  std::string opName;
  /// "f16 allow: preset torch: ..." (docs/Precision.md).
  std::string message;
};

/// What amp-insert-casts did, as data.
struct CastInsertionResult {
  /// One per op with a decision, then one per carried value, in IR order.
  std::vector<Explanation> explanations;
  /// The JSON report and the DOT picture, when asked for.
  std::string report;
  std::string dot;
};

/// amp-insert-casts as a library call on `module`: loads the policy,
/// analyzes, rewrites, and returns what it decided and did. Errors (a policy
/// that does not load, ops the policy rejects) are emitted as located
/// diagnostics.
FailureOr<CastInsertionResult>
runCastInsertion(ModuleOp module, const CastInsertionOptions &options);

} // namespace mlir::amp

#endif // AMP_TRANSFORMS_INSERTCASTS_H
