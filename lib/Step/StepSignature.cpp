//===- StepSignature.cpp - What a runner reads from a step ----------------===//

#include "amp/Step/StepSignature.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace mlir::amp;

llvm::SmallVector<unsigned>
StepSignature::getArguments(ArgumentRole role) const {
  llvm::SmallVector<unsigned> indices;
  for (auto [index, argument] : llvm::enumerate(arguments))
    if (argument.role == role)
      indices.push_back(index);
  return indices;
}

std::optional<unsigned>
StepSignature::getScalerArgument(llvm::StringRef name) const {
  for (auto [index, argument] : llvm::enumerate(arguments))
    if (argument.role == ArgumentRole::ScalerState &&
        argument.stateName == name)
      return index;
  return std::nullopt;
}

llvm::SmallVector<unsigned> StepSignature::getModelArguments() const {
  llvm::SmallVector<unsigned> indices;
  for (auto [index, argument] : llvm::enumerate(arguments))
    if (argument.role == ArgumentRole::Parameter ||
        argument.role == ArgumentRole::Buffer)
      indices.push_back(index);
  return indices;
}

llvm::SmallVector<unsigned> StepSignature::getCarriedArguments() const {
  llvm::SmallVector<unsigned> indices;
  for (auto [index, argument] : llvm::enumerate(arguments))
    if (argument.nextResult)
      indices.push_back(index);
  return indices;
}

llvm::StringRef amp::getArgumentRoleName(ArgumentRole role) {
  switch (role) {
  case ArgumentRole::Parameter:
    return "parameter";
  case ArgumentRole::OptimizerState:
    return "optimizer_state";
  case ArgumentRole::Buffer:
    return "buffer";
  case ArgumentRole::Hyperparameter:
    return "hyperparameter";
  case ArgumentRole::Data:
    return "data";
  case ArgumentRole::ScalerState:
    return "scaler_state";
  }
  llvm_unreachable("unknown role");
}

FailureOr<func::FuncOp> amp::findStepFunction(ModuleOp module,
                                              llvm::StringRef name) {
  if (!name.empty()) {
    auto step = module.lookupSymbol<func::FuncOp>(name);
    if (!step || step.isExternal())
      return module.emitError("no function @") << name << " with a body";
    return step;
  }
  SmallVector<func::FuncOp> steps;
  for (auto function : module.getOps<func::FuncOp>())
    if (function.walk([](UpdateOp) { return WalkResult::interrupt(); })
            .wasInterrupted())
      steps.push_back(function);
  if (steps.size() == 1)
    return steps.front();
  if (steps.empty())
    return module.emitError("no function contains an 'amp.update': a "
                            "training step needs one");
  InFlightDiagnostic diag = module.emitError(
      "several functions contain an 'amp.update'; name the step function");
  for (func::FuncOp step : steps)
    diag.attachNote(step.getLoc()) << "@" << step.getSymName();
  return diag;
}

/// Whether `value` is read outside `amp.update` regions. Being a state
/// operand of an update is not a read: that is how state is replaced.
static bool isReadOutsideUpdates(Value value) {
  for (OpOperand &use : value.getUses()) {
    auto update = dyn_cast<UpdateOp>(use.getOwner());
    if (update && update.isStateOperand(use))
      continue;
    if (!use.getOwner()->getParentOfType<UpdateOp>())
      return true;
  }
  return false;
}

/// Whether every use of `value` is an input of an `amp.update`.
static bool isUpdateInput(Value value) {
  return !value.use_empty() &&
         llvm::all_of(value.getUses(), [](OpOperand &use) {
           auto update = dyn_cast<UpdateOp>(use.getOwner());
           return update && use.getOperandNumber() >=
                                update.getGrads().size() +
                                    update.getState().size();
         });
}

static Initializer getDefaultInitializer(ArgumentRole role,
                                         RankedTensorType type) {
  if (role == ArgumentRole::Parameter && type.getRank() >= 2)
    return {Initializer::Kind::Glorot};
  return {Initializer::Kind::Zeros};
}

/// The `amp.name` of argument or result attributes, if any.
static StringAttr getName(DictionaryAttr attrs) {
  return attrs ? attrs.getAs<StringAttr>(AmpDialect::kNameAttrName)
               : StringAttr();
}

