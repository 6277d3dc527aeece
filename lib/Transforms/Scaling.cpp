//===- Scaling.cpp - The loss scaler's configuration and state ------------===//

#include "amp/Transforms/Scaling.h"
#include "amp/Dialect/Amp/IR/AmpAttributes.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::amp;

static llvm::Error optionError(StringRef option, const Twine &range,
                               const Twine &got) {
  return llvm::createStringError("option '" + option + "' must be " + range +
                                 ", got " + got);
}

static std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", value);
  return text;
}

/// The scaler keeps its counters in i32 tensors.
static constexpr int64_t kMaxCounter = std::numeric_limits<int32_t>::max();

llvm::Expected<ScalingConfig>
ScalingConfig::get(StringRef dtype, StringRef scaling, double initScale,
                   double growthFactor, double backoffFactor,
                   int64_t growthInterval, double minScale, double maxScale,
                   int64_t hysteresis) {
  std::optional<Precision> low = symbolizePrecision(dtype);
  if (!low || !isLowPrecision(*low))
    return optionError("dtype", "f16 or bf16", "'" + dtype + "'");
  std::optional<ScalingMode> mode =
      scaling.empty() ? (*low == Precision::F16 ? ScalingMode::Dynamic
                                                : ScalingMode::None)
                      : symbolizeScalingMode(scaling);
  if (!mode)
    return optionError("scaling", "none, static or dynamic (empty: dynamic "
                                  "for f16, none for bf16)",
                       "'" + scaling + "'");
  // Comparisons are written so that NaN fails them.
  if (!(initScale > 0.0) || std::isinf(initScale))
    return optionError("init-scale", "a finite number > 0",
                       formatNumber(initScale));
  if (!(growthFactor > 1.0) || std::isinf(growthFactor))
    return optionError("growth-factor", "a finite number > 1",
                       formatNumber(growthFactor));
  if (!(backoffFactor > 0.0 && backoffFactor < 1.0))
    return optionError("backoff-factor", "in (0, 1)",
                       formatNumber(backoffFactor));
  if (growthInterval < 1 || growthInterval > kMaxCounter)
    return optionError("growth-interval",
                       "an integer in [1, " + Twine(kMaxCounter) + "]",
                       Twine(growthInterval));
  if (!(minScale >= 0.0) || std::isinf(minScale))
    return optionError("min-scale", "a finite number >= 0 (0: no floor)",
                       formatNumber(minScale));
  if (!(maxScale > minScale))
    return optionError("max-scale",
                       "> min-scale (" + formatNumber(minScale) +
                           "; inf: no cap)",
                       formatNumber(maxScale));
  if (hysteresis < 1 || hysteresis > kMaxCounter)
    return optionError("hysteresis",
                       "an integer in [1, " + Twine(kMaxCounter) + "]",
                       Twine(hysteresis));
  if (*mode == ScalingMode::Dynamic &&
      !(initScale >= minScale && initScale <= maxScale))
    return optionError("init-scale",
                       "within [min-scale, max-scale] = [" +
                           formatNumber(minScale) + ", " +
                           formatNumber(maxScale) + "] with dynamic scaling",
                       formatNumber(initScale));
  // The scale is an f32 tensor: the constants must be f32 numbers too.
  if (std::isinf(static_cast<float>(initScale)))
    return optionError("init-scale", "finite in f32 (at most 3.40282e+38)",
                       formatNumber(initScale));
  return ScalingConfig{*mode,     initScale, growthFactor, backoffFactor,
                       growthInterval, minScale, maxScale, hysteresis};
}

SmallVector<ScalerStateSlot>
amp::getScalerStateSlots(MLIRContext *context, const ScalingConfig &config) {
  SmallVector<ScalerStateSlot> slots;
  if (!config.isDynamic())
    return slots;
  Type f32 = RankedTensorType::get({}, Float32Type::get(context));
  Type i32 = RankedTensorType::get({}, IntegerType::get(context, 32));
  slots.push_back({kScaleStateName, f32});
  slots.push_back({kGrowthTrackerStateName, i32});
  if (config.hasHysteresisState())
    slots.push_back({kHysteresisStateName, i32});
  return slots;
}

