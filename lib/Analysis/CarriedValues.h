//===- CarriedValues.h - Values tied across regions -------------*- C++ -*-===//
//
// The values a region op carries between its regions and results, grouped so
// that each group must share one type: an scf.for iter_arg with its block
// argument and result, an scf.if result, an scf.while before/after argument.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_ANALYSIS_CARRIEDVALUES_H
#define AMP_LIB_ANALYSIS_CARRIEDVALUES_H

#include "amp/Analysis/PrecisionAnalysis.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"

namespace mlir::amp {

/// The groups of values `branch` ties together, found through
/// RegionBranchOpInterface, numbered in IR order (results, then block
/// arguments), each with the operands forwarded into it (inits, yields).
SmallVector<PrecisionAnalysis::CarriedValue>
findCarriedValues(RegionBranchOpInterface branch);

} // namespace mlir::amp

#endif // AMP_LIB_ANALYSIS_CARRIEDVALUES_H