/// Checks a data argument's type: a ranked tensor with the batch as
/// dimension 0, which alone may be dynamic.
static LogicalResult checkDataType(BlockArgument argument) {
  auto type = dyn_cast<RankedTensorType>(argument.getType());
  if (type && type.getRank() > 0 &&
      llvm::none_of(type.getShape().drop_front(), ShapedType::isDynamic))
    return success();
  return emitError(argument.getLoc())
         << "argument #" << argument.getArgNumber()
         << " is a data argument (a batch input); a runner needs a ranked "
            "tensor with the batch as dimension 0, the only dimension that "
            "may be dynamic, got "
         << argument.getType();
}

FailureOr<StepSignature> amp::readStepSignature(func::FuncOp step) {
  StepSignature signature;
  signature.functionName = step.getSymName().str();
  signature.numResults = step.getNumResults();
  auto ret = cast<func::ReturnOp>(step.getBody().back().getTerminator());

  // The loss: the operand of the seed, returned by the function.
  SmallVector<SeedOp> seeds;
  step.walk([&](SeedOp seed) { seeds.push_back(seed); });
  if (seeds.empty())
    return step.emitError("has no 'amp.seed': a runner reads the loss from "
                          "its operand");
  Value loss = seeds.front().getLoss();
  auto lossResult = llvm::find(ret.getOperands(), loss);
  if (lossResult == ret.getOperands().end())
    return seeds.front().emitError(
        "takes a loss that the function does not return; return it so that "
        "a runner can show it");
  signature.lossResult = lossResult - ret.getOperands().begin();

  // Names: one value per name among the arguments.
  llvm::StringMap<unsigned> argumentOfName;
  for (BlockArgument argument : step.getArguments()) {
    StringAttr name = getName(step.getArgAttrDict(argument.getArgNumber()));
    if (!name)
      continue;
    auto [it, inserted] =
        argumentOfName.try_emplace(name.getValue(), argument.getArgNumber());
    if (!inserted)
      return emitError(argument.getLoc())
             << "arguments #" << it->second << " and #"
             << argument.getArgNumber() << " are both named '"
             << name.getValue() << "'";
  }

  // Carried state replaced by an update: a state operand that is an
  // argument, whose new value is returned.
  llvm::DenseMap<unsigned, unsigned> nextResult;
  llvm::DenseSet<unsigned> replacedByUpdate;
  step.walk([&](UpdateOp update) {
    for (auto [state, result] :
         llvm::zip_equal(update.getState(), update.getResults())) {
      auto argument = dyn_cast<BlockArgument>(state);
      if (!argument || argument.getOwner() != &step.getBody().front())
        continue;
      replacedByUpdate.insert(argument.getArgNumber());
      auto returned = llvm::find(ret.getOperands(), result);
      if (returned != ret.getOperands().end())
        nextResult.try_emplace(argument.getArgNumber(),
                               returned - ret.getOperands().begin());
    }
  });
  // Buffers: an argument with a result of its name computed outside every
  // update.
  llvm::DenseSet<unsigned> buffers;
  for (unsigned r = 0, e = step.getNumResults(); r < e; ++r) {
    StringAttr name = getName(step.getResultAttrDict(r));
    auto named = name ? argumentOfName.find(name.getValue())
                      : argumentOfName.end();
    if (named == argumentOfName.end())
      continue;
    unsigned index = named->second;
    BlockArgument argument = step.getArgument(index);
    Value value = ret.getOperand(r);
    if (value.getType() != argument.getType())
      return step.emitError("result #")
             << r << " is named '" << name.getValue() << "' like argument #"
             << index << ", whose next value it is, but has type "
             << value.getType() << " instead of " << argument.getType();
    if (replacedByUpdate.contains(index)) {
      auto it = nextResult.find(index);
      if (it != nextResult.end() && it->second == r)
        continue;
      return step.emitError("result #")
             << r << " is named '" << name.getValue() << "' like argument #"
             << index << ", which an 'amp.update' replaces; return that "
             << "update's result under this name";
    }
    if (value.getDefiningOp<UpdateOp>())
      return step.emitError("result #")
             << r << " is named '" << name.getValue() << "' like argument #"
             << index << " but is the new value of another 'amp.update' "
             << "state operand";
    if (!buffers.insert(index).second)
      return step.emitError("several results are named '")
             << name.getValue() << "', the next value of argument #" << index;
    nextResult[index] = r;
  }

  std::optional<unsigned> firstData;
  for (BlockArgument argument : step.getArguments()) {
    unsigned index = argument.getArgNumber();
    StepArgument &info = signature.arguments.emplace_back();
    StringAttr name = getName(step.getArgAttrDict(index));
    info.name = name ? name.str() : "arg" + std::to_string(index);
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    auto it = nextResult.find(index);
    if (it == nextResult.end() && isUpdateInput(argument)) {
      info.role = ArgumentRole::Hyperparameter;
      if (!type || !type.hasStaticShape())
        return emitError(argument.getLoc())
               << "argument #" << index << " is a hyperparameter (an input of "
               << "'amp.update'); a runner needs a static shape, got "
               << argument.getType();
      info.type = type;
      if (Attribute value = step.getArgAttr(index, AmpDialect::kValueAttrName))
        info.value = getValueAttr(value);
      continue;
    }
    if (it == nextResult.end()) {
      info.role = ArgumentRole::Data;
      if (failed(checkDataType(argument)))
        return failure();
      info.type = type;
      // One batch size for all data arguments.
      bool dynamic = type.isDynamicDim(0);
      if (!firstData) {
        firstData = index;
        signature.dynamicBatch = dynamic;
      } else if (dynamic != signature.dynamicBatch) {
        return emitError(argument.getLoc())
               << "argument #" << index << " has a "
               << (dynamic ? "dynamic" : "static")
               << " batch dimension but data argument #" << *firstData
               << " a " << (dynamic ? "static" : "dynamic")
               << " one; a runner feeds every data argument the same batch";
      }
      continue;
    }
    if (!type || !type.hasStaticShape())
      return emitError(argument.getLoc())
             << "argument #" << index << " is carried state; a runner needs "
             << "a static shape to create it, got " << argument.getType();
    info.type = type;
    info.nextResult = it->second;
    info.role = buffers.contains(index)     ? ArgumentRole::Buffer
                : isReadOutsideUpdates(argument) ? ArgumentRole::Parameter
                                                 : ArgumentRole::OptimizerState;
    info.init = getDefaultInitializer(info.role, type);
    if (auto init = step.getArgAttrOfType<StringAttr>(
            index, AmpDialect::kInitAttrName)) {
      std::optional<Initializer> parsed = parseInitializer(init.getValue());
      if (!parsed)
        return emitError(argument.getLoc())
               << "argument #" << index << " has an invalid 'amp.init' "
               << init << " (expected zeros, ones, glorot or normal:<std>)";
      info.init = *parsed;
    }
  }
  return signature;
}

