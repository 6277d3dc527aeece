//===- MatmulLayoutTest.cpp - Descriptors, types and cuBLASLt layouts -----===//

#include "MatmulLayout.h"

#include "amp/Runtime/AmpRuntime.h"
#include "gtest/gtest.h"

using namespace amp::runtime;

namespace {

/// A ranked memref descriptor as MLIR lays it out.
template <int Rank> struct Descriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

MemRefView matrix(int64_t rows, int64_t cols, int64_t rowStride,
                  int64_t colStride) {
  MemRefView view;
  view.rows = rows;
  view.cols = cols;
  view.rowStride = rowStride;
  view.colStride = colStride;
  return view;
}

MemRefView batched(int64_t batch, int64_t batchStride, MemRefView view) {
  view.batch = batch;
  view.batchStride = batchStride;
  return view;
}

void expectLayout(const MatrixLayout &layout, uint64_t rows, uint64_t cols,
                  int64_t ld) {
  EXPECT_EQ(layout.rows, rows);
  EXPECT_EQ(layout.cols, cols);
  EXPECT_EQ(layout.ld, ld);
}

TEST(MemRefDescriptor, ReadsRank2WithOffset) {
  alignas(8) char buffer[64];
  Descriptor<2> d{buffer, buffer + 8, 3, {4, 5}, {5, 1}};
  MemRefView view = readMemRefDescriptor(2, &d, /*elementSize=*/2);
  EXPECT_EQ(view.data, buffer + 8 + 6);
  EXPECT_EQ(view.batch, 1);
  EXPECT_EQ(view.rows, 4);
  EXPECT_EQ(view.cols, 5);
  EXPECT_EQ(view.rowStride, 5);
  EXPECT_EQ(view.colStride, 1);
}

TEST(MemRefDescriptor, ReadsRank3BatchDimension) {
  char buffer[16];
  Descriptor<3> d{buffer, buffer, 2, {7, 4, 5}, {20, 1, 4}};
  MemRefView view = readMemRefDescriptor(3, &d, /*elementSize=*/4);
  EXPECT_EQ(view.data, buffer + 8);
  EXPECT_EQ(view.batch, 7);
  EXPECT_EQ(view.batchStride, 20);
  EXPECT_EQ(view.rows, 4);
  EXPECT_EQ(view.cols, 5);
  EXPECT_EQ(view.rowStride, 1);
  EXPECT_EQ(view.colStride, 4);
}

TEST(MatmulTypes, MapsCodesToCudaTypes) {
  MatmulTypes types;
  std::string error;
  ASSERT_TRUE(mapMatmulTypes(AMP_ELEMENT_F16, AMP_ELEMENT_F16,
                             AMP_ELEMENT_F32, types, error));
  EXPECT_EQ(types.inputs, CUDA_R_16F);
  EXPECT_EQ(types.output, CUDA_R_32F);
  EXPECT_EQ(types.inputSize, 2u);
  EXPECT_EQ(types.outputSize, 4u);
  ASSERT_TRUE(mapMatmulTypes(AMP_ELEMENT_BF16, AMP_ELEMENT_BF16,
                             AMP_ELEMENT_BF16, types, error));
  EXPECT_EQ(types.inputs, CUDA_R_16BF);
  EXPECT_EQ(types.output, CUDA_R_16BF);
  EXPECT_EQ(types.outputSize, 2u);
  ASSERT_TRUE(mapMatmulTypes(AMP_ELEMENT_F16, AMP_ELEMENT_F16,
                             AMP_ELEMENT_F16, types, error));
  EXPECT_EQ(types.output, CUDA_R_16F);
  ASSERT_TRUE(mapMatmulTypes(AMP_ELEMENT_F32, AMP_ELEMENT_F32,
                             AMP_ELEMENT_F32, types, error));
  EXPECT_EQ(types.inputs, CUDA_R_32F);
  EXPECT_EQ(types.inputSize, 4u);
  // f32 accumulation and scaling whatever the storage types.
  EXPECT_EQ(kComputeType, CUBLAS_COMPUTE_32F);
  EXPECT_EQ(kScaleType, CUDA_R_32F);
}

TEST(MatmulTypes, RejectsUnsupportedCombinations) {
  MatmulTypes types;
  std::string error;
  EXPECT_FALSE(mapMatmulTypes(AMP_ELEMENT_F16, AMP_ELEMENT_BF16,
                              AMP_ELEMENT_F32, types, error));
  EXPECT_EQ(error, "ampMatmul: unsupported element types A f16, B bf16, C "
                   "f32 (A and B must match; C must be A's type or f32)");
  EXPECT_FALSE(mapMatmulTypes(AMP_ELEMENT_F32, AMP_ELEMENT_F32,
                              AMP_ELEMENT_F16, types, error));
  EXPECT_FALSE(mapMatmulTypes(AMP_ELEMENT_BF16, AMP_ELEMENT_BF16,
                              AMP_ELEMENT_F16, types, error));
  EXPECT_FALSE(mapMatmulTypes(7, AMP_ELEMENT_F16, AMP_ELEMENT_F16, types,
                              error));
  EXPECT_EQ(error, "ampMatmul: unknown element type code 7 (expected 0 = "
                   "f32, 1 = f16, 2 = bf16)");
}

// Row-major (M,K)x(K,N): the column-major identity C^T = B^T.A^T, no
// transposes, B first.
TEST(MatmulLayout, RowMajorSwapsOperands) {
  const int64_t M = 4, K = 6, N = 5;
  MatmulProblem p;
  std::string error;
  ASSERT_TRUE(selectMatmulLayout(matrix(M, K, K, 1), matrix(K, N, N, 1),
                                 matrix(M, N, N, 1), p, error))
      << error;
  EXPECT_TRUE(p.swapped);
  EXPECT_FALSE(p.empty);
  EXPECT_EQ(p.batchCount, 1);
  EXPECT_EQ(p.firstOp, CUBLAS_OP_N);
  EXPECT_EQ(p.secondOp, CUBLAS_OP_N);
  expectLayout(p.first, N, K, N);
  expectLayout(p.second, K, M, K);
  expectLayout(p.output, N, M, N);
}

// A transposed view of a row-major KxM buffer is column-major MxK.
TEST(MatmulLayout, TransposedAUsesTransB) {
  const int64_t M = 4, K = 6, N = 5;
  MatmulProblem p;
  std::string error;
  ASSERT_TRUE(selectMatmulLayout(matrix(M, K, 1, M), matrix(K, N, N, 1),
                                 matrix(M, N, N, 1), p, error))
      << error;
  EXPECT_TRUE(p.swapped);
  EXPECT_EQ(p.firstOp, CUBLAS_OP_N);
  EXPECT_EQ(p.secondOp, CUBLAS_OP_T);
  expectLayout(p.second, M, K, M);
}

TEST(MatmulLayout, TransposedBUsesTransA) {
  const int64_t M = 4, K = 6, N = 5;
  MatmulProblem p;
  std::string error;
  ASSERT_TRUE(selectMatmulLayout(matrix(M, K, K, 1), matrix(K, N, 1, K),
                                 matrix(M, N, N, 1), p, error))
      << error;
  EXPECT_EQ(p.firstOp, CUBLAS_OP_T);
  EXPECT_EQ(p.secondOp, CUBLAS_OP_N);
  expectLayout(p.first, K, N, K);
}

TEST(MatmulLayout, ColumnMajorOutputKeepsOperandOrder) {
  const int64_t M = 4, K = 6, N = 5;
  MatmulProblem p;
  std::string error;
  ASSERT_TRUE(selectMatmulLayout(matrix(M, K, K, 1), matrix(K, N, 1, K),
                                 matrix(M, N, 1, M), p, error))
      << error;
  EXPECT_FALSE(p.swapped);
  EXPECT_EQ(p.firstOp, CUBLAS_OP_T); // row-major A
  EXPECT_EQ(p.secondOp, CUBLAS_OP_N); // column-major B
  expectLayout(p.first, K, M, K);
  expectLayout(p.second, K, N, K);
  expectLayout(p.output, M, N, M);
}

TEST(MatmulLayout, PaddedLeadingDimension) {
  MatmulProblem p;
  std::string error;
  ASSERT_TRUE(selectMatmulLayout(matrix(4, 6, 8, 1), matrix(6, 5, 16, 1),
                                 matrix(4, 5, 32, 1), p, error))
      << error;
  EXPECT_EQ(p.second.ld, 8);
  EXPECT_EQ(p.first.ld, 16);
  EXPECT_EQ(p.output.ld, 32);
}

// The stride of a size-1 dimension is arbitrary (MLIR often leaves it so).
TEST(MatmulLayout, IgnoresStridesOfUnitDimensions) {
  MatmulProblem p;
  std::string error;
  ASSERT_TRUE(selectMatmulLayout(matrix(1, 6, 12345, 1), matrix(6, 5, 5, 1),
                                 matrix(1, 5, 0, 1), p, error))
      << error;
  expectLayout(p.second, 6, 1, 6);
  expectLayout(p.output, 5, 1, 5);
}

TEST(MatmulLayout, BatchedUsesStridedBatches) {
  const int64_t B = 3, M = 4, K = 6, N = 5;
  MatmulProblem p;
  std::string error;
  ASSERT_TRUE(selectMatmulLayout(batched(B, M * K, matrix(M, K, K, 1)),
                                 batched(B, K * N, matrix(K, N, N, 1)),
                                 batched(B, M * N, matrix(M, N, N, 1)), p,
                                 error))
      << error;
  EXPECT_EQ(p.batchCount, B);
  EXPECT_EQ(p.first.batchStride, K * N);
  EXPECT_EQ(p.second.batchStride, M * K);
  EXPECT_EQ(p.output.batchStride, M * N);
}

// A batch stride of 0 shares one matrix across the batch (read-only).
TEST(MatmulLayout, BroadcastInputAcrossBatch) {
  MatmulProblem p;
  std::string error;
  ASSERT_TRUE(selectMatmulLayout(batched(2, 24, matrix(4, 6, 6, 1)),
                                 batched(2, 0, matrix(6, 5, 5, 1)),
                                 batched(2, 20, matrix(4, 5, 5, 1)), p, error))
      << error;
  EXPECT_EQ(p.first.batchStride, 0);
}

TEST(MatmulLayout, RejectsOverlappingOutputBatches) {
  MatmulProblem p;
  std::string error;
  EXPECT_FALSE(selectMatmulLayout(batched(2, 24, matrix(4, 6, 6, 1)),
                                  batched(2, 30, matrix(6, 5, 5, 1)),
                                  batched(2, 10, matrix(4, 5, 5, 1)), p,
                                  error));
  EXPECT_EQ(error, "ampMatmul: the batches of C (2x4x5, strides [10, 5, 1]) "
                   "overlap");
}

TEST(MatmulLayout, RejectsNonContiguousOperand) {
  MatmulProblem p;
  std::string error;
  EXPECT_FALSE(selectMatmulLayout(matrix(4, 6, 12, 2), matrix(6, 5, 5, 1),
                                  matrix(4, 5, 5, 1), p, error));
  EXPECT_EQ(error, "ampMatmul: operand A (1x4x6, strides [0, 12, 2]) is not "
                   "contiguous in either inner dimension: cuBLASLt needs a "
                   "unit stride in one of them");
}

TEST(MatmulLayout, RejectsOverlappingRows) {
  MatmulProblem p;
  std::string error;
  EXPECT_FALSE(selectMatmulLayout(matrix(4, 6, 6, 1), matrix(6, 5, 0, 1),
                                  matrix(4, 5, 5, 1), p, error));
  EXPECT_EQ(error, "ampMatmul: operand B (1x6x5, strides [0, 0, 1]) has "
                   "overlapping rows or columns: its leading stride is "
                   "smaller than the other inner size");
}

TEST(MatmulLayout, RejectsNegativeStrides) {
  MatmulProblem p;
  std::string error;
  EXPECT_FALSE(selectMatmulLayout(matrix(4, 6, 6, 1), matrix(6, 5, 5, 1),
                                  matrix(4, 5, -5, 1), p, error));
  EXPECT_EQ(error, "ampMatmul: operand C (1x4x5, strides [0, -5, 1]) has a "
                   "negative stride");
}

TEST(MatmulLayout, RejectsMismatchedShapes) {
  MatmulProblem p;
  std::string error;
  EXPECT_FALSE(selectMatmulLayout(matrix(4, 6, 6, 1), matrix(7, 5, 5, 1),
                                  matrix(4, 5, 5, 1), p, error));
  EXPECT_EQ(error, "ampMatmul: shapes do not agree: A is 1x4x6, B is 1x7x5, "
                   "C is 1x4x5 (expected BxMxK, BxKxN, BxMxN)");
  EXPECT_FALSE(selectMatmulLayout(batched(2, 24, matrix(4, 6, 6, 1)),
                                  batched(3, 30, matrix(6, 5, 5, 1)),
                                  batched(2, 20, matrix(4, 5, 5, 1)), p,
                                  error));
}

TEST(MatmulLayout, EmptyOutputIsNothingToDo) {
  MatmulProblem p;
  std::string error;
  ASSERT_TRUE(selectMatmulLayout(matrix(0, 6, 6, 1), matrix(6, 5, 5, 1),
                                 matrix(0, 5, 5, 1), p, error));
  EXPECT_TRUE(p.empty);
}

TEST(MatmulLayout, RejectsEmptyReduction) {
  MatmulProblem p;
  std::string error;
  EXPECT_FALSE(selectMatmulLayout(matrix(4, 0, 0, 1), matrix(0, 5, 5, 1),
                                  matrix(4, 5, 5, 1), p, error));
  EXPECT_EQ(error, "ampMatmul: K = 0 (A is 1x4x0) is not supported");
}

} // namespace
