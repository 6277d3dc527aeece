//===- amp.c - Test of the AMP C API -------------------------------------===//
//
// A C program over libAmpCAPI.so only (no C++), as another language's
// binding would use it; FileCheck checks what it prints.
//
//===----------------------------------------------------------------------===//

// RUN: amp-capi-test %S/../amp-run/Inputs/linear.mlir 2>&1 | FileCheck %s

#include "amp-c/Amp.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <string.h>

static void printString(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static void printError(MlirStringRef text, void *userData) {
  (void)userData;
  printf("error: ");
  printString(text, NULL);
  printf("\n");
}

static MlirContext createContext(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirAmpRegisterAllDialects(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  return context;
}

static void testValidation(void) {
  // CHECK-LABEL: testValidation
  printf("testValidation\n");
  // CHECK-NEXT: defaults: 1
  printf("defaults: %d\n", mlirLogicalResultIsSuccess(mlirAmpValidateOptions(
                               mlirStringRefCreateFromCString(""), printError,
                               NULL)));
  // CHECK-NEXT: error: option 'dtype' must be f16 or bf16, got 'f8'
  mlirAmpValidateOptions(mlirStringRefCreateFromCString("dtype=f8"),
                         printError, NULL);
  // CHECK-NEXT: error: option 'growth-factor' must be a finite number > 1, got 0.5
  mlirAmpValidateOptions(mlirStringRefCreateFromCString("growth-factor=0.5"),
                         printError, NULL);
  // CHECK-NEXT: error: invalid amp-pipeline options 'bogus=1': {{.*}}no such option bogus
  mlirAmpValidateOptions(mlirStringRefCreateFromCString("bogus=1"), printError,
                         NULL);
  // CHECK-NEXT: torch: 1
  printf("torch: %d\n",
         mlirLogicalResultIsSuccess(mlirAmpValidatePolicy(
             mlirStringRefCreateFromCString("torch"), printError, NULL)));
  // CHECK-NEXT: error: {{.*}}nothing.json{{.*}}
  mlirAmpValidatePolicy(mlirStringRefCreateFromCString("/nowhere/nothing.json"),
                        printError, NULL);
}

static void testPassManager(const char *path) {
  // CHECK-LABEL: testPassManager
  printf("testPassManager\n");
  MlirContext context = createContext();
  MlirModule module = mlirModuleCreateParseFromFile(
      context, mlirStringRefCreateFromCString(path));
  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  MlirLogicalResult added = mlirAmpPassManagerAddPipeline(
      opm, mlirStringRefCreateFromCString("dtype=bf16 scaling=dynamic"),
      printError, NULL);
  // CHECK-NEXT: added: 1
  printf("added: %d\n", mlirLogicalResultIsSuccess(added));
  // A nested pass manager runs on functions: the pipeline is refused.
  MlirOpPassManager nested = mlirPassManagerGetNestedUnder(
      pm, mlirStringRefCreateFromCString("func.func"));
  // CHECK-NEXT: error: the AMP pipeline runs on 'builtin.module', not on 'func.func'
  mlirAmpPassManagerAddPipeline(nested, mlirStringRefCreateFromCString(""),
                                printError, NULL);
  // CHECK-NEXT: error: option 'scaling' must be none, static or dynamic {{.*}}, got 'always'
  mlirAmpPassManagerAddPipeline(
      opm, mlirStringRefCreateFromCString("scaling=always"), printError, NULL);
  MlirLogicalResult ran =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  // CHECK-NEXT: ran: 1
  printf("ran: %d\n", mlirLogicalResultIsSuccess(ran));
  // CHECK: func.func @step({{.*}}%arg6: tensor<f32> {amp.state = "scale"}, %arg7: tensor<i32> {amp.state = "growth_tracker"})
  // CHECK-SAME: {amp.state = "found_inf"}
  // CHECK: arith.truncf {{.*}} to tensor<4x3xbf16>
  // CHECK-NOT: amp.seed
  // CHECK-NOT: amp.update
  mlirOperationPrint(mlirModuleGetOperation(module), printString, NULL);
  printf("\n");
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
}

static int explanations = 0;

static void countExplanation(MlirStringRef opName, MlirStringRef location,
                             MlirStringRef message, void *userData) {
  (void)userData;
  // The first explanation is that of the first op of the step.
  if (explanations++ == 0) {
    printf("first: ");
    printString(opName, NULL);
    printf(" at ");
    printString(location, NULL);
    printf(": ");
    printString(message, NULL);
    printf("\n");
  }
}

static void printReport(MlirStringRef report, void *userData) {
  (void)userData;
  printf("report: %s\n",
         strstr(report.data, "\"casts\"") ? "has casts" : "no casts");
}

static void testTransform(const char *path) {
  // CHECK-LABEL: testTransform
  printf("testTransform\n");
  MlirContext context = createContext();
  MlirModule module = mlirModuleCreateParseFromFile(
      context, mlirStringRefCreateFromCString(path));
  MlirLogicalResult result = mlirAmpTransformModule(
      module, mlirStringRefCreateFromCString("dtype=f16"), printReport,
      countExplanation, printError, NULL);
  // CHECK-NEXT: report: has casts
  // CHECK-NEXT: first: tensor.empty at {{.*}}linear.mlir:19:10: source: holds no data
  // CHECK-NEXT: transformed: 1, {{[1-9][0-9]*}} explanations
  printf("transformed: %d, %d explanations\n",
         mlirLogicalResultIsSuccess(result), explanations);
  mlirModuleDestroy(module);

  // Errors of the passes are located and go to the callback.
  module = mlirModuleCreateParseFromFile(context,
                                         mlirStringRefCreateFromCString(path));
  result = mlirAmpTransformModule(
      module,
      mlirStringRefCreateFromCString("policy=tensor-cores-only "
                                     "unknown-ops=error"),
      printReport, countExplanation, printError, NULL);
  // CHECK-NEXT: error: {{.*}}linear.mlir:28:10: error: 'arith.addf' is in no list of policy 'tensor-cores-only' and unknown-ops=error
  // CHECK: failed: 1
  printf("failed: %d\n", mlirLogicalResultIsFailure(result));
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: amp-capi-test STEP.mlir\n");
    return 2;
  }
  testValidation();
  testPassManager(argv[1]);
  testTransform(argv[1]);
  return 0;
}
