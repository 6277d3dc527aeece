//===- CpuRuntimeTest.cpp - The library calls against loops ---------------===//
//
// Every entry point of amp/ExecutionEngine/CpuRuntime.h against the loops
// of the linalg op it replaces, computed in f64 from the same inputs: for
// f32, f16 and bf16 inputs, transposed operands (strides), batches, shapes
// that are multiples of no tile, accumulation on and off. Tolerance: 1e-5
// relative to the sum of |products| (the error bound of an f32 sum of that
// many terms in another order). Run with DNNL_MAX_CPU_ISA=AVX2 by
// test/ExecutionEngine/cpu-runtime-isa.test, which checks the same results
// on a host without AVX-512 or AMX.
//
//===----------------------------------------------------------------------===//

#include "amp/ExecutionEngine/CpuRuntime.h"
#include "gtest/gtest.h"
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

enum class DType { F32, F16, BF16 };

/// Rounds `value` to `dtype` (to nearest even) and returns its bits and the
/// value it stands for.
uint16_t roundBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float fromBF16(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}

uint16_t roundF16(float value) {
  _Float16 half = static_cast<_Float16>(value);
  uint16_t bits;
  std::memcpy(&bits, &half, 2);
  return bits;
}

float fromF16(uint16_t bits) {
  _Float16 half;
  std::memcpy(&half, &bits, 2);
  return static_cast<float>(half);
}

/// A strided tensor of one of the three types, with its values as floats.
struct Tensor {
  DType dtype;
  std::vector<int64_t> sizes, strides;
  std::vector<float> f32;
  std::vector<uint16_t> bits;
  /// The descriptor: base, aligned, offset, sizes[rank], strides[rank].
  std::vector<int64_t> descriptor;
  AmpUnrankedMemRef memref;

  /// A tensor of `sizes` whose storage is laid out in `order` (a
  /// permutation of its dimensions, outermost first), so transposed views
  /// have transposed strides; with `padding`, its innermost runs are that
  /// many elements apart beyond their length (a slice of a larger tensor).
  Tensor(DType dtype, std::vector<int64_t> sizes, std::vector<int> order,
         std::mt19937 &random, int64_t padding = 0)
      : dtype(dtype), sizes(sizes), strides(sizes.size()) {
    int64_t stride = 1;
    for (int i = static_cast<int>(order.size()) - 1; i >= 0; --i) {
      strides[order[i]] = stride;
      stride *= sizes[order[i]] + (i + 1 == int(order.size()) ? padding : 0);
    }
    int64_t count = stride;
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    f32.resize(count);
    bits.resize(count);
    for (int64_t i = 0; i < count; ++i) {
      float value = uniform(random);
      if (dtype == DType::BF16) {
        bits[i] = roundBF16(value);
        value = fromBF16(bits[i]);
      } else if (dtype == DType::F16) {
        bits[i] = roundF16(value);
        value = fromF16(bits[i]);
      }
      f32[i] = value;
    }
    void *data = dtype == DType::F32 ? static_cast<void *>(f32.data())
                                     : static_cast<void *>(bits.data());
    descriptor = {reinterpret_cast<int64_t>(data),
                  reinterpret_cast<int64_t>(data), 0};
    descriptor.insert(descriptor.end(), sizes.begin(), sizes.end());
    descriptor.insert(descriptor.end(), strides.begin(), strides.end());
    memref = {static_cast<int64_t>(sizes.size()), descriptor.data()};
  }

  float at(std::initializer_list<int64_t> index) const {
    int64_t offset = 0, d = 0;
    for (int64_t i : index)
      offset += i * strides[d++];
    return f32[offset];
  }
  float &output(std::initializer_list<int64_t> index) {
    int64_t offset = 0, d = 0;
    for (int64_t i : index)
      offset += i * strides[d++];
    return f32[offset];
  }
};

