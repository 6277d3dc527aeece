//===- UpstreamPrecisionModels.h - The interface upstream -------*- C++ -*-===//
//
// PrecisionOpInterface for the upstream ops of a training step: arith, math
// and tensor ops (and linalg.softmax) by a table of defaults, linalg's
// structured ops by their structure (contractions and convolutions allow,
// other ops by their body, reductions accumulating in f32).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_UPSTREAMPRECISIONMODELS_H
#define AMP_INTERFACES_UPSTREAMPRECISIONMODELS_H

#include "amp/Interfaces/PrecisionOpInterface.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/ArrayRef.h"

namespace mlir::amp {

/// The default of an upstream op that has one by its name.
struct UpstreamPrecisionDefault {
  llvm::StringRef opName;
  OpCategory category;
  llvm::StringRef reason;
};

/// The upstream ops with a default by name, in the table's order
/// (lib/Interfaces/UpstreamPrecisionDefaults.def).
llvm::ArrayRef<UpstreamPrecisionDefault> getUpstreamPrecisionDefaults();
/// The entry of `opName` in that table, or null.
const UpstreamPrecisionDefault *
lookupUpstreamPrecisionDefault(llvm::StringRef opName);

/// Whether `op` (a linalg convolution with static images) is a filter
/// gradient as torch-mlir writes one: its filter window (an output
/// gradient's image) is larger than its output image (a filter's). Its
/// result is a parameter's gradient, not an image, and oneDNN's weight-
/// gradient kernels, which reduce over images, compute it faster than its
/// forward ones would.
bool isFilterGradientConvolution(Operation *op);

/// Attaches PrecisionOpInterface to the ops of that table and to every
/// linalg structured op, as each of their dialects loads.
void registerAmpPrecisionInterfaceExternalModels(DialectRegistry &registry);

/// An op of a dialect loaded in `context` that lacks its model, if any: the
/// context's registry missed registerAmpPrecisionInterfaceExternalModels,
/// and every upstream op would be in no list.
std::optional<llvm::StringRef>
findUpstreamOpWithoutPrecisionModel(MLIRContext *context);

} // namespace mlir::amp

#endif // AMP_INTERFACES_UPSTREAMPRECISIONMODELS_H
