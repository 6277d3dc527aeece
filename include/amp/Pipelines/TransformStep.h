//===- TransformStep.h - The AMP pipeline as a library call -----*- C++ -*-===//
//
// Applies the AMP pipeline to a step in process and hands back, as data,
// what amp-opt would write to files or print as remarks: the JSON report and
// the per-op explanations, from amp-insert-casts' library call. The C API,
// the Python bindings and the CPU runner call it; the options are the one
// AmpPipelineOptions (amp/Pipelines/AmpPipeline.h).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_TRANSFORMSTEP_H
#define AMP_PIPELINES_TRANSFORMSTEP_H

#include "amp/Pipelines/AmpPipeline.h"
#include "amp/Transforms/InsertCasts.h"
#include "mlir/IR/BuiltinOps.h"
#include <string>
#include <vector>

namespace mlir::amp {

/// What the pipeline tells besides the IR.
struct PipelineOutputs {
  /// The JSON report (the `report` option); empty when amp-insert-casts did
  /// not run (`level=O0`).
  std::string report;
  /// One per op and carried value, in IR order.
  std::vector<Explanation> explanations;
};

/// Applies amp-pipeline configured by `options` to `module`, or without
/// options the fp32 reference (amp-strip-markers: the step as written).
/// With `outputs`, also returns the report and the explanations. The files
/// and remarks the options ask for (`report`, `dot`, `explain`) are written
/// and emitted as amp-opt would. Errors are emitted as diagnostics.
LogicalResult transformStep(ModuleOp module, const AmpPipelineOptions *options,
                            PipelineOutputs *outputs = nullptr);

} // namespace mlir::amp

#endif // AMP_PIPELINES_TRANSFORMSTEP_H
