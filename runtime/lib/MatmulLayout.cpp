//===- MatmulLayout.cpp - From memref descriptors to a cuBLASLt problem ----===//

#include "MatmulLayout.h"

#include "amp/Runtime/AmpRuntime.h"

#include <algorithm>
#include <climits>

namespace amp::runtime {

namespace {

/// The leading part of every ranked memref descriptor; sizes[rank] and
/// strides[rank] follow `offset`.
struct DescriptorHeader {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizesAndStrides[1];
};

/// An operand's memory read as a column-major matrix: the logical matrix
/// itself, or (row-major memory) its transpose.
struct StoredMatrix {
  bool transposed = false;
  MatrixLayout layout;
};

const char *typeName(int32_t code) {
  switch (code) {
  case AMP_ELEMENT_F32:
    return "f32";
  case AMP_ELEMENT_F16:
    return "f16";
  case AMP_ELEMENT_BF16:
    return "bf16";
  default:
    return nullptr;
  }
}

std::string shapeString(const MemRefView &v) {
  return std::to_string(v.batch) + "x" + std::to_string(v.rows) + "x" +
         std::to_string(v.cols);
}

std::string stridesString(const MemRefView &v) {
  return "[" + std::to_string(v.batchStride) + ", " +
         std::to_string(v.rowStride) + ", " + std::to_string(v.colStride) +
         "]";
}

bool describeStorage(const MemRefView &v, const char *name, StoredMatrix &out,
                     std::string &error) {
  std::string what = std::string("ampMatmul: operand ") + name + " (" +
                     shapeString(v) + ", strides " + stridesString(v) + ") ";
  if (v.batchStride < 0 || v.rowStride < 0 || v.colStride < 0) {
    error = what + "has a negative stride";
    return false;
  }
  // A stride along a dimension of size 1 is never used, so it does not
  // decide the layout; the leading dimension then only has to be valid.
  int64_t minRowLd = std::max<int64_t>(v.cols, 1);
  int64_t minColLd = std::max<int64_t>(v.rows, 1);
  int64_t rowLd = v.rows <= 1 ? minRowLd : v.rowStride;
  int64_t colLd = v.cols <= 1 ? minColLd : v.colStride;
  bool rowUnit = v.colStride == 1 || v.cols <= 1;
  bool colUnit = v.rowStride == 1 || v.rows <= 1;
  if (rowUnit && rowLd >= minRowLd) {
    out.transposed = true;
    out.layout.rows = static_cast<uint64_t>(v.cols);
    out.layout.cols = static_cast<uint64_t>(v.rows);
    out.layout.ld = rowLd;
  } else if (colUnit && colLd >= minColLd) {
    out.transposed = false;
    out.layout.rows = static_cast<uint64_t>(v.rows);
    out.layout.cols = static_cast<uint64_t>(v.cols);
    out.layout.ld = colLd;
  } else if (!rowUnit && !colUnit) {
    error = what + "is not contiguous in either inner dimension: cuBLASLt "
                   "needs a unit stride in one of them";
    return false;
  } else {
    error = what + "has overlapping rows or columns: its leading stride is "
                   "smaller than the other inner size";
    return false;
  }
  out.layout.batchStride = v.batch > 1 ? v.batchStride : 0;
  return true;
}

cublasOperation_t operationFor(const StoredMatrix &stored,
                               bool wantTransposed) {
  return stored.transposed == wantTransposed ? CUBLAS_OP_N : CUBLAS_OP_T;
}

} // namespace

MemRefView readMemRefDescriptor(int64_t rank, const void *descriptor,
                                size_t elementSize) {
  const auto *header = static_cast<const DescriptorHeader *>(descriptor);
  const int64_t *sizes = header->sizesAndStrides;
  const int64_t *strides = sizes + rank;
  MemRefView view;
  view.data = static_cast<const char *>(header->aligned) +
              header->offset * static_cast<int64_t>(elementSize);
  int64_t inner = rank - 2;
  if (rank == 3) {
    view.batch = sizes[0];
    view.batchStride = strides[0];
  }
  view.rows = sizes[inner];
  view.cols = sizes[inner + 1];
  view.rowStride = strides[inner];
  view.colStride = strides[inner + 1];
  return view;
}

bool mapMatmulTypes(int32_t aType, int32_t bType, int32_t cType,
                    MatmulTypes &types, std::string &error) {
  for (int32_t code : {aType, bType, cType}) {
    if (!typeName(code)) {
      error = "ampMatmul: unknown element type code " + std::to_string(code) +
              " (expected 0 = f32, 1 = f16, 2 = bf16)";
      return false;
    }
  }
  auto cudaType = [](int32_t code) {
    return code == AMP_ELEMENT_F16    ? CUDA_R_16F
           : code == AMP_ELEMENT_BF16 ? CUDA_R_16BF
                                      : CUDA_R_32F;
  };
  // With f32 compute cuBLASLt takes equal input types and an output of the
  // input type or f32.
  if (aType != bType || (cType != aType && cType != AMP_ELEMENT_F32)) {
    error = std::string("ampMatmul: unsupported element types A ") +
            typeName(aType) + ", B " + typeName(bType) + ", C " +
            typeName(cType) +
            " (A and B must match; C must be A's type or f32)";
    return false;
  }
  types.inputs = cudaType(aType);
  types.output = cudaType(cType);
  types.inputSize = aType == AMP_ELEMENT_F32 ? 4 : 2;
  types.outputSize = cType == AMP_ELEMENT_F32 ? 4 : 2;
  return true;
}

bool selectMatmulLayout(const MemRefView &a, const MemRefView &b,
                        const MemRefView &c, MatmulProblem &problem,
                        std::string &error) {
  if (a.cols != b.rows || a.rows != c.rows || b.cols != c.cols ||
      a.batch != b.batch || a.batch != c.batch) {
    error = "ampMatmul: shapes do not agree: A is " + shapeString(a) +
            ", B is " + shapeString(b) + ", C is " + shapeString(c) +
            " (expected BxMxK, BxKxN, BxMxN)";
    return false;
  }
  problem = MatmulProblem();
  problem.batchCount = a.batch;
  if (a.batch == 0 || a.rows == 0 || b.cols == 0) {
    problem.empty = true;
    return true;
  }
  if (a.cols == 0) {
    error = "ampMatmul: K = 0 (A is " + shapeString(a) +
            ") is not supported";
    return false;
  }
  if (a.batch > INT32_MAX) {
    error = "ampMatmul: batch " + std::to_string(a.batch) +
            " exceeds cuBLASLt's int32 batch count";
    return false;
  }
  StoredMatrix sa, sb, sc;
  if (!describeStorage(a, "A", sa, error) ||
      !describeStorage(b, "B", sb, error) ||
      !describeStorage(c, "C", sc, error))
    return false;
  // cuBLASLt writes D untransposed, so the output's storage decides the
  // problem: row-major C means D = C^T = B^T.A^T.
  problem.swapped = sc.transposed;
  const StoredMatrix &first = problem.swapped ? sb : sa;
  const StoredMatrix &second = problem.swapped ? sa : sb;
  problem.firstOp = operationFor(first, problem.swapped);
  problem.secondOp = operationFor(second, problem.swapped);
  problem.first = first.layout;
  problem.second = second.layout;
  problem.output = sc.layout;
  if (c.batch > 1) {
    const MatrixLayout &d = sc.layout;
    int64_t span = static_cast<int64_t>(d.cols - 1) * d.ld +
                   static_cast<int64_t>(d.rows);
    if (d.batchStride < span) {
      error = "ampMatmul: the batches of C (" + shapeString(c) +
              ", strides " + stridesString(c) + ") overlap";
      return false;
    }
  }
  return true;
}

} // namespace amp::runtime
