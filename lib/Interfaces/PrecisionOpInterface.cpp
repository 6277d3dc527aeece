//===- PrecisionOpInterface.cpp - An op's part in mixed precision ---------===//

#include "amp/Interfaces/PrecisionOpInterface.h"

using namespace mlir;
using namespace mlir::amp;

#include "amp/Interfaces/PrecisionEnums.cpp.inc"

#include "amp/Interfaces/PrecisionOpInterface.cpp.inc"
