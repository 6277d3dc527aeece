//===- ImportStep.cpp - Form a training step from an imported one ---------===//
//
// An importer (amp_mlir.torch over torch-mlir) hands over one functional
// step: forward, backward from a seed argument, and the optimizer as plain
// tensor math, with `amp.import_role` on every argument and result. This
// pass finds the structure the contract marks (docs/TrainingStepIR.md): the
// loss seed becomes `amp.seed`, and the optimizer, the backward slice of the
// new state that ends at gradients, state and hyperparameters, moves into an
// `amp.update`.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPIMPORTSTEP
#include "amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// The arguments and results of an imported step by role.
struct ImportedSignature {
  std::optional<unsigned> seed, loss;
  SmallVector<unsigned> parameters, optimizerState, hyperparameters;
  SmallVector<unsigned> gradients;
  /// The result that holds the new value of each state argument.
  DenseMap<unsigned, unsigned> newValueOf;
  /// The results that are neither gradients nor new parameters or optimizer
  /// state, which stay.
  llvm::DenseSet<unsigned> keptResults;
};

} // namespace

static StringAttr getImportRole(DictionaryAttr attrs) {
  return attrs ? attrs.getAs<StringAttr>(AmpDialect::kImportRoleAttrName)
               : StringAttr();
}

static StringAttr getName(DictionaryAttr attrs) {
  return attrs ? attrs.getAs<StringAttr>(AmpDialect::kNameAttrName)
               : StringAttr();
}

/// "argument #3 'fc1.weight'".
static std::string describeArgument(func::FuncOp step, unsigned index) {
  StringAttr name = getName(step.getArgAttrDict(index));
  return ("argument #" + Twine(index) +
          (name ? " '" + name.getValue() + "'" : Twine("")))
      .str();
}

static FailureOr<ImportedSignature> readRoles(func::FuncOp step) {
  ImportedSignature roles;
  // Names of state arguments, to find their new values among the results.
  llvm::StringMap<unsigned> stateOfName;
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    DictionaryAttr attrs = step.getArgAttrDict(i);
    StringAttr role = getImportRole(attrs);
    if (!role)
      return step.emitError("argument #")
             << i << " has no 'amp.import_role'; an imported step names the "
             << "role of every argument";
    StringRef kind = role.getValue();
    if (kind == "seed") {
      if (roles.seed)
        return step.emitError("arguments #")
               << *roles.seed << " and #" << i << " are both the seed";
      roles.seed = i;
    } else if (kind == "parameter") {
      roles.parameters.push_back(i);
    } else if (kind == "optimizer_state") {
      roles.optimizerState.push_back(i);
    } else if (kind == "hyperparameter") {
      roles.hyperparameters.push_back(i);
    }
    if (kind == "parameter" || kind == "optimizer_state" || kind == "buffer") {
      StringAttr name = getName(attrs);
      if (!name)
        return step.emitError("argument #")
               << i << " is " << kind << " but has no 'amp.name' to find its "
               << "new value among the results by";
      stateOfName[(kind + ":" + name.getValue()).str()] = i;
    }
  }
  if (!roles.seed)
    return step.emitError("has no argument of role 'seed': an imported step "
                          "takes what its backward starts from");

  for (unsigned r = 0, e = step.getNumResults(); r < e; ++r) {
    DictionaryAttr attrs = step.getResultAttrDict(r);
    StringAttr role = getImportRole(attrs);
    if (!role)
      return step.emitError("result #")
             << r << " has no 'amp.import_role'; an imported step names the "
             << "role of every result";
    StringRef kind = role.getValue();
    if (kind == "loss") {
      if (roles.loss)
        return step.emitError("results #")
               << *roles.loss << " and #" << r << " are both the loss";
      roles.loss = r;
      roles.keptResults.insert(r);
      continue;
    }
    if (kind == "gradient") {
      roles.gradients.push_back(r);
      continue;
    }
    StringAttr name = getName(attrs);
    auto state = name ? stateOfName.find((kind + ":" + name.getValue()).str())
                      : stateOfName.end();
    if (state == stateOfName.end())
      return step.emitError("result #")
             << r << " is a new " << kind << " value but no " << kind
             << " argument is named "
             << (name ? "'" + name.getValue().str() + "'" : "like it");
    if (!roles.newValueOf.try_emplace(state->second, r).second)
      return step.emitError("results #")
             << roles.newValueOf[state->second] << " and #" << r
             << " are both the new value of "
             << describeArgument(step, state->second);
    if (step.getResultTypes()[r] != step.getArgumentTypes()[state->second])
      return step.emitError("result #")
             << r << " has type " << step.getResultTypes()[r] << " but "
             << describeArgument(step, state->second) << ", whose new value "
             << "it is, has type " << step.getArgumentTypes()[state->second];
    if (kind == "buffer")
      roles.keptResults.insert(r);
  }
  if (!roles.loss)
    return step.emitError("has no result of role 'loss'");
  for (auto &entry : stateOfName)
    if (!roles.newValueOf.count(entry.getValue()))
      return step.emitError("returns no new value of ")
             << describeArgument(step, entry.getValue());
  if (roles.gradients.size() != roles.parameters.size())
    return step.emitError("returns ")
           << roles.gradients.size() << " gradients for "
           << roles.parameters.size()
           << " parameters; an imported step returns one per parameter, in "
              "parameter order";
  for (auto [gradient, parameter] :
       llvm::zip_equal(roles.gradients, roles.parameters))
    if (step.getResultTypes()[gradient] != step.getArgumentTypes()[parameter])
      return step.emitError("gradient result #")
             << gradient << " has type " << step.getResultTypes()[gradient]
             << " but " << describeArgument(step, parameter) << " has type "
             << step.getArgumentTypes()[parameter];
  return roles;
}

