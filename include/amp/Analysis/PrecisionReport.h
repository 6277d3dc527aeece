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

/// Writes the JSON report of one run of the pass.
void writePrecisionReport(llvm::raw_ostream &os,
                          const PrecisionAnalysis &analysis,
                          llvm::StringRef policyName,
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
