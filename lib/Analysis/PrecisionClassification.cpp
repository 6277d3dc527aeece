//===- PrecisionClassification.cpp - What an op is to the analysis --------===//
//
// Roles (painted, source, fixed) by what an op holds and does; categories by
// pin, policy rule, PrecisionOpInterface default and unknown-ops mode.
//
//===----------------------------------------------------------------------===//

#include "PrecisionClassification.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/ShapedOpInterfaces.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace mlir::amp;

/// Whether `op` has an operand that accumulates in f32.
static bool hasAccumulator(Operation &op) {
  auto precisionOp = dyn_cast<PrecisionOpInterface>(op);
  return precisionOp &&
         llvm::any_of(op.getOpOperands(), [&](OpOperand &operand) {
           return precisionOp.isAccumulator(operand);
         });
}

/// The order in which body ops decide an op's category: any deny op makes
/// it deny, else any infer op infer, else any allow op allow.
static unsigned strictness(OpCategory category) {
  switch (category) {
  case OpCategory::Deny:
    return 3;
  case OpCategory::Infer:
    return 2;
  case OpCategory::Allow:
    return 1;
  case OpCategory::Clear:
    return 0;
  }
  llvm_unreachable("unknown category");
}

FailureOr<PrecisionClassifier::Category>
PrecisionClassifier::classifyUnknown(Operation &op) {
  StringRef name = op.getName().getStringRef();
  UnknownOpMode mode = options.unknownOps;
  if (mode == UnknownOpMode::Error) {
    InFlightDiagnostic diag = op.emitError("'")
                              << name << "' is in no list of policy '"
                              << policy.getName()
                              << "' and unknown-ops=error; add it to a list "
                                 "of a policy file or pin it with "
                                 "'amp.precision'";
    if (!isa<PrecisionOpInterface>(op))
      diag << ", or implement amp's PrecisionOpInterface for it";
    return failure();
  }
  // The other modes are named after the category they give.
  StringRef modeName = stringifyUnknownOpMode(mode);
  return Category{
      *symbolizeOpCategory(modeName),
      ("'" + name + "' is in no list (unknown-ops=" + modeName + ")").str()};
}

FailureOr<PrecisionClassifier::Category>
PrecisionClassifier::classifyByBody(Block &body, StringRef what) {
  std::optional<Category> strictest;
  StringRef strictestName;
  for (Operation &bodyOp : body.without_terminator()) {
    // Index math, constants and conversions compute nothing in floats.
    bool computesFloats = llvm::any_of(
        llvm::concat<Value>(bodyOp.getOperands(), bodyOp.getResults()),
        [](Value v) { return isa<FloatType>(v.getType()); });
    if (!computesFloats || bodyOp.hasTrait<OpTrait::ConstantLike>() ||
        isa<CastOpInterface>(bodyOp))
      continue;
    FailureOr<Category> category = classifyByPolicy(bodyOp);
    if (failed(category))
      return failure();
    if (!strictest ||
        strictness(category->category) > strictness(strictest->category)) {
      strictest = *category;
      strictestName = bodyOp.getName().getStringRef();
    }
  }
  if (!strictest)
    return Category{OpCategory::Clear,
                    (what + " whose body only moves data").str()};
  return Category{strictest->category,
                  (what + " whose strictest body op '" + strictestName +
                   "' is " + stringifyOpCategory(strictest->category) + " (" +
                   strictest->origin + ")")
                      .str()};
}

FailureOr<PrecisionClassifier::Category>
PrecisionClassifier::classifyByPolicy(Operation &op) {
  StringRef name = op.getName().getStringRef();
  if (const Policy::Rule *rule = policy.lookup(name)) {
    if (!rule->category)
      return classifyUnknown(op);
    return Category{*rule->category, rule->origin};
  }
  auto precisionOp = dyn_cast<PrecisionOpInterface>(op);
  if (!precisionOp)
    return classifyUnknown(op);
  std::string prefix = ("default of " + name + ": ").str();
  if (std::optional<PrecisionDefault> byDefault =
          precisionOp.getPrecisionDefault()) {
    if (!policy.takesDefault(byDefault->category))
      return classifyUnknown(op);
    return Category{byDefault->category, prefix + byDefault->reason};
  }
  Block *body = precisionOp.getPrecisionBody();
  if (!body)
    return classifyUnknown(op);
  FailureOr<Category> byBody = classifyByBody(
      *body, hasAccumulator(op) ? "a reduction" : "an elementwise op");
  if (failed(byBody))
    return failure();
  byBody->origin = prefix + byBody->origin;
  return byBody;
}

bool PrecisionClassifier::isSourceOp(Operation &op) {
  if (op.getNumResults() != 1 || !isF32Tensor(op.getResult(0).getType()))
    return false;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isa<DenseElementsAttr>(constant.getValue());
  if (isa<tensor::EmptyOp>(op))
    return true;
  // A fill of a source is a constant too; its body converts the scalar.
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return built.isSourceValue(fill.getOutputs()[0]);
  return false;
}

