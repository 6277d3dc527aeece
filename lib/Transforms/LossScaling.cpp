//===- LossScaling.cpp - Start the backward pass from the loss scale ------===//
//
// Implements `amp-loss-scaling`: `amp.seed` becomes the loss scale S, so the
// backward computes the gradients of S * loss. In dynamic mode S and the rest
// of the scaler state become function arguments, so a runner carries them
// from step to step on the device like any other state.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Transforms/Passes.h"
#include "amp/Transforms/Scaling.h"
#include "ScalingPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPLOSSSCALING
#include "amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// The values that transitively depend on `root` within `func`'s body. An op
/// that uses a dependent value anywhere, even inside one of its regions, makes
/// all of its results dependent.
llvm::DenseSet<Value> getDependentValues(func::FuncOp func, Value root) {
  Block &body = func.getBody().front();
  llvm::DenseSet<Value> dependent{root};
  // Each op is expanded once, whichever of its operands reaches it first:
  // an op with many operands and results (an amp.update) stays linear.
  llvm::DenseSet<Operation *> reached;
  SmallVector<Value> worklist{root};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      Operation *top = body.findAncestorOpInBlock(*user);
      if (!top || !reached.insert(top).second)
        continue;
      for (Value result : top->getResults())
        if (dependent.insert(result).second)
          worklist.push_back(result);
    }
  }
  return dependent;
}

/// Warns about gradients that do not depend on the seed: they are not
/// gradients of the loss, yet the guard will unscale them as if they were.
void warnAboutUnscaledGradients(func::FuncOp func, SeedOp seed,
                                ArrayRef<UpdateOp> updates) {
  llvm::DenseSet<Value> dependent = getDependentValues(func, seed.getResult());
  for (UpdateOp update : updates)
    for (auto [index, grad] : llvm::enumerate(update.getGrads()))
      if (!dependent.contains(grad)) {
        InFlightDiagnostic diag = update.emitWarning("gradient #")
                                  << index
                                  << " does not depend on the loss seed: it "
                                     "is not scaled by S, yet it will be "
                                     "unscaled by 1/S like the others";
        diag.attachNote(seed.getLoc()) << "the loss seed is here";
      }
}

/// A tensor of `type` (shaped like `like`) filled with the f32 value
/// `value`, rounded to the element type.
Value buildSplat(OpBuilder &b, Location loc, RankedTensorType type, Value like,
                 double value) {
  auto element = cast<FloatType>(type.getElementType());
  auto attr = FloatAttr::get(element, static_cast<float>(value));
  if (type.hasStaticShape())
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, attr));
  Value scalar = arith::ConstantOp::create(b, loc, attr);
  Value empty = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, like), element);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

/// The scale argument `scale` (tensor<f32>) broadcast to `type` and rounded
/// to its element type.
Value buildScaleBroadcast(OpBuilder &b, Location loc, RankedTensorType type,
                          Value like, Value scale) {
  if (type == scale.getType())
    return scale;
  auto element = cast<FloatType>(type.getElementType());
  Value empty = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, like), element);
  MLIRContext *context = b.getContext();
  SmallVector<AffineMap> maps = {
      AffineMap::get(type.getRank(), 0, context),
      AffineMap::getMultiDimIdentityMap(type.getRank(), context)};
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto broadcast = linalg::GenericOp::create(
      b, loc, type, scale, empty, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value s = args[0];
        if (element.getWidth() < 32)
          s = arith::TruncFOp::create(nb, nloc, element, s);
        else if (element.getWidth() > 32)
          s = arith::ExtFOp::create(nb, nloc, element, s);
        linalg::YieldOp::create(nb, nloc, s);
      });
  return broadcast.getResult(0);
}

struct LossScalingPass
    : public ScalingPass<LossScalingPass, amp::impl::AmpLossScalingBase> {
  using ScalingPass::ScalingPass;

  /// Rewrites the seed of one step; adds the scaler state arguments.
  LogicalResult rewriteStep(func::FuncOp func, const ScalingConfig &config);
};

} // namespace

LogicalResult LossScalingPass::rewriteStep(func::FuncOp func,
                                         const ScalingConfig &config) {
  SmallVector<SeedOp> seeds;
  func.walk([&](SeedOp seed) { seeds.push_back(seed); });
  FailureOr<SmallVector<UpdateOp>> updates = collectStepUpdates(func);
  if (failed(updates))
    return failure();
  if (seeds.empty()) {
    if (config.mode == ScalingMode::None || updates->empty())
      return success();
    return updates->front().emitOpError("needs the loss marked with "
                                        "'amp.seed' in its function: scaling=")
           << stringifyScalingMode(config.mode)
           << " scales the backward pass from the seed (use scaling=none for "
              "a step without loss scaling)";
  }
  // The dialect's verifier already rejects a second seed.
  SeedOp seed = seeds.front();
  if (seed->getParentOp() != func.getOperation())
    return seed.emitOpError("must be directly in the function body of the "
                            "training step, not nested in '")
           << seed->getParentOp()->getName() << "'";
  auto type = cast<RankedTensorType>(seed.getType());
  OpBuilder b(seed);
  Location loc = seed.getLoc();
  Value start;
  switch (config.mode) {
  case ScalingMode::None:
    start = buildSplat(b, loc, type, seed.getLoss(), 1.0);
    break;
  case ScalingMode::Static:
    warnAboutUnscaledGradients(func, seed, *updates);
    start = buildSplat(b, loc, type, seed.getLoss(), config.initScale);
    break;
  case ScalingMode::Dynamic: {
    warnAboutUnscaledGradients(func, seed, *updates);
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (func.getArgAttr(i, AmpDialect::kStateAttrName))
        return func.emitOpError("already has scaler state (argument #")
               << i << "); amp-loss-scaling runs once per step";
    if (failed(checkNoCallers(func, getOperation())))
      return failure();
    MLIRContext *context = &getContext();
    SmallVector<ScalerStateSlot> slots = getScalerStateSlots(context, config);
    unsigned first = func.getNumArguments();
    SmallVector<unsigned> indices(slots.size(), first);
    SmallVector<Type> types;
    SmallVector<DictionaryAttr> attrs;
    for (const ScalerStateSlot &slot : slots) {
      types.push_back(slot.type);
      attrs.push_back(getStateAttrDict(context, slot.name));
    }
    SmallVector<Location> locs(slots.size(), func.getLoc());
    if (failed(func.insertArguments(indices, types, attrs, locs)))
      return func.emitOpError("cannot take the scaler state arguments");
    start = buildScaleBroadcast(b, loc, type, seed.getLoss(),
                                func.getArgument(first));
    break;
  }
  }
  seed.replaceAllUsesWith(start);
  seed.erase();
  return success();
}
