//===- PrecisionReport.cpp - Statistics and pictures of precision ---------===//

#include "amp/Analysis/PrecisionReport.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::amp;

void ConversionStats::addCast(ShapedType from, ShapedType to) {
  if (to.getElementTypeBitWidth() < from.getElementTypeBitWidth())
    ++truncf;
  else
    ++extf;
  if (!from.hasStaticShape()) {
    ++dynamicCasts;
    return;
  }
  uint64_t count = from.getNumElements();
  elements += count;
  bytes +=
      count * (from.getElementTypeBitWidth() + to.getElementTypeBitWidth()) / 8;
}

ConversionStats amp::computeNaiveStats(const PrecisionAnalysis &analysis) {
  ConversionStats stats;
  for (Operation *op : analysis.getOps()) {
    const PrecisionDecision *decision = analysis.lookup(op);
    if (decision->role != OpRole::Painted ||
        decision->category != OpCategory::Allow)
      continue;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!analysis.isFollowedOperand(operand))
        continue;
      auto type = cast<ShapedType>(operand.get().getType());
      stats.addCast(type, cast<ShapedType>(analysis.getLowType(type)));
    }
    for (Value result : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type || !type.getElementType().isF32())
        continue;
      stats.addCast(cast<ShapedType>(analysis.getLowType(type)), type);
    }
  }
  return stats;
}

/// "file:line:col", or MLIR's form of other locations without its "loc(...)".
static std::string describeLocation(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto fileLoc = dyn_cast<FileLineColLoc>(loc)) {
    os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
       << fileLoc.getColumn();
    return text;
  }
  loc.print(os);
  StringRef inner = text;
  if (inner.consume_front("loc(") && inner.consume_back(")"))
    return inner.str();
  return text;
}

std::vector<DecisionEntry>
amp::collectDecisions(const PrecisionAnalysis &analysis) {
  StringRef low = stringifyPrecision(analysis.getLowPrecision());
  std::vector<DecisionEntry> entries;
  for (Operation *op : analysis.getOps()) {
    const PrecisionDecision *decision = analysis.lookup(op);
    DecisionEntry &entry = entries.emplace_back();
    entry.op = op->getName().getStringRef().str();
    entry.location = describeLocation(op->getLoc());
    entry.reason = analysis.explain(op);
    switch (decision->role) {
    case OpRole::Painted:
      entry.role = "painted";
      entry.precision = decision->isLow ? low.str() : "f32";
      entry.category = stringifyOpCategory(decision->category).str();
      break;
    case OpRole::Source:
      entry.role = "source";
      entry.precision = "f32";
      break;
    case OpRole::Fixed:
      entry.role = "fixed";
      entry.precision = "f32";
      break;
    }
  }
  return entries;
}

static llvm::json::Object toJSON(const ConversionStats &stats) {
  return llvm::json::Object{
      {"casts", stats.getNumCasts()}, {"truncf", stats.truncf},
      {"extf", stats.extf},           {"elements", stats.elements},
      {"bytes", stats.bytes},         {"dynamic_casts", stats.dynamicCasts},
  };
}

void amp::writePrecisionReport(llvm::raw_ostream &os,
                               const PrecisionAnalysis &analysis,
                               StringRef policyName,
                               ArrayRef<DecisionEntry> decisions,
                               const ConversionStats &inserted,
                               unsigned constantsConverted,
                               const ConversionStats &naive) {
  StringRef low = stringifyPrecision(analysis.getLowPrecision());
  // [category][0: f32, 1: low]
  unsigned painted[4][2] = {};
  unsigned sources = 0, fixed = 0;
  for (Operation *op : analysis.getOps()) {
    const PrecisionDecision *decision = analysis.lookup(op);
    switch (decision->role) {
    case OpRole::Painted:
      ++painted[static_cast<unsigned>(decision->category)][decision->isLow];
      break;
    case OpRole::Source:
      ++sources;
      break;
    case OpRole::Fixed:
      ++fixed;
      break;
    }
  }
  llvm::json::Object categories;
  unsigned total[2] = {};
  for (OpCategory category : {OpCategory::Allow, OpCategory::Deny,
                              OpCategory::Infer, OpCategory::Clear}) {
    unsigned *counts = painted[static_cast<unsigned>(category)];
    categories[stringifyOpCategory(category)] =
        llvm::json::Object{{"f32", counts[0]}, {low, counts[1]}};
    total[0] += counts[0];
    total[1] += counts[1];
  }
  unsigned carriedLow = 0;
  for (unsigned index = 0, e = analysis.getCarriedValues().size(); index < e;
       ++index)
    carriedLow += analysis.getCarriedDecision(index).isLow;

  llvm::json::Array decisionList;
  for (const DecisionEntry &entry : decisions) {
    llvm::json::Object object{{"op", entry.op},
                              {"location", entry.location},
                              {"role", entry.role},
                              {"precision", entry.precision},
                              {"reason", entry.reason}};
    if (!entry.category.empty())
      object["category"] = entry.category;
    decisionList.push_back(std::move(object));
  }
  llvm::json::Object report{
      {"dtype", low},
      {"policy", policyName},
      {"ops",
       llvm::json::Object{
           {"painted", total[0] + total[1]},
           {"f32", total[0]},
           {low, total[1]},
           {"sources", sources},
           {"fixed", fixed},
           {"categories", std::move(categories)},
       }},
      {"carried_values",
       llvm::json::Object{
           {"total", analysis.getCarriedValues().size()},
           {low, carriedLow},
       }},
      {"casts", toJSON(inserted)},
      {"constants_converted", constantsConverted},
      {"decisions", std::move(decisionList)},
      {"naive", toJSON(naive)},
  };
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
}

