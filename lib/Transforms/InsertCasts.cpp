//===- InsertCasts.cpp - Assign precisions and insert casts ---------------===//
//
// Reads the precision of every op from PrecisionAnalysis, gives the values
// of low ops the low type, and converts at the boundaries: one
// `arith.truncf` / `arith.extf` per (value, type), right after the value's
// definition and shared by all its users. Constants, `tensor.empty` and
// fills of those are built again in the type their users need. Low
// contractions and reductions keep f32 inits and results.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/Policy.h"
#include "amp/Analysis/PrecisionAnalysis.h"
#include "amp/Analysis/PrecisionReport.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPINSERTCASTS
#include "amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// Applies the decisions of a PrecisionAnalysis to the IR it analyzed.
class CastInserter {
public:
  explicit CastInserter(const PrecisionAnalysis &analysis)
      : analysis(analysis) {}

  void run(Operation *root);

  /// Casts that survive the rewrite, for the report and the picture.
  llvm::DenseSet<Operation *> casts;
  unsigned constantsConverted = 0;

private:
  Value convert(Value value, Type type);
  Value materializeSource(Operation *source, Type type);
  void convertBody(Operation *op);
  void foldCastPairs(Operation *root);

  const PrecisionAnalysis &analysis;
  DenseMap<std::pair<Value, Type>, Value> converted;
};

} // namespace

/// A source in another type: a constant converted now, an empty tensor or
/// a fill of the other type. Null when a constant does not fit the type.
Value CastInserter::materializeSource(Operation *source, Type type) {
  OpBuilder builder(source->getContext());
  builder.setInsertionPointAfter(source);
  Location loc = source->getLoc();
  auto tensorType = cast<RankedTensorType>(type);
  auto elementType = cast<FloatType>(tensorType.getElementType());
  if (auto constant = dyn_cast<arith::ConstantOp>(source)) {
    auto value = cast<DenseElementsAttr>(constant.getValue());
    if (!fitsFloatType(value, elementType))
      return {};
    const llvm::fltSemantics &semantics = elementType.getFloatSemantics();
    DenseElementsAttr convertedValue =
        cast<DenseFPElementsAttr>(value).mapValues(
            elementType, [&](const APFloat &element) {
              APFloat result = element;
              bool losesInfo;
              result.convert(semantics, APFloat::rmNearestTiesToEven,
                             &losesInfo);
              return result.bitcastToAPInt();
            });
    ++constantsConverted;
    return arith::ConstantOp::create(builder, loc, tensorType, convertedValue);
  }
  if (isa<tensor::EmptyOp>(source)) {
    Operation *empty = builder.clone(*source);
    empty->getResult(0).setType(type);
    return empty->getResult(0);
  }
  auto fill = cast<linalg::FillOp>(source);
  Value init = convert(fill.getOutputs()[0], type);
  builder.setInsertionPointAfter(source);
  return linalg::FillOp::create(builder, loc, TypeRange{type},
                                ValueRange{fill.getInputs()[0]},
                                ValueRange{init})
      .getResult(0);
}

Value CastInserter::convert(Value value, Type type) {
  if (value.getType() == type)
    return value;
  auto key = std::make_pair(value, type);
  if (Value done = converted.lookup(key))
    return done;
  Value result;
  if (analysis.isSourceValue(value))
    result = materializeSource(value.getDefiningOp(), type);
  // truncf(extf(x)) back to x's type is x.
  if (auto ext = value.getDefiningOp<arith::ExtFOp>();
      !result && ext && ext.getIn().getType() == type)
    result = ext.getIn();
  // An existing cast to the same type is reused, moved up to dominate all
  // users.
  for (Operation *user : value.getUsers()) {
    if (result)
      break;
    if (!isa<arith::TruncFOp, arith::ExtFOp>(user) ||
        user->getResult(0).getType() != type)
      continue;
    if (Operation *def = value.getDefiningOp())
      user->moveAfter(def);
    else
      user->moveBefore(&value.getParentBlock()->front());
    result = user->getResult(0);
  }
  if (!result) {
    OpBuilder builder(value.getContext());
    builder.setInsertionPointAfterValue(value);
    auto from = cast<ShapedType>(value.getType());
    Operation *castOp =
        cast<ShapedType>(type).getElementTypeBitWidth() <
                from.getElementTypeBitWidth()
            ? arith::TruncFOp::create(builder, value.getLoc(), type, value)
                  .getOperation()
            : arith::ExtFOp::create(builder, value.getLoc(), type, value)
                  .getOperation();
    casts.insert(castOp);
    result = castOp->getResult(0);
  }
  converted[key] = result;
  return result;
}