LogicalResult amp::addScalerState(StepSignature &signature,
                                  func::FuncOp transformed) {
  unsigned numArguments = signature.arguments.size();
  if (transformed.getNumArguments() < numArguments ||
      transformed.getNumResults() < signature.numResults)
    return transformed.emitError(
        "lost arguments or results of the original step in the AMP pipeline");
  for (unsigned i = 0; i < numArguments; ++i)
    if (transformed.getArgumentTypes()[i] != signature.arguments[i].type)
      return transformed.emitError("argument #")
             << i << " changed type in the AMP pipeline";

  auto getStateName = [](DictionaryAttr attrs) -> StringAttr {
    return attrs ? attrs.getAs<StringAttr>(AmpDialect::kStateAttrName) : StringAttr();
  };
  auto resultName = [&](unsigned i) {
    return getStateName(transformed.getResultAttrDict(i));
  };

  for (unsigned i = numArguments; i < transformed.getNumArguments(); ++i) {
    StringAttr name = getStateName(transformed.getArgAttrDict(i));
    auto type = dyn_cast<RankedTensorType>(transformed.getArgumentTypes()[i]);
    if (!name || !type || !type.hasStaticShape())
      return transformed.emitError("added argument #")
             << i << " is not scaler state: it needs an 'amp.state' name "
             << "and a static tensor type";
    StepArgument &info = signature.arguments.emplace_back();
    info.role = ArgumentRole::ScalerState;
    info.type = type;
    info.stateName = name.str();
    // Apart from the step's own names, which never start with "scaler.".
    info.name = ("scaler." + name.getValue()).str();
    if (llvm::any_of(signature.arguments, [&](const StepArgument &other) {
          return &other != &info && other.name == info.name;
        }))
      return transformed.emitError("argument name '")
             << info.name << "' is taken by the pipeline's scaler state";
    for (unsigned r = signature.numResults; r < transformed.getNumResults();
         ++r)
      if (resultName(r) == name && transformed.getResultTypes()[r] == type)
        info.nextResult = r;
    if (!info.nextResult)
      return transformed.emitError("scaler state '")
             << name.getValue() << "' is not returned with the same type";
  }
  for (unsigned r = signature.numResults; r < transformed.getNumResults(); ++r)
    if (StringAttr name = resultName(r);
        name && name.getValue() == kFoundInfStateName)
      signature.foundInfResult = r;
  signature.numResults = transformed.getNumResults();
  return success();
}
