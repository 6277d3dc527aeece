//===- AmpOps.cpp - amp dialect operations --------------------------------===//

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::amp;

static bool isRankedFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

//===----------------------------------------------------------------------===//
// SeedOp
//===----------------------------------------------------------------------===//

LogicalResult SeedOp::verify() {
  if (!isRankedFloatTensor(getLoss().getType()))
    return emitOpError("takes the loss, which must be a ranked tensor of "
                       "floats, got ")
           << getLoss().getType();
  // A step has one loss; the first seed of the function is the valid one.
  auto function = (*this)->getParentOfType<FunctionOpInterface>();
  if (!function)
    return success();
  SeedOp first;
  function.walk([&](SeedOp seed) {
    first = seed;
    return WalkResult::interrupt();
  });
  if (first && first != *this) {
    InFlightDiagnostic diag = emitOpError(
        "is a second loss seed in this function; a training step has at most "
        "one 'amp.seed'");
    diag.attachNote(first.getLoc()) << "the first 'amp.seed' is here";
    return diag;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// UpdateOp
//===----------------------------------------------------------------------===//

YieldOp UpdateOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult UpdateOp::verify() {
  for (auto [index, grad] : llvm::enumerate(getGrads()))
    if (!isRankedFloatTensor(grad.getType()))
      return emitOpError("gradient #")
             << index << " must be a ranked tensor of floats, got "
             << grad.getType();
  for (auto [index, state] : llvm::enumerate(getState()))
    if (!isa<RankedTensorType>(state.getType()))
      return emitOpError("state operand #")
             << index << " must be a ranked tensor, got " << state.getType();
  if (getNumResults() != getState().size())
    return emitOpError("has ")
           << getNumResults() << " results but " << getState().size()
           << " state operands; it returns one new value per state operand";
  for (auto [index, types] : llvm::enumerate(
           llvm::zip(getResultTypes(), getState().getTypes()))) {
    auto [result, state] = types;
    if (result != state)
      return emitOpError("result #")
             << index << " has type " << result
             << " but state operand #" << index << " has type " << state;
  }
  return success();
}

LogicalResult UpdateOp::verifyRegions() {
  Block &body = getBody().front();
  size_t numGrads = getGrads().size(), numState = getState().size(),
         numInputs = getInputs().size();
  if (body.getNumArguments() != numGrads + numState + numInputs)
    return emitOpError("region takes ")
           << body.getNumArguments() << " arguments but expects "
           << numGrads + numState + numInputs << ": the " << numGrads
           << " gradients, then the " << numState << " state values, then the "
           << numInputs << " inputs";
  for (auto [index, operand] : llvm::enumerate(getOperands())) {
    Type argType = body.getArgument(index).getType();
    if (argType == operand.getType())
      continue;
    auto [group, number] =
        index < numGrads ? std::make_pair("gradient #", index)
        : index < numGrads + numState
            ? std::make_pair("state operand #", index - numGrads)
            : std::make_pair("input #", index - numGrads - numState);
    return emitOpError("region argument #")
           << index << " has type " << argType << " but " << group << number
           << " has type " << operand.getType()
           << "; the arguments are the gradients, then the state, then the "
              "inputs";
  }
  YieldOp yield = getYield();
  if (yield.getValues().size() != numState)
    return yield.emitOpError("yields ")
           << yield.getValues().size() << " values but the enclosing "
           << "'amp.update' has " << numState << " state operands";
  for (auto [index, types] : llvm::enumerate(
           llvm::zip(yield.getValues().getTypes(), getState().getTypes()))) {
    auto [yielded, state] = types;
    if (yielded != state)
      return yield.emitOpError("value #")
             << index << " has type " << yielded << " but state operand #"
             << index << " has type " << state;
  }
  return success();
}

#define GET_OP_CLASSES
#include "amp/Dialect/Amp/IR/AmpOps.cpp.inc"
