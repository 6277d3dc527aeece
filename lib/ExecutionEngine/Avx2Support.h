//===- Avx2Support.h - What the runtime's own AVX2 kernels share ---------===//
//
// For the runtime's own kernels (PackedGemm.cpp, DirectConv.cpp) and its
// rounding loops: loads that extend bf16 or f16 elements to f32 exactly,
// bf16 rounding to nearest even that keeps NaNs NaNs (as the scalar
// routines of CpuRuntimeWrappers.cpp round), the 6 x 16 multiply-add step,
// their buffers, and the sizes and threshold both kernels use.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_EXECUTIONENGINE_AVX2SUPPORT_H
#define AMP_LIB_EXECUTIONENGINE_AVX2SUPPORT_H

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <immintrin.h>
#include <memory>

#define AMP_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace amp::cpu {

enum class ElementType { F32, F16, BF16 };

/// The size of a `type` element in bytes.
inline int64_t sizeOf(ElementType type) {
  return type == ElementType::F32 ? 4 : 2;
}

/// x / y rounded up, for x >= 0 and y > 0.
inline int64_t ceilDiv(int64_t x, int64_t y) { return (x + y - 1) / y; }

/// The kernels' work (multiply-adds) below which they run on one thread.
constexpr int64_t kMinParallelWork = int64_t(64) * 64 * 64;

/// Whether this host runs AMP_AVX2 code: AVX2, FMA and F16C.
inline bool hasAvx2() {
  static const bool supported = __builtin_cpu_supports("avx2") &&
                                __builtin_cpu_supports("fma") &&
                                __builtin_cpu_supports("f16c");
  return supported;
}

/// Element `at` of an array of `type` as f32.
template <ElementType type>
AMP_AVX2 inline float load1(const void *data, int64_t at) {
  auto *bits = static_cast<const uint16_t *>(data);
  if constexpr (type == ElementType::F32)
    return static_cast<const float *>(data)[at];
  else if constexpr (type == ElementType::F16)
    return _cvtsh_ss(bits[at]);
  uint32_t word = uint32_t(bits[at]) << 16;
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}

/// Elements at .. at + 7 of an array of `type` as f32.
template <ElementType type>
AMP_AVX2 inline __m256 load8(const void *data, int64_t at) {
  auto *bits = reinterpret_cast<const __m128i *>(
      static_cast<const uint16_t *>(data) + at);
  if constexpr (type == ElementType::F32)
    return _mm256_loadu_ps(static_cast<const float *>(data) + at);
  else if constexpr (type == ElementType::F16)
    return _mm256_cvtph_ps(_mm_loadu_si128(bits));
  return _mm256_castsi256_ps(
      _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(bits)), 16));
}

/// Eight f32 numbers rounded to bf16 to nearest even, NaNs kept quiet NaNs,
/// in the low halves of their words.
AMP_AVX2 inline __m256i roundToBF16(__m256 value) {
  const __m256i half = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1),
                quiet = _mm256_set1_epi32(0x40);
  __m256i word = _mm256_castps_si256(value);
  __m256i upper = _mm256_srli_epi32(word, 16);
  __m256i rounded = _mm256_srli_epi32(
      _mm256_add_epi32(word,
                       _mm256_add_epi32(half, _mm256_and_si256(upper, one))),
      16);
  __m256i isNaN =
      _mm256_castps_si256(_mm256_cmp_ps(value, value, _CMP_UNORD_Q));
  return _mm256_blendv_epi8(rounded, _mm256_or_si256(upper, quiet), isNaN);
}

/// Sixteen f32 numbers, `low` then `high`, rounded to bf16 in order.
AMP_AVX2 inline __m256i roundToBF16(__m256 low, __m256 high) {
  // Packing works within 128-bit lanes: low's and high's first four words,
  // then their last four; quadwords 0, 2, 1, 3 put them in order.
  return _mm256_permute4x64_epi64(
      _mm256_packus_epi32(roundToBF16(low), roundToBF16(high)), 0xd8);
}

