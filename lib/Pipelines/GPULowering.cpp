//===- GPULowering.cpp - Lowering a training step for NVIDIA GPUs ---------===//
//
// Upstream passes plus the amp ones of include/amp/Conversion/Passes.td.
// Notes on the choices (see also ../shared notes on MLIR 22's GPU traps):
// - Contractions leave the linalg path before anything else touches them,
//   so that they stay one runtime call each.
// - Parallel loops are tiled into blocks of threads with no-min-max-bounds:
//   with affine.min bounds convert-parallel-loops-to-gpu silently keeps
//   dynamic loops on the host. No canonicalize may run between tiling and
//   mapping: it would merge the two loop levels (one thread per block). The
//   innermost dimension maps to x, so that warps access memory coalesced.
// - gpu-async-region puts every device op of a function (allocations,
//   copies, kernels, runtime matmuls) on one stream, synchronized once at
//   the end of the step.
// - The collectives of a data-parallel step become runtime calls (NCCL) on
//   device buffers before bufferization, so that their receive buffers are
//   device allocations freed like every temporary.
//
//===----------------------------------------------------------------------===//

#include "amp/Pipelines/GPULowering.h"
#include "amp/Conversion/Passes.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

std::string amp::GPULoweringOptions::validate() const {
  int version = 0;
  llvm::StringRef number = llvm::StringRef(chip).drop_front(3);
  if (!llvm::StringRef(chip).starts_with("sm_") ||
      number.getAsInteger(10, version) || version < 70 || version > 90)
    return "amp-lower-to-nvvm: chip '" + chip +
           "' is not one of sm_70 ... sm_90 (e.g. sm_90 for H100/H200, "
           "sm_80 for A100)";
  if (format != "fatbin" && format != "bin" && format != "isa")
    return "amp-lower-to-nvvm: cubin-format '" + format +
           "' is not one of fatbin, bin, isa";
  if (optLevel < 0 || optLevel > 3)
    return "amp-lower-to-nvvm: opt-level must be in 0 ... 3";
  return "";
}

void amp::buildGPUTensorRewrites(OpPassManager &pm) {
  pm.addPass(createAmpDropContractAttributes());
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createAmpSinkTensorExtracts());
  pm.addNestedPass<func::FuncOp>(createAmpFuseElementwise());
  pm.addNestedPass<func::FuncOp>(createAmpGPUSplitReductions());
}

namespace mlir::amp {
/// From a step on tensors to kernels (`gpu.launch`, not outlined yet) and
/// runtime matmuls on device buffers.
static void buildGPUKernels(OpPassManager &pm,
                                const GPULoweringOptions &options) {
  buildGPUTensorRewrites(pm);
  pm.addPass(createAmpMPIToGPU());
  pm.addPass(createAmpGPUBufferize());
  pm.addPass(createAmpLinalgToGPUMatmul({options.matmulF32}));
  pm.addNestedPass<func::FuncOp>(createAmpGPUParallelOuterLoops());
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createAmpGPUMapParallelLoops());
  pm.addPass(createConvertParallelLoopToGpuPass());
}
} // namespace mlir::amp

void amp::buildGPUHostEmulation(OpPassManager &pm,
                                const GPULoweringOptions &options) {
  buildGPUKernels(pm, options);
  pm.addNestedPass<func::FuncOp>(createAmpGPUEmulateOnHost());
}

void amp::buildGPULoweringPipeline(OpPassManager &pm,
                                   const GPULoweringOptions &options) {
  buildGPUKernels(pm, options);
  pm.addPass(createGpuKernelOutliningPass());
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());

  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  // PTX ISA 8.0 covers sm_70 ... sm_90 and CUDA 12+ ptxas.
  nvvm.cubinFeatures = "+ptx80";
  nvvm.cubinFormat = options.format;
  nvvm.optLevel = options.optLevel;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

void amp::registerGPULoweringPipeline() {
  PassPipelineRegistration<GPULoweringOptions>(
      "amp-gpu-host-emulation",
      "amp-lower-to-nvvm up to its kernels, with device memory, cuBLASLt "
      "matmuls and kernels replaced by host ones: the GPU lowering run on "
      "the CPU (amp-run --before-lowering), for testing",
      buildGPUHostEmulation);
  registerPassPipeline(
      "amp-gpu-tensor-rewrites",
      "The passes of amp-lower-to-nvvm that rewrite the step on tensors "
      "(before bufferization); they compute what the step computed",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        if (!text.empty())
          return errorHandler("amp-gpu-tensor-rewrites takes no options");
        buildGPUTensorRewrites(pm);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)>) {});
  registerPassPipeline(
      "amp-lower-to-nvvm",
      "Lower a training step on tensors (after the AMP pipeline) to the LLVM "
      "dialect with an embedded NVIDIA fatbin: contractions call the "
      "runtime's cuBLASLt matmul, everything else becomes kernels, all "
      "buffers live in device memory",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        GPULoweringOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        if (std::string error = options.validate(); !error.empty())
          return errorHandler(error);
        buildGPULoweringPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optionHandler) {
        optionHandler(GPULoweringOptions());
      });
}