double amp::getInitialScalerState(StringRef name, double initScale,
                                  int64_t hysteresis) {
  if (name == kScaleStateName)
    return initScale;
  if (name == kHysteresisStateName)
    return static_cast<double>(hysteresis);
  return 0.0;
}

DictionaryAttr amp::getStateAttrDict(MLIRContext *context, StringRef name) {
  Builder b(context);
  return b.getDictionaryAttr(
      b.getNamedAttr(AmpDialect::kStateAttrName, b.getStringAttr(name)));
}

FailureOr<SmallVector<UpdateOp>> amp::collectStepUpdates(func::FuncOp func) {
  SmallVector<UpdateOp> updates;
  WalkResult walk = func.walk([&](UpdateOp update) {
    Operation *parent = update->getParentOp();
    if (parent == func.getOperation()) {
      updates.push_back(update);
      return WalkResult::advance();
    }
    for (Operation *op = parent; op != func.getOperation();
         op = op->getParentOp()) {
      if (isa<LoopLikeOpInterface>(op)) {
        InFlightDiagnostic diag = update.emitOpError(
            "is inside a loop; a training step updates its state once, so "
            "'amp.update' must be directly in the function body");
        diag.attachNote(op->getLoc()) << "the enclosing loop is here";
        return WalkResult::interrupt();
      }
    }
    update.emitOpError("is nested in '")
        << parent->getName()
        << "'; all updates of a step share one overflow decision, so "
           "'amp.update' must be directly in the function body";
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!updates.empty() && !func.getBody().hasOneBlock())
    return updates.front().emitOpError(
        "is in a function with several blocks; a training step with "
        "'amp.update' must be a single-block function");
  return updates;
}

SmallVector<Value> amp::inlineUpdateRegion(RewriterBase &rewriter,
                                           UpdateOp update, ValueRange grads,
                                           Operation *before) {
  SmallVector<Value> arguments(grads);
  llvm::append_range(arguments, update.getState());
  llvm::append_range(arguments, update.getInputs());
  Block &body = update.getBody().front();
  YieldOp yield = update.getYield();
  // A yielded block argument disappears with the block: use its value.
  SmallVector<Value> newState;
  for (Value value : yield.getValues()) {
    auto arg = dyn_cast<BlockArgument>(value);
    newState.push_back(arg && arg.getOwner() == &body
                           ? arguments[arg.getArgNumber()]
                           : value);
  }
  rewriter.eraseOp(yield);
  rewriter.inlineBlockBefore(&body, before, arguments);
  return newState;
}

LogicalResult amp::rewriteEachStep(
    ModuleOp module, llvm::Expected<ScalingConfig> config,
    llvm::function_ref<LogicalResult(func::FuncOp, const ScalingConfig &)>
        rewriteStep) {
  if (!config) {
    // Not the op's error: printing the whole module after it would bury it.
    emitError(module.getLoc()) << llvm::toString(config.takeError());
    return failure();
  }
  bool failedStep = false;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      failedStep |= failed(rewriteStep(func, *config));
  return failure(failedStep);
}

LogicalResult amp::checkNoCallers(func::FuncOp func,
                                  Operation *symbolTableOp) {
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(func, symbolTableOp);
  if (!uses || uses->empty())
    return success();
  InFlightDiagnostic diag = func.emitOpError(
      "is a training step with loss scaling, which adds scaler state to its "
      "signature, but it is referenced by other operations");
  diag.attachNote(uses->begin()->getUser()->getLoc()) << "referenced here";
  return diag;
}

LogicalResult amp::checkStateUsedAfter(ArrayRef<UpdateOp> updates,
                                         Operation *anchor) {
  if (updates.empty())
    return success();
  Block *body = anchor->getBlock();
  for (UpdateOp update : updates.drop_back())
    for (Operation *user : update->getUsers()) {
      Operation *top = body->findAncestorOpInBlock(*user);
      if (top != anchor && !top->isBeforeInBlock(anchor))
        continue;
      InFlightDiagnostic diag = user->emitOpError(
          "uses the new state of an 'amp.update' before the last update of "
          "the step; the step's gradients must all be computed before its "
          "one overflow decision");
      diag.attachNote(update.getLoc()) << "the update is here";
      diag.attachNote(anchor->getLoc()) << "the last update is here";
      return diag;
    }
  return success();
}
