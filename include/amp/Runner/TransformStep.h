//===- TransformStep.h - The AMP pipeline as a library call -----*- C++ -*-===//
//
// Applies the AMP pipeline to a step in process and hands back what amp-opt
// would write to files or print as remarks: the JSON report and the per-op
// explanations. The C API, the Python bindings and amp-run call it; the
// options are the one AmpPipelineOptions (amp/Pipelines/AmpPipeline.h).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNNER_TRANSFORMSTEP_H
#define AMP_RUNNER_TRANSFORMSTEP_H

#include "amp/Pipelines/AmpPipeline.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include <string>
#include <vector>

namespace mlir::amp {

/// One `explain` remark of amp-insert-casts.
struct Explanation {
  /// The name of the op at `location` ("linalg.matmul"), empty when several
  /// ops share that location.
  std::string opName;
  /// "file:line:col" (or MLIR's printed form of other locations).
  std::string location;
  /// "f16 allow: preset torch: ..." (docs/Precision.md).
  std::string message;
};

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
/// With `outputs`, also collects the report (written to the `report` path
/// too, if one is set) and the explanations, which are then not passed on
/// to the context's diagnostic handlers. Errors are emitted as diagnostics.
LogicalResult transformStep(ModuleOp module, const AmpPipelineOptions *options,
                            PipelineOutputs *outputs = nullptr);

/// Collects the error and warning diagnostics of a context while it lives,
/// formatted as amp-opt prints them ("loc: error: message", notes
/// included), for APIs that return errors as text.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *context);
  DiagnosticCollector(const DiagnosticCollector &) = delete;
  DiagnosticCollector &operator=(const DiagnosticCollector &) = delete;
  /// Everything collected, one diagnostic per line; clears it.
  std::string take();

private:
  std::string text;
  ScopedDiagnosticHandler handler;
};

} // namespace mlir::amp

#endif // AMP_RUNNER_TRANSFORMSTEP_H
