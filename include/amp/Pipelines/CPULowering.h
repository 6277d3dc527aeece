//===- CPULowering.h - Lowering a training step to the LLVM dialect -*- C++ -*-===//
//
// The CPU back end of the project: from a training step on tensors (after the
// AMP pipeline, or an fp32 step without markers) to the LLVM dialect, ready
// for mlir::ExecutionEngine or mlir-translate.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_CPULOWERING_H
#define AMP_PIPELINES_CPULOWERING_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::amp {

struct CPULoweringOptions : public PassPipelineOptions<CPULoweringOptions> {
  Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Tile and vectorize contractions and ops whose innermost "
                     "loop is parallel or reduces integers (amp-cpu-vectorize); "
                     "else every linalg op becomes scalar loops"),
      llvm::cl::init(true)};
  Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Compute f32 exp, expm1, log, log1p, tanh and erf with "
                     "MLIR's polynomial approximations on the vectors as they "
                     "are (amp-cpu-approximate-math); else with libm, one call "
                     "per element"),
      llvm::cl::init(true)};
  Option<bool> library{
      *this, "library",
      llvm::cl::desc("Call the CPU runtime (libAmpCpuRuntime): matmuls, batch "
                     "matmuls and 2-d convolutions with f32, f16 or bf16 "
                     "inputs and f32 outputs go to oneDNN "
                     "(amp-linalg-to-cpu-library), buffers come from its pool; "
                     "else they become loops and malloc/free"),
      llvm::cl::init(true)};
  Option<bool> epilogues{
      *this, "epilogues",
      llvm::cl::desc("With `library`, fuse the elementwise code next to a "
                     "matmul into its call where oneDNN computes the same "
                     "function: a low output type, an f32 bias "
                     "(amp-linalg-to-cpu-library's `epilogues`)"),
      llvm::cl::init(true)};
  Option<bool> channelsLast{
      *this, "channels-last",
      llvm::cl::desc("With `library`, lay out the images that the runtime's "
                     "convolutions read or write (16 channels or a multiple), "
                     "and the elementwise code's between them, channels-last, "
                     "which oneDNN reads without reorders "
                     "(amp-cpu-channels-last); else NCHW, reordered in each "
                     "call"),
      llvm::cl::init(true)};
  ListOption<std::string> f32MatmulTypes{
      *this, "f32-matmul-types",
      llvm::cl::desc("With `library`, low-precision input types (bf16, f16) "
                     "of matmuls whose operands are stored in f32, rounded "
                     "to the type, where they are computed, instead of "
                     "extended to f32 in every call: for the types the CPU "
                     "runtime extends on the target "
                     "(`ampCpuLowPrecisionPath` says \"f32\"; amp-cpu-widen-"
                     "library-operands). Empty (the default): none")};
  ListOption<std::string> f32ConvolutionTypes{
      *this, "f32-convolution-types",
      llvm::cl::desc("The same for convolutions "
                     "(`ampCpuConv2DLowPrecisionPath`)")};
  Option<bool> nativeBF16{
      *this, "native-bf16",
      llvm::cl::desc("The target rounds f32 to bf16 in hardware "
                     "(AVX512-BF16, AVX-NE-CONVERT): bf16 arithmetic and "
                     "conversions go to LLVM as they are; =false: bf16 "
                     "arithmetic is computed in f32 and rounded with integer "
                     "operations, which vectorize, where LLVM would call "
                     "__truncsfbf2 once per element (the same bits)"),
      llvm::cl::init(true)};
  Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Threads of the compiled loops: above 1, the outermost "
                     "parallel loops with enough work are split over that many "
                     "threads of oneDNN's OpenMP team "
                     "(amp-cpu-parallel-loops), with the same results; 1 "
                     "keeps every loop on the calling thread"),
      llvm::cl::init(1)};
};

/// Appends to `pm` (on builtin.module) the passes of `amp-lower-to-llvm`:
/// tensor-level elementwise ops to linalg, one-shot bufferization with
/// identity layouts at function boundaries, memref results turned into
/// caller-allocated out-parameters, buffer deallocation, library calls for
/// contractions and convolutions (`library`) and for the collectives MPI's
/// lowering cannot take (data-parallel steps), vector code for the cheap
/// linalg ops (`vectorize`), loops for the others (the outermost parallel
/// ones with enough work split over `threads` threads of oneDNN's OpenMP
/// team when it is above 1), and conversion of everything to the LLVM
/// dialect.
void buildCPULoweringPipeline(OpPassManager &pm,
                              const CPULoweringOptions &options);

/// Registers `amp-lower-to-llvm` with the pass registry.
void registerCPULoweringPipeline();

} // namespace mlir::amp

#endif // AMP_PIPELINES_CPULOWERING_H