//===----------------------------------------------------------------------===//
// DOT
//===----------------------------------------------------------------------===//

static std::string escapeLabel(StringRef text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"')
      escaped.push_back('\\');
    escaped.push_back(c);
  }
  return escaped;
}

static std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

namespace {
/// Numbers the ops and arguments drawn, and writes them with their edges.
class DotWriter {
public:
  DotWriter(llvm::raw_ostream &os, const PrecisionAnalysis &analysis,
            const llvm::DenseSet<Operation *> &casts,
            llvm::function_ref<Operation *(Operation *)> getAnalyzedOp)
      : os(os), analysis(analysis), casts(casts),
        getAnalyzedOp(getAnalyzedOp) {}

  void writeFunction(FunctionOpInterface function, unsigned index);

private:
  void writeRegion(Region &region);
  void writeOp(Operation &op);
  std::string nodeOf(Value value);

  llvm::raw_ostream &os;
  const PrecisionAnalysis &analysis;
  const llvm::DenseSet<Operation *> &casts;
  llvm::function_ref<Operation *(Operation *)> getAnalyzedOp;
  DenseMap<Operation *, unsigned> opIds;
  DenseMap<Value, unsigned> argIds;
};
} // namespace

std::string DotWriter::nodeOf(Value value) {
  if (Operation *op = value.getDefiningOp()) {
    auto it = opIds.find(op);
    return it == opIds.end() ? std::string()
                             : "op" + std::to_string(it->second);
  }
  auto it = argIds.find(value);
  if (it != argIds.end())
    return "arg" + std::to_string(it->second);
  // A loop's block argument: drawn as coming from the loop.
  Operation *owner = cast<BlockArgument>(value).getOwner()->getParentOp();
  auto loop = opIds.find(owner);
  return loop == opIds.end() ? std::string()
                             : "op" + std::to_string(loop->second);
}

void DotWriter::writeOp(Operation &op) {
  bool hasTensor =
      llvm::any_of(llvm::concat<Value>(op.getOperands(), op.getResults()),
                   [](Value v) { return isa<TensorType>(v.getType()); });
  if (!hasTensor)
    return;
  unsigned id = opIds.size();
  opIds[&op] = id;
  std::string label = op.getName().getStringRef().str();
  std::string style = "shape=box, style=filled, fillcolor=white";
  StringRef low = stringifyPrecision(analysis.getLowPrecision());
  auto resultIsLow = [&] {
    return op.getNumResults() &&
           getElementTypeOrSelf(op.getResult(0).getType()) ==
               getFloatType(op.getContext(), analysis.getLowPrecision());
  };
  if (casts.contains(&op)) {
    label += "\\n" + typeText(op.getResult(0).getType());
    style = "shape=diamond, style=filled, fillcolor=gold";
  } else if (const PrecisionDecision *decision =
                 analysis.lookup(getAnalyzedOp(&op))) {
    switch (decision->role) {
    case OpRole::Painted:
      label += ("\\n" + (decision->isLow ? low : StringRef("f32")) + " " +
                stringifyOpCategory(decision->category))
                   .str();
      style = decision->isLow ? "shape=box, style=filled, fillcolor=palegreen"
                              : "shape=box, style=filled, fillcolor=lightpink";
      break;
    case OpRole::Source:
      label += resultIsLow() ? ("\\n" + low).str() : "\\nf32";
      style = "shape=box, style=\"filled,dashed\", fillcolor=white";
      break;
    case OpRole::Fixed:
      label += "\\nf32 fixed";
      style = "shape=box, style=filled, fillcolor=lightgrey";
      break;
    }
  } else if (resultIsLow()) {
    // A source built again in the low type by the rewrite.
    label += ("\\n" + low).str();
    style = "shape=box, style=\"filled,dashed\", fillcolor=palegreen";
  }
  os << "    op" << id << " [label=\"" << escapeLabel(label) << "\", " << style
     << "];\n";
  for (Value operand : op.getOperands()) {
    std::string from = nodeOf(operand);
    if (!from.empty())
      os << "    " << from << " -> op" << id << ";\n";
  }
}

void DotWriter::writeRegion(Region &region) {
  for (Block &block : region) {
    for (Operation &op : block) {
      writeOp(op);
      // Update regions are drawn as one node; linalg bodies are scalars.
      if (isa<RegionBranchOpInterface>(op))
        for (Region &nested : op.getRegions())
          writeRegion(nested);
    }
  }
}

void DotWriter::writeFunction(FunctionOpInterface function, unsigned index) {
  os << "  subgraph cluster_" << index << " {\n    label=\"@"
     << escapeLabel(function.getName()) << "\";\n";
  for (BlockArgument arg : function.getArguments()) {
    unsigned id = argIds.size();
    argIds[arg] = id;
    os << "    arg" << id << " [label=\"%arg" << arg.getArgNumber() << "\\n"
       << escapeLabel(typeText(arg.getType())) << "\", shape=ellipse];\n";
  }
  writeRegion(function.getFunctionBody());
  os << "  }\n";
}

void amp::writePrecisionDot(llvm::raw_ostream &os, Operation *root,
                            const PrecisionAnalysis &analysis,
                            const llvm::DenseSet<Operation *> &casts,
                            llvm::function_ref<Operation *(Operation *)>
                                getAnalyzedOp) {
  os << "digraph amp {\n  node [fontname=\"monospace\"];\n";
  DotWriter writer(os, analysis, casts, getAnalyzedOp);
  unsigned index = 0;
  root->walk([&](FunctionOpInterface function) {
    if (!function.isExternal())
      writer.writeFunction(function, index++);
  });
  os << "}\n";
}
