//===- Scaling.h - The loss scaler's configuration and state ----*- C++ -*-===//
//
// What `amp-loss-scaling`, `amp-guard-update` and `amp-pipeline` share: the
// scaling mode, the scaler's constants validated in one place (errors name
// the option and its allowed range), the scaler state a step threads through
// its signature, and which updates make up a step.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TRANSFORMS_SCALING_H
#define AMP_TRANSFORMS_SCALING_H

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Transforms/TransformsEnums.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <optional>

namespace mlir::amp {

/// The validated scaling options of a pipeline run.
struct ScalingConfig {
  ScalingMode mode;
  double initScale;
  double growthFactor;
  double backoffFactor;
  int64_t growthInterval;
  double minScale;
  double maxScale;
  int64_t hysteresis;

  /// Checks every option against its allowed range. An empty `scaling`
  /// selects the dtype's default: dynamic for f16, none for bf16.
  static llvm::Expected<ScalingConfig>
  get(llvm::StringRef dtype, llvm::StringRef scaling, double initScale,
      double growthFactor, double backoffFactor, int64_t growthInterval,
      double minScale, double maxScale, int64_t hysteresis);

  /// Reads the options of a struct that declares them under the names of
  /// Passes.td, such as AmpPipelineOptions.
  template <typename OptionsT>
  static llvm::Expected<ScalingConfig> get(const OptionsT &options) {
    return get(options.dtype, options.scaling, options.initScale,
               options.growthFactor, options.backoffFactor,
               options.growthInterval, options.minScale, options.maxScale,
               options.hysteresis);
  }

  /// Whether the step carries its scale and growth tracker from step to step.
  bool isDynamic() const { return mode == ScalingMode::Dynamic; }
  /// Whether the step carries the count of overflows left before backoff.
  bool hasHysteresisState() const { return isDynamic() && hysteresis > 1; }
};

/// One piece of scaler state: its `amp.state` name and type.
struct ScalerStateSlot {
  llvm::StringRef name;
  Type type;
};

/// The scaler state arguments of a step, in the spec's order: `scale`
/// (tensor<f32>) and `growth_tracker` (tensor<i32>) in dynamic mode, then
/// `hysteresis` (tensor<i32>) when hysteresis > 1. The step returns the new
/// values in the same order, then `found_inf`.
llvm::SmallVector<ScalerStateSlot>
getScalerStateSlots(MLIRContext *context, const ScalingConfig &config);

/// The value at which a runner starts a piece of scaler state, by its
/// `amp.state` name: the scale at `initScale`, the growth tracker at 0, the
/// overflows left at `hysteresis`.
double getInitialScalerState(llvm::StringRef name, double initScale,
                             int64_t hysteresis);

/// The argument attributes `{amp.state = "<name>"}` of a state slot.
DictionaryAttr getStateAttrDict(MLIRContext *context, llvm::StringRef name);

/// The `amp.update` ops of a step, in order. Fails with a located error when
/// one is not directly in the body of a single-block function (an update in
/// a loop, or in a branch, cannot share the step's one overflow decision).
FailureOr<llvm::SmallVector<UpdateOp>> collectStepUpdates(func::FuncOp func);

/// Fails with a located error when the new state of one of `updates` but
/// the last is used before `anchor` (the last update, or the terminator):
/// what is built for all updates of a step (the shared decision, the
/// collectives of data parallelism) goes right before the last one.
LogicalResult checkStateUsedAfter(llvm::ArrayRef<UpdateOp> updates,
                                  Operation *anchor);

/// Moves the body of `update` before `before`, its block arguments replaced
/// by `grads` and the update's state operands, and returns the values its
/// `amp.yield` yielded (the yield is erased). The caller replaces `update`.
llvm::SmallVector<Value> inlineUpdateRegion(RewriterBase &rewriter,
                                            UpdateOp update, ValueRange grads,
                                            Operation *before);

/// Fails with a located error when `func` has callers: the scaler state
/// changes its signature.
LogicalResult checkNoCallers(func::FuncOp func, Operation *symbolTableOp);

/// The body of amp-loss-scaling's and amp-guard-update's runOnOperation:
/// reports an options error at `module`, else rewrites every function with a
/// body, all of them even after a failure so that each gets its errors.
LogicalResult
rewriteEachStep(ModuleOp module, llvm::Expected<ScalingConfig> config,
                llvm::function_ref<LogicalResult(func::FuncOp,
                                                 const ScalingConfig &)>
                    rewriteStep);

} // namespace mlir::amp

#endif // AMP_TRANSFORMS_SCALING_H
