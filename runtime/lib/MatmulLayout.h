//===- MatmulLayout.h - From memref descriptors to a cuBLASLt problem -*- C++ -*-===//
//
// Host-only logic of ampMatmul: reading type-erased memref descriptors,
// mapping element-type codes to CUDA data types, and expressing row-major,
// transposed and batched operands as cuBLASLt layouts instead of copies.
//
// cuBLASLt is column-major. A matrix whose memory is row-major is, read as
// column-major, its own transpose; a row-major C = A.B is therefore computed
// as the column-major C^T = B^T.A^T, with the operands swapped.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_MATMULLAYOUT_H
#define AMP_RUNTIME_MATMULLAYOUT_H

#include <cublasLt.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace amp::runtime {

/// All ampMatmul operands have this rank or one less (no batch dimension).
constexpr int64_t kMaxMatmulRank = 3;

/// A rank-2 or rank-3 memref: its first element (offset applied), sizes and
/// strides in elements. A rank-2 view has batch 1.
struct MemRefView {
  const char *data = nullptr;
  int64_t batch = 1, rows = 0, cols = 0;
  int64_t batchStride = 0, rowStride = 0, colStride = 0;
};

/// Reads a ranked MLIR memref descriptor of the given rank (2 or 3).
MemRefView readMemRefDescriptor(int64_t rank, const void *descriptor,
                                size_t elementSize);

/// The cuBLASLt types of one matmul (compute type CUBLAS_COMPUTE_32F, scale
/// type CUDA_R_32F in every case).
struct MatmulTypes {
  cudaDataType_t inputs; // A and B
  cudaDataType_t output; // C and D
  size_t inputSize, outputSize;
};
constexpr cublasComputeType_t kComputeType = CUBLAS_COMPUTE_32F;
constexpr cudaDataType_t kScaleType = CUDA_R_32F;

/// Maps AmpElementType codes; false with `error` set for unknown codes and
/// combinations cuBLASLt does not run with f32 compute.
bool mapMatmulTypes(int32_t aType, int32_t bType, int32_t cType,
                    MatmulTypes &types, std::string &error);

/// A column-major matrix as cublasLtMatrixLayoutCreate takes it.
struct MatrixLayout {
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int64_t batchStride = 0;
};

/// One cuBLASLt problem D = op(first).op(second), D written over C.
struct MatmulProblem {
  int64_t batchCount = 1;
  cublasOperation_t firstOp = CUBLAS_OP_N, secondOp = CUBLAS_OP_N;
  MatrixLayout first, second, output;
  /// True when `first` is the B operand (row-major C, see above).
  bool swapped = false;
  /// No output element: nothing to compute.
  bool empty = false;
};

/// Chooses the layouts for C = A.B, A MxK, B KxN, C MxN (each possibly
/// batched). False with `error` set when shapes disagree or a matrix has no
/// unit stride in its two inner dimensions.
bool selectMatmulLayout(const MemRefView &a, const MemRefView &b,
                        const MemRefView &c, MatmulProblem &problem,
                        std::string &error);

} // namespace amp::runtime

#endif // AMP_RUNTIME_MATMULLAYOUT_H
