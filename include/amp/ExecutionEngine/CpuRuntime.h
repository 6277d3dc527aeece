/*===- CpuRuntime.h - Library calls of CPU-lowered steps -----------*- C -*-===*\
|*                                                                            *|
|* The entry points that `amp-linalg-to-cpu-library` calls from a step        *|
|* lowered for the CPU (libAmpCpuRuntime.so, over oneDNN and OpenBLAS):       *|
|* matrix products and 2-d convolutions and their gradients with f32          *|
|* accumulation, on memrefs of any strides (transposed operands are views).   *|
|* Operands cross as unranked memref descriptors: {rank, pointer to the       *|
|* ranked descriptor}. Each call computes C = A.B, or C += A.B when           *|
|* `accumulate` is nonzero, as the linalg op it replaces does up to summation *|
|* order; each writes only its third memref, the output. The step's buffers   *|
|* come from the runtime's pool.                                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef AMP_EXECUTIONENGINE_CPURUNTIME_H
#define AMP_EXECUTIONENGINE_CPURUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An MLIR unranked memref descriptor. */
typedef struct AmpUnrankedMemRef {
  int64_t rank;
  void *descriptor;
} AmpUnrankedMemRef;

/* A = [batch x] M x K, B = [batch x] K x N, C = [batch x] M x N (f32), the
 * inputs f32, f16 or bf16 (bits in uint16_t). */
void _mlir_ciface_ampCpuMatmulF32(AmpUnrankedMemRef *a, AmpUnrankedMemRef *b,
                                  AmpUnrankedMemRef *c, int32_t accumulate);
void _mlir_ciface_ampCpuMatmulF16(AmpUnrankedMemRef *a, AmpUnrankedMemRef *b,
                                  AmpUnrankedMemRef *c, int32_t accumulate);
void _mlir_ciface_ampCpuMatmulBF16(AmpUnrankedMemRef *a, AmpUnrankedMemRef *b,
                                   AmpUnrankedMemRef *c, int32_t accumulate);

/* Matrix products with their epilogue, as amp-linalg-to-cpu-library fuses
 * them: never accumulating; the f32 product is converted to C's type once,
 * after the bias is added (in one oneDNN primitive where the library has
 * one for the types, else in loops after the product).
 * - ...Bias: C = A.B + bias, C f32, bias f32 along C's last dimension (N);
 * - ...To...: C = A.B rounded to the inputs' type (f16 or bf16). */
void _mlir_ciface_ampCpuMatmulF32Bias(AmpUnrankedMemRef *a,
                                      AmpUnrankedMemRef *b,
                                      AmpUnrankedMemRef *c,
                                      AmpUnrankedMemRef *bias);
void _mlir_ciface_ampCpuMatmulF16Bias(AmpUnrankedMemRef *a,
                                      AmpUnrankedMemRef *b,
                                      AmpUnrankedMemRef *c,
                                      AmpUnrankedMemRef *bias);
void _mlir_ciface_ampCpuMatmulBF16Bias(AmpUnrankedMemRef *a,
                                       AmpUnrankedMemRef *b,
                                       AmpUnrankedMemRef *c,
                                       AmpUnrankedMemRef *bias);
void _mlir_ciface_ampCpuMatmulF16ToF16(AmpUnrankedMemRef *a,
                                       AmpUnrankedMemRef *b,
                                       AmpUnrankedMemRef *c);
void _mlir_ciface_ampCpuMatmulBF16ToBF16(AmpUnrankedMemRef *a,
                                         AmpUnrankedMemRef *b,
                                         AmpUnrankedMemRef *c);

/* 2-d convolutions, NCHW images and FCHW filters, f32 outputs. Each takes
 * the spatial parameters of the convolution it computes (of the forward
 * one, for the two gradients): strides and dilations (from 1, as linalg
 * counts them) and the zero padding before and after, {H, W} each, such
 * that OH = (H + padTop + padBottom - dilationH * (KH - 1) - 1) / strideH
 * + 1 exactly, and likewise for W.
 *
 * Forward: output N x F x OH x OW = input N x C x H x W (*) filter
 * F x C x KH x KW. */
