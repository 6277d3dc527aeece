//===- GPULowering.h - Lowering a training step for NVIDIA GPUs -*- C++ -*-===//
//
// The GPU back end of the project: from a training step on tensors (after
// the AMP pipeline) to the LLVM dialect with the device code embedded as a
// fatbin, contractions as calls of the runtime's cuBLASLt matmul, and every
// buffer in device memory (docs/GPU.md).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_GPULOWERING_H
#define AMP_PIPELINES_GPULOWERING_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::amp {

struct GPULoweringOptions : public PassPipelineOptions<GPULoweringOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("Target GPU: sm_70 ... sm_90"),
                           llvm::cl::init("sm_90")};
  Option<bool> matmulF32{
      *this, "matmul-f32",
      llvm::cl::desc("Also run f32 contractions through cuBLASLt (else "
                     "they are generic kernels)"),
      llvm::cl::init(false)};
  Option<std::string> format{
      *this, "cubin-format",
      llvm::cl::desc("Device code embedded in the host code: fatbin, bin "
                     "(cubin) or isa (PTX text)"),
      llvm::cl::init("fatbin")};
  Option<int> optLevel{*this, "opt-level",
                       llvm::cl::desc("Optimization level of device code"),
                       llvm::cl::init(2)};

  /// An error message for invalid values, or "" when they are valid.
  std::string validate() const;
};

/// Appends to `pm` (on builtin.module) the passes of `amp-lower-to-nvvm`.
/// Serializing device code needs the CUDA toolkit (CUDA_ROOT, ptxas).
void buildGPULoweringPipeline(OpPassManager &pm,
                              const GPULoweringOptions &options);

/// Appends to `pm` (on builtin.module) the first passes of
/// `amp-lower-to-nvvm`, which rewrite the step on tensors for the GPU and
/// compute what it computed. `amp-run --before-lowering=amp-gpu-tensor-rewrites`
/// runs them on the CPU.
void buildGPUTensorRewrites(OpPassManager &pm);

/// Appends to `pm` the passes of `amp-lower-to-nvvm` up to its kernels
/// (`gpu.launch` on device buffers, runtime matmuls), then
/// `amp-gpu-emulate-on-host`: registered as `amp-gpu-host-emulation`, for
/// `amp-run --before-lowering`, to check on the CPU what they compute.
void buildGPUHostEmulation(OpPassManager &pm, const GPULoweringOptions &options);

/// Registers `amp-lower-to-nvvm`, `amp-gpu-tensor-rewrites` and
/// `amp-gpu-host-emulation` with the pass registry.
void registerGPULoweringPipeline();

} // namespace mlir::amp

#endif // AMP_PIPELINES_GPULOWERING_H