std::optional<std::string> PrecisionClassifier::whyFixed(Operation &op) {
  // Element type conversions (extf, truncf, sitofp...) keep their types;
  // shape casts such as tensor.cast move data like any clear op.
  if (isa<CastOpInterface>(op) &&
      llvm::any_of(op.getResultTypes(), [&](Type type) {
        return getElementTypeOrSelf(type) !=
               getElementTypeOrSelf(op.getOperand(0).getType());
      }))
    return "a conversion keeps the types it converts between";
  if (isa<CallOpInterface>(op))
    return "a call keeps its callee's signature";
  if (isa<ShapedDimOpInterface>(op))
    return "reads only the shape of its operand, in whatever type it has";
  // The rewrite converts the scalars and bodies of linalg ops, and the
  // padding value of tensor.pad.
  bool isLinalg = isa<linalg::LinalgOp>(op);
  for (Value value : llvm::concat<Value>(op.getOperands(), op.getResults())) {
    Type type = value.getType();
    Type element = getElementTypeOrSelf(type);
    if (isa<FloatType>(element) && !element.isF32())
      return ("has " + llvm::Twine(element.isF64() ? "f64" : "non-f32 float") +
              " values, which are never converted")
          .str();
    if (isa<FloatType>(type) && !isLinalg)
      return "has scalar float values; only tensors are converted";
  }
  if (op.getNumRegions() && !isLinalg && !isa<tensor::PadOp>(op))
    return "has regions the pass does not convert";
  return std::nullopt;
}

FailureOr<std::optional<PrecisionDecision>>
PrecisionClassifier::classify(Operation &op) {
  // Ops on f64 (or already low) tensors get a decision too, to explain why
  // they are left alone.
  bool hasFloatTensor = llvm::any_of(
      llvm::concat<Value>(op.getOperands(), op.getResults()), [](Value v) {
        auto tensor = dyn_cast<RankedTensorType>(v.getType());
        return tensor && isa<FloatType>(tensor.getElementType());
      });
  auto pinAttr = op.getAttrOfType<StringAttr>(AmpDialect::kPrecisionAttrName);
  std::optional<Precision> pin;
  if (pinAttr)
    pin = symbolizePrecision(pinAttr.getValue());
  // A low pin on an op that the pass never converts is an error, not a
  // silently ignored request.
  StringRef lowPinName =
      pin && isLowPrecision(*pin) ? stringifyPrecision(*pin) : StringRef();
  auto rejectLowPin = [&](const llvm::Twine &why) -> LogicalResult {
    if (lowPinName.empty())
      return success();
    return op.emitError("pins '") << lowPinName << "' but " << why;
  };
  if (!hasFloatTensor) {
    if (failed(rejectLowPin("has no f32 tensor for the pass to convert")))
      return failure();
    return std::optional<PrecisionDecision>();
  }
  PrecisionDecision decision;
  // The gradient of the loss starts in f32, as the backward of an f32 loss
  // does in eager autocast: loss scaling turns the seed into S (2^16 by
  // default), which is beyond f16's range until the first allow op divides
  // it down.
  if (isa<SeedOp>(op)) {
    if (failed(
            rejectLowPin("the loss seed stays f32: loss scaling rewrites it")))
      return failure();
    decision.role = OpRole::Painted;
    decision.category = OpCategory::Deny;
    decision.origin = "the loss seed: the backward of the loss starts in f32";
    return std::optional(std::move(decision));
  }
  if (isSourceOp(op)) {
    decision.role = OpRole::Source;
    decision.origin = "holds no data: built again in each type its users need";
    return std::optional(std::move(decision));
  }
  if (std::optional<std::string> reason = whyFixed(op)) {
    if (failed(rejectLowPin(*reason)))
      return failure();
    decision.role = OpRole::Fixed;
    decision.origin = std::move(*reason);
    return std::optional(std::move(decision));
  }

  decision.role = OpRole::Painted;
  decision.accumulates = hasAccumulator(op);
  if (pin) {
    if (isLowPrecision(*pin) && *pin != options.lowPrecision) {
      op.emitError("pins '")
          << stringifyPrecision(*pin) << "' but the low type is '"
          << stringifyPrecision(options.lowPrecision)
          << "' (option 'dtype'); pin 'f32' or '"
          << stringifyPrecision(options.lowPrecision) << "'";
      return failure();
    }
    decision.pinned = true;
    decision.category =
        isLowPrecision(*pin) ? OpCategory::Allow : OpCategory::Deny;
    decision.origin =
        ("pinned by amp.precision = \"" + stringifyPrecision(*pin) + "\"")
            .str();
    return std::optional(std::move(decision));
  }
  FailureOr<Category> category = classifyByPolicy(op);
  if (failed(category))
    return failure();
  decision.category = category->category;
  decision.origin = std::move(category->origin);
  return std::optional(std::move(decision));
}
