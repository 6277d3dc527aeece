//===- InsertCasts.cpp - Assign precisions and insert casts ---------------===//
//
// Reads the precision of every op from PrecisionAnalysis and applies it in
// three steps, all through a rewriter, planned on the IR as analyzed:
// 1. Ops whose results change type are built again with the new types
//    (their regions moved over); scf ops whose carried values change get
//    new block arguments.
// 2. Every use whose value and user disagree gets one `arith.truncf` /
//    `arith.extf` per (value, type), right after the value's definition and
//    shared by all its users. An operand whose type its op ties to a result
//    (a destination-style init, a fill's value, an inserted slice) takes the
//    result's new type, so tied types agree by construction. Constants,
//    `tensor.empty` and fills of those are built again in the type their
//    users need; scalars are converted where a low op needs them low.
//    Results that their op stores in the low type (a convolution's image)
//    are rounded once, and their f32 readers read them extended.
// 3. Bodies of low linalg ops (and tensor.pad) are rebuilt for their new
//    element types. Low contractions and reductions keep f32 inits and
//    results.
//
//===----------------------------------------------------------------------===//

#include "amp/Transforms/InsertCasts.h"
#include "amp/Analysis/Policy.h"
#include "amp/Analysis/PrecisionReport.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Support/Diagnostics.h"
#include "amp/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPINSERTCASTS
#include "amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// A use that will read a value of another type than its owner needs after
/// the rewrite. The owner is named by op and operand number, not by its
/// OpOperand: ops built again get operands of their own.
struct Mismatch {
  Operation *owner;
  unsigned operand;
  Type required;
};

/// Applies the decisions of a PrecisionAnalysis to the IR it analyzed.
class CastInserter {
public:
  CastInserter(RewriterBase &rewriter, const PrecisionAnalysis &analysis)
      : rewriter(rewriter), analysis(analysis) {}

  FailureOr<CastInsertion> run(Operation *root);

private:
  // Planning, on the IR as analyzed.
  Type getRequiredType(OpOperand &use) const;
  void plan();

  // Rewriting.
  Operation *getCurrentOp(Operation *analyzed) const {
    Operation *rebuilt = rebuiltOps.lookup(analyzed);
    return rebuilt ? rebuilt : analyzed;
  }
  Operation *rebuild(Operation *op, ArrayRef<Type> resultTypes);
  void retypeBlockArguments(Operation *op);
  /// `value` as `type`, converted once per (value, type) and shared.
  Value convert(Value value, Type type);
  Value convertTensor(Value value, Type type);
  Value convertScalar(Value scalar, FloatType type);
  Value materializeSource(Operation *source, Type type);
  void convertBody(Operation *op);
  void foldCastPairs(Operation *root);

  RewriterBase &rewriter;
  const PrecisionAnalysis &analysis;
  CastInsertion done;

  /// The plan: uses to convert, in the order their casts are made; the new
  /// result types of ops built again; block arguments of scf ops that change
  /// type; the low ops, whose bodies are converted.
  SmallVector<Mismatch> mismatches;
  llvm::MapVector<Operation *, SmallVector<Type>> newResultTypes;
  DenseMap<BlockArgument, Type> newArgumentTypes;
  llvm::SetVector<Operation *> retypedRegionOps;
  SmallVector<Operation *> lowOps;

  DenseMap<Operation *, Operation *> rebuiltOps;
  DenseMap<std::pair<Value, Type>, Value> converted;
};

} // namespace

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

/// The type `use` needs after the rewrite. An operand whose type the op's
/// verifier ties to one of its results takes that result's new type; the
/// others, what the analysis says.
Type CastInserter::getRequiredType(OpOperand &use) const {
  Operation *owner = use.getOwner();
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(owner);
      dps && dps.isDpsInit(&use))
    return analysis.getRewrittenType(dps.getTiedOpResult(&use));
  auto resultElement = [&] {
    return getElementTypeOrSelf(
        analysis.getRewrittenType(owner->getResult(0)));
  };
  Type type = use.get().getType();
  // The value a fill writes has the element type of its output.
  if (isa<linalg::FillOp>(owner) && isa<FloatType>(type))
    return resultElement();
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(owner);
      insert && use.get() == insert.getSource())
    return cast<RankedTensorType>(type).clone(resultElement());
  return analysis.getRequiredType(use);
}