/// The f32 sums of a 6 x 16 tile, the runtime's kernels' (PackedGemm.cpp,
/// DirectConv.cpp): twelve 8-lane accumulators in named members, which GCC
/// keeps in registers (an array of them it stored to the stack at every
/// step: 31 instead of 90 GFLOP/s).
struct Tile6x16 {
  __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
};

/// A tile of zeros.
AMP_AVX2 __attribute__((always_inline)) inline Tile6x16 zeroTile() {
  __m256 zero = _mm256_setzero_ps();
  return {zero, zero, zero, zero, zero, zero,
          zero, zero, zero, zero, zero, zero};
}

/// tile[i][j] += *a_i * b[j]: one step of the kernels, the 16 floats at `b`
/// (32-byte aligned) by the float at each of `a0` .. `a5`.
AMP_AVX2 __attribute__((always_inline)) inline void
multiplyAdd(Tile6x16 &tile, const float *b, const float *a0, const float *a1,
            const float *a2, const float *a3, const float *a4,
            const float *a5) {
  __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8), ai;
  ai = _mm256_broadcast_ss(a0);
  tile.c00 = _mm256_fmadd_ps(ai, b0, tile.c00);
  tile.c01 = _mm256_fmadd_ps(ai, b1, tile.c01);
  ai = _mm256_broadcast_ss(a1);
  tile.c10 = _mm256_fmadd_ps(ai, b0, tile.c10);
  tile.c11 = _mm256_fmadd_ps(ai, b1, tile.c11);
  ai = _mm256_broadcast_ss(a2);
  tile.c20 = _mm256_fmadd_ps(ai, b0, tile.c20);
  tile.c21 = _mm256_fmadd_ps(ai, b1, tile.c21);
  ai = _mm256_broadcast_ss(a3);
  tile.c30 = _mm256_fmadd_ps(ai, b0, tile.c30);
  tile.c31 = _mm256_fmadd_ps(ai, b1, tile.c31);
  ai = _mm256_broadcast_ss(a4);
  tile.c40 = _mm256_fmadd_ps(ai, b0, tile.c40);
  tile.c41 = _mm256_fmadd_ps(ai, b1, tile.c41);
  ai = _mm256_broadcast_ss(a5);
  tile.c50 = _mm256_fmadd_ps(ai, b0, tile.c50);
  tile.c51 = _mm256_fmadd_ps(ai, b1, tile.c51);
}

/// The rows of `tile`: rows[i][h] is row i, columns 8 h .. 8 h + 7. Made
/// once before a loop over them (made per element, GCC stores all twelve
/// again each time: 5% of the packed GEMM's rate).
AMP_AVX2 __attribute__((always_inline)) inline void
tileRows(const Tile6x16 &tile, __m256 rows[6][2]) {
  rows[0][0] = tile.c00, rows[0][1] = tile.c01;
  rows[1][0] = tile.c10, rows[1][1] = tile.c11;
  rows[2][0] = tile.c20, rows[2][1] = tile.c21;
  rows[3][0] = tile.c30, rows[3][1] = tile.c31;
  rows[4][0] = tile.c40, rows[4][1] = tile.c41;
  rows[5][0] = tile.c50, rows[5][1] = tile.c51;
}

/// f32 storage, 64-byte aligned, that only grows (null where it cannot).
class Buffer {
public:
  float *get(int64_t count) {
    if (count < 0 || uint64_t(count) > SIZE_MAX / sizeof(float) - 16)
      return nullptr;
    if (count > capacity) {
      // Room for 8-lane stores that start at the last element.
      size_t bytes = (count + 8) * sizeof(float);
      auto *grown =
          static_cast<float *>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
      if (!grown)
        return nullptr;
      storage.reset(grown);
      capacity = count;
    }
    return storage.get();
  }

private:
  struct Free {
    void operator()(float *data) const { std::free(data); }
  };
  std::unique_ptr<float, Free> storage;
  int64_t capacity = 0;
};

} // namespace amp::cpu

#endif // AMP_LIB_EXECUTIONENGINE_AVX2SUPPORT_H
