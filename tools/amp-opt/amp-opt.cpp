//===- amp-opt.cpp - The AMP compiler's opt driver ------------------------===//
//
// mlir-opt with the amp dialect, its passes and pipelines, and every upstream
// dialect and pass, so that it can stand in for mlir-opt in all our tests.
//
//===----------------------------------------------------------------------===//

#include "amp/InitAllAmp.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace mlir::amp::test {
void registerAmpTestDialect(DialectRegistry &registry);
} // namespace mlir::amp::test

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::amp::registerAllAmpPasses();
  mlir::amp::registerAllAmpPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary (amp-lower-to-nvvm) translates kernels to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::amp::registerAllAmpDialects(registry);
  // amp_test (test/lib): ops that give their precision through the
  // interface, for the tests.
  mlir::amp::test::registerAmpTestDialect(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "AMP optimizer driver: mixed-precision training steps\n",
      registry));
}