void CastInserter::plan() {
  llvm::DenseSet<OpOperand *> seen;
  auto check = [&](OpOperand &use) {
    Type required = getRequiredType(use);
    if (required != analysis.getRewrittenType(use.get()) &&
        seen.insert(&use).second)
      mismatches.push_back({use.getOwner(), use.getOperandNumber(), required});
  };
  // Whether `value` changes type; its users then may disagree with it.
  auto changes = [&](Value value) {
    if (analysis.getRewrittenType(value) == value.getType())
      return false;
    for (OpOperand &use : value.getUses())
      check(use);
    return true;
  };
  auto resultTypesOf = [&](Operation *op) -> SmallVector<Type> & {
    auto [it, inserted] = newResultTypes.try_emplace(op);
    if (inserted)
      for (Value result : op->getResults())
        it->second.push_back(analysis.getRewrittenType(result));
    return it->second;
  };

  for (Operation *op : analysis.getOps()) {
    const PrecisionDecision *decision = analysis.lookup(op);
    if (decision->role != OpRole::Painted || !decision->isLow)
      continue;
    lowOps.push_back(op);
    for (OpOperand &use : op->getOpOperands())
      check(use);
    bool anyChanges = false;
    for (Value result : op->getResults())
      anyChanges |= changes(result);
    if (anyChanges)
      resultTypesOf(op);
  }
  for (auto [index, carried] : llvm::enumerate(analysis.getCarriedValues())) {
    if (!analysis.getCarriedDecision(index).isLow)
      continue;
    for (OpOperand *input : carried.inputs)
      check(*input);
    for (Value value : carried.values) {
      if (!changes(value))
        continue;
      if (isa<OpResult>(value)) {
        resultTypesOf(carried.owner);
        continue;
      }
      newArgumentTypes[cast<BlockArgument>(value)] =
          analysis.getRewrittenType(value);
      retypedRegionOps.insert(carried.owner);
    }
  }
}

//===----------------------------------------------------------------------===//
// Rewriting
//===----------------------------------------------------------------------===//

/// Builds `op` again with `resultTypes`, the same operands and attributes,
/// and its regions moved over; its users read the new results.
Operation *CastInserter::rebuild(Operation *op, ArrayRef<Type> resultTypes) {
  rewriter.setInsertionPoint(op);
  OperationState state(op->getLoc(), op->getName(), op->getOperands(),
                       resultTypes, op->getAttrs(), op->getSuccessors());
  for (unsigned i = 0, e = op->getNumRegions(); i < e; ++i)
    state.addRegion();
  Operation *rebuilt = rewriter.create(state);
  for (auto [from, to] : llvm::zip(op->getRegions(), rebuilt->getRegions()))
    rewriter.inlineRegionBefore(from, to, to.end());
  rewriter.replaceOp(op, rebuilt->getResults());
  return rebuilt;
}

/// Gives the blocks of a region op the argument types of the plan: each
/// block with a changed argument is replaced by one with the new types.
void CastInserter::retypeBlockArguments(Operation *op) {
  for (Region &region : op->getRegions()) {
    for (Block &block : llvm::make_early_inc_range(region)) {
      SmallVector<Type> types;
      SmallVector<Location> locations;
      bool differs = false;
      for (BlockArgument argument : block.getArguments()) {
        Type type = newArgumentTypes.lookup(argument);
        differs |= type && type != argument.getType();
        types.push_back(type ? type : argument.getType());
        locations.push_back(argument.getLoc());
      }
      if (!differs)
        continue;
      Block *retyped = rewriter.createBlock(&region, Region::iterator(&block),
                                            types, locations);
      rewriter.mergeBlocks(&block, retyped, retyped->getArguments());
    }
  }
}

/// `element` rounded to the nearest value of `type`.
static APFloat roundTo(APFloat element, FloatType type) {
  bool losesInfo;
  element.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
  return element;
}

/// `scalar` (a float) as `type`: a constant converted now if it fits the
/// type, else a cast. Null for a constant outside the type's range.
Value CastInserter::convertScalar(Value scalar, FloatType type) {
  if (auto constant = scalar.getDefiningOp<arith::ConstantOp>()) {
    auto value = cast<FloatAttr>(constant.getValue());
    auto asTensor = DenseElementsAttr::get(
        RankedTensorType::get({}, value.getType()), value.getValue());
    if (!fitsFloatType(asTensor, type))
      return {};
    rewriter.setInsertionPointAfter(constant);
    return arith::ConstantOp::create(
        rewriter, constant.getLoc(), type,
        FloatAttr::get(type, roundTo(value.getValue(), type)));
  }
  rewriter.setInsertionPointAfterValue(scalar);
  return arith::TruncFOp::create(rewriter, scalar.getLoc(), type, scalar);
}

