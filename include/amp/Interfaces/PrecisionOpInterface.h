//===- PrecisionOpInterface.h - An op's part in mixed precision -*- C++ -*-===//
//
// OpCategory, the four categories of grappler's auto_mixed_precision pass,
// and PrecisionOpInterface, through which an op gives its default category
// and its accumulators (PrecisionOpInterface.td).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_PRECISIONOPINTERFACE_H
#define AMP_INTERFACES_PRECISIONOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

// OpCategory (allow, deny, infer, clear) with symbolizeOpCategory and
// stringifyOpCategory.
#include "amp/Interfaces/PrecisionEnums.h.inc"

namespace mlir::amp {

/// An op's default category and why ("a linalg contraction").
struct PrecisionDefault {
  OpCategory category;
  std::string reason;
};

} // namespace mlir::amp

#include "amp/Interfaces/PrecisionOpInterface.h.inc"

#endif // AMP_INTERFACES_PRECISIONOPINTERFACE_H
