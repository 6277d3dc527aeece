//===- InitAllAmp.h - Register the amp dialect, passes and pipelines -*- C++ -*-===//

#ifndef AMP_INITALLAMP_H
#define AMP_INITALLAMP_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Pipelines/AmpPipeline.h"
#include "amp/Pipelines/CPULowering.h"
#include "amp/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::amp {

inline void registerAllAmpDialects(DialectRegistry &registry) {
  registry.insert<AmpDialect>();
}

inline void registerAllAmpPipelines() {
  registerAmpPipeline();
  registerCPULoweringPipeline();
}

inline void registerAllAmpPasses() {
  registerAmpStripMarkers();
  registerAmpInsertCasts();
  registerAmpLossScaling();
  registerAmpGuardUpdate();
}

} // namespace mlir::amp

#endif // AMP_INITALLAMP_H
