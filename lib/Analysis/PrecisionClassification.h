//===- PrecisionClassification.h - Roles and categories of ops --*- C++ -*-===//
//
// Classification, the first step of the precision analysis: whether an op is
// painted (with a category), a source or fixed, and why.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_ANALYSIS_PRECISIONCLASSIFICATION_H
#define AMP_LIB_ANALYSIS_PRECISIONCLASSIFICATION_H

#include "amp/Analysis/PrecisionAnalysis.h"
#include <optional>

namespace mlir::amp {

/// The values the analysis converts: tensors of f32.
inline bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

/// Classifies ops one at a time, in IR order. A painted op's category is, in
/// this order, its `amp.precision` pin, the policy's rule for its name, its
/// PrecisionOpInterface default (if the policy takes defaults of that
/// category), else the `unknown-ops` mode.
class PrecisionClassifier {
public:
  /// `built` is the analysis being built, whose sources so far (a fill of a
  /// source is a source) the classifier reads.
  PrecisionClassifier(const Policy &policy, const PrecisionOptions &options,
                      const PrecisionAnalysis &built)
      : policy(policy), options(options), built(built) {}

  /// The decision of `op` before painting, or none for an op without float
  /// tensors. Fails with an error at the op for a pin it cannot honour, and
  /// for an op in no list under `unknown-ops=error`.
  FailureOr<std::optional<PrecisionDecision>> classify(Operation &op);

private:
  struct Category {
    OpCategory category;
    std::string origin;
  };

  /// The category of `op` without its pin: its rule, its default, or the
  /// unknown-ops mode.
  FailureOr<Category> classifyByPolicy(Operation &op);
  /// The strictest category of the ops in `body`; `what` is how the
  /// explanation names the op ("a reduction").
  FailureOr<Category> classifyByBody(Block &body, llvm::StringRef what);
  FailureOr<Category> classifyUnknown(Operation &op);
  bool isSourceOp(Operation &op);
  std::optional<std::string> whyFixed(Operation &op);

  const Policy &policy;
  const PrecisionOptions &options;
  const PrecisionAnalysis &built;
};

} // namespace mlir::amp

#endif // AMP_LIB_ANALYSIS_PRECISIONCLASSIFICATION_H
