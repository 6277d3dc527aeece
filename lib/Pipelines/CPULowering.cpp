//===- CPULowering.cpp - Lowering a training step to the LLVM dialect -----===//
//
// The pipeline keeps to upstream passes. Notes on the choices:
// - Tensor-level arith.truncf / arith.extf (the casts of the AMP pipeline) and
//   other elementwise ops on tensors have no bufferization of their own, so
//   they become linalg.generic first; then chains of them are fused
//   (amp-fuse-elementwise): one loop nest and no buffer in between, but
//   with `library` a cast of a product stays for the call to write. Sums
//   over the same loops that read one tensor become one op
//   (amp-fuse-sibling-reductions): one pass over the tensor. Such sums to a
//   few values (BatchNorm's) get partial results over their outer loops
//   (amp-cpu-split-reductions), which the parallel loops can split; with
//   any `threads`, so every thread count sums in the same order.
// - Every op writing into a filled tensor gets a fill of its own
//   (amp-fill-per-destination): a fill instead of a copy of a filled buffer.
// - Transposes that only feed matmuls are folded into them
//   (amp-fold-transposes-into-matmuls) when the library reads the
//   operands in place; the loops would read them strided.
// - Results become out-parameters allocated by the caller: a runner then owns
//   every buffer it sees, and never has to tell a returned argument, a global
//   constant and a fresh allocation apart to free them.
// - f16 and bf16 arithmetic is left to LLVM, which computes each operation in
//   f32 and rounds it back on targets without native support. That is the
//   correctly rounded result of +, -, *, / and sqrt, as with native support:
//   f32's 24-bit significand is at least 2p+2 bits for f16 (p=11) and bf16
//   (p=8), so the double rounding is harmless. Only f32->bf16 truncation may
//   need a runtime routine, __truncsfbf2, from libmlir_float16_utils.so
//   (loaded by libmlir_c_runner_utils.so).
// - f32 exp, expm1, log, log1p, tanh and erf become MLIR's polynomial
//   approximations (`approximate-math`, amp-cpu-approximate-math): LLVM would
//   call libm once per vector element. Other math functions without an LLVM
//   intrinsic become libm calls.
// - With `library` (the default), matmuls and convolutions with f32 outputs
//   become calls of the CPU runtime over oneDNN (amp-linalg-to-cpu-library,
//   lib/ExecutionEngine/CpuRuntimeWrappers.cpp), and buffers come from the
//   runtime's pool (FinalizeMemRefToLLVM's generic allocation functions),
//   which keeps them for the next step instead of mapping fresh pages.
//   With `epilogues` (the default), a low output type or an f32 bias next
//   to a matmul goes into its call where oneDNN computes the same.
//   With `channels-last` (the default), the images of the convolutions
//   (16 channels or a multiple) are laid out channels-last, which oneDNN
//   reads without reorders (amp-cpu-channels-last). The products of the
//   types in `f32-matmul-types` and `f32-convolution-types` (empty by
//   default) read operands stored in f32 where they are computed
//   (amp-cpu-widen-library-operands, before the fusion that puts each
//   extension into its producer's loop): the runtime computes them in f32
//   on such hosts and would extend the operands in every call.
// - The collectives of a data-parallel step: f32 sums become MPICH calls in
//   convert-to-llvm (MPIToLLVM); f16 and bf16 sums, which MPI has no
//   datatype for, and the world size, which MPIToLLVM does not lower, become
//   calls of the MPI runtime (amp-mpi-to-cpu-runtime,
//   lib/ExecutionEngine/MpiRuntimeWrappers.cpp).
// - With `vectorize` (the default), contractions and ops whose innermost loop
//   is parallel (or reduces integers) become tiled vector code
//   (amp-cpu-vectorize) with the loops' rounding; other ops become loops. Scalar f16 loads are slow on x86 (LLVM
//   merges them into a live register, a false dependency that serializes a
//   matmul's inner loop); vector loads are not.
// - With `threads` N above 1, the linalg ops' parallel dims become
//   scf.parallel loops (tiles of amp-cpu-vectorize, and
//   convert-linalg-to-parallel-loops for the others), reductions scf.for;
//   amp-cpu-parallel-loops splits the outermost ones with enough work into at
//   most N blocks, which the CPU runtime's ampCpuParallelFor runs on
//   oneDNN's OpenMP threads, so sums keep their order and the bits do not
//   depend on N. docs/CPU.md ("Threads") says why this runtime.
//
//===----------------------------------------------------------------------===//

