//===- PrecisionReport.h - Statistics and pictures of precision -*- C++ -*-===//
//
// What amp-insert-casts tells a user besides the IR: a JSON report (ops per
// category and precision, casts inserted, elements and bytes converted per
// step, against naive per-op casting) and a Graphviz picture of the step.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_ANALYSIS_PRECISIONREPORT_H
#define AMP_ANALYSIS_PRECISIONREPORT_H

#include "amp/Analysis/PrecisionAnalysis.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::amp {

/// Casts between tensor types and the data they convert in one step.
struct ConversionStats {
  unsigned truncf = 0;
  unsigned extf = 0;
  /// Elements converted by casts of static shape.
  uint64_t elements = 0;
  /// Bytes read plus bytes written by those casts.
  uint64_t bytes = 0;
  /// Casts of dynamic shape, whose size is known only at run time (not in
  /// `elements` and `bytes`).
  unsigned dynamicCasts = 0;

  /// Counts one cast from `from` to `to` (same shape, float elements).
  void addCast(ShapedType from, ShapedType to);
  unsigned getNumCasts() const { return truncf + extf; }
};

/// What eager per-op casting would do (as PyTorch autocast does): every
/// input of every allow op cast to the low type and every result back.
ConversionStats computeNaiveStats(const PrecisionAnalysis &analysis);

/// The decision of one op as the report lists it: what a test or a user
/// checks op by op.
struct DecisionEntry {
  /// "linalg.matmul".
  std::string op;
  /// The op's location as MLIR prints it ("step.mlir":7:8, or an importer's
  /// fused location naming the source op and module).
  std::string location;
  /// "painted", "source" or "fixed".
  std::string role;
  /// "f16", "bf16" or "f32" (the result type of painted ops).
  std::string precision;
  /// "allow", "deny", "infer" or "clear" for painted ops, else empty.
  std::string category;
  /// The explanation (PrecisionAnalysis::explain).
  std::string reason;
};

/// The decisions of every op of the analyzed IR, in IR order. Read before
/// the rewrite, which builds ops again.
std::vector<DecisionEntry> collectDecisions(const PrecisionAnalysis &analysis);

/// Writes the JSON report of one run of the pass.
void writePrecisionReport(llvm::raw_ostream &os,
                          const PrecisionAnalysis &analysis,
                          llvm::StringRef policyName,
                          llvm::ArrayRef<DecisionEntry> decisions,
                          const ConversionStats &inserted,
                          unsigned constantsConverted,
                          const ConversionStats &naive);

/// Writes the functions of `root`, after the rewrite, as a Graphviz digraph:
/// ops colored by precision (low green, f32 red, fixed grey, sources
/// white), casts as yellow diamonds, SSA values as edges. `getAnalyzedOp`
/// maps an op the rewrite built again to the analyzed op it replaces.
void writePrecisionDot(
    llvm::raw_ostream &os, Operation *root, const PrecisionAnalysis &analysis,
    const llvm::DenseSet<Operation *> &casts,
    llvm::function_ref<Operation *(Operation *)> getAnalyzedOp);

} // namespace mlir::amp

#endif // AMP_ANALYSIS_PRECISIONREPORT_H
