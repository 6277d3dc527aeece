//===- amp-tblgen.cpp - The project's TableGen driver ---------------------===//
//
// MLIR's TableGen driver with the project's generators, which register
// themselves (-gen-pass-pipeline-options); mlir-tblgen keeps MLIR's.
//
//===----------------------------------------------------------------------===//

#include "mlir/Tools/mlir-tblgen/MlirTblgenMain.h"

int main(int argc, char **argv) { return mlir::MlirTblgenMain(argc, argv); }
