/* Runs the AMP pipeline through the C API of the installed package. */
#include "amp-c/Amp.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>

static void print(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirAmpRegisterAllDialects(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  MlirModule module = mlirModuleCreateParseFromFile(
      context, mlirStringRefCreateFromCString(argv[1]));
  if (mlirModuleIsNull(module))
    return 1;
  MlirPassManager pm = mlirPassManagerCreate(context);
  printf("bad options: ");
  mlirAmpPassManagerAddPipeline(mlirPassManagerGetAsOpPassManager(pm),
                                mlirStringRefCreateFromCString("scaling=x"),
                                print, NULL);
  printf("\n");
  if (mlirLogicalResultIsFailure(mlirAmpPassManagerAddPipeline(
          mlirPassManagerGetAsOpPassManager(pm),
          mlirStringRefCreateFromCString("dtype=bf16 scaling=static"), print,
          NULL)))
    return 1;
  if (mlirLogicalResultIsFailure(
          mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module))))
    return 1;
  mlirOperationPrint(mlirModuleGetOperation(module), print, NULL);
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
  return 0;
}
