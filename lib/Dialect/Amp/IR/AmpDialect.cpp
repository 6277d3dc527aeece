//===- AmpDialect.cpp - The amp dialect and its attributes ----------------===//

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/AmpAttributes.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::amp;

#include "amp/Dialect/Amp/IR/AmpOpsDialect.cpp.inc"

void AmpDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "amp/Dialect/Amp/IR/AmpOps.cpp.inc"
      >();
}

/// A low-precision pin must not break the contract: update regions stay
/// f32, and f64 or integer-only ops are never converted.
static LogicalResult verifyLowPrecisionPin(Operation *op, Precision pin) {
  if (op->getParentOfType<UpdateOp>())
    return op->emitOpError("pins '")
           << stringifyPrecision(pin)
           << "' inside an 'amp.update' region, where master weights and "
              "optimizer state always stay f32";
  bool hasConvertibleFloat = false;
  for (Value value : llvm::concat<Value>(op->getOperands(), op->getResults())) {
    Type element = getElementTypeOrSelf(value);
    if (element.isF64())
      return op->emitOpError("pins '")
             << stringifyPrecision(pin)
             << "' but has f64 values, which the AMP passes never convert";
    hasConvertibleFloat |= element.isF32() || element.isF16() ||
                           element.isBF16();
  }
  if (!hasConvertibleFloat)
    return op->emitOpError("pins '")
           << stringifyPrecision(pin)
           << "' but has no f32 value to convert (only integer or index "
              "values)";
  return success();
}

LogicalResult AmpDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  if (attr.getName() == kDataParallelAttrName) {
    auto text = dyn_cast<StringAttr>(attr.getValue());
    if (!isa<UpdateOp>(op) || !text || text.getValue() != "mpi")
      return op->emitOpError("'")
             << kDataParallelAttrName
             << "' is \"mpi\" on an 'amp.update' (its gradients are sums "
                "over the ranks), got "
             << attr.getValue();
    return success();
  }
  if (attr.getName() != kPrecisionAttrName)
    return op->emitOpError("has unknown amp dialect attribute '")
           << attr.getName().getValue() << "'; operations take only '"
           << kPrecisionAttrName << "' and, on 'amp.update', '"
           << kDataParallelAttrName << "'";
  auto text = dyn_cast<StringAttr>(attr.getValue());
  std::optional<Precision> pin =
      text ? symbolizePrecision(text.getValue()) : std::nullopt;
  if (!pin)
    return op->emitOpError("'")
           << kPrecisionAttrName
           << "' must be \"f32\", \"f16\" or \"bf16\", got " << attr.getValue();
  if (isLowPrecision(*pin))
    return verifyLowPrecisionPin(op, *pin);
  return success();
}

/// Whether `name` can name a value: it becomes a file name and a word of
/// the compiled GPU step's signature text, so no separators or spaces.
static bool isValidValueName(StringRef name) {
  return !name.empty() && name.front() != '.' &&
         llvm::all_of(name, [](char c) {
           return llvm::isAlnum(c) || StringRef("_.-:[]").contains(c);
         });
}

/// Verifies `amp.init`, `amp.state` and `amp.name` on a function argument or
/// result.
static LogicalResult verifyValueAttribute(Operation *op, StringRef what,
                                          NamedAttribute attr,
                                          bool isResult) {
  auto text = dyn_cast<StringAttr>(attr.getValue());
  StringRef name = attr.getName().getValue();
  if (name == AmpDialect::kInitAttrName && !isResult) {
    if (!text || !parseInitializer(text.getValue()))
      return op->emitOpError("'")
             << name << "' on " << what
             << " must be \"zeros\", \"ones\", \"glorot\" or "
                "\"normal:<std>\" with std > 0, got "
             << attr.getValue();
    return success();
  }
  if (name == AmpDialect::kStateAttrName) {
    bool known = text && (text.getValue() == kScaleStateName ||
                          text.getValue() == kGrowthTrackerStateName ||
                          text.getValue() == kHysteresisStateName ||
                          (isResult && text.getValue() == kFoundInfStateName));
    if (!known)
      return op->emitOpError("'")
             << name << "' on " << what << " must be \"scale\", "
             << "\"growth_tracker\", \"hysteresis\""
             << (isResult ? " or \"found_inf\"" : "") << ", got "
             << attr.getValue();
    return success();
  }
  if (name == AmpDialect::kValueAttrName && !isResult) {
    if (!getValueAttr(attr.getValue()))
      return op->emitOpError("'")
             << name << "' on " << what << " must be a number, got "
             << attr.getValue();
    return success();
  }
  if (name == AmpDialect::kImportRoleAttrName) {
    if (!text || !isImportRole(text.getValue(), isResult))
      return op->emitOpError("'")
             << name << "' on " << what << " must be "
             << (isResult ? "\"loss\", \"gradient\", \"parameter\", "
                            "\"optimizer_state\" or \"buffer\""
                          : "\"parameter\", \"buffer\", \"optimizer_state\", "
                            "\"hyperparameter\", \"data\" or \"seed\"")
             << ", got " << attr.getValue();
    return success();
  }
  if (name == AmpDialect::kNameAttrName) {
    if (!text || !isValidValueName(text.getValue()))
      return op->emitOpError("'")
             << name << "' on " << what
             << " must be a non-empty string of letters, digits and "
                "'_.-:[]' that does not start with '.', got "
             << attr.getValue();
    return success();
  }
  return op->emitOpError("has amp dialect attribute '")
         << name << "' on " << what << ", which takes only "
         << (isResult ? "'amp.state', 'amp.name' or 'amp.import_role'"
                      : "'amp.init', 'amp.state', 'amp.name', 'amp.value' or "
                        "'amp.import_role'");
}

LogicalResult AmpDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  std::string what = "argument #" + std::to_string(argIndex);
  return verifyValueAttribute(op, what, attr, /*isResult=*/false);
}

LogicalResult AmpDialect::verifyRegionResultAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned resultIndex,
                                                      NamedAttribute attr) {
  std::string what = "result #" + std::to_string(resultIndex);
  return verifyValueAttribute(op, what, attr, /*isResult=*/true);
}