/// Gives the body of a low linalg op (or tensor.pad) the new element types.
/// Named ops get the body their region builder makes for those types (it
/// extends inputs to the output type); other bodies keep computing in f32
/// between an extf of each low argument and a truncf of each low yield.
void CastInserter::convertBody(Operation *op) {
  Location loc = op->getLoc();
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    Operation *yield = pad.getBody()->getTerminator();
    Type element = pad.getResultType().getElementType();
    OpBuilder builder(yield);
    yield->setOperand(0, arith::TruncFOp::create(builder, loc, element,
                                                 yield->getOperand(0)));
    return;
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return;
  if (auto regionBuilder = linalgOp.getRegionBuilder()) {
    Region &region = op->getRegion(0);
    Block *old = &region.front();
    Block *body = new Block();
    region.push_back(body);
    for (Value operand : op->getOperands())
      body->addArgument(getElementTypeOrSelf(operand.getType()), loc);
    ImplicitLocOpBuilder builder(loc, op->getContext());
    builder.setInsertionPointToStart(body);
    regionBuilder(builder, *body, op->getAttrs(),
                  [&] { return op->emitError(); });
    old->dropAllDefinedValueUses();
    old->erase();
    return;
  }
  Block *body = linalgOp.getBlock();
  OpBuilder builder = OpBuilder::atBlockBegin(body);
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = linalgOp.getMatchingBlockArgument(&operand);
    Type element = getElementTypeOrSelf(operand.get().getType());
    Type old = arg.getType();
    if (old == element)
      continue;
    arg.setType(element);
    if (arg.use_empty())
      continue;
    auto ext = arith::ExtFOp::create(builder, loc, old, arg);
    arg.replaceAllUsesExcept(ext, ext);
  }
  Operation *yield = body->getTerminator();
  builder.setInsertionPoint(yield);
  for (auto [result, yielded] :
       llvm::zip(op->getResults(), yield->getOpOperands())) {
    Type element = getElementTypeOrSelf(result.getType());
    if (yielded.get().getType() != element)
      yielded.set(
          arith::TruncFOp::create(builder, loc, element, yielded.get()));
  }
}

/// truncf(extf(x)) to x's type is x, wherever the rewrite made one.
void CastInserter::foldCastPairs(Operation *root) {
  SmallVector<arith::TruncFOp> truncs;
  root->walk([&](Operation *op) {
    if (isa<UpdateOp>(op))
      return WalkResult::skip();
    if (auto trunc = dyn_cast<arith::TruncFOp>(op))
      truncs.push_back(trunc);
    return WalkResult::advance();
  });
  for (arith::TruncFOp trunc : truncs) {
    auto ext = trunc.getIn().getDefiningOp<arith::ExtFOp>();
    if (!ext || ext.getIn().getType() != trunc.getType())
      continue;
    trunc.replaceAllUsesWith(ext.getIn());
    casts.erase(trunc);
    trunc.erase();
    if (ext->use_empty() && casts.erase(ext))
      ext.erase();
  }
}

