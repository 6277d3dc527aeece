//===- GuardUpdate.cpp - Unscale, check, skip on overflow, update scaler --===//
//
// Implements `amp-guard-update`. Every tensor computation it emits is a
// `linalg.generic`, so it bufferizes and maps to loops or GPU kernels like the
// rest of the step, and the skip decision is data, not control flow: a GPU
// lowering keeps it on the device without a host read (an `scf.if` on the
// flag would need its value on the host to pick a branch).
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpAttributes.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Transforms/DataParallel.h"
#include "amp/Transforms/Passes.h"
#include "amp/Transforms/Scaling.h"
#include "ScalingPass.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include <cmath>

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGUARDUPDATE
#include "amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

RankedTensorType getScalarTensorType(Type element) {
  return RankedTensorType::get({}, element);
}

/// 1/(S * N) as tensor<f32>, computed once per step: S the `scale` argument
/// (dynamic), the constant init-scale (static) or 1 (none); N the world size
/// when the gradients are sums over the ranks, else 1. Static scaling alone
/// gives a constant.
Value buildInverseScale(OpBuilder &b, Location loc, const ScalingConfig &config,
                        Value scale, Value worldSize) {
  Type f32 = b.getF32Type();
  RankedTensorType type = getScalarTensorType(f32);
  float fixedScale = config.mode == ScalingMode::Static
                         ? static_cast<float>(config.initScale)
                         : 1.0f;
  if (!scale && !worldSize)
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(type, b.getF32FloatAttr(1.0f / fixedScale)));
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, f32);
  AffineMap map = AffineMap::get(b.getContext());
  SmallVector<Value> inputs;
  if (scale)
    inputs.push_back(scale);
  SmallVector<AffineMap> maps(inputs.size() + 1, map);
  auto inverse = linalg::GenericOp::create(
      b, loc, type, inputs, empty, maps, ArrayRef<utils::IteratorType>{},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value divisor =
            scale ? args[0]
                  : Value(arith::ConstantOp::create(
                        nb, nloc, nb.getF32FloatAttr(fixedScale)));
        if (worldSize)
          divisor = arith::MulFOp::create(nb, nloc, divisor, worldSize);
        Value one = arith::ConstantOp::create(nb, nloc, nb.getF32FloatAttr(1));
        Value div = arith::DivFOp::create(nb, nloc, one, divisor);
        linalg::YieldOp::create(nb, nloc, div);
      });
  return inverse.getResult(0);
}

/// Reads `grad` once to produce the unscaled gradient g * (1/S) (computed in
/// f32, or in the gradient's type if wider) and, given `foundInf`, that flag
/// or'ed with whether an unscaled element is inf or NaN. The flag is a
/// reduction over every element, so then all loops are reductions.
std::pair<Value, Value> buildUnscale(OpBuilder &b, Location loc, Value grad,
                                     Value inverseScale, Value foundInf) {
  auto type = cast<RankedTensorType>(grad.getType());
  auto element = cast<FloatType>(type.getElementType());
  FloatType compute = element.getWidth() < 32 ? b.getF32Type() : element;
  MLIRContext *context = b.getContext();
  int64_t rank = type.getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
  AffineMap scalar = AffineMap::get(rank, 0, context);
  Value empty = tensor::EmptyOp::create(
      b, loc, tensor::getMixedSizes(b, loc, grad), element);
  SmallVector<utils::IteratorType> iterators(
      rank, foundInf ? utils::IteratorType::reduction
                     : utils::IteratorType::parallel);
  SmallVector<Type> types{type};
  SmallVector<Value> outputs{empty};
  SmallVector<AffineMap> maps{identity, scalar, identity};
  if (foundInf) {
    types.push_back(foundInf.getType());
    outputs.push_back(foundInf);
    maps.push_back(scalar);
  }
  auto generic = linalg::GenericOp::create(
      b, loc, types, ValueRange{grad, inverseScale}, outputs, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value g = args[0], inverse = args[1];
        if (compute != element)
          g = arith::ExtFOp::create(nb, nloc, compute, g);
        if (compute != inverse.getType())
          inverse = arith::ExtFOp::create(nb, nloc, compute, inverse);
        Value unscaled = arith::MulFOp::create(nb, nloc, g, inverse);
        if (compute != element)
          unscaled = arith::TruncFOp::create(nb, nloc, element, unscaled);
        if (!foundInf) {
          linalg::YieldOp::create(nb, nloc, unscaled);
          return;
        }
        // |x| > largest finite is true for inf and, unordered, for NaN.
        Value magnitude = math::AbsFOp::create(nb, nloc, unscaled);
        Value largest = arith::ConstantOp::create(
            nb, nloc,
            FloatAttr::get(element,
                           APFloat::getLargest(element.getFloatSemantics())));
        Value nonFinite = arith::CmpFOp::create(
            nb, nloc, arith::CmpFPredicate::UGT, magnitude, largest);
        Value any = arith::OrIOp::create(nb, nloc, args[3], nonFinite);
        linalg::YieldOp::create(nb, nloc, ValueRange{unscaled, any});
      });
  return {generic.getResult(0), foundInf ? generic.getResult(1) : Value()};
}