/// Replaces the seed argument by `amp.seed` of the loss, placed after the
/// loss and before every use of the seed.
static LogicalResult markSeed(func::FuncOp step, const ImportedSignature &roles,
                              func::ReturnOp ret) {
  BlockArgument seedArgument = step.getArgument(*roles.seed);
  Value loss = ret.getOperand(*roles.loss);
  if (seedArgument.getType() != loss.getType())
    return step.emitError("the seed argument has type ")
           << seedArgument.getType() << " but the loss has type "
           << loss.getType() << "; the backward starts from d(loss)/d(loss)";
  OpBuilder builder(step.getContext());
  if (Operation *def = loss.getDefiningOp())
    builder.setInsertionPointAfter(def);
  else
    builder.setInsertionPointToStart(&step.getBody().front());
  auto seed = SeedOp::create(builder, loss.getLoc(), loss);
  Block &body = step.getBody().front();
  for (OpOperand &use : seedArgument.getUses()) {
    Operation *user = body.findAncestorOpInBlock(*use.getOwner());
    if (!user || user->isBeforeInBlock(seed))
      return use.getOwner()->emitError("reads the seed before the loss is "
                                       "computed; the backward must start "
                                       "after the loss");
  }
  seedArgument.replaceAllUsesWith(seed);
  return success();
}

/// The ops the new parameters and optimizer state are computed from, back to
/// `leaves` (gradients, state arguments, hyperparameters), in IR order.
/// Values that regions of those ops use from above count as operands.
static FailureOr<SmallVector<Operation *>>
findOptimizerSlice(func::FuncOp step, ArrayRef<Value> roots,
                   const llvm::DenseSet<Value> &leaves) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist(roots.begin(), roots.end());
  llvm::DenseSet<Value> visited;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (leaves.contains(value) || !visited.insert(value).second)
      continue;
    Operation *def = value.getDefiningOp();
    if (!def) {
      auto argument = cast<BlockArgument>(value);
      if (argument.getOwner()->getParentOp() != step)
        continue; // a block argument of an op in the slice
      return step.emitError("the optimizer reads ")
             << describeArgument(step, argument.getArgNumber())
             << ", which is neither a gradient, a state argument nor a "
                "hyperparameter";
    }
    if (!isMemoryEffectFree(def))
      return def->emitError("is part of the optimizer but has side effects; "
                            "only pure ops move into 'amp.update'");
    if (def->getParentOp() != step)
      return def->emitError("is part of the optimizer but nested in another "
                            "op; the optimizer is a chain of ops of the step");
    if (!slice.insert(def))
      continue;
    llvm::append_range(worklist, def->getOperands());
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(def->getRegions(), captured);
    llvm::append_range(worklist, captured.getArrayRef());
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return ordered;
}

