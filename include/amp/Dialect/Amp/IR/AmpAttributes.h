//===- AmpAttributes.h - Values of the amp.* attributes ---------*- C++ -*-===//
//
// The string values that `amp.precision`, `amp.init` and `amp.state` accept,
// parsed in one place for the verifier, the passes and the runners.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPATTRIBUTES_H
#define AMP_DIALECT_AMP_IR_AMPATTRIBUTES_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringRef.h"
#include <optional>

// Precision (f32, f16, bf16) with symbolizePrecision/stringifyPrecision.
#include "amp/Dialect/Amp/IR/AmpEnums.h.inc"

namespace mlir::amp {

/// The float type of a precision (f32, f16 or bf16).
FloatType getFloatType(MLIRContext *context, Precision precision);
inline bool isLowPrecision(Precision precision) {
  return precision != Precision::F32;
}

/// How a runner initializes a carried state argument (`amp.init`).
struct Initializer {
  enum class Kind { Zeros, Ones, Glorot, Normal };
  Kind kind;
  /// The standard deviation of `normal:<std>`.
  double stddev = 0.0;
};

/// Parses "zeros", "ones", "glorot" or "normal:<std>" with std > 0.
std::optional<Initializer> parseInitializer(llvm::StringRef text);

/// The number an `amp.value` holds (a float or an integer attribute).
std::optional<double> getValueAttr(Attribute attr);

/// Whether `role` is a value of `amp.import_role` on an argument (or, with
/// `isResult`, a result) of an imported step: parameter, buffer,
/// optimizer_state, hyperparameter, data, seed; loss, gradient, parameter,
/// optimizer_state, buffer.
bool isImportRole(llvm::StringRef role, bool isResult);

/// The names of the scaler state the pipeline threads through a step, in
/// the order of the arguments and results it appends.
inline constexpr llvm::StringLiteral kScaleStateName = "scale";
inline constexpr llvm::StringLiteral kGrowthTrackerStateName = "growth_tracker";
inline constexpr llvm::StringLiteral kHysteresisStateName = "hysteresis";
inline constexpr llvm::StringLiteral kFoundInfStateName = "found_inf";

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_IR_AMPATTRIBUTES_H