using Matmul = void (*)(AmpUnrankedMemRef *, AmpUnrankedMemRef *,
                        AmpUnrankedMemRef *, int32_t);

Matmul getMatmul(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return _mlir_ciface_ampCpuMatmulF32;
  case DType::F16:
    return _mlir_ciface_ampCpuMatmulF16;
  case DType::BF16:
    return _mlir_ciface_ampCpuMatmulBF16;
  }
  return nullptr;
}

struct MatmulCase {
  DType dtype;
  int64_t batch, m, n, k;
  bool transposeA, transposeB, transposeC, accumulate;
  int64_t padding = 0;
};

std::string describe(const MatmulCase &c) {
  const char *types[] = {"f32", "f16", "bf16"};
  return std::string(types[static_cast<int>(c.dtype)]) + " " +
         std::to_string(c.batch) + "x" + std::to_string(c.m) + "x" +
         std::to_string(c.n) + "x" + std::to_string(c.k) +
         (c.transposeA ? " A^T" : "") + (c.transposeB ? " B^T" : "") +
         (c.transposeC ? " C^T" : "") + (c.accumulate ? " +=" : "") +
         (c.padding ? " padded" : "");
}

void checkMatmul(const MatmulCase &c) {
  std::mt19937 random(7);
  bool batched = c.batch > 0;
  auto dims = [&](int64_t rows, int64_t columns) {
    return batched ? std::vector<int64_t>{c.batch, rows, columns}
                   : std::vector<int64_t>{rows, columns};
  };
  auto order = [&](bool transposed) {
    std::vector<int> o = batched ? std::vector<int>{0, 1, 2}
                                 : std::vector<int>{0, 1};
    if (transposed)
      std::swap(o[o.size() - 1], o[o.size() - 2]);
    return o;
  };
  Tensor a(c.dtype, dims(c.m, c.k), order(c.transposeA), random, c.padding);
  Tensor b(c.dtype, dims(c.k, c.n), order(c.transposeB), random, c.padding);
  Tensor out(DType::F32, dims(c.m, c.n), order(c.transposeC), random,
             c.padding);
  std::vector<float> initial = out.f32;
  getMatmul(c.dtype)(&a.memref, &b.memref, &out.memref, c.accumulate);
  int64_t batches = batched ? c.batch : 1;
  for (int64_t p = 0; p < batches; ++p)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0, magnitude = 0;
        for (int64_t l = 0; l < c.k; ++l) {
          double product = batched ? double(a.at({p, i, l})) * b.at({p, l, j})
                                   : double(a.at({i, l})) * b.at({l, j});
          sum += product;
          magnitude += std::fabs(product);
        }
        int64_t offset = (batched ? p * out.strides[0] : 0) +
                         i * out.strides[batched ? 1 : 0] +
                         j * out.strides[batched ? 2 : 1];
        if (c.accumulate) {
          sum += initial[offset];
          magnitude += std::fabs(initial[offset]);
        }
        ASSERT_NEAR(out.f32[offset], sum, 1e-5 * magnitude + 1e-30)
            << describe(c) << " at " << p << "," << i << "," << j;
      }
}

TEST(CpuRuntime, MatmulsMatchTheLoops) {
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (auto [batch, m, n, k] : {std::tuple<int64_t, int64_t, int64_t,
                                             int64_t>{0, 1, 1, 1},
                                  {0, 7, 13, 5},
                                  {0, 64, 64, 64},
                                  {0, 33, 65, 17},
                                  {3, 5, 9, 11}})
      for (bool transposeA : {false, true})
        for (bool transposeB : {false, true})
          for (bool accumulate : {false, true})
            for (int64_t padding : {0, 3})
              checkMatmul({dtype, batch, m, n, k, transposeA, transposeB,
                           /*transposeC=*/transposeA && transposeB, accumulate,
                           padding});
}