/// Forms one imported step; `ret` is its return.
static LogicalResult importStep(func::FuncOp step) {
  if (!step.getBody().hasOneBlock())
    return step.emitError("is an imported step of several blocks; amp-import-"
                          "step takes single-block functions");
  FailureOr<ImportedSignature> roles = readRoles(step);
  if (failed(roles))
    return failure();
  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  if (failed(markSeed(step, *roles, ret)))
    return failure();

  // The update's operands: gradients, then parameters and optimizer state,
  // then the hyperparameters.
  SmallVector<unsigned> state(roles->parameters);
  llvm::append_range(state, roles->optimizerState);
  SmallVector<Value> grads, stateValues, newState;
  for (unsigned r : roles->gradients)
    grads.push_back(ret.getOperand(r));
  for (unsigned a : state) {
    stateValues.push_back(step.getArgument(a));
    newState.push_back(ret.getOperand(roles->newValueOf.lookup(a)));
  }
  llvm::DenseSet<Value> leaves(grads.begin(), grads.end());
  leaves.insert(stateValues.begin(), stateValues.end());
  for (unsigned a : roles->hyperparameters)
    leaves.insert(step.getArgument(a));
  FailureOr<SmallVector<Operation *>> slice =
      findOptimizerSlice(step, newState, leaves);
  if (failed(slice))
    return failure();
  // The hyperparameters the slice reads, in argument order.
  llvm::DenseSet<Value> read;
  for (Operation *op : *slice) {
    read.insert(op->operand_begin(), op->operand_end());
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    read.insert(captured.begin(), captured.end());
  }
  SmallVector<Value> inputs;
  for (unsigned a : roles->hyperparameters)
    if (read.contains(step.getArgument(a)) ||
        llvm::is_contained(newState, step.getArgument(a)))
      inputs.push_back(step.getArgument(a));

  OpBuilder builder(ret);
  auto update = UpdateOp::create(builder, ret.getLoc(),
                                 TypeRange(ValueRange(stateValues)), grads,
                                 stateValues, inputs);
  SmallVector<Value> operands(grads);
  llvm::append_range(operands, stateValues);
  llvm::append_range(operands, inputs);
  SmallVector<Type> types = llvm::to_vector(ValueRange(operands).getTypes());
  SmallVector<Location> locations(operands.size(), ret.getLoc());
  Block *body =
      builder.createBlock(&update.getBody(), {}, types, locations);
  IRMapping mapping;
  mapping.map(operands, body->getArguments());
  for (Operation *op : *slice)
    builder.clone(*op, mapping);
  SmallVector<Value> yielded;
  for (Value value : newState)
    yielded.push_back(mapping.lookupOrDefault(value));
  YieldOp::create(builder, ret.getLoc(), yielded);

  // The signature: results without the gradients, the new state from the
  // update; arguments without the seed and every import role.
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  DenseMap<unsigned, Value> fromUpdate;
  for (auto [a, result] : llvm::zip_equal(state, update.getResults()))
    fromUpdate[roles->newValueOf.lookup(a)] = result;
  auto importRole = StringAttr::get(step.getContext(),
                                    AmpDialect::kImportRoleAttrName);
  auto withoutRole = [&](DictionaryAttr attrs) {
    NamedAttrList list(attrs);
    list.erase(importRole);
    return list.getDictionary(step.getContext());
  };
  for (unsigned r = 0, e = step.getNumResults(); r < e; ++r) {
    if (Value value = fromUpdate.lookup(r))
      results.push_back(value);
    else if (roles->keptResults.contains(r))
      results.push_back(ret.getOperand(r));
    else
      continue;
    resultAttrs.push_back(withoutRole(step.getResultAttrDict(r)));
  }
  ret->setOperands(results);
  SmallVector<DictionaryAttr> argumentAttrs;
  for (unsigned a = 0, e = step.getNumArguments(); a < e; ++a)
    argumentAttrs.push_back(withoutRole(step.getArgAttrDict(a)));
  step.setAllArgAttrs(argumentAttrs);
  step.setType(FunctionType::get(step.getContext(), step.getArgumentTypes(),
                                 TypeRange(ValueRange(results))));
  step.setAllResultAttrs(resultAttrs);
  if (failed(step.eraseArgument(*roles->seed)))
    return failure();

  // What only the optimizer used is now dead.
  for (Operation *op : llvm::reverse(*slice))
    if (op->use_empty())
      op->erase();
  return success();
}

namespace {

struct AmpImportStepPass
    : public amp::impl::AmpImportStepBase<AmpImportStepPass> {
  void runOnOperation() override {
    bool failedAny = false;
    for (auto step : getOperation().getOps<func::FuncOp>()) {
      bool imported = false;
      for (unsigned i = 0, e = step.getNumArguments(); i < e && !imported; ++i)
        imported = step.getArgAttr(i, AmpDialect::kImportRoleAttrName) != nullptr;
      if (imported && failed(importStep(step)))
        failedAny = true;
    }
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