void CastInserter::run(Operation *root) {
  // Find every use whose value and user will disagree, on the IR as
  // analyzed, before any type changes.
  SmallVector<std::pair<OpOperand *, Type>> mismatches;
  llvm::DenseSet<OpOperand *> seen;
  SmallVector<std::pair<Value, Type>> retyped;
  auto check = [&](OpOperand &use) {
    Type required = analysis.getRequiredType(use);
    if (required != analysis.getRewrittenType(use.get()) &&
        seen.insert(&use).second)
      mismatches.emplace_back(&use, required);
  };
  auto retype = [&](Value value) {
    Type type = analysis.getRewrittenType(value);
    if (type == value.getType())
      return;
    retyped.emplace_back(value, type);
    for (OpOperand &use : value.getUses())
      check(use);
  };
  SmallVector<Operation *> lowOps;
  for (Operation *op : analysis.getOps()) {
    const PrecisionDecision *decision = analysis.lookup(op);
    if (decision->role != OpRole::Painted || !decision->isLow)
      continue;
    lowOps.push_back(op);
    for (OpOperand &use : op->getOpOperands())
      check(use);
    for (Value result : op->getResults())
      retype(result);
  }
  for (auto [index, carried] : llvm::enumerate(analysis.getCarriedValues())) {
    if (!analysis.getCarriedDecision(index).isLow)
      continue;
    for (OpOperand *input : carried.inputs)
      check(*input);
    for (Value value : carried.values)
      retype(value);
  }

  for (auto [value, type] : retyped)
    value.setType(type);
  for (auto [use, type] : mismatches)
    use->set(convert(use->get(), type));
  for (Operation *op : lowOps)
    convertBody(op);
  foldCastPairs(root);
  // Sources all of whose users now read another type's copy; users come
  // after their sources, so reverse order frees a fill before its init.
  for (Operation *op : llvm::reverse(analysis.getOps()))
    if (analysis.lookup(op)->role == OpRole::Source && op->use_empty())
      op->erase();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct AmpInsertCastsPass
    : public amp::impl::AmpInsertCastsBase<AmpInsertCastsPass> {
  using AmpInsertCastsBase::AmpInsertCastsBase;

  /// Writes `path` with `write`, or reports why it cannot.
  LogicalResult writeFile(StringRef option, StringRef path,
                          function_ref<void(raw_ostream &)> write);
  void runOnOperation() override;
};

} // namespace

LogicalResult
AmpInsertCastsPass::writeFile(StringRef option, StringRef path,
                              function_ref<void(raw_ostream &)> write) {
  std::error_code error;
  llvm::ToolOutputFile file(path, error, llvm::sys::fs::OF_Text);
  if (error)
    return getOperation().emitError("option '")
           << option << "': cannot write '" << path << "': " << error.message();
  write(file.os());
  file.keep();
  return success();
}

void AmpInsertCastsPass::runOnOperation() {
  ModuleOp module = getOperation();
  llvm::Expected<Policy> loaded = Policy::load(policy);
  if (!loaded) {
    module.emitError("option 'policy': ") << llvm::toString(loaded.takeError());
    return signalPassFailure();
  }
  PrecisionOptions options;
  // An explicit `dtype` wins over the policy file's.
  std::optional<Precision> low = parsePrecision(dtype);
  if (!low || !isLowPrecision(*low)) {
    module.emitError("option 'dtype' must be 'f16' or 'bf16', got '")
        << dtype << "'";
    return signalPassFailure();
  }
  options.lowPrecision =
      dtype.hasValue() ? *low : loaded->getDtype().value_or(*low);
  if (unknownOps.empty()) {
    options.unknownOps =
        loaded->getUnknownOpMode().value_or(UnknownOpMode::Deny);
  } else if (std::optional<UnknownOpMode> mode =
                 parseUnknownOpMode(unknownOps)) {
    options.unknownOps = *mode;
  } else {
    module.emitError("option 'unknown-ops' must be 'deny', 'infer', 'allow' or "
                     "'error', got '")
        << unknownOps << "'";
    return signalPassFailure();
  }

  FailureOr<PrecisionAnalysis> analysis =
      PrecisionAnalysis::run(module, *loaded, options);
  if (failed(analysis))
    return signalPassFailure();

  if (explain) {
    for (Operation *op : analysis->getOps())
      op->emitRemark(analysis->explain(op));
    for (auto [index, carried] : llvm::enumerate(analysis->getCarriedValues()))
      carried.owner->emitRemark(analysis->explainCarried(index));
  }

  ConversionStats naive = computeNaiveStats(*analysis);
  CastInserter inserter(*analysis);
  inserter.run(module);

  if (!report.empty()) {
    ConversionStats inserted;
    for (Operation *castOp : inserter.casts)
      inserted.addCast(cast<ShapedType>(castOp->getOperand(0).getType()),
                       cast<ShapedType>(castOp->getResult(0).getType()));
    if (failed(writeFile("report", report, [&](raw_ostream &os) {
          writePrecisionReport(os, *analysis, loaded->getName(), inserted,
                               inserter.constantsConverted, naive);
        })))
      return signalPassFailure();
  }
  if (!dot.empty() && failed(writeFile("dot", dot, [&](raw_ostream &os) {
        writePrecisionDot(os, module, *analysis, inserter.casts);
      })))
    return signalPassFailure();
}
