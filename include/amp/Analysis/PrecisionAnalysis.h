//===- PrecisionAnalysis.h - Which ops compute in low precision -*- C++ -*-===//
//
// Decides, for every op of a training step outside `amp.update` regions,
// whether it computes in the low type (f16 or bf16) or in f32, and why.
// Ops are first classified (pins, the policy's rules by name, the defaults
// ops give through PrecisionOpInterface), then painted over SSA use-def
// chains like TensorFlow grappler's auto_mixed_precision pass. The values an
// `scf` op carries (iter_args, block arguments, yields and results) are nodes
// of their own, so that a loop agrees on one type per carried value. The
// rewrite (amp-insert-casts), its explanations, report and DOT export read the
// result; nothing here changes IR. Queries answer for the IR as analyzed.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_ANALYSIS_PRECISIONANALYSIS_H
#define AMP_ANALYSIS_PRECISIONANALYSIS_H

#include "amp/Analysis/Policy.h"
#include "amp/Dialect/Amp/IR/AmpAttributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include <string>

namespace mlir::amp {

/// How an op takes part in precision assignment.
enum class OpRole {
  /// Painted: computes in the low type or in f32.
  Painted,
  /// Made of no data (dense constants, `tensor.empty`, a `linalg.fill` of
  /// those): built again in each type its users need instead of cast.
  Source,
  /// Never converted (f64 or other non-f32 floats, scalar floats, casts,
  /// `amp.seed`).
  Fixed,
};

/// Which rule decided a painted node's precision.
enum class PaintRule {
  /// Its own category (allow: low, deny: f32) or its pin.
  Own,
  /// deny spreads forward through infer ops and through clear ops that lie
  /// on a path to a deny or infer op.
  DenyForward,
  /// An infer or clear op between allow ops becomes allow.
  BetweenAllow,
  /// allow expands through clear ops, upstream and downstream.
  AllowThroughClear,
  /// Left open by the rules above: low only when all its inputs are low.
  FollowInputs,
};

/// The decision for one op, or for one value carried by an `scf` op.
struct PrecisionDecision {
  static constexpr unsigned kNoNode = ~0u;

  OpRole role = OpRole::Fixed;
  /// The category the node was classified into (painted nodes only).
  OpCategory category = OpCategory::Deny;
  /// Contractions and reductions: the inits and results stay f32.
  bool accumulates = false;
  bool isLow = false;
  /// Decided by an `amp.precision` pin, which wins over the policy.
  bool pinned = false;
  PaintRule rule = PaintRule::Own;
  /// Why the node has its category: the policy entry, the body op of a
  /// generic, the pin, or why the op is fixed or a source.
  std::string origin;
  /// For propagated decisions: the node whose precision spread here.
  unsigned decidedBy = kNoNode;
};

/// Options of the analysis, from the pass options and the policy file.
struct PrecisionOptions {
  Precision lowPrecision = Precision::F16;
  UnknownOpMode unknownOps = UnknownOpMode::Deny;
};

/// Whether every element of a dense float constant survives conversion to
/// `type`: no overflow to inf, no flush of a nonzero value to zero.
bool fitsFloatType(DenseElementsAttr value, FloatType type);

class PrecisionAnalysis {
public:
  /// Values of a region op that must share one type (an `scf.for` iter_arg,
  /// its block argument and its result; an `scf.if` result) and the
  /// operands forwarded into them (init, yields).
  struct CarriedValue {
    Operation *owner;
    unsigned index;
    SmallVector<Value> values;
    SmallVector<OpOperand *> inputs;
  };

  /// Classifies and paints every function in `root`. Emits located errors
  /// (an op in no list with `unknown-ops=error`, a pin the pass cannot
  /// honour) and fails on them.
  static FailureOr<PrecisionAnalysis> run(Operation *root, const Policy &policy,
                                          const PrecisionOptions &options);

  /// The decision of an op, or null for ops without one (structural ops,
  /// ops without f32 tensors, ops inside update regions).
  const PrecisionDecision *lookup(Operation *op) const;
  /// Every op with a decision, in IR order.
  ArrayRef<Operation *> getOps() const { return ops; }

  ArrayRef<CarriedValue> getCarriedValues() const { return carried; }
  const PrecisionDecision &getCarriedDecision(unsigned index) const {
    return nodes[carriedNodes[index]];
  }

  /// Whether `use` is converted to its user's precision (false for the
  /// inits of contractions and reductions, and for non-f32 operands).
  bool isFollowedOperand(OpOperand &use) const;
  /// The type `value` has after the rewrite: its own, or the same tensor
  /// shape in the low type.
  Type getRewrittenType(Value value) const;
  /// The type the user of `use` needs after the rewrite.
  Type getRequiredType(OpOperand &use) const;
  /// Whether `value` is a result of a source op.
  bool isSourceValue(Value value) const;

  Precision getLowPrecision() const { return options.lowPrecision; }
  /// `type` (an f32 tensor) with the low element type.
  Type getLowType(Type type) const;

  /// "f16 allow: preset torch: ..." or "f32 infer: ...; propagated from
  /// 'math.exp' at <loc> (deny spreads forward)".
  std::string explain(Operation *op) const;
  std::string explainCarried(unsigned index) const;

private:
  explicit PrecisionAnalysis(const PrecisionOptions &options)
      : options(options) {}
  friend class PrecisionAnalysisBuilder;

  std::string describeNode(unsigned node) const;
  std::string explainDecision(const PrecisionDecision &decision) const;
  const PrecisionDecision *lookupNodeOf(Value value) const;

  PrecisionOptions options;
  /// Painted ops and carried values, by node id.
  SmallVector<PrecisionDecision> nodes;
  /// The op of a node, or null for carried values.
  SmallVector<Operation *> nodeOps;
  SmallVector<unsigned> nodeCarriedIndex;
  DenseMap<Operation *, unsigned> nodeOfOp;
  DenseMap<Value, unsigned> nodeOfCarriedValue;
  DenseMap<OpOperand *, unsigned> nodeOfCarriedInput;
  SmallVector<CarriedValue> carried;
  SmallVector<unsigned> carriedNodes;
  /// Decisions of sources and fixed ops.
  DenseMap<Operation *, PrecisionDecision> others;
  SmallVector<Operation *> ops;
};

} // namespace mlir::amp

#endif // AMP_ANALYSIS_PRECISIONANALYSIS_H