TEST(CpuRuntime, PoolsBuffersBySizeAndAlignment) {
  void *a = _mlir_memref_to_llvm_aligned_alloc(128, 1000);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 128, 0u);
  std::memset(a, 1, 1000);
  _mlir_memref_to_llvm_free(a);
  // The same size and alignment again: the kept buffer.
  void *b = _mlir_memref_to_llvm_aligned_alloc(128, 1000);
  EXPECT_EQ(a, b);
  void *c = _mlir_memref_to_llvm_alloc(1000);
  EXPECT_NE(c, b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c) % alignof(std::max_align_t), 0u);
  _mlir_memref_to_llvm_free(b);
  _mlir_memref_to_llvm_free(c);
  _mlir_memref_to_llvm_free(nullptr);
}

using Conv = void (*)(AmpUnrankedMemRef *, AmpUnrankedMemRef *,
                      AmpUnrankedMemRef *, int64_t, int64_t, int64_t, int64_t,
                      int32_t);

TEST(CpuRuntime, ConvolutionsMatchTheLoops) {
  Conv convs[] = {_mlir_ciface_ampCpuConv2DF32, _mlir_ciface_ampCpuConv2DF16,
                  _mlir_ciface_ampCpuConv2DBF16};
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (auto [stride, dilation, kernel] :
         {std::tuple<int64_t, int64_t, int64_t>{1, 1, 3}, {2, 1, 3},
          {1, 2, 3}, {2, 1, 1}})
      for (bool accumulate : {false, true}) {
        std::mt19937 random(3);
        int64_t n = 2, c = 3, f = 5, h = 9, w = 7;
        int64_t oh = (h - dilation * (kernel - 1) - 1) / stride + 1;
        int64_t ow = (w - dilation * (kernel - 1) - 1) / stride + 1;
        Tensor input(dtype, {n, c, h, w}, {0, 1, 2, 3}, random);
        Tensor filter(dtype, {f, c, kernel, kernel}, {0, 1, 2, 3}, random);
        Tensor output(DType::F32, {n, f, oh, ow}, {0, 1, 2, 3}, random);
        std::vector<float> initial = output.f32;
        convs[static_cast<int>(dtype)](&input.memref, &filter.memref,
                                       &output.memref, stride, stride,
                                       dilation, dilation, accumulate);
        for (int64_t b = 0; b < n; ++b)
          for (int64_t o = 0; o < f; ++o)
            for (int64_t y = 0; y < oh; ++y)
              for (int64_t x = 0; x < ow; ++x) {
                double sum = 0, magnitude = 0;
                for (int64_t i = 0; i < c; ++i)
                  for (int64_t ky = 0; ky < kernel; ++ky)
                    for (int64_t kx = 0; kx < kernel; ++kx) {
                      double product =
                          double(input.at({b, i, y * stride + ky * dilation,
                                           x * stride + kx * dilation})) *
                          filter.at({o, i, ky, kx});
                      sum += product;
                      magnitude += std::fabs(product);
                    }
                int64_t offset = ((b * f + o) * oh + y) * ow + x;
                if (accumulate) {
                  sum += initial[offset];
                  magnitude += std::fabs(initial[offset]);
                }
                ASSERT_NEAR(output.f32[offset], sum, 1e-5 * magnitude + 1e-30)
                    << "stride " << stride << " dilation " << dilation
                    << " kernel " << kernel;
              }
      }
}

TEST(CpuRuntime, SaysHowLowPrecisionInputsRun) {
  for (auto [isF16, variable] : {std::pair{1, "AMP_EXPECT_F16_PATH"},
                                 std::pair{0, "AMP_EXPECT_BF16_PATH"}}) {
    std::string path = ampCpuLowPrecisionPath(isF16);
    EXPECT_TRUE(path == "native" || path == "f32") << path;
    // Set by the ISA-capped lit test, which knows which one it must be.
    if (const char *expected = std::getenv(variable)) {
      EXPECT_EQ(path, expected) << variable;
    }
  }
}

} // namespace
