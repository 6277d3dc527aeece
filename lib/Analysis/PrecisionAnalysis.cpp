//===- PrecisionAnalysis.cpp - Which ops compute in low precision ---------===//
//
// Classification (policy lists, linalg structure, pins) and grappler-style
// painting over SSA use-def chains. Every step is a worklist walk with a
// global visited set, so the whole analysis is linear in ops and uses.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/PrecisionAnalysis.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ShapedOpInterfaces.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::amp;

static bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

static std::string printLoc(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

bool amp::fitsFloatType(DenseElementsAttr value, FloatType lowType) {
  const llvm::fltSemantics &semantics = lowType.getFloatSemantics();
  for (APFloat element : value.getValues<APFloat>()) {
    if (!element.isFinite())
      continue;
    APFloat converted = element;
    bool losesInfo;
    converted.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
    if (converted.isInfinity() || (converted.isZero() && !element.isZero()))
      return false;
  }
  return true;
}

static StringRef describeRule(PaintRule rule) {
  switch (rule) {
  case PaintRule::Own:
    return "its own category";
  case PaintRule::DenyForward:
    return "deny spreads forward through infer and clear ops";
  case PaintRule::BetweenAllow:
    return "infer and clear ops between allow ops become allow";
  case PaintRule::AllowThroughClear:
    return "allow expands through clear ops";
  case PaintRule::FollowInputs:
    return "follows its inputs";
  }
  llvm_unreachable("unknown rule");
}

namespace mlir::amp {

/// Builds the graph of nodes and runs the painting rules.
class PrecisionPainter {
public:
  PrecisionPainter(PrecisionAnalysis &result, const Policy &policy)
      : result(result), policy(policy) {}

  LogicalResult build(Operation *root);
  void paint();

private:
  struct Category {
    OpCategory category;
    std::string origin;
  };

  LogicalResult visitRegion(Region &region);
  LogicalResult visitOp(Operation &op);
  void addCarriedValues(RegionBranchOpInterface branch);
  FailureOr<Category> classifyByName(Operation &op, StringRef name);
  FailureOr<Category> classifyLinalg(linalg::LinalgOp op);
  FailureOr<Category> classifyUnknown(Operation &op, StringRef name);
  bool isSourceOp(Operation &op);
  std::optional<std::string> whyFixed(Operation &op);
  void addOther(Operation &op, OpRole role, std::string origin);
  unsigned addNode(Operation *op, PrecisionDecision decision);
  SmallVector<OpOperand *> inputsOf(unsigned node);
  void connect();

  PrecisionAnalysis &result;
  const Policy &policy;
  FloatType lowType;

  /// Whether a node reads an f32 value from outside the graph (a function
  /// argument, a fixed op) through an operand it converts.
  SmallVector<bool> readsFixedF32;
  SmallVector<SmallVector<unsigned, 2>> preds, succs;
  DenseMap<Operation *, bool> constantFits;
};

} // namespace mlir::amp

//===----------------------------------------------------------------------===//
// Classification
//===----------------------------------------------------------------------===//

void PrecisionPainter::addOther(Operation &op, OpRole role,
                                std::string origin) {
  PrecisionDecision decision;
  decision.role = role;
  decision.origin = std::move(origin);
  result.others[&op] = std::move(decision);
  result.ops.push_back(&op);
}

unsigned PrecisionPainter::addNode(Operation *op, PrecisionDecision decision) {
  unsigned id = result.nodes.size();
  decision.role = OpRole::Painted;
  result.nodes.push_back(std::move(decision));
  result.nodeOps.push_back(op);
  result.nodeCarriedIndex.push_back(~0u);
  if (op) {
    result.nodeOfOp[op] = id;
    result.ops.push_back(op);
  }
  return id;
}

FailureOr<PrecisionPainter::Category>
PrecisionPainter::classifyUnknown(Operation &op, StringRef name) {
  UnknownOpMode mode = result.options.unknownOps;
  if (mode == UnknownOpMode::Error) {
    op.emitError("'")
        << name << "' is in no list of policy '" << policy.getName()
        << "' and unknown-ops=error; add it to a list of a policy file or pin "
           "it with 'amp.precision'";
    return failure();
  }
  // The other modes are named after the category they give.
  StringRef modeName = stringifyUnknownOpMode(mode);
  return Category{
      *symbolizeOpCategory(modeName),
      ("'" + name + "' is in no list (unknown-ops=" + modeName + ")").str()};
}

FailureOr<PrecisionPainter::Category>
PrecisionPainter::classifyByName(Operation &op, StringRef name) {
  if (const Policy::Rule *rule = policy.lookup(name))
    return Category{rule->category, rule->origin};
  return classifyUnknown(op, name);
}

/// The order in which body ops decide a generic's category: any deny op
/// makes it deny, else any infer op infer, else any allow op allow.
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

FailureOr<PrecisionPainter::Category>
PrecisionPainter::classifyLinalg(linalg::LinalgOp op) {
  if (linalg::isaContractionOpInterface(op))
    return Category{OpCategory::Allow, "a linalg contraction"};
  if (linalg::isaConvolutionOpInterface(op))
    return Category{OpCategory::Allow, "a linalg convolution"};
  StringRef shape =
      op.getNumReductionLoops() > 0 ? "a reduction" : "an elementwise op";
  std::optional<Category> strictest;
  std::string strictestName;
  for (Operation &bodyOp : op.getBlock()->without_terminator()) {
    // Index math, constants and conversions compute nothing in floats.
    bool computesFloats = llvm::any_of(
        llvm::concat<Value>(bodyOp.getOperands(), bodyOp.getResults()),
        [](Value v) { return isa<FloatType>(v.getType()); });
    if (!computesFloats || isa<arith::ConstantOp, CastOpInterface>(bodyOp))
      continue;
    StringRef name = bodyOp.getName().getStringRef();
    FailureOr<Category> category = classifyByName(bodyOp, name);
    if (failed(category))
      return failure();
    if (!strictest ||
        strictness(category->category) > strictness(strictest->category)) {
      strictest = *category;
      strictestName = name.str();
    }
  }
  if (!strictest)
    return Category{OpCategory::Clear,
                    (shape + " whose body only moves data").str()};
  return Category{strictest->category,
                  (shape + " whose strictest body op '" + strictestName +
                   "' is " + stringifyOpCategory(strictest->category) + " (" +
                   strictest->origin + ")")
                      .str()};
}

bool PrecisionPainter::isSourceOp(Operation &op) {
  if (op.getNumResults() != 1 || !isF32Tensor(op.getResult(0).getType()))
    return false;
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    return isa<DenseElementsAttr>(constant.getValue());
  if (isa<tensor::EmptyOp>(op))
    return true;
  // A fill of a source is a constant too; its body converts the scalar.
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return result.isSourceValue(fill.getOutputs()[0]);
  return false;
}

std::optional<std::string> PrecisionPainter::whyFixed(Operation &op) {
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
  bool isLinalg = isa<linalg::LinalgOp>(op);
  for (Value value : llvm::concat<Value>(op.getOperands(), op.getResults())) {
    Type type = value.getType();
    Type element = getElementTypeOrSelf(type);
    if (isa<FloatType>(element) && !element.isF32())
      return ("has " + llvm::Twine(element.isF64() ? "f64" : "non-f32 float") +
              " values, which are never converted")
          .str();
    // linalg ops convert scalar operands in their body.
    if (isa<FloatType>(type) && !isLinalg)
      return "has scalar float values; only tensors are converted";
  }
  if (op.getNumRegions() && !isLinalg && !isa<tensor::PadOp>(op))
    return "has regions the pass does not convert";
  return std::nullopt;
}

LogicalResult PrecisionPainter::visitOp(Operation &op) {
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
  if (!hasFloatTensor)
    return rejectLowPin("has no f32 tensor for the pass to convert");
  // The gradient of the loss starts in f32, as the backward of an f32 loss
  // does in eager autocast: loss scaling turns the seed into S (2^16 by
  // default), which is beyond f16's range until the first allow op divides
  // it down.
  if (isa<SeedOp>(op)) {
    if (failed(rejectLowPin(
            "the loss seed stays f32: loss scaling rewrites it")))
      return failure();
    PrecisionDecision decision;
    decision.category = OpCategory::Deny;
    decision.origin = "the loss seed: the backward of the loss starts in f32";
    addNode(&op, std::move(decision));
    return success();
  }
  if (isSourceOp(op)) {
    addOther(op, OpRole::Source,
             "holds no data: built again in each type its users need");
    return success();
  }
  if (std::optional<std::string> reason = whyFixed(op)) {
    if (failed(rejectLowPin(*reason)))
      return failure();
    addOther(op, OpRole::Fixed, *reason);
    return success();
  }

  PrecisionDecision decision;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  decision.accumulates = linalgOp && linalgOp.getNumReductionLoops() > 0;
  if (pin) {
    if (isLowPrecision(*pin) && *pin != result.options.lowPrecision)
      return op.emitError("pins '")
             << stringifyPrecision(*pin) << "' but the low type is '"
             << stringifyPrecision(result.options.lowPrecision)
             << "' (option 'dtype'); pin 'f32' or '"
             << stringifyPrecision(result.options.lowPrecision) << "'";
    decision.pinned = true;
    decision.category =
        isLowPrecision(*pin) ? OpCategory::Allow : OpCategory::Deny;
    decision.origin =
        ("pinned by amp.precision = \"" + stringifyPrecision(*pin) + "\"")
            .str();
  } else {
    StringRef name = op.getName().getStringRef();
    FailureOr<Category> category = linalgOp && !policy.lookup(name)
                                       ? classifyLinalg(linalgOp)
                                       : classifyByName(op, name);
    if (failed(category))
      return failure();
    decision.category = category->category;
    decision.origin = std::move(category->origin);
  }
  addNode(&op, std::move(decision));
  return success();
}

void PrecisionPainter::addCarriedValues(RegionBranchOpInterface branch) {
  RegionBranchSuccessorMapping mapping;
  branch.getSuccessorOperandInputMapping(mapping);
  // Values reached from one forwarded operand share a type.
  llvm::EquivalenceClasses<Value> classes;
  for (auto &[operand, inputs] : mapping) {
    for (Value input : inputs)
      classes.insert(input);
    for (Value input : llvm::drop_begin(inputs))
      classes.unionSets(inputs.front(), input);
  }
  // Number the groups in IR order: results, then block arguments.
  SmallVector<Value> members(branch->getResults());
  for (Region &region : branch->getRegions())
    for (Block &block : region)
      llvm::append_range(members, block.getArguments());
  DenseMap<Value, unsigned> groupOfLeader;
  SmallVector<PrecisionAnalysis::CarriedValue> groups;
  for (Value member : members) {
    if (!classes.contains(member))
      continue;
    Value leader = classes.getLeaderValue(member);
    auto [it, inserted] = groupOfLeader.try_emplace(leader, groups.size());
    if (inserted)
      groups.push_back({branch, static_cast<unsigned>(groups.size()), {}, {}});
    groups[it->second].values.push_back(member);
  }
  // Forwarded operands, in IR order: the op's own, then the terminators'.
  SmallVector<OpOperand *> forwarded;
  for (OpOperand &operand : branch->getOpOperands())
    forwarded.push_back(&operand);
  for (Region &region : branch->getRegions())
    for (Block &block : region)
      if (!block.empty())
        for (OpOperand &operand : block.back().getOpOperands())
          forwarded.push_back(&operand);
  for (OpOperand *operand : forwarded) {
    auto it = mapping.find(operand);
    if (it == mapping.end() || it->second.empty())
      continue;
    Value leader = classes.getLeaderValue(it->second.front());
    groups[groupOfLeader.lookup(leader)].inputs.push_back(operand);
  }

  for (PrecisionAnalysis::CarriedValue &group : groups) {
    bool allF32 =
        llvm::all_of(group.values,
                     [](Value v) { return isF32Tensor(v.getType()); }) &&
        llvm::all_of(group.inputs, [](OpOperand *operand) {
          return isF32Tensor(operand->get().getType());
        });
    if (!allF32)
      continue;
    PrecisionDecision decision;
    decision.category = OpCategory::Clear;
    decision.origin = "a value carried by '" +
                      branch->getName().getStringRef().str() + "' moves data";
    unsigned index = result.carried.size();
    unsigned id = addNode(nullptr, std::move(decision));
    result.nodeCarriedIndex[id] = index;
    result.carriedNodes.push_back(id);
    for (Value value : group.values)
      result.nodeOfCarriedValue[value] = id;
    for (OpOperand *input : group.inputs)
      result.nodeOfCarriedInput[input] = id;
    result.carried.push_back(std::move(group));
  }
}

LogicalResult PrecisionPainter::visitRegion(Region &region) {
  for (Block &block : region) {
    for (Operation &op : block) {
      // Master weights and optimizer state stay f32.
      if (isa<UpdateOp>(op))
        continue;
      if (auto branch = dyn_cast<RegionBranchOpInterface>(op)) {
        addCarriedValues(branch);
        for (Region &nested : op.getRegions())
          if (failed(visitRegion(nested)))
            return failure();
        continue;
      }
      if (op.hasTrait<OpTrait::IsTerminator>())
        continue;
      if (failed(visitOp(op)))
        return failure();
    }
  }
  return success();
}

LogicalResult PrecisionPainter::build(Operation *root) {
  lowType = getFloatType(root->getContext(), result.options.lowPrecision);
  bool failedAny = false;
  root->walk([&](FunctionOpInterface function) {
    if (!function.isExternal() &&
        failed(visitRegion(function.getFunctionBody())))
      failedAny = true;
  });
  if (failedAny)
    return failure();
  connect();
  return success();
}

//===----------------------------------------------------------------------===//
// The graph
//===----------------------------------------------------------------------===//

SmallVector<OpOperand *> PrecisionPainter::inputsOf(unsigned node) {
  if (Operation *op = result.nodeOps[node]) {
    SmallVector<OpOperand *> inputs;
    for (OpOperand &operand : op->getOpOperands())
      if (result.isFollowedOperand(operand))
        inputs.push_back(&operand);
    return inputs;
  }
  return result.carried[result.nodeCarriedIndex[node]].inputs;
}

/// The elements of a source that holds data: a dense constant, or a fill of
/// a scalar constant as a splat; null for other sources.
static DenseElementsAttr getSourceConstant(Value value) {
  if (auto constant = value.getDefiningOp<arith::ConstantOp>())
    return dyn_cast<DenseElementsAttr>(constant.getValue());
  auto fill = value.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return {};
  auto scalar = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto element = scalar ? dyn_cast<FloatAttr>(scalar.getValue()) : FloatAttr();
  if (!element)
    return {};
  return DenseElementsAttr::get(RankedTensorType::get({}, element.getType()),
                                element.getValue());
}

/// Edges run from the node that produces a value to the nodes that convert
/// it to their precision. A constant operand outside the low type's range
/// keeps its user in f32.
void PrecisionPainter::connect() {
  unsigned numNodes = result.nodes.size();
  preds.resize(numNodes);
  succs.resize(numNodes);
  readsFixedF32.assign(numNodes, false);
  for (unsigned node = 0; node < numNodes; ++node) {
    for (OpOperand *input : inputsOf(node)) {
      Value value = input->get();
      if (const PrecisionDecision *producer = result.lookupNodeOf(value)) {
        unsigned from = producer - result.nodes.data();
        preds[node].push_back(from);
        succs[from].push_back(node);
        continue;
      }
      if (!result.isSourceValue(value)) {
        readsFixedF32[node] = true;
        continue;
      }
      DenseElementsAttr constant = getSourceConstant(value);
      if (!constant)
        continue;
      auto [it, inserted] =
          constantFits.try_emplace(value.getDefiningOp(), true);
      if (inserted)
        it->second = fitsFloatType(constant, lowType);
      PrecisionDecision &decision = result.nodes[node];
      if (it->second || decision.category == OpCategory::Deny ||
          decision.pinned)
        continue;
      decision.category = OpCategory::Deny;
      decision.origin = ("operand #" + Twine(input->getOperandNumber()) +
                         " is a constant outside the range of " +
                         stringifyPrecision(result.options.lowPrecision))
                            .str();
    }
  }
}

//===----------------------------------------------------------------------===//
// Painting
//===----------------------------------------------------------------------===//

void PrecisionPainter::paint() {
  SmallVector<PrecisionDecision> &nodes = result.nodes;
  unsigned numNodes = nodes.size();
  enum class Paint : uint8_t { None, Deny, Allow };
  SmallVector<Paint> paint(numNodes, Paint::None);
  auto is = [&](unsigned node, OpCategory category) {
    return nodes[node].category == category;
  };
  auto mark = [&](unsigned node, Paint color, PaintRule rule, unsigned from) {
    paint[node] = color;
    nodes[node].rule = rule;
    nodes[node].decidedBy = from;
  };
  SmallVector<unsigned> stack;

  // 1. allow ops are low, deny ops f32.
  for (unsigned node = 0; node < numNodes; ++node) {
    if (is(node, OpCategory::Allow))
      paint[node] = Paint::Allow;
    else if (is(node, OpCategory::Deny))
      paint[node] = Paint::Deny;
  }

  // 2. deny spreads forward through infer ops, and through clear ops that
  // lie on a path to a deny or infer op.
  SmallVector<bool> upstreamOfDenyOrInfer(numNodes, false);
  for (unsigned root = 0; root < numNodes; ++root) {
    if (!(is(root, OpCategory::Deny) || is(root, OpCategory::Infer)) ||
        upstreamOfDenyOrInfer[root])
      continue;
    upstreamOfDenyOrInfer[root] = true;
    stack.push_back(root);
    while (!stack.empty()) {
      unsigned node = stack.pop_back_val();
      for (unsigned pred : preds[node]) {
        if (upstreamOfDenyOrInfer[pred] || !is(pred, OpCategory::Clear))
          continue;
        upstreamOfDenyOrInfer[pred] = true;
        stack.push_back(pred);
      }
    }
  }
  for (unsigned root = 0; root < numNodes; ++root) {
    if (!is(root, OpCategory::Deny))
      continue;
    stack.push_back(root);
    while (!stack.empty()) {
      unsigned node = stack.pop_back_val();
      for (unsigned succ : succs[node]) {
        if (paint[succ] != Paint::None || !upstreamOfDenyOrInfer[succ])
          continue;
        mark(succ, Paint::Deny, PaintRule::DenyForward, root);
        stack.push_back(succ);
      }
    }
  }

  // 3. infer and clear ops downstream of an allow op and upstream of
  // another become allow.
  auto openInferOrClear = [&](unsigned node) {
    return paint[node] == Paint::None &&
           (is(node, OpCategory::Infer) || is(node, OpCategory::Clear));
  };
  SmallVector<bool> downstreamOfAllow(numNodes, false);
  for (unsigned root = 0; root < numNodes; ++root) {
    if (paint[root] != Paint::Allow)
      continue;
    stack.push_back(root);
    while (!stack.empty()) {
      unsigned node = stack.pop_back_val();
      for (unsigned succ : succs[node]) {
        if (downstreamOfAllow[succ] || !openInferOrClear(succ))
          continue;
        downstreamOfAllow[succ] = true;
        stack.push_back(succ);
      }
    }
  }
  for (unsigned root = 0; root < numNodes; ++root) {
    if (paint[root] != Paint::Allow || nodes[root].rule != PaintRule::Own)
      continue;
    stack.push_back(root);
    while (!stack.empty()) {
      unsigned node = stack.pop_back_val();
      for (unsigned pred : preds[node]) {
        if (!downstreamOfAllow[pred] || paint[pred] != Paint::None)
          continue;
        mark(pred, Paint::Allow, PaintRule::BetweenAllow, root);
        stack.push_back(pred);
      }
    }
  }

  // 4. allow expands through clear ops, both ways. Unlike in grappler, a
  // contraction hands over an f32 accumulator: the clear ops after it
  // become low only when rule 3 found a low user behind them, otherwise
  // they would add a truncf and an extf where none is needed.
  for (unsigned root = 0; root < numNodes; ++root) {
    if (paint[root] != Paint::Allow ||
        nodes[root].rule == PaintRule::AllowThroughClear)
      continue;
    stack.push_back(root);
    while (!stack.empty()) {
      unsigned node = stack.pop_back_val();
      ArrayRef<unsigned> downstream;
      if (!nodes[node].accumulates)
        downstream = succs[node];
      for (unsigned next : llvm::concat<const unsigned>(
               ArrayRef<unsigned>(preds[node]), downstream)) {
        if (paint[next] != Paint::None || !is(next, OpCategory::Clear))
          continue;
        mark(next, Paint::Allow, PaintRule::AllowThroughClear, root);
        stack.push_back(next);
      }
    }
  }

  // 5. What is left follows its inputs: low when all of them are low (the
  // greatest fixpoint, so a loop that only carries low values stays low).
  // Contractions and reductions hand over f32 accumulators.
  auto outputsLow = [&](unsigned node) {
    return paint[node] != Paint::Deny && !nodes[node].accumulates;
  };
  SmallVector<bool> low(numNodes, false);
  for (unsigned node = 0; node < numNodes; ++node) {
    if (paint[node] != Paint::None)
      continue;
    nodes[node].rule = PaintRule::FollowInputs;
    low[node] = !readsFixedF32[node] && !preds[node].empty();
    for (unsigned pred : preds[node]) {
      if (paint[pred] == Paint::None || outputsLow(pred))
        continue;
      low[node] = false;
      nodes[node].decidedBy = pred;
    }
  }
  for (unsigned node = 0; node < numNodes; ++node)
    if (paint[node] == Paint::None && !low[node])
      stack.push_back(node);
  while (!stack.empty()) {
    unsigned node = stack.pop_back_val();
    for (unsigned succ : succs[node]) {
      if (paint[succ] != Paint::None || !low[succ])
        continue;
      low[succ] = false;
      nodes[succ].decidedBy = node;
      stack.push_back(succ);
    }
  }
  for (unsigned node = 0; node < numNodes; ++node) {
    if (paint[node] == Paint::None && low[node])
      nodes[node].decidedBy = preds[node].front();
    nodes[node].isLow = paint[node] == Paint::Allow ||
                        (paint[node] == Paint::None && low[node]);
  }
}

//===----------------------------------------------------------------------===//
// PrecisionAnalysis
//===----------------------------------------------------------------------===//

FailureOr<PrecisionAnalysis>
PrecisionAnalysis::run(Operation *root, const Policy &policy,
                       const PrecisionOptions &options) {
  PrecisionAnalysis analysis(options);
  PrecisionPainter painter(analysis, policy);
  if (failed(painter.build(root)))
    return failure();
  painter.paint();
  return analysis;
}

const PrecisionDecision *PrecisionAnalysis::lookup(Operation *op) const {
  auto node = nodeOfOp.find(op);
  if (node != nodeOfOp.end())
    return &nodes[node->second];
  auto other = others.find(op);
  return other == others.end() ? nullptr : &other->second;
}

const PrecisionDecision *PrecisionAnalysis::lookupNodeOf(Value value) const {
  if (auto carriedNode = nodeOfCarriedValue.find(value);
      carriedNode != nodeOfCarriedValue.end())
    return &nodes[carriedNode->second];
  Operation *producer = value.getDefiningOp();
  if (!producer || !isF32Tensor(value.getType()))
    return nullptr;
  auto node = nodeOfOp.find(producer);
  return node == nodeOfOp.end() ? nullptr : &nodes[node->second];
}

bool PrecisionAnalysis::isSourceValue(Value value) const {
  Operation *producer = value.getDefiningOp();
  if (!producer)
    return false;
  auto other = others.find(producer);
  return other != others.end() && other->second.role == OpRole::Source;
}

bool PrecisionAnalysis::isFollowedOperand(OpOperand &use) const {
  if (!isF32Tensor(use.get().getType()))
    return false;
  auto node = nodeOfOp.find(use.getOwner());
  if (node == nodeOfOp.end())
    return false;
  // Contractions and reductions keep their accumulator in f32.
  auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
  return !(nodes[node->second].accumulates && dps && dps.isDpsInit(&use));
}

Type PrecisionAnalysis::getLowType(Type type) const {
  return cast<RankedTensorType>(type).clone(
      getFloatType(type.getContext(), options.lowPrecision));
}

Type PrecisionAnalysis::getRewrittenType(Value value) const {
  const PrecisionDecision *node = lookupNodeOf(value);
  if (!node || !node->isLow || node->accumulates)
    return value.getType();
  return getLowType(value.getType());
}

Type PrecisionAnalysis::getRequiredType(OpOperand &use) const {
  if (auto dim = dyn_cast<ShapedDimOpInterface>(use.getOwner());
      dim && dim.getShapedValue() == use.get())
    return getRewrittenType(use.get());
  Type type = use.get().getType();
  if (auto carriedNode = nodeOfCarriedInput.find(&use);
      carriedNode != nodeOfCarriedInput.end())
    return nodes[carriedNode->second].isLow ? getLowType(type) : type;
  if (!isFollowedOperand(use) || !nodes[nodeOfOp.lookup(use.getOwner())].isLow)
    return type;
  return getLowType(type);
}

//===----------------------------------------------------------------------===//
// Explanations
//===----------------------------------------------------------------------===//

std::string PrecisionAnalysis::describeNode(unsigned node) const {
  if (Operation *op = nodeOps[node])
    return ("'" + op->getName().getStringRef() + "' at " +
            printLoc(op->getLoc()))
        .str();
  const CarriedValue &value = carried[nodeCarriedIndex[node]];
  return ("value #" + Twine(value.index) + " carried by '" +
          value.owner->getName().getStringRef() + "' at " +
          printLoc(value.owner->getLoc()))
      .str();
}

std::string
PrecisionAnalysis::explainDecision(const PrecisionDecision &decision) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  switch (decision.role) {
  case OpRole::Source:
    os << "source: " << decision.origin;
    return text;
  case OpRole::Fixed:
    os << "f32 fixed: " << decision.origin;
    return text;
  case OpRole::Painted:
    break;
  }
  os << (decision.isLow ? stringifyPrecision(options.lowPrecision) : "f32")
     << " " << stringifyOpCategory(decision.category) << ": "
     << decision.origin;
  if (decision.accumulates)
    os << "; accumulates in f32";
  if (decision.rule == PaintRule::Own)
    return text;
  os << "; " << describeRule(decision.rule);
  if (decision.decidedBy != PrecisionDecision::kNoNode)
    os << (decision.rule == PaintRule::FollowInputs
               ? (decision.isLow ? ", all low, e.g. " : ", f32 from ")
               : ", propagated from ")
       << describeNode(decision.decidedBy);
  else if (decision.rule == PaintRule::FollowInputs)
    os << ", which are f32 (arguments, fixed ops or none)";
  return text;
}

std::string PrecisionAnalysis::explain(Operation *op) const {
  const PrecisionDecision *decision = lookup(op);
  return decision ? explainDecision(*decision) : std::string();
}

std::string PrecisionAnalysis::explainCarried(unsigned index) const {
  return ("value #" + Twine(carried[index].index) + ": " +
          explainDecision(getCarriedDecision(index)))
      .str();
}
