//===- InitAllAmp.h - Register the amp dialect, passes and pipelines -*- C++ -*-===//

#ifndef AMP_INITALLAMP_H
#define AMP_INITALLAMP_H

#include "amp/Conversion/AmpGPUToLLVM.h"
#include "amp/Conversion/Passes.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/AmpGPU/IR/AmpGPU.h"
#include "amp/Interfaces/MPIMemoryEffects.h"
#include "amp/Interfaces/UpstreamPrecisionModels.h"
#include "amp/Pipelines/AmpPipeline.h"
#include "amp/Pipelines/CPULowering.h"
#include "amp/Pipelines/GPULowering.h"
#include "amp/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::amp {

inline void registerAllAmpDialects(DialectRegistry &registry) {
  registry.insert<AmpDialect, amp_gpu::AmpGPUDialect>();
  amp_gpu::registerConvertAmpGPUToLLVMInterface(registry);
  registerAmpPrecisionInterfaceExternalModels(registry);
  registerMPIMemoryEffectsExternalModels(registry);
}

inline void registerAllAmpPipelines() {
  registerAmpPipeline();
  registerCPULoweringPipeline();
  registerGPULoweringPipeline();
}

inline void registerAllAmpPasses() {
  registerAmpPasses();
  registerAmpConversionPasses();
}

} // namespace mlir::amp

#endif // AMP_INITALLAMP_H
