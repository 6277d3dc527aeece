//===- StepSignature.h - What a runner reads from a step --------*- C++ -*-===//
//
// The "step signature model": the role of every argument and result of a
// training step, read from the IR alone as docs/TrainingStepIR.md describes
// ("What a runner reads from the IR"): carried state, parameters versus
// optimizer state versus buffers, data (whose batch dimension may be
// dynamic), names, the loss, and the scaler state the AMP pipeline threads
// through the function.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_STEP_STEPSIGNATURE_H
#define AMP_STEP_STEPSIGNATURE_H

#include "amp/Dialect/Amp/IR/AmpAttributes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <string>

namespace mlir::amp {

/// What a runner does with an argument of the step.
enum class ArgumentRole {
  /// Carried state also read by the forward/backward: initialized by the
  /// runner (or loaded) and saved as the model.
  Parameter,
  /// Carried state read only inside `amp.update` regions: starts at zero.
  OptimizerState,
  /// Carried state whose next value the forward computes, outside every
  /// update (BatchNorm's running statistics): never guarded, saved with the
  /// parameters as part of the model; starts at zero.
  Buffer,
  /// A value only `amp.update` regions read as an input (a learning rate a
  /// scheduler changes): set by the caller, starts at its `amp.value`.
  Hyperparameter,
  /// A batch input, fed from the data files in argument order.
  Data,
  /// Scaler state appended by the AMP pipeline (`amp.state` attribute).
  ScalerState,
};

struct StepArgument {
  ArgumentRole role;
  /// Static, except dimension 0 of data arguments in a step with a dynamic
  /// batch.
  RankedTensorType type;
  /// Its `amp.name`, else "arg<i>".
  std::string name;
  /// For carried and scaler state: the result that feeds this argument at
  /// the next step.
  std::optional<unsigned> nextResult;
  /// For carried state: how it starts (`amp.init`, else the default of its
  /// role: glorot for parameters of rank >= 2, zeros otherwise).
  Initializer init{Initializer::Kind::Zeros};
  /// For scaler state: its `amp.state` name.
  std::string stateName;
  /// For hyperparameters: the `amp.value` they start at, if any.
  std::optional<double> value;
};

struct StepSignature {
  std::string functionName;
  llvm::SmallVector<StepArgument> arguments;
  /// The result that returns the loss (the operand of `amp.seed`).
  unsigned lossResult = 0;
  /// The result named `found_inf` by the AMP pipeline, when it checks for
  /// overflow.
  std::optional<unsigned> foundInfResult;
  unsigned numResults = 0;
  /// Whether dimension 0 of every data argument is dynamic: one compiled
  /// step serves every batch size.
  bool dynamicBatch = false;

  /// The indices of the arguments with `role`, in argument order.
  llvm::SmallVector<unsigned> getArguments(ArgumentRole role) const;
  /// The scaler state argument named `name`, if present.
  std::optional<unsigned> getScalerArgument(llvm::StringRef name) const;
  /// The parameters and buffers: the model, as --save-params writes it.
  llvm::SmallVector<unsigned> getModelArguments() const;
  /// Every carried argument (parameters, buffers, optimizer and scaler
  /// state).
  llvm::SmallVector<unsigned> getCarriedArguments() const;
};

/// The name a runner gives an argument of a role.
llvm::StringRef getArgumentRoleName(ArgumentRole role);

/// The step function of `module`: the function `name` if given, else the
/// only function that contains an `amp.update`. Emits an error otherwise.
FailureOr<func::FuncOp> findStepFunction(ModuleOp module, llvm::StringRef name);

/// Reads the signature of `step`, a training step that still has its `amp`
/// markers. Emits a located error where the step breaks the contract or
/// cannot be run (no loss, state without a static shape, data arguments
/// whose dimensions other than the batch are dynamic, two values with one
/// name, ...).
FailureOr<StepSignature> readStepSignature(func::FuncOp step);

/// Adds to `signature` the scaler state that the AMP pipeline appended to
/// `transformed` (the same step after the pipeline), checking that it kept
/// the original arguments and results as the contract says.
LogicalResult addScalerState(StepSignature &signature,
                             func::FuncOp transformed);

} // namespace mlir::amp

#endif // AMP_STEP_STEPSIGNATURE_H