#define AMP_CPU_CONV2D_DECLARE(NAME, A, B, C)                                  \
  void _mlir_ciface_##NAME(AmpUnrankedMemRef *A, AmpUnrankedMemRef *B,         \
                           AmpUnrankedMemRef *C, int64_t strideH,             \
                           int64_t strideW, int64_t dilationH,                 \
                           int64_t dilationW, int64_t padTop, int64_t padLeft, \
                           int64_t padBottom, int64_t padRight,                \
                           int32_t accumulate);
AMP_CPU_CONV2D_DECLARE(ampCpuConv2DF32, input, filter, output)
AMP_CPU_CONV2D_DECLARE(ampCpuConv2DF16, input, filter, output)
AMP_CPU_CONV2D_DECLARE(ampCpuConv2DBF16, input, filter, output)
/* The filter gradient F x C x KH x KW of a convolution of input
 * N x C x H x W, from the output gradient N x F x OH x OW (oneDNN's
 * convolution_backward_weights). */
AMP_CPU_CONV2D_DECLARE(ampCpuConv2DBackwardWeightsF32, input, outputGradient,
                       filterGradient)
AMP_CPU_CONV2D_DECLARE(ampCpuConv2DBackwardWeightsF16, input, outputGradient,
                       filterGradient)
AMP_CPU_CONV2D_DECLARE(ampCpuConv2DBackwardWeightsBF16, input, outputGradient,
                       filterGradient)
/* The input gradient N x C x H x W of a convolution from its output
 * gradient N x F x OH x OW, given the convolution's filter rotated by 180
 * degrees in its spatial dimensions (F x C x KH x KW: the filter the
 * stride-1 convolution of the zero-interleaved output gradient reads, as
 * torch-mlir writes input gradients; oneDNN's convolution_backward_data). */
AMP_CPU_CONV2D_DECLARE(ampCpuConv2DBackwardDataF32, outputGradient,
                       rotatedFilter, inputGradient)
AMP_CPU_CONV2D_DECLARE(ampCpuConv2DBackwardDataF16, outputGradient,
                       rotatedFilter, inputGradient)
AMP_CPU_CONV2D_DECLARE(ampCpuConv2DBackwardDataBF16, outputGradient,
                       rotatedFilter, inputGradient)
/* The forward and input-gradient convolutions rounded to the inputs' low
 * type, as amp-linalg-to-cpu-library fuses them (never accumulating). */
AMP_CPU_CONV2D_DECLARE(ampCpuConv2DF16ToF16, input, filter, output)
AMP_CPU_CONV2D_DECLARE(ampCpuConv2DBF16ToBF16, input, filter, output)
AMP_CPU_CONV2D_DECLARE(ampCpuConv2DBackwardDataF16ToF16, outputGradient,
                       rotatedFilter, inputGradient)
AMP_CPU_CONV2D_DECLARE(ampCpuConv2DBackwardDataBF16ToBF16, outputGradient,
                       rotatedFilter, inputGradient)
#undef AMP_CPU_CONV2D_DECLARE
/* The channel counts whose images amp-cpu-channels-last lays out
 * channels-last: multiples of this, one block of oneDNN's AVX-512 layouts
 * (nChw16c, f32 and bf16) and two of its AVX2 ones (nChw8c). */
#define AMP_CPU_CHANNELS_LAST_MULTIPLE 16

/* The channels of one block of the image layout oneDNN's convolutions
 * choose on this host (16 with AVX-512, 8 with AVX2; 0 for a layout without
 * channel blocks). A dense channels-last image of this many channels is
 * that layout byte for byte, and the convolutions read and write it in
 * place with their blocked kernels; other channels-last images they take
 * as channels-last, with their channels-last kernels (the same products,
 * summed in another order). */
int32_t ampCpuChannelBlock(void);

/* Threads the library calls use (1 by default: deterministic). */
void ampCpuSetNumThreads(int32_t threads);

