//===- PackedGemm.h - f32 GEMM that converts its inputs as it packs -------===//
//
// The runtime's own matrix product for f16 and bf16 inputs on hosts where
// no library has faster kernels for them than its f32 ones (AVX2 hosts):
// it computes in f32, as the libraries' f32 kernels would after the inputs
// were extended, but converts each element while it copies the operands
// into the blocks its kernel reads, which every GEMM copies anyway. So no
// extended copy of an operand is written and read back.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_EXECUTIONENGINE_PACKEDGEMM_H
#define AMP_LIB_EXECUTIONENGINE_PACKEDGEMM_H

#include "Avx2Support.h"

namespace amp::cpu {

/// A matrix of `type`: element (i, j) at `data` + i * rowStride +
/// j * columnStride elements. Any strides, including 0 and negative ones.
struct MatrixRef {
  const void *data;
  ElementType type;
  int64_t rowStride, columnStride;
};

/// Whether this host runs packedGemm: AVX2, FMA and F16C.
bool hasPackedGemm();

/// C = A.B, or C += A.B with `accumulate`, for A m x k and B k x n, C f32
/// with rows `ldc` elements apart and unit column stride. Each element of C
/// is C's (or 0) plus the sums of its products over blocks of 256 steps of
/// k in order, each sum fused multiply-adds in the order of k: the same on
/// any number of threads. The threads are the calling thread's OpenMP team
/// (omp_get_max_threads); calls from several threads may run at once. Returns
/// false where it could not allocate its buffers (then C is partly computed).
/// Requires hasPackedGemm().
bool packedGemm(int64_t m, int64_t n, int64_t k, const MatrixRef &a,
                const MatrixRef &b, float *c, int64_t ldc, bool accumulate);

} // namespace amp::cpu

#endif // AMP_LIB_EXECUTIONENGINE_PACKEDGEMM_H
