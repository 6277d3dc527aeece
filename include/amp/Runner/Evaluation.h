//===- Evaluation.h - Accuracy of a forward function -------------*- C++ -*-===//
//
// What amp-run --eval and Session.accuracy measure: the accuracy of a
// forward function compiled along with the step, on the step's current
// model.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNNER_EVALUATION_H
#define AMP_RUNNER_EVALUATION_H

#include "amp/Runner/CompiledStep.h"
#include "amp/Runner/Npy.h"
#include "llvm/Support/Error.h"
#include <string>

namespace mlir::amp {

/// Inputs [N, ...] and labels: class indices [N] or one-hot rows [N, C],
/// with the names errors call them by (file names).
struct LabeledData {
  HostArray inputs, labels;
  std::string inputsName = "inputs", labelsName = "labels";
};

/// The accuracy of forward function `name` (compiled along with the step) on
/// `data`: it takes the parameters and buffers (the model) in argument
/// order, then an input batch, and returns logits [batch, classes]. A
/// function with a dynamic batch runs `batchSize` samples at a time (the
/// last batch partial); one with a static batch runs its own size, the last
/// batch padded with zeros and the padding ignored.
llvm::Expected<double> evaluateAccuracy(CompiledStep &step,
                                        llvm::StringRef name,
                                        const LabeledData &data,
                                        int64_t batchSize);

} // namespace mlir::amp

#endif // AMP_RUNNER_EVALUATION_H
