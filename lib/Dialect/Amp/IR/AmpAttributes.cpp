//===- AmpAttributes.cpp - Values of the amp.* attributes -----------------===//

#include "amp/Dialect/Amp/IR/AmpAttributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include <cmath>

using namespace mlir;
using namespace mlir::amp;

#include "amp/Dialect/Amp/IR/AmpEnums.cpp.inc"

FloatType amp::getFloatType(MLIRContext *context, Precision precision) {
  switch (precision) {
  case Precision::F32:
    return Float32Type::get(context);
  case Precision::F16:
    return Float16Type::get(context);
  case Precision::BF16:
    return BFloat16Type::get(context);
  }
  llvm_unreachable("unknown precision");
}

std::optional<Initializer> amp::parseInitializer(StringRef text) {
  if (text == "zeros")
    return Initializer{Initializer::Kind::Zeros};
  if (text == "ones")
    return Initializer{Initializer::Kind::Ones};
  if (text == "glorot")
    return Initializer{Initializer::Kind::Glorot};
  if (!text.consume_front("normal:"))
    return std::nullopt;
  double stddev;
  // getAsDouble returns true on failure; NaN and inf are not deviations.
  if (text.getAsDouble(stddev) || !(stddev > 0.0) || std::isinf(stddev))
    return std::nullopt;
  return Initializer{Initializer::Kind::Normal, stddev};
}

std::optional<double> amp::getValueAttr(Attribute attr) {
  if (auto value = dyn_cast<FloatAttr>(attr))
    return value.getValueAsDouble();
  if (auto value = dyn_cast<IntegerAttr>(attr))
    return static_cast<double>(value.getInt());
  return std::nullopt;
}

bool amp::isImportRole(StringRef role, bool isResult) {
  static constexpr llvm::StringLiteral argumentRoles[] = {
      "parameter", "buffer", "optimizer_state", "hyperparameter", "data",
      "seed"};
  static constexpr llvm::StringLiteral resultRoles[] = {
      "loss", "gradient", "parameter", "optimizer_state", "buffer"};
  return isResult ? llvm::is_contained(resultRoles, role)
                  : llvm::is_contained(argumentRoles, role);
}