/// A source in another type: a constant converted now, an empty tensor or
/// a fill of the other type. Null when a constant does not fit the type.
Value CastInserter::materializeSource(Operation *source, Type type) {
  Location loc = source->getLoc();
  auto tensorType = cast<RankedTensorType>(type);
  auto elementType = cast<FloatType>(tensorType.getElementType());
  if (auto constant = dyn_cast<arith::ConstantOp>(source)) {
    auto value = cast<DenseElementsAttr>(constant.getValue());
    if (!fitsFloatType(value, elementType))
      return {};
    DenseElementsAttr convertedValue =
        cast<DenseFPElementsAttr>(value).mapValues(
            elementType, [&](const APFloat &element) {
              return roundTo(element, elementType).bitcastToAPInt();
            });
    ++done.constantsConverted;
    rewriter.setInsertionPointAfter(source);
    return arith::ConstantOp::create(rewriter, loc, tensorType,
                                     convertedValue);
  }
  if (auto empty = dyn_cast<tensor::EmptyOp>(source)) {
    rewriter.setInsertionPointAfter(source);
    return tensor::EmptyOp::create(rewriter, loc, tensorType.getShape(),
                                   elementType, empty.getDynamicSizes(),
                                   tensorType.getEncoding());
  }
  auto fill = cast<linalg::FillOp>(source);
  Value value = convert(fill.getInputs()[0], elementType);
  if (!value)
    return {};
  Value init = convert(fill.getOutputs()[0], type);
  rewriter.setInsertionPointAfter(source);
  return linalg::FillOp::create(rewriter, loc, TypeRange{type},
                                ValueRange{value}, ValueRange{init})
      .getResult(0);
}

Value CastInserter::convert(Value value, Type type) {
  if (value.getType() == type)
    return value;
  auto key = std::make_pair(value, type);
  if (Value done = converted.lookup(key))
    return done;
  Value result = isa<FloatType>(type)
                     ? convertScalar(value, cast<FloatType>(type))
                     : convertTensor(value, type);
  if (result)
    converted[key] = result;
  return result;
}

Value CastInserter::convertTensor(Value value, Type type) {
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
      rewriter.moveOpAfter(user, def);
    else
      rewriter.moveOpBefore(user, &value.getParentBlock()->front());
    result = user->getResult(0);
  }
  if (!result) {
    rewriter.setInsertionPointAfterValue(value);
    auto from = cast<ShapedType>(value.getType());
    Operation *castOp =
        cast<ShapedType>(type).getElementTypeBitWidth() <
                from.getElementTypeBitWidth()
            ? arith::TruncFOp::create(rewriter, value.getLoc(), type, value)
                  .getOperation()
            : arith::ExtFOp::create(rewriter, value.getLoc(), type, value)
                  .getOperation();
    done.casts.insert(castOp);
    result = castOp->getResult(0);
  }
  return result;
}

