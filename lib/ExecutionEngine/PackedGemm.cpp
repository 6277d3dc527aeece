//===- PackedGemm.cpp - f32 GEMM that converts its inputs as it packs -----===//
//
// The loops of BLIS's GEMM (Van Zee and van de Geijn, "BLIS: A Framework
// for Rapidly Instantiating BLAS Functionality", 2015): B is copied in
// panels of kBlockK x kBlockN, A in blocks of kBlockM x kBlockK, each in
// the order the kernel reads them, and a 6 x 16 kernel of AVX2 FMAs
// multiplies a sliver of one by a sliver of the other into C. The copies
// convert bf16 and f16 elements to f32, eight at a time; transposed
// operands are copied through 8 x 8 transposes. On AMD Zen 3 (1 thread,
// the MLP's and GPT's shapes, bf16 inputs) this ran at 88-95 GFLOP/s,
// extending the inputs and calling cblas_sgemm at 85-89, cblas_sgemm on
// f32 inputs at 89-92 (bench/RESULTS.md, twentieth round).
//
//===----------------------------------------------------------------------===//

#include "PackedGemm.h"
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <omp.h>

namespace amp::cpu {
namespace {

/// The kernel's tile of C: kRows x kColumns, 12 accumulators of 8 lanes.
constexpr int64_t kRows = 6, kColumns = 16;
/// The blocks: a sliver of B (kBlockK x kColumns, 16 KB) stays in L1 while
/// the kernel runs down a block of A (kBlockM x kBlockK, 72 KB, in L2); a
/// panel of B (up to 3 MB) in L3 serves every block of A. Tuned on AMD
/// Zen 3 (32 KB L1, 512 KB L2 per core).
constexpr int64_t kBlockK = 256, kBlockM = 72, kBlockN = 3072;

/// Transposes the 8 x 8 matrix whose rows are `r`.
AMP_AVX2 inline void transpose8x8(__m256 r[8]) {
  __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]),
         t1 = _mm256_unpackhi_ps(r[0], r[1]),
         t2 = _mm256_unpacklo_ps(r[2], r[3]),
         t3 = _mm256_unpackhi_ps(r[2], r[3]),
         t4 = _mm256_unpacklo_ps(r[4], r[5]),
         t5 = _mm256_unpackhi_ps(r[4], r[5]),
         t6 = _mm256_unpacklo_ps(r[6], r[7]),
         t7 = _mm256_unpackhi_ps(r[6], r[7]);
  __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44),
         s1 = _mm256_shuffle_ps(t0, t2, 0xee),
         s2 = _mm256_shuffle_ps(t1, t3, 0x44),
         s3 = _mm256_shuffle_ps(t1, t3, 0xee),
         s4 = _mm256_shuffle_ps(t4, t6, 0x44),
         s5 = _mm256_shuffle_ps(t4, t6, 0xee),
         s6 = _mm256_shuffle_ps(t5, t7, 0x44),
         s7 = _mm256_shuffle_ps(t5, t7, 0xee);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/// Copies lines first .. first + lines - 1 of `source` (line l, step p at
/// l * lineStride + p * depthStride), steps firstStep .. firstStep + depth
/// - 1, as f32 to `packed`, step-major: packed[p * width + l], lines from
/// `lines` to `width` zero. The kernel reads A's blocks in slivers of width
/// kRows and B's in slivers of width kColumns this way. `source` has
/// `available` lines from `first` on.
template <ElementType type, int64_t width>
AMP_AVX2 void packSliver(const void *source, int64_t first, int64_t firstStep,
                         int64_t lineStride, int64_t depthStride, int64_t lines,
                         int64_t available, int64_t depth, float *packed) {
  int64_t origin = first * lineStride + firstStep * depthStride;
  int64_t p = 0;
  if (lines == width && lineStride == 1 && (width % 8 == 0 || available >= 8)) {
    // Each step's elements are consecutive. A sliver of 6 reads 8 lines
    // and writes them over the next step's first 2 (see below).
    for (; p < depth; ++p)
      for (int64_t l = 0; l < width; l += 8)
        _mm256_storeu_ps(packed + p * width + l,
                         load8<type>(source, origin + p * depthStride + l));
  } else if (lines == width && depthStride == 1) {
    // Each line's steps are consecutive: 8 x 8 transposes. A store of a
    // transposed row writes 8 - width lanes past its step when width is 6;
    // the next step overwrites them, the buffer has room after the last.
    for (; p + 8 <= depth; p += 8)
      for (int64_t l = 0; l < width; l += 8) {
        __m256 rows[8];
        for (int64_t r = 0; r < 8; ++r)
          rows[r] = l + r < width
                        ? load8<type>(source, origin + (l + r) * lineStride + p)
                        : _mm256_setzero_ps();
        transpose8x8(rows);
        for (int64_t q = 0; q < 8; ++q)
          _mm256_storeu_ps(packed + (p + q) * width + l, rows[q]);
      }
  }
  for (; p < depth; ++p) {
    for (int64_t l = 0; l < lines; ++l)
      packed[p * width + l] =
          load1<type>(source, origin + l * lineStride + p * depthStride);
    for (int64_t l = lines; l < width; ++l)
      packed[p * width + l] = 0;
  }
}

