//===- TransformsEnums.cpp - Modes of the AMP passes ----------------------===//

#include "amp/Transforms/TransformsEnums.h"

#include "amp/Transforms/TransformsEnums.cpp.inc"