/// Gives the body of a low linalg op (or tensor.pad) the new element types.
/// Named ops get the body their region builder makes for those types (it
/// extends inputs to the output type); other bodies keep computing in f32
/// between an extf of each low argument and a truncf of each low yield.
void CastInserter::convertBody(Operation *op) {
  Location loc = op->getLoc();
  auto truncateYields = [&](Operation *yield, TypeRange resultTypes) {
    rewriter.setInsertionPoint(yield);
    for (auto [type, yielded] :
         llvm::zip(resultTypes, yield->getOpOperands())) {
      Type element = getElementTypeOrSelf(type);
      if (yielded.get().getType() == element)
        continue;
      Value truncated =
          arith::TruncFOp::create(rewriter, loc, element, yielded.get());
      // C++17 cannot capture a structured binding; an init-capture names it.
      rewriter.modifyOpInPlace(
          yield, [&, &operand = yielded] { operand.set(truncated); });
    }
  };
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    truncateYields(pad.getBody()->getTerminator(), pad->getResultTypes());
    return;
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return;
  Region &region = op->getRegion(0);
  Block *old = &region.front();
  SmallVector<Type> types;
  SmallVector<Location> locations;
  for (Value operand : op->getOperands()) {
    types.push_back(getElementTypeOrSelf(operand.getType()));
    locations.push_back(loc);
  }
  bool sameArguments = TypeRange(old->getArgumentTypes()) == TypeRange(types);
  auto regionBuilder = linalgOp.getRegionBuilder();
  if (sameArguments) {
    if (!regionBuilder)
      truncateYields(old->getTerminator(), op->getResultTypes());
    return;
  }
  Block *body = rewriter.createBlock(&region, region.end(), types, locations);
  if (regionBuilder) {
    ImplicitLocOpBuilder builder(loc, rewriter);
    regionBuilder(builder, *body, op->getAttrs(),
                  [&] { return op->emitError(); });
    rewriter.eraseBlock(old);
    return;
  }
  SmallVector<Value> arguments;
  for (auto [oldArg, newArg] :
       llvm::zip(old->getArguments(), body->getArguments())) {
    if (oldArg.getType() == newArg.getType() || oldArg.use_empty())
      arguments.push_back(newArg);
    else
      arguments.push_back(
          arith::ExtFOp::create(rewriter, loc, oldArg.getType(), newArg));
  }
  rewriter.mergeBlocks(old, body, arguments);
  truncateYields(body->getTerminator(), op->getResultTypes());
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
    rewriter.replaceAllUsesWith(trunc, ext.getIn());
    done.casts.erase(trunc);
    rewriter.eraseOp(trunc);
    if (ext->use_empty() && done.casts.erase(ext))
      rewriter.eraseOp(ext);
  }
}

FailureOr<CastInsertion> CastInserter::run(Operation *root) {
  plan();

  // 1. New result and block argument types; operands stay as they are
  // until step 2 converts them.
  for (auto &[op, types] : newResultTypes) {
    Operation *rebuilt = rebuild(op, types);
    rebuiltOps[op] = rebuilt;
    done.analyzedOpOf[rebuilt] = op;
  }
  for (Operation *op : retypedRegionOps)
    retypeBlockArguments(getCurrentOp(op));

  // 2. Conversions at the boundaries.
  for (auto [owner, number, required] : mismatches) {
    Operation *op = getCurrentOp(owner);
    OpOperand &use = op->getOpOperand(number);
    Value value = convert(use.get(), required);
    // A fill's value outside the low type's range: the analysis keeps such
    // fills in f32, so this is only reached through a pin.
    if (!value)
      return op->emitError("operand #")
             << number << " is a constant outside the range of " << required;
    rewriter.modifyOpInPlace(op, [&] { use.set(value); });
  }

  // Results that low ops store in the low type: their f32 readers read them
  // rounded, through the cast their low readers share.
  for (Operation *analyzed : lowOps) {
    auto op = dyn_cast<PrecisionOpInterface>(getCurrentOp(analyzed));
    if (!op)
      continue;
    for (OpResult result : op->getResults()) {
      if (!op.storesLowResult(result) ||
          !getElementTypeOrSelf(result.getType()).isF32() ||
          result.use_empty())
        continue;
      Value low = convert(result, analysis.getLowType(result.getType()));
      Operation *rounding = low.getDefiningOp();
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return user != rounding; }))
        rewriter.replaceAllUsesExcept(result, convert(low, result.getType()),
                                      rounding);
    }
  }

  // 3. Bodies for the new element types.
  for (Operation *op : lowOps)
    convertBody(getCurrentOp(op));
  foldCastPairs(root);
  // Sources all of whose users now read another type's copy; users come
  // after their sources, so reverse order frees a fill before its init.
  for (Operation *op : llvm::reverse(analysis.getOps()))
    if (analysis.lookup(op)->role == OpRole::Source && op->use_empty())
      rewriter.eraseOp(op);

  for (auto &[rebuilt, analyzed] : done.analyzedOpOf)
    if (failed(verify(rebuilt, /*verifyRecursively=*/false)))
      return rebuilt->emitError("amp-insert-casts could not give this op its "
                                "new element types (a type tie it does not "
                                "know); pin it with amp.precision = \"f32\"");
  return std::move(done);
}

FailureOr<CastInsertion> amp::insertCasts(RewriterBase &rewriter,
                                          Operation *root,
                                          const PrecisionAnalysis &analysis) {
  return CastInserter(rewriter, analysis).run(root);
}

//===----------------------------------------------------------------------===//
// The library call
//===----------------------------------------------------------------------===//