/// packSliver for the element type of `source`.
template <int64_t width>
void packSliverOf(const MatrixRef &source, int64_t first, int64_t firstStep,
                  int64_t lineStride, int64_t depthStride, int64_t lines,
                  int64_t available, int64_t depth, float *packed) {
  auto pack = [&](auto run) {
    run(source.data, first, firstStep, lineStride, depthStride, lines,
        available, depth, packed);
  };
  switch (source.type) {
  case ElementType::F32:
    return pack(packSliver<ElementType::F32, width>);
  case ElementType::F16:
    return pack(packSliver<ElementType::F16, width>);
  case ElementType::BF16:
    return pack(packSliver<ElementType::BF16, width>);
  }
}

/// C tile (rows x columns, at most kRows x kColumns) = the product of a
/// packed sliver of A and one of B, plus the tile unless `overwrite`.
AMP_AVX2 void multiplySlivers(int64_t depth, const float *a, const float *b,
                              float *c, int64_t ldc, int64_t rows,
                              int64_t columns, bool overwrite) {
  // The tile's rows are often 4 KB apart (1024 columns), in one set of L1:
  // fetch them while the products run, add them after.
  for (int64_t i = 0; i < rows; ++i) {
    _mm_prefetch(reinterpret_cast<const char *>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char *>(c + i * ldc + kColumns - 1),
                 _MM_HINT_T0);
  }
  Tile6x16 tile = zeroTile();
#pragma GCC unroll 4
  for (int64_t p = 0; p < depth; ++p, a += kRows, b += kColumns)
    multiplyAdd(tile, b, a, a + 1, a + 2, a + 3, a + 4, a + 5);
  static_assert(kRows == 6 && kColumns == 16, "a Tile6x16");
  alignas(32) float partial[kRows][kColumns];
  __m256 sums[kRows][2];
  tileRows(tile, sums);
  bool whole = rows == kRows && columns == kColumns;
  for (int64_t i = 0; i < kRows; ++i)
    for (int64_t h = 0; h < 2; ++h) {
      float *at = whole ? c + i * ldc + 8 * h : &partial[i][8 * h];
      _mm256_storeu_ps(at,
                       overwrite || !whole
                           ? sums[i][h]
                           : _mm256_add_ps(_mm256_loadu_ps(at), sums[i][h]));
    }
  if (!whole)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < columns; ++j)
        c[i * ldc + j] =
            overwrite ? partial[i][j] : c[i * ldc + j] + partial[i][j];
}

} // namespace

bool hasPackedGemm() { return hasAvx2(); }

bool packedGemm(int64_t m, int64_t n, int64_t k, const MatrixRef &a,
                const MatrixRef &b, float *c, int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0)
    return true;
  if (k <= 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i)
        std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return true;
  }
  // Per calling thread: calls from several threads may run at once.
  static thread_local Buffer panelOfB;
  int64_t blocksM = ceilDiv(m, kBlockM);
  int threads =
      double(m) * n * k < kMinParallelWork ? 1 : omp_get_max_threads();
  // Work items: a block of A by a share of the panel's slivers of B, a
  // share for each thread where there are slivers enough. Taken round-robin,
  // each thread's items are its share of every block, the same work for
  // each thread whatever the blocks' sizes (A's blocks are copied once per
  // share).
  float *panel = panelOfB.get(
      std::min(kBlockN, ceilDiv(n, kColumns) * kColumns) * kBlockK);
  bool failed = panel == nullptr;
  for (int64_t j0 = 0; j0 < n && !failed; j0 += kBlockN) {
    int64_t panelColumns = std::min(kBlockN, n - j0);
    int64_t slivers = ceilDiv(panelColumns, kColumns);
    int64_t shares = std::min<int64_t>(threads, slivers);
    for (int64_t p0 = 0; p0 < k; p0 += kBlockK) {
      int64_t depth = std::min(kBlockK, k - p0);
      bool overwrite = p0 == 0 && !accumulate;
#pragma omp parallel num_threads(threads)
      {
#pragma omp for schedule(static)
        for (int64_t s = 0; s < slivers; ++s)
          packSliverOf<kColumns>(
              b, j0 + s * kColumns, p0, b.columnStride, b.rowStride,
              std::min(kColumns, panelColumns - s * kColumns),
              n - j0 - s * kColumns, depth, panel + s * kColumns * depth);
        static thread_local Buffer blockOfA;
        float *block = blockOfA.get(kBlockM * kBlockK);
        if (!block) {
#pragma omp atomic write
          failed = true;
        }
#pragma omp for schedule(static, 1)
        for (int64_t item = 0; item < blocksM * shares; ++item) {
          if (!block)
            continue;
          int64_t i0 = item / shares * kBlockM, share = item % shares;
          int64_t blockRows = std::min(kBlockM, m - i0);
          for (int64_t r = 0; r < blockRows; r += kRows)
            packSliverOf<kRows>(a, i0 + r, p0, a.rowStride, a.columnStride,
                                std::min(kRows, blockRows - r), m - i0 - r,
                                depth, block + r * depth);
          int64_t firstSliver = slivers * share / shares,
                  endSliver = slivers * (share + 1) / shares;
          for (int64_t s = firstSliver; s < endSliver; ++s)
            for (int64_t r = 0; r < blockRows; r += kRows)
              multiplySlivers(
                  depth, block + r * depth, panel + s * kColumns * depth,
                  c + (i0 + r) * ldc + j0 + s * kColumns, ldc,
                  std::min(kRows, blockRows - r),
                  std::min(kColumns, panelColumns - s * kColumns), overwrite);
        }
      }
    }
  }
  return !failed;
}

} // namespace amp::cpu