/// `old` where `foundInf` holds, else `updated`, element by element: the
/// skipped step returns its state bit for bit.
Value buildSkip(OpBuilder &b, Location loc, Value foundInf, Value updated,
                Value old) {
  if (updated == old)
    return old;
  auto type = cast<RankedTensorType>(old.getType());
  MLIRContext *context = b.getContext();
  int64_t rank = type.getRank();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
  AffineMap scalar = AffineMap::get(rank, 0, context);
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, type, ValueRange{foundInf, old}, updated,
      ArrayRef<AffineMap>{scalar, identity, identity}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value kept =
            arith::SelectOp::create(nb, nloc, args[0], args[1], args[2]);
        linalg::YieldOp::create(nb, nloc, kept);
      });
  return generic.getResult(0);
}

/// The next scaler state from `foundInf` and the current one (`state`: scale,
/// growth tracker, and the overflows left before backoff with hysteresis),
/// as one 0-d `linalg.generic`. PyTorch's `_amp_update_scale_`: on overflow
/// the scale is multiplied by the backoff factor and the tracker reset;
/// otherwise the tracker counts the finite step and at `growth-interval` the
/// scale grows if the grown scale is finite, and the tracker restarts. The
/// products are computed in f64 and rounded to f32, as PyTorch's kernel does
/// with its double factors. Our additions: the grown scale is capped at
/// `max-scale` and the backed-off one floored at `min-scale`; with
/// hysteresis, DeepSpeed's rule: an overflow backs off only when no
/// overflows are left (else it uses one up), and growth refills them.
SmallVector<Value> buildScalerUpdate(OpBuilder &b, Location loc,
                                     const ScalingConfig &config,
                                     Value foundInf, ValueRange state) {
  SmallVector<Value> inits;
  for (Value value : state)
    inits.push_back(tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{},
        cast<RankedTensorType>(value.getType()).getElementType()));
  SmallVector<Value> inputs{foundInf};
  llvm::append_range(inputs, state);
  SmallVector<AffineMap> maps(inputs.size() + inits.size(),
                              AffineMap::get(b.getContext()));
  auto generic = linalg::GenericOp::create(
      b, loc, ValueRange(inits).getTypes(), inputs, inits, maps,
      ArrayRef<utils::IteratorType>{},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Type f32 = nb.getF32Type(), f64 = nb.getF64Type(),
             i32 = nb.getI32Type();
        auto f32Const = [&](double value) -> Value {
          return arith::ConstantOp::create(
              nb, nloc, nb.getF32FloatAttr(static_cast<float>(value)));
        };
        auto i32Const = [&](int64_t value) -> Value {
          return arith::ConstantOp::create(nb, nloc,
                                           nb.getIntegerAttr(i32, value));
        };
        auto select = [&](Value cond, Value a, Value c) -> Value {
          return arith::SelectOp::create(nb, nloc, cond, a, c);
        };
        Value overflow = args[0], scale = args[1], tracker = args[2];
        Value zero = i32Const(0), one = i32Const(1);
        // scale * factor, in f64 then rounded to f32.
        Value wideScale = arith::ExtFOp::create(nb, nloc, f64, scale);
        auto scaled = [&](double factor) -> Value {
          Value factorValue = arith::ConstantOp::create(
              nb, nloc, nb.getF64FloatAttr(factor));
          Value product =
              arith::MulFOp::create(nb, nloc, wideScale, factorValue);
          return arith::TruncFOp::create(nb, nloc, f32, product);
        };

        // A finite step.
        Value counted = arith::AddIOp::create(nb, nloc, tracker, one);
        Value grows =
            arith::CmpIOp::create(nb, nloc, arith::CmpIPredicate::eq, counted,
                                  i32Const(config.growthInterval));
        Value grown = scaled(config.growthFactor);
        Value grownMagnitude = math::AbsFOp::create(nb, nloc, grown);
        Value grownIsFinite = arith::CmpFOp::create(
            nb, nloc, arith::CmpFPredicate::OLT, grownMagnitude,
            f32Const(std::numeric_limits<float>::infinity()));
        if (!std::isinf(static_cast<float>(config.maxScale)))
          grown = arith::MinimumFOp::create(nb, nloc, grown,
                                            f32Const(config.maxScale));
        Value finiteScale =
            select(grows, select(grownIsFinite, grown, scale), scale);
        Value finiteTracker = select(grows, zero, counted);

        // An overflow.
        Value backedOff = scaled(config.backoffFactor);
        if (static_cast<float>(config.minScale) > 0.0f)
          backedOff = arith::MaximumFOp::create(nb, nloc, backedOff,
                                                f32Const(config.minScale));
        if (!config.hasHysteresisState()) {
          linalg::YieldOp::create(
              nb, nloc,
              ValueRange{select(overflow, backedOff, finiteScale),
                         select(overflow, zero, finiteTracker)});
          return;
        }
        Value left = args[3];
        Value noneLeft = arith::CmpIOp::create(
            nb, nloc, arith::CmpIPredicate::sle, left, one);
        Value overflowScale = select(noneLeft, backedOff, scale);
        Value usedOne = arith::SubIOp::create(nb, nloc, left, one);
        Value overflowLeft = select(noneLeft, left, usedOne);
        Value finiteLeft = select(grows, i32Const(config.hysteresis), left);
        linalg::YieldOp::create(
            nb, nloc,
            ValueRange{select(overflow, overflowScale, finiteScale),
                       select(overflow, zero, finiteTracker),
                       select(overflow, overflowLeft, finiteLeft)});
      });
  return SmallVector<Value>(generic.getResults());
}

