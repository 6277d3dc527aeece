//===- AmpTestDialect.h - A dialect to test amp's interfaces ----*- C++ -*-===//
//-*-===//

#ifndef AMP_TEST_AMPTESTDIALECT_H
#define AMP_TEST_AMPTESTDIALECT_H

#include "amp/Interfaces/PrecisionOpInterface.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "AmpTestOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "AmpTestOps.h.inc"

namespace mlir::amp::test {
/// Adds the amp_test dialect to `registry` (amp-opt's tests use it).
void registerAmpTestDialect(DialectRegistry &registry);
} // namespace mlir::amp::test

#endif // AMP_TEST_AMPTESTDIALECT_H
