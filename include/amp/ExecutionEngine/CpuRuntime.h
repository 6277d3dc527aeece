/*===- CpuRuntime.h - Library calls of CPU-lowered steps -----------*- C -*-===*\
|*                                                                            *|
|* The entry points that `amp-linalg-to-cpu-library` calls from a step        *|
|* lowered for the CPU (libAmpCpuRuntime.so, over oneDNN): matrix products    *|
|* and 2-d convolutions with f32 accumulation, on memrefs of any strides      *|
|* (transposed operands are views). Operands cross as unranked memref         *|
|* descriptors: {rank, pointer to the ranked descriptor}. Each call           *|
|* computes C = A.B, or C += A.B when `accumulate` is nonzero, as the linalg  *|
|* op it replaces does up to summation order. The step's buffers come from    *|
|* the runtime's pool.                                                        *|
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

/* linalg.conv_2d_nchw_fchw: input N x C x H x W, filter F x C x KH x KW,
 * output N x F x OH x OW (f32), no padding; strides and dilations as the
 * linalg op's attributes. */
void _mlir_ciface_ampCpuConv2DF32(AmpUnrankedMemRef *input,
                                  AmpUnrankedMemRef *filter,
                                  AmpUnrankedMemRef *output, int64_t strideH,
                                  int64_t strideW, int64_t dilationH,
                                  int64_t dilationW, int32_t accumulate);
void _mlir_ciface_ampCpuConv2DF16(AmpUnrankedMemRef *input,
                                  AmpUnrankedMemRef *filter,
                                  AmpUnrankedMemRef *output, int64_t strideH,
                                  int64_t strideW, int64_t dilationH,
                                  int64_t dilationW, int32_t accumulate);
void _mlir_ciface_ampCpuConv2DBF16(AmpUnrankedMemRef *input,
                                   AmpUnrankedMemRef *filter,
                                   AmpUnrankedMemRef *output, int64_t strideH,
                                   int64_t strideW, int64_t dilationH,
                                   int64_t dilationW, int32_t accumulate);

/* Threads the library calls use (1 by default: deterministic). */
void ampCpuSetNumThreads(int32_t threads);

/* How low-precision inputs are computed on this host: "native" (the
 * library's own kernels: bf16 with AMX, f16 with AMX or AVX512-FP16) or
 * "f32" (inputs extended to f32, the same arithmetic: products of two bf16
 * or f16 numbers are exact in f32). */
const char *ampCpuLowPrecisionPath(int32_t isF16);

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

#ifdef __cplusplus
}
#endif

#endif /* AMP_EXECUTIONENGINE_CPURUNTIME_H */