struct GuardUpdatePass
    : public ScalingPass<GuardUpdatePass, amp::impl::AmpGuardUpdateBase> {
  using ScalingPass::ScalingPass;

  /// Guards the updates of one step and appends the scaler results.
  LogicalResult rewriteStep(func::FuncOp func, const ScalingConfig &config);
};

} // namespace

/// The arguments of `func` that carry scaler state, with their names.
static SmallVector<std::pair<StringRef, BlockArgument>>
getStateArguments(func::FuncOp func) {
  SmallVector<std::pair<StringRef, BlockArgument>> state;
  for (BlockArgument arg : func.getArguments())
    if (auto name = func.getArgAttrOfType<StringAttr>(
            arg.getArgNumber(), AmpDialect::kStateAttrName))
      state.push_back({name.getValue(), arg});
  return state;
}

/// Whether the gradients of `updates` are sums over the ranks
/// (amp-data-parallel's `amp.data_parallel`): all of them or none, as they
/// share one decision.
static FailureOr<bool> haveSummedGradients(ArrayRef<UpdateOp> updates) {
  if (updates.empty())
    return false;
  UpdateOp first = updates.front();
  bool summed = hasSummedGradients(first);
  for (UpdateOp update : updates.drop_front())
    if (hasSummedGradients(update) != summed) {
      InFlightDiagnostic diag = update.emitOpError()
                                << (summed ? "lacks" : "has")
                                << " 'amp.data_parallel', unlike the first "
                                   "update of the step; all updates of a "
                                   "step are data-parallel or none";
      diag.attachNote(first.getLoc()) << "the first update is here";
      return diag;
    }
  return summed;
}

