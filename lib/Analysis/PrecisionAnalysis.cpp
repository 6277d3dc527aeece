//===- PrecisionAnalysis.cpp - Which ops compute in low precision ---------===//
//
// Builds the graph of the analysis, one node per painted op and per carried
// value (classification: PrecisionClassification.cpp; carried values:
// CarriedValues.cpp), connects the nodes over SSA use-def chains, paints them
// (PrecisionPainting.cpp), and answers the rewrite's queries. Every step is
// linear in ops and uses.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/PrecisionAnalysis.h"
#include "CarriedValues.h"
#include "PrecisionClassification.h"
#include "PrecisionPainting.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Interfaces/UpstreamPrecisionModels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ShapedOpInterfaces.h"
#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace mlir::amp;

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

namespace mlir::amp {

/// Classifies the ops of a root into the analysis's nodes and decisions,
/// and connects the nodes.
class PrecisionAnalysisBuilder {
public:
  PrecisionAnalysisBuilder(PrecisionAnalysis &result, const Policy &policy)
      : result(result), classifier(policy, result.options, result) {}

  LogicalResult build(Operation *root);
  const PrecisionGraph &getGraph() const { return graph; }

private:
  LogicalResult visitRegion(Region &region);
  LogicalResult visitOp(Operation &op);
  void addCarriedValues(RegionBranchOpInterface branch);
  unsigned addNode(Operation *op, PrecisionDecision decision);
  SmallVector<OpOperand *> inputsOf(unsigned node);
  void connect();

  PrecisionAnalysis &result;
  PrecisionClassifier classifier;
  FloatType lowType;
  PrecisionGraph graph;
  DenseMap<Operation *, bool> constantFits;
};

} // namespace mlir::amp

unsigned PrecisionAnalysisBuilder::addNode(Operation *op,
                                           PrecisionDecision decision) {
  unsigned id = result.nodes.size();
  result.nodes.push_back(std::move(decision));
  result.nodeOps.push_back(op);
  result.nodeCarriedIndex.push_back(~0u);
  if (op) {
    result.nodeOfOp[op] = id;
    result.ops.push_back(op);
  }
  return id;
}

LogicalResult PrecisionAnalysisBuilder::visitOp(Operation &op) {
  FailureOr<std::optional<PrecisionDecision>> decision =
      classifier.classify(op);
  if (failed(decision))
    return failure();
  if (!*decision)
    return success();
  if ((*decision)->role == OpRole::Painted) {
    addNode(&op, std::move(**decision));
    return success();
  }
  result.others[&op] = std::move(**decision);
  result.ops.push_back(&op);
  return success();
}

void PrecisionAnalysisBuilder::addCarriedValues(
    RegionBranchOpInterface branch) {
  for (PrecisionAnalysis::CarriedValue &group : findCarriedValues(branch)) {
    bool allF32 =
        llvm::all_of(group.values,
                     [](Value v) { return isF32Tensor(v.getType()); }) &&
        llvm::all_of(group.inputs, [](OpOperand *operand) {
          return isF32Tensor(operand->get().getType());
        });
    if (!allF32)
      continue;
    PrecisionDecision decision;
    decision.role = OpRole::Painted;
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

LogicalResult PrecisionAnalysisBuilder::visitRegion(Region &region) {
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

LogicalResult PrecisionAnalysisBuilder::build(Operation *root) {
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

SmallVector<OpOperand *> PrecisionAnalysisBuilder::inputsOf(unsigned node) {
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
void PrecisionAnalysisBuilder::connect() {
  unsigned numNodes = result.nodes.size();
  graph.preds.resize(numNodes);
  graph.succs.resize(numNodes);
  graph.readsFixedF32.assign(numNodes, false);
  for (unsigned node = 0; node < numNodes; ++node) {
    for (OpOperand *input : inputsOf(node)) {
      Value value = input->get();
      if (const PrecisionDecision *producer = result.lookupNodeOf(value)) {
        unsigned from = producer - result.nodes.data();
        graph.preds[node].push_back(from);
        graph.succs[from].push_back(node);
        continue;
      }
      if (!result.isSourceValue(value)) {
        graph.readsFixedF32[node] = true;
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
// PrecisionAnalysis
//===----------------------------------------------------------------------===//

FailureOr<PrecisionAnalysis>
PrecisionAnalysis::run(Operation *root, const Policy &policy,
                       const PrecisionOptions &options) {
  if (std::optional<StringRef> op =
          findUpstreamOpWithoutPrecisionModel(root->getContext())) {
    root->emitError("'") << *op
                         << "' has no PrecisionOpInterface model: register "
                            "amp's on the context's DialectRegistry with "
                            "mlir::amp::registerAllAmpDialects";
    return failure();
  }
  PrecisionAnalysis analysis(options);
  PrecisionAnalysisBuilder builder(analysis, policy);
  if (failed(builder.build(root)))
    return failure();
  paintPrecisions(analysis.nodes, builder.getGraph());
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
  if (!nodeOfOp.contains(use.getOwner()))
    return false;
  // Contractions and reductions keep their accumulator in f32.
  auto precisionOp = dyn_cast<PrecisionOpInterface>(use.getOwner());
  return !(precisionOp && precisionOp.isAccumulator(use));
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