#include "amp/Pipelines/CPULowering.h"
#include "amp/Conversion/Passes.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void amp::buildCPULoweringPipeline(OpPassManager &pm,
                                   const CPULoweringOptions &options) {
  pm.addPass(createAmpDropContractAttributes());
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createAmpOneHotMatmulToGather());
  if (options.library && !(options.f32MatmulTypes.empty() &&
                           options.f32ConvolutionTypes.empty())) {
    AmpCPUWidenLibraryOperandsOptions widen;
    widen.matmulTypeNames = llvm::to_vector(options.f32MatmulTypes);
    widen.convolutionTypeNames = llvm::to_vector(options.f32ConvolutionTypes);
    pm.addNestedPass<func::FuncOp>(createAmpCPUWidenLibraryOperands(widen));
    // Its extensions, for amp-fuse-elementwise to put into their producers.
    pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  }
  pm.addNestedPass<func::FuncOp>(createAmpMergeEqualReductions());
  // The library writes a product's cast (amp-linalg-to-cpu-library).
  AmpFuseElementwiseOptions fusion;
  fusion.keepProductCasts = options.library;
  pm.addNestedPass<func::FuncOp>(createAmpFuseElementwise(fusion));
  pm.addNestedPass<func::FuncOp>(createAmpFuseSiblingReductions());
  pm.addNestedPass<func::FuncOp>(createAmpCPUSplitReductions());
  pm.addNestedPass<func::FuncOp>(createAmpFillPerDestination());
  if (options.library)
    pm.addNestedPass<func::FuncOp>(createAmpFoldTransposesIntoMatmuls());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Loops of the step (scf.for over tensors) may yield new tensors.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));

  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::buildBufferDeallocationPipeline(pm);

  if (options.library) {
    AmpLinalgToCPULibraryOptions library;
    library.epilogues = options.epilogues;
    pm.addPass(createAmpLinalgToCPULibrary(library));
    if (options.channelsLast)
      pm.addNestedPass<func::FuncOp>(createAmpCPUChannelsLast());
  }
  pm.addPass(createAmpMPIToCPURuntime());
  // threads=1 builds exactly the sequential pipeline; any other value goes
  // to amp-cpu-parallel-loops, which rejects one below 1.
  bool parallel = options.threads != 1;
  if (options.vectorize) {
    AmpCPUVectorizeOptions vectorize;
    vectorize.parallelLoops = parallel;
    pm.addNestedPass<func::FuncOp>(createAmpCPUVectorize(vectorize));
    // Transfers of 2-D tiles (a matmul's operands) become 1-D ones.
    VectorTransferToSCFOptions transfers;
    transfers.enableFullUnroll();
    pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass(transfers));
  }
  if (!options.nativeBF16) {
    // bf16 math and arithmetic in f32, then the roundings as integer code
    // (amp-cpu-round-to-bf16 says why not upstream's arith-expand).
    math::MathExtendToSupportedTypesOptions math;
    math.extraTypeStrs = {"f16"};
    pm.addNestedPass<func::FuncOp>(
        math::createMathExtendToSupportedTypes(math));
    arith::ArithEmulateUnsupportedFloatsOptions arithmetic;
    arithmetic.sourceTypeStrs = {"bf16"};
    pm.addNestedPass<func::FuncOp>(
        arith::createArithEmulateUnsupportedFloats(arithmetic));
    pm.addNestedPass<func::FuncOp>(createAmpCPURoundToBF16());
  }
  if (options.approximateMath)
    pm.addNestedPass<func::FuncOp>(createAmpCPUApproximateMath());
  if (parallel) {
    pm.addPass(createConvertLinalgToParallelLoopsPass());
    AmpCPUParallelLoopsOptions loops;
    loops.threads = options.threads;
    pm.addPass(createAmpCPUParallelLoops(loops));
  } else {
    pm.addPass(createConvertLinalgToLoopsPass());
  }
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefs;
  memrefs.useGenericFunctions = options.library;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefs));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // After math-to-libm, which unrolls vectors of libm calls.
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void amp::registerCPULoweringPipeline() {
  PassPipelineRegistration<CPULoweringOptions>(
      "amp-lower-to-llvm",
      "Lower a training step on tensors (after the AMP pipeline) to the LLVM "
      "dialect for the CPU, with memref results as caller-allocated "
      "out-parameters",
      buildCPULoweringPipeline);
}