LogicalResult GuardUpdatePass::rewriteStep(func::FuncOp func,
                                         const ScalingConfig &config) {
  FailureOr<SmallVector<UpdateOp>> updates = collectStepUpdates(func);
  if (failed(updates))
    return failure();
  SmallVector<std::pair<StringRef, BlockArgument>> stateArgs =
      getStateArguments(func);
  if (updates->empty() && stateArgs.empty())
    return success();

  FailureOr<bool> summed = haveSummedGradients(*updates);
  if (failed(summed))
    return failure();
  IRRewriter rewriter(&getContext());
  if (config.mode == ScalingMode::None) {
    if (!stateArgs.empty())
      return func.emitOpError("has scaler state arguments but scaling=none; "
                              "give amp-guard-update the options given to "
                              "amp-loss-scaling");
    if (!*summed) {
      for (UpdateOp update : *updates) {
        SmallVector<Value> newState =
            inlineUpdateRegion(rewriter, update, update.getGrads(), update);
        rewriter.replaceOp(update, newState);
      }
      return success();
    }
  } else {
    SmallVector<ScalerStateSlot> slots =
        getScalerStateSlots(&getContext(), config);
    bool matches = slots.size() == stateArgs.size() &&
                   llvm::all_of(llvm::zip(slots, stateArgs), [](auto pair) {
                     return std::get<0>(pair).name == std::get<1>(pair).first;
                   });
    if (!matches)
      return func.emitOpError("has ")
             << stateArgs.size() << " scaler state arguments but scaling="
             << stringifyScalingMode(config.mode)
             << (config.hasHysteresisState() ? " with hysteresis" : "")
             << " needs " << slots.size()
             << "; run amp-loss-scaling first, with the same options";
    if (failed(checkNoCallers(func, getOperation())))
      return failure();
  }

  Block &body = func.getBody().front();
  Operation *terminator = body.getTerminator();
  Operation *anchor = updates->empty() ? terminator : updates->back();
  if (failed(checkStateUsedAfter(*updates, anchor)))
    return failure();

  // The shared decision, right before the last update. Sums over the ranks
  // are divided by the world size along with the unscaling; without
  // scaling, that division is all there is and nothing is checked.
  rewriter.setInsertionPoint(anchor);
  Location loc = anchor->getLoc();
  Value scale = config.isDynamic() ? Value(stateArgs.front().second) : Value();
  Value worldSize = *summed ? buildWorldSize(rewriter, loc) : Value();
  Value inverseScale =
      buildInverseScale(rewriter, loc, config, scale, worldSize);
  bool checks = config.mode != ScalingMode::None;
  Value foundInf =
      checks ? Value(arith::ConstantOp::create(
                   rewriter, loc,
                   DenseElementsAttr::get(
                       getScalarTensorType(rewriter.getI1Type()),
                       rewriter.getBoolAttr(false))))
             : Value();
  SmallVector<SmallVector<Value>> unscaled;
  for (UpdateOp update : *updates) {
    SmallVector<Value> &grads = unscaled.emplace_back();
    for (Value grad : update.getGrads()) {
      auto [gradient, flag] = buildUnscale(rewriter, update.getLoc(), grad,
                                           inverseScale, foundInf);
      grads.push_back(gradient);
      foundInf = flag;
    }
  }
  for (auto [update, grads] : llvm::zip(*updates, unscaled)) {
    SmallVector<Value> newState =
        inlineUpdateRegion(rewriter, update, grads, anchor);
    SmallVector<Value> kept;
    for (auto [updated, old] : llvm::zip(newState, update.getState()))
      kept.push_back(checks ? buildSkip(rewriter, update.getLoc(), foundInf,
                                        updated, old)
                            : updated);
    rewriter.replaceOp(update, kept);
  }
  if (!checks)
    return success();

  // The scaler update and the new results, before the return.
  rewriter.setInsertionPoint(terminator);
  SmallVector<Value> results;
  SmallVector<StringRef> names;
  if (config.isDynamic()) {
    SmallVector<Value> state;
    for (auto [name, arg] : stateArgs) {
      state.push_back(arg);
      names.push_back(name);
    }
    results = buildScalerUpdate(rewriter, func.getLoc(), config, foundInf,
                                state);
  }
  results.push_back(foundInf);
  names.push_back(kFoundInfStateName);
  SmallVector<DictionaryAttr> attrs;
  for (StringRef name : names)
    attrs.push_back(getStateAttrDict(&getContext(), name));
  SmallVector<unsigned> indices(results.size(), func.getNumResults());
  if (failed(func.insertResults(indices, ValueRange(results).getTypes(),
                                attrs)))
    return func.emitOpError("cannot take the scaler state results");
  terminator->insertOperands(terminator->getNumOperands(), results);
  return success();
}
