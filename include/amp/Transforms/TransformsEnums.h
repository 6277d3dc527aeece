//===- TransformsEnums.h - Modes of the AMP passes --------------*- C++ -*-===//
//
// ScalingMode and DataParallelMode, generated from TransformsEnums.td with
// their string forms (symbolizeScalingMode, stringifyDataParallelMode, ...).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TRANSFORMS_TRANSFORMSENUMS_H
#define AMP_TRANSFORMS_TRANSFORMSENUMS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringRef.h"
#include <optional>

#include "amp/Transforms/TransformsEnums.h.inc"

#endif // AMP_TRANSFORMS_TRANSFORMSENUMS_H
