//===- StepToolOptions.cpp - Options of the tools that take a step --------===//

#include "StepToolOptions.h"

using namespace mlir;
using namespace mlir::amp;

StepToolOptions::StepToolOptions(llvm::cl::OptionCategory &category)
    : amp("amp",
          llvm::cl::desc("AMP pipeline options, as for amp-pipeline (e.g. "
                         "\"dtype=f16 scaling=dynamic\"); none: the fp32 "
                         "step as written"),
          llvm::cl::init(""), llvm::cl::cat(category)),
      function("func",
               llvm::cl::desc("The step function (default: the only one "
                              "with an amp.update)"),
               llvm::cl::init(""), llvm::cl::cat(category)) {}

llvm::Expected<std::unique_ptr<AmpPipelineOptions>>
StepToolOptions::getPipelineOptions() const {
  if (amp.empty())
    return nullptr;
  llvm::Expected<std::unique_ptr<AmpPipelineOptions>> parsed =
      parseAmpPipelineOptions(amp);
  if (!parsed)
    return llvm::createStringError("--amp: " +
                                   llvm::toString(parsed.takeError()));
  return parsed;
}
