//===- TransformStep.cpp - The AMP pipeline as a library call -------------===//

#include "amp/Pipelines/TransformStep.h"
#include "amp/Support/Diagnostics.h"
#include "amp/Transforms/Passes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;
using namespace mlir::amp;

LogicalResult amp::transformStep(ModuleOp module,
                                 const AmpPipelineOptions *options,
                                 PipelineOutputs *outputs) {
  PassManager pm(module.getContext(), module->getName().getStringRef());
  if (!options) {
    pm.addPass(createAmpStripMarkers());
    return pm.run(module);
  }
  // The casts as a library call, whose results are data; the rest as
  // passes.
  if (std::optional<CastInsertionOptions> casts =
          getCastInsertionOptions(*options)) {
    casts->report |= outputs != nullptr;
    FailureOr<CastInsertionResult> result = runCastInsertion(module, *casts);
    if (failed(result) || failed(verify(module)))
      return failure();
    if (options->explain)
      for (const Explanation &explanation : result->explanations)
        emitRemark(explanation.location) << explanation.message;
    if ((!options->report.empty() &&
         failed(writeOptionFile(module, "report", options->report,
                                result->report))) ||
        (!options->dot.empty() &&
         failed(writeOptionFile(module, "dot", options->dot, result->dot))))
      return failure();
    if (outputs) {
      outputs->report = std::move(result->report);
      outputs->explanations = std::move(result->explanations);
    }
  }
  buildScalingPipeline(pm, *options);
  return pm.run(module);
}
