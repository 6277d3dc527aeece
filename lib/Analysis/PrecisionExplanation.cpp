//===- PrecisionExplanation.cpp - Why an op got its precision -------------===//
//
// The text of `explain=true` remarks and of the report's reasons: precision,
// category, origin, and for a propagated decision the rule and the node it
// came from.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/PrecisionAnalysis.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::amp;

static std::string printLoc(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
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
