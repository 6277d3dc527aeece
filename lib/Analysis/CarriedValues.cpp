//===- CarriedValues.cpp - Values tied across regions ---------------------===//
//
// The upstream dataflow framework propagates a lattice along region
// successors; the analysis needs the opposite, one node per group of values
// that must agree, which an equivalence over the successor mapping gives
// directly.
//
//===----------------------------------------------------------------------===//

#include "CarriedValues.h"
#include "llvm/ADT/EquivalenceClasses.h"

using namespace mlir;
using namespace mlir::amp;

SmallVector<PrecisionAnalysis::CarriedValue>
amp::findCarriedValues(RegionBranchOpInterface branch) {
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
  return groups;
}
