//===- StepToolOptions.h - Options of the tools that take a step -*- C++ -*-===//
//
// amp-run and amp-compile both pick a step function and an AMP pipeline from
// the command line, with the same options and the same errors.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TOOLS_STEPTOOLOPTIONS_H
#define AMP_TOOLS_STEPTOOLOPTIONS_H

#include "amp/Pipelines/AmpPipeline.h"
#include "llvm/Support/CommandLine.h"

namespace mlir::amp {

/// `--amp` and `--func`, registered in `category` when constructed (as a
/// static object of the tool, like any cl::opt).
struct StepToolOptions {
  explicit StepToolOptions(llvm::cl::OptionCategory &category);

  /// The AMP pipeline's options, as for amp-pipeline; empty: fp32 as written.
  llvm::cl::opt<std::string> amp;
  /// The step function; empty: the only one with an `amp.update`.
  llvm::cl::opt<std::string> function;

  /// The parsed and verified `--amp` options, null without `--amp`; the
  /// error names the option.
  llvm::Expected<std::unique_ptr<AmpPipelineOptions>>
  getPipelineOptions() const;
};

} // namespace mlir::amp

#endif // AMP_TOOLS_STEPTOOLOPTIONS_H
