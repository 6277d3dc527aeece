//===- AmpTestDialect.cpp - A dialect for testing amp's interfaces --------===//
//
// The amp_test ops' PrecisionOpInterface, in C++: what a dialect outside amp
// writes so that amp-insert-casts paints its ops without any policy entry.
//
//===----------------------------------------------------------------------===//

#include "AmpTestDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::test;

#include "AmpTestOpsDialect.cpp.inc"

void AmpTestDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "AmpTestOps.cpp.inc"
      >();
}

std::optional<PrecisionDefault> ContractOp::getPrecisionDefault() {
  return PrecisionDefault{OpCategory::Allow, "a contraction into f32"};
}

bool ContractOp::isAccumulator(OpOperand &operand) {
  return operand.get() == getAcc();
}

std::optional<PrecisionDefault> LogSumExpOp::getPrecisionDefault() {
  return PrecisionDefault{OpCategory::Deny,
                          "its exponentials overflow the low types"};
}

std::optional<PrecisionDefault> ScaleOp::getPrecisionDefault() {
  return PrecisionDefault{OpCategory::Infer, "computes in its inputs' type"};
}

void amp::test::registerAmpTestDialect(DialectRegistry &registry) {
  registry.insert<AmpTestDialect>();
}

#define GET_OP_CLASSES
#include "AmpTestOps.cpp.inc"