/* Runs body(context, block) for every block in [0, blocks), each on its own
 * thread of the library's OpenMP team (the calling thread runs block 0), and
 * returns when all have: the blocks of a loop that `amp-cpu-parallel-loops`
 * split. One pool for the loops and the library calls, whose workers spin
 * between the two rather than waking another pool's. */
void ampCpuParallelFor(void (*body)(void *context, int64_t block),
                       void *context, int64_t blocks);

/* How low-precision inputs of matmuls are computed on this host: "native"
 * (oneDNN's own kernels: bf16 with AMX or AVX512-BF16, f16 with AMX or
 * AVX512-FP16), "packed" (the runtime's own f32 GEMM, which converts the
 * inputs to f32 as it packs them, lib/ExecutionEngine/PackedGemm.h: wherever
 * OpenBLAS computes the f32 products, ampCpuGemmLibrary, on a host with AVX2,
 * FMA and F16C) or "f32" (inputs extended to f32 in scratch, then the f32
 * kernels). "packed" and "f32" compute the same arithmetic as the f32
 * kernels, since products of two bf16 or f16 numbers are exact in f32; the
 * batches of small matrices that go to oneDNN where OpenBLAS computes the
 * f32 products are extended. */
const char *ampCpuLowPrecisionPath(int32_t isF16);

/* The same for convolutions: "native" (oneDNN's kernels, for bf16 with AMX
 * or AVX512-BF16, for f16 with AMX only), "direct" (elsewhere where oneDNN's
 * convolutions are its AVX2 kernels, ampCpuChannelBlock 8, on a host with
 * AVX2, FMA and F16C: the runtime's own direct convolutions, which extend
 * the input a band of rows at a time as they compute and round the output
 * as they store it, lib/ExecutionEngine/DirectConv.h, for forward
 * convolutions and filter gradients whose output image (or output
 * gradient) is channels-last, without dilation; the others extended, as
 * with "f32"; there f32 filter gradients of windows larger than 1 x 1 are
 * direct ones too) or "f32". */
const char *ampCpuConv2DLowPrecisionPath(int32_t isF16);

/* The library that runs this host's f32 matrix products: "openblas" where
 * oneDNN has only its AVX2 GEMM (OpenBLAS runs at about twice its rate
 * there; the low-precision ones are then the runtime's packed GEMM,
 * ampCpuLowPrecisionPath), else "onednn";
 * the environment variable AMP_CPU_GEMM=onednn or =openblas, read once,
 * chooses instead (empty: the host's choice; another value is the error of
 * every matrix product, ampCpuTakeError, and of this query). Batches of
 * small matrices (up to 256 x 256 x 256 multiply-adds each) go to oneDNN
 * on every host: it splits the batch over its threads. OpenBLAS
 * products take their epilogue as loops after them, and OpenBLAS uses at
 * most the threads it was built for (64 in Debian's build). */
const char *ampCpuGemmLibrary(void);

/* memref.alloc and memref.dealloc of the lowered step (FinalizeMemRefToLLVM's
 * generic allocation functions): buffers are kept by size and alignment for
 * the next call of the step. */
void *_mlir_memref_to_llvm_alloc(uint64_t size);
void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size);
void _mlir_memref_to_llvm_free(void *buffer);

/* The bytes the calling thread has allocated through those functions so far
 * (requested sizes, kept buffers included): a step's temporaries are the
 * difference across one call. */
uint64_t ampCpuAllocatedBytes(void);
/* The first error a library call of the calling thread met since the last
 * call of this function, as "<call>: <oneDNN's message>" (oneDNN could not
 * create or run its primitive: an unsupported geometry, no memory), or NULL;
 * the string lives until the next call. A failing call writes nothing and
 * every later one returns at once until the error is taken: the results of
 * the step that made them are not to be used. */
const char *ampCpuTakeError(void);

#ifdef __cplusplus
}
#endif

#endif /* AMP_EXECUTIONENGINE_CPURUNTIME_H */