FailureOr<CastInsertionResult>
amp::runCastInsertion(ModuleOp module, const CastInsertionOptions &options) {
  llvm::Expected<Policy> policy = Policy::load(options.policy);
  if (!policy)
    return module.emitError("option 'policy': ")
           << llvm::toString(policy.takeError());
  PrecisionOptions precision;
  precision.lowPrecision =
      options.dtype ? *options.dtype
                    : policy->getDtype().value_or(Precision::F16);
  precision.unknownOps = options.unknownOps
                             ? *options.unknownOps
                             : policy->getUnknownOpMode().value_or(
                                   UnknownOpMode::Deny);
  FailureOr<PrecisionAnalysis> analysis =
      PrecisionAnalysis::run(module, *policy, precision);
  if (failed(analysis))
    return failure();

  // Read before the rewrite, which builds ops again.
  CastInsertionResult result;
  for (Operation *op : analysis->getOps())
    result.explanations.push_back({op->getLoc(),
                                   op->getName().getStringRef().str(),
                                   analysis->explain(op)});
  for (auto [index, carried] : llvm::enumerate(analysis->getCarriedValues()))
    result.explanations.push_back(
        {carried.owner->getLoc(),
         carried.owner->getName().getStringRef().str(),
         analysis->explainCarried(index)});
  ConversionStats naive = computeNaiveStats(*analysis);
  std::vector<DecisionEntry> decisions;
  if (options.report)
    decisions = collectDecisions(*analysis);

  IRRewriter rewriter(module.getContext());
  FailureOr<CastInsertion> inserted = insertCasts(rewriter, module, *analysis);
  if (failed(inserted))
    return failure();

  if (options.report) {
    ConversionStats casts;
    for (Operation *castOp : inserted->casts)
      casts.addCast(cast<ShapedType>(castOp->getOperand(0).getType()),
                    cast<ShapedType>(castOp->getResult(0).getType()));
    llvm::raw_string_ostream os(result.report);
    writePrecisionReport(os, *analysis, policy->getName(), decisions, casts,
                         inserted->constantsConverted, naive);
  }
  if (options.dot) {
    llvm::raw_string_ostream os(result.dot);
    writePrecisionDot(os, module, *analysis, inserted->casts,
                      [&](Operation *op) {
                        return inserted->getAnalyzedOp(op);
                      });
  }
  return result;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct AmpInsertCastsPass
    : public amp::impl::AmpInsertCastsBase<AmpInsertCastsPass> {
  using AmpInsertCastsBase::AmpInsertCastsBase;

  /// The pass options as the library call takes them; the error names the
  /// option.
  FailureOr<CastInsertionOptions> getCastInsertionOptions();
  void runOnOperation() override;
};

} // namespace

FailureOr<CastInsertionOptions> AmpInsertCastsPass::getCastInsertionOptions() {
  CastInsertionOptions options;
  options.policy = policy;
  // Only a dtype given as an option wins over the policy file's.
  if (!dtype.empty()) {
    options.dtype = symbolizePrecision(dtype);
    if (!options.dtype || !isLowPrecision(*options.dtype))
      return getOperation().emitError(
                 "option 'dtype' must be 'f16' or 'bf16', got '")
             << dtype << "'";
  }
  if (!unknownOps.empty()) {
    options.unknownOps = symbolizeUnknownOpMode(unknownOps);
    if (!options.unknownOps)
      return getOperation().emitError("option 'unknown-ops' must be 'deny', "
                                      "'infer', 'allow' or 'error', got '")
             << unknownOps << "'";
  }
  options.report = !report.empty();
  options.dot = !dot.empty();
  return options;
}

void AmpInsertCastsPass::runOnOperation() {
  FailureOr<CastInsertionOptions> options = getCastInsertionOptions();
  if (failed(options))
    return signalPassFailure();
  FailureOr<CastInsertionResult> result =
      runCastInsertion(getOperation(), *options);
  if (failed(result))
    return signalPassFailure();
  if (explain)
    for (const Explanation &explanation : result->explanations)
      emitRemark(explanation.location) << explanation.message;
  ModuleOp module = getOperation();
  if ((!report.empty() &&
       failed(writeOptionFile(module, "report", report, result->report))) ||
      (!dot.empty() && failed(writeOptionFile(module, "dot", dot, result->dot))))
    return signalPassFailure();
}
