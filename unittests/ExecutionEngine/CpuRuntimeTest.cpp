//===- CpuRuntimeTest.cpp - The library calls against loops ---------------===//
//
// Every entry point of amp/ExecutionEngine/CpuRuntime.h against the loops
// of the linalg op it replaces, computed in f64 from the same inputs: for
// f32, f16 and bf16 inputs, transposed operands (strides), batches, shapes
// that are multiples of no tile, accumulation on and off. Tolerance: 1e-5
// relative to the sum of |products| (the error bound of an f32 sum of that
// many terms in another order). Run with DNNL_MAX_CPU_ISA=AVX2 by
// test/ExecutionEngine/cpu-runtime-isa.test, which checks the same results
// on a host without AVX-512 or AMX, with the matrix products in OpenBLAS
// and in oneDNN (AMP_CPU_GEMM).
//
//===----------------------------------------------------------------------===//

#include "amp/ExecutionEngine/CpuRuntime.h"
#include "gtest/gtest.h"
#include <algorithm>
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
  // A product that does not accumulate must not read its output (the
  // compiled step leaves it unfilled).
  if (!c.accumulate)
    std::fill(out.f32.begin(), out.f32.end(), NAN);
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
  // At 3 threads the libraries split the products larger than 64^3.
  for (int threads : {1, 3}) {
    ampCpuSetNumThreads(threads);
    for (DType dtype : {DType::F32, DType::F16, DType::BF16})
      for (auto [batch, m, n, k] :
           {std::tuple<int64_t, int64_t, int64_t, int64_t>{0, 1, 1, 1},
            {0, 7, 13, 5},
            {0, 64, 64, 64},
            {0, 33, 65, 17},
            {0, 1, 13, 5},
            {0, 7, 1, 5},
            {0, 96, 80, 72},
            // Wider than a panel of packedGemm's B (3072 columns), on one
            // thread and, above 64^3 multiply-adds, on all.
            {0, 7, 3100, 9},
            {0, 40, 3100, 70},
            {3, 5, 9, 11},
            {2, 70, 70, 70},
            // Above 256^3 multiply-adds a matrix: OpenBLAS's batch loop
            // where it is the host's library.
            {2, 64, 64, 4097}})
        for (bool transposeA : {false, true})
          for (bool transposeB : {false, true})
            for (bool accumulate : {false, true})
              for (int64_t padding : {0, 3})
                checkMatmul({dtype, batch, m, n, k, transposeA, transposeB,
                             /*transposeC=*/transposeA && transposeB,
                             accumulate, padding});
  }
  ampCpuSetNumThreads(1);
}

/// The entry points with an epilogue: C = A.B + bias into f32, and C = A.B
/// rounded to the inputs' type, plain and batched, C row- and column-major,
/// for shapes that are multiples of no tile, against the f64 loops. A rounded
/// output is within half an ulp of its type of the f32 product (both ulps at
/// most 2^-7 relative).
TEST(CpuRuntime, MatmulEpiloguesMatchTheLoops) {
  using Bias = void (*)(AmpUnrankedMemRef *, AmpUnrankedMemRef *,
                        AmpUnrankedMemRef *, AmpUnrankedMemRef *);
  using LowOutput =
      void (*)(AmpUnrankedMemRef *, AmpUnrankedMemRef *, AmpUnrankedMemRef *);
  struct Entries {
    DType dtype;
    Bias bias;
    LowOutput lowOutput;
    float halfUlp;
  };
  const Entries entries[] = {
      {DType::F32, _mlir_ciface_ampCpuMatmulF32Bias, nullptr, 0},
      {DType::F16, _mlir_ciface_ampCpuMatmulF16Bias,
       _mlir_ciface_ampCpuMatmulF16ToF16, 0x1p-11f},
      {DType::BF16, _mlir_ciface_ampCpuMatmulBF16Bias,
       _mlir_ciface_ampCpuMatmulBF16ToBF16, 0x1p-8f}};
  std::mt19937 random(11);
  for (const Entries &entry : entries)
    for (auto [batch, m, n, k] :
         {std::tuple<int64_t, int64_t, int64_t, int64_t>{0, 7, 13, 5},
          {0, 33, 65, 17},
          {3, 5, 9, 11},
          {2, 70, 70, 70}})
      for (bool lowOutput : {false, true})
        for (bool transposeC : {false, true}) {
          if (lowOutput && !entry.lowOutput)
            continue;
          bool batched = batch > 0;
          auto dims = [&](int64_t rows, int64_t columns) {
            return batched ? std::vector<int64_t>{batch, rows, columns}
                           : std::vector<int64_t>{rows, columns};
          };
          std::vector<int> order =
              batched ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 1};
          Tensor a(entry.dtype, dims(m, k), order, random);
          Tensor b(entry.dtype, dims(k, n), order, random);
          Tensor bias(DType::F32, {n}, {0}, random);
          std::vector<int> orderC = order;
          if (transposeC)
            std::swap(orderC[orderC.size() - 1], orderC[orderC.size() - 2]);
          Tensor c(lowOutput ? entry.dtype : DType::F32, dims(m, n), orderC,
                   random);
          // What the output held before is never read (NaNs there would show).
          std::fill(c.f32.begin(), c.f32.end(), NAN);
          std::fill(c.bits.begin(), c.bits.end(), 0x7fff);
          if (lowOutput)
            entry.lowOutput(&a.memref, &b.memref, &c.memref);
          else
            entry.bias(&a.memref, &b.memref, &c.memref, &bias.memref);
          int64_t batches = batched ? batch : 1;
          for (int64_t p = 0; p < batches; ++p)
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                double sum = lowOutput ? 0 : bias.f32[j],
                       magnitude = std::fabs(sum);
                for (int64_t l = 0; l < k; ++l) {
                  double product =
                      batched ? double(a.at({p, i, l})) * b.at({p, l, j})
                              : double(a.at({i, l})) * b.at({l, j});
                  sum += product;
                  magnitude += std::fabs(product);
                }
                int64_t offset = p * (batched ? c.strides[0] : 0) +
                                 i * c.strides[batched ? 1 : 0] +
                                 j * c.strides[batched ? 2 : 1];
                float value = !lowOutput ? c.f32[offset]
                              : entry.dtype == DType::BF16
                                  ? fromBF16(c.bits[offset])
                                  : fromF16(c.bits[offset]);
                ASSERT_NEAR(value, sum,
                            entry.halfUlp * std::fabs(sum) + 1e-5 * magnitude +
                                1e-30)
                    << describe({entry.dtype, batch, m, n, k, false, false,
                                 transposeC, false})
                    << (lowOutput ? " low output" : " + bias") << " at " << p
                    << "," << i << "," << j;
              }
        }
  EXPECT_EQ(ampCpuTakeError(), nullptr);
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
                      int64_t, int64_t, int64_t, int64_t, int32_t);

/// One convolution problem: N x C x H x W images by F x C x K x K filters
/// with a stride, dilation and padding (top/left; bottom/right follow from
/// OH and OW) of the forward convolution.
struct ConvCase {
  int64_t stride, dilation, kernel, pad;
  int64_t n = 2, c = 3, f = 5, h = 9, w = 7;
  int64_t oh() const { return outputSize(h); }
  int64_t ow() const { return outputSize(w); }
  int64_t outputSize(int64_t size) const {
    return (size + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
  }
  /// The padding after the image that makes the output size exact.
  int64_t padAfter(int64_t size) const {
    return (outputSize(size) - 1) * stride + dilation * (kernel - 1) + 1 -
           size - pad;
  }
  /// The image row (or column) that output `o` reads at tap `k`, or -1 in
  /// the padding.
  int64_t at(int64_t o, int64_t k, int64_t size) const {
    int64_t i = o * stride + k * dilation - pad;
    return i >= 0 && i < size ? i : -1;
  }
};

const ConvCase kConvCases[] = {{1, 1, 3, 0}, {2, 1, 3, 0}, {1, 2, 3, 0},
                               {2, 1, 1, 0}, {1, 1, 3, 1}, {2, 1, 3, 1},
                               {2, 2, 3, 2}};

/// Checks `value` against an f64 sum whose |products| add up to `magnitude`,
/// plus the output's initial value when accumulating.
void expectSum(float value, double sum, double magnitude, float initial,
               bool accumulate, const char *what, const ConvCase &conv) {
  if (accumulate) {
    sum += initial;
    magnitude += std::fabs(initial);
  }
  ASSERT_NEAR(value, sum, 1e-5 * magnitude + 1e-30)
      << what << ": stride " << conv.stride << " dilation " << conv.dilation
      << " kernel " << conv.kernel << " pad " << conv.pad;
}

/// Checks `output`, the forward convolution `conv` of `input` by `filter`
/// (added to `initial`, its elements before, when `accumulate`), against
/// f64 loops.
void checkForward(const ConvCase &conv, const Tensor &input,
                  const Tensor &filter, const Tensor &output,
                  const std::vector<float> &initial, bool accumulate) {
  for (int64_t b = 0; b < conv.n; ++b)
    for (int64_t o = 0; o < conv.f; ++o)
      for (int64_t y = 0; y < conv.oh(); ++y)
        for (int64_t x = 0; x < conv.ow(); ++x) {
          double sum = 0, magnitude = 0;
          for (int64_t i = 0; i < conv.c; ++i)
            for (int64_t ky = 0; ky < conv.kernel; ++ky)
              for (int64_t kx = 0; kx < conv.kernel; ++kx) {
                int64_t iy = conv.at(y, ky, conv.h),
                        ix = conv.at(x, kx, conv.w);
                if (iy < 0 || ix < 0)
                  continue;
                double product = double(input.at({b, i, iy, ix})) *
                                 filter.at({o, i, ky, kx});
                sum += product;
                magnitude += std::fabs(product);
              }
          int64_t offset = b * output.strides[0] + o * output.strides[1] +
                           y * output.strides[2] + x * output.strides[3];
          expectSum(output.f32[offset], sum, magnitude, initial[offset],
                    accumulate, "forward", conv);
        }
}

/// The layouts of the input and output images of the convolution tests:
/// NCHW; channels-last with more channels, which the runtime's direct
/// convolutions take where oneDNN would extend f16 and bf16 inputs (filters
/// past one block of its 16, channels past a vector of 8); and an NCHW
/// input with a channels-last output, which they take too.
struct ImageLayout {
  std::vector<int> input, output;
  int64_t channels, filters;
};
const ImageLayout kImageLayouts[] = {{{0, 1, 2, 3}, {0, 1, 2, 3}, 3, 5},
                                     {{0, 2, 3, 1}, {0, 2, 3, 1}, 9, 20},
                                     {{0, 1, 2, 3}, {0, 2, 3, 1}, 3, 16}};

TEST(CpuRuntime, ConvolutionsMatchTheLoops) {
  Conv convs[] = {_mlir_ciface_ampCpuConv2DF32, _mlir_ciface_ampCpuConv2DF16,
                  _mlir_ciface_ampCpuConv2DBF16};
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (const ImageLayout &layout : kImageLayouts)
      for (ConvCase conv : kConvCases)
        for (bool accumulate : {false, true}) {
          conv.c = layout.channels;
          conv.f = layout.filters;
          std::mt19937 random(3);
          Tensor input(dtype, {conv.n, conv.c, conv.h, conv.w}, layout.input,
                       random);
          Tensor filter(dtype, {conv.f, conv.c, conv.kernel, conv.kernel},
                        {0, 1, 2, 3}, random);
          Tensor output(DType::F32, {conv.n, conv.f, conv.oh(), conv.ow()},
                        layout.output, random);
          // A convolution that does not accumulate must not read its
          // output.
          if (!accumulate)
            std::fill(output.f32.begin(), output.f32.end(), NAN);
          std::vector<float> initial = output.f32;
          convs[static_cast<int>(dtype)](
              &input.memref, &filter.memref, &output.memref, conv.stride,
              conv.stride, conv.dilation, conv.dilation, conv.pad, conv.pad,
              conv.padAfter(conv.h), conv.padAfter(conv.w), accumulate);
          checkForward(conv, input, filter, output, initial, accumulate);
        }
}

/// Checks `filterGradient`, the filter gradient of the convolution `conv`
/// of `input` whose output gradient is `gradient` (added to `initial`, its
/// elements before, when `accumulate`), against f64 loops.
void checkWeightGradient(const ConvCase &conv, const Tensor &input,
                         const Tensor &gradient, const Tensor &filterGradient,
                         const std::vector<float> &initial, bool accumulate) {
  for (int64_t o = 0; o < conv.f; ++o)
    for (int64_t i = 0; i < conv.c; ++i)
      for (int64_t ky = 0; ky < conv.kernel; ++ky)
        for (int64_t kx = 0; kx < conv.kernel; ++kx) {
          double sum = 0, magnitude = 0;
          for (int64_t b = 0; b < conv.n; ++b)
            for (int64_t y = 0; y < conv.oh(); ++y)
              for (int64_t x = 0; x < conv.ow(); ++x) {
                int64_t iy = conv.at(y, ky, conv.h),
                        ix = conv.at(x, kx, conv.w);
                if (iy < 0 || ix < 0)
                  continue;
                double product = double(input.at({b, i, iy, ix})) *
                                 gradient.at({b, o, y, x});
                sum += product;
                magnitude += std::fabs(product);
              }
          const std::vector<int64_t> &s = filterGradient.strides;
          int64_t offset = o * s[0] + i * s[1] + ky * s[2] + kx * s[3];
          expectSum(filterGradient.f32[offset], sum, magnitude, initial[offset],
                    accumulate, "weight gradient", conv);
        }
}

/// The filter gradient, from an input whose batch and channel dimensions
/// are swapped in storage (as the views of torch-mlir's transposes are)
/// and an output gradient and filter gradient likewise; and from
/// channels-last images, which the direct convolution takes for f16 and
/// bf16 inputs.
TEST(CpuRuntime, WeightGradientsMatchTheLoops) {
  Conv convs[] = {_mlir_ciface_ampCpuConv2DBackwardWeightsF32,
                  _mlir_ciface_ampCpuConv2DBackwardWeightsF16,
                  _mlir_ciface_ampCpuConv2DBackwardWeightsBF16};
  const ImageLayout layouts[] = {
      {{1, 0, 2, 3}, {1, 0, 2, 3}, 3, 5}, kImageLayouts[1], kImageLayouts[2]};
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (const ImageLayout &layout : layouts)
      for (ConvCase conv : kConvCases)
        for (bool accumulate : {false, true}) {
          conv.c = layout.channels;
          conv.f = layout.filters;
          std::mt19937 random(5);
          int64_t k = conv.kernel;
          Tensor input(dtype, {conv.n, conv.c, conv.h, conv.w}, layout.input,
                       random);
          Tensor gradient(dtype, {conv.n, conv.f, conv.oh(), conv.ow()},
                          layout.output, random);
          Tensor filterGradient(DType::F32, {conv.f, conv.c, k, k},
                                {1, 0, 2, 3}, random);
          std::vector<float> initial = filterGradient.f32;
          convs[static_cast<int>(dtype)](
              &input.memref, &gradient.memref, &filterGradient.memref,
              conv.stride, conv.stride, conv.dilation, conv.dilation, conv.pad,
              conv.pad, conv.padAfter(conv.h), conv.padAfter(conv.w),
              accumulate);
          checkWeightGradient(conv, input, gradient, filterGradient, initial,
                              accumulate);
        }
}

/// The input gradient, given the filter rotated by 180 degrees, whose
/// F and C dimensions are swapped in storage.
TEST(CpuRuntime, InputGradientsMatchTheLoops) {
  Conv convs[] = {_mlir_ciface_ampCpuConv2DBackwardDataF32,
                  _mlir_ciface_ampCpuConv2DBackwardDataF16,
                  _mlir_ciface_ampCpuConv2DBackwardDataBF16};
  for (DType dtype : {DType::F32, DType::F16, DType::BF16})
    for (const ConvCase &conv : kConvCases)
      for (bool accumulate : {false, true}) {
        std::mt19937 random(7);
        int64_t oh = conv.oh(), ow = conv.ow(), k = conv.kernel;
        Tensor gradient(dtype, {conv.n, conv.f, oh, ow}, {0, 1, 2, 3}, random);
        Tensor rotated(dtype, {conv.f, conv.c, k, k}, {1, 0, 2, 3}, random);
        Tensor inputGradient(DType::F32, {conv.n, conv.c, conv.h, conv.w},
                             {0, 1, 2, 3}, random);
        std::vector<float> initial = inputGradient.f32;
        convs[static_cast<int>(dtype)](
            &gradient.memref, &rotated.memref, &inputGradient.memref,
            conv.stride, conv.stride, conv.dilation, conv.dilation, conv.pad,
            conv.pad, conv.padAfter(conv.h), conv.padAfter(conv.w),
            accumulate);
        std::vector<double> sums(initial.size()), magnitudes(initial.size());
        for (int64_t b = 0; b < conv.n; ++b)
          for (int64_t o = 0; o < conv.f; ++o)
            for (int64_t i = 0; i < conv.c; ++i)
              for (int64_t y = 0; y < oh; ++y)
                for (int64_t x = 0; x < ow; ++x)
                  for (int64_t ky = 0; ky < k; ++ky)
                    for (int64_t kx = 0; kx < k; ++kx) {
                      int64_t iy = conv.at(y, ky, conv.h),
                              ix = conv.at(x, kx, conv.w);
                      if (iy < 0 || ix < 0)
                        continue;
                      double product =
                          double(gradient.at({b, o, y, x})) *
                          rotated.at({o, i, k - 1 - ky, k - 1 - kx});
                      int64_t offset =
                          ((b * conv.c + i) * conv.h + iy) * conv.w + ix;
                      sums[offset] += product;
                      magnitudes[offset] += std::fabs(product);
                    }
        for (size_t offset = 0; offset < sums.size(); ++offset)
          expectSum(inputGradient.f32[offset], sums[offset],
                    magnitudes[offset], initial[offset], accumulate,
                    "input gradient", conv);
      }
}

/// The forward and input-gradient convolutions into the inputs' low type
/// against the f32 ones (checked against the loops above), rounded: within
/// one unit in the last place of the low type, for the summation order (the
/// same sums where the direct convolution computes both).
TEST(CpuRuntime, LowOutputConvolutionsRoundTheF32Ones) {
  struct Entries {
    DType dtype;
    Conv forward, forwardLow, inputGradient, inputGradientLow;
    float ulp;
  };
  const Entries entries[] = {
      {DType::F16, _mlir_ciface_ampCpuConv2DF16,
       _mlir_ciface_ampCpuConv2DF16ToF16, _mlir_ciface_ampCpuConv2DBackwardDataF16,
       _mlir_ciface_ampCpuConv2DBackwardDataF16ToF16, 0x1p-10f},
      {DType::BF16, _mlir_ciface_ampCpuConv2DBF16,
       _mlir_ciface_ampCpuConv2DBF16ToBF16,
       _mlir_ciface_ampCpuConv2DBackwardDataBF16,
       _mlir_ciface_ampCpuConv2DBackwardDataBF16ToBF16, 0x1p-7f}};
  for (const Entries &entry : entries)
    for (const ImageLayout &layout : kImageLayouts)
      for (ConvCase conv : kConvCases) {
        conv.c = layout.channels;
        conv.f = layout.filters;
        std::mt19937 random(7);
        int64_t oh = conv.oh(), ow = conv.ow();
        Tensor image(entry.dtype, {conv.n, conv.c, conv.h, conv.w},
                     layout.input, random);
        Tensor filter(entry.dtype, {conv.f, conv.c, conv.kernel, conv.kernel},
                      {0, 1, 2, 3}, random);
        Tensor gradient(entry.dtype, {conv.n, conv.f, oh, ow}, layout.output,
                        random);
        auto check = [&](Conv wide, Conv low, Tensor &in,
                         std::vector<int64_t> outSizes,
                         const std::vector<int> &outOrder, const char *what) {
          Tensor expected(DType::F32, outSizes, outOrder, random);
          Tensor actual(entry.dtype, outSizes, outOrder, random);
          for (auto [call, out] : {std::pair{wide, &expected}, {low, &actual}})
            call(&in.memref, &filter.memref, &out->memref, conv.stride,
                 conv.stride, conv.dilation, conv.dilation, conv.pad, conv.pad,
                 conv.padAfter(conv.h), conv.padAfter(conv.w), 0);
          for (size_t i = 0; i < expected.f32.size(); ++i) {
            float value = entry.dtype == DType::F16 ? fromF16(actual.bits[i])
                                                    : fromBF16(actual.bits[i]);
            ASSERT_NEAR(value, expected.f32[i],
                        entry.ulp * std::fabs(expected.f32[i]) + 1e-6f)
                << what << ": channels-last " << (outOrder[1] != 1)
                << " stride " << conv.stride << " dilation " << conv.dilation
                << " kernel " << conv.kernel << " pad " << conv.pad;
          }
        };
        check(entry.forward, entry.forwardLow, image, {conv.n, conv.f, oh, ow},
              layout.output, "forward");
        check(entry.inputGradient, entry.inputGradientLow, gradient,
              {conv.n, conv.c, conv.h, conv.w}, layout.input, "input gradient");
      }
}

/// C = A.B rounded to bf16, for products of one term (exact in f32): every
/// element is the f32 product rounded to nearest even, ties, infinities and
/// NaNs included, along rows long enough for the vector loops and their
/// tails.
TEST(CpuRuntime, LowOutputMatmulsRoundToNearestEven) {
  std::mt19937 random(7);
  const int64_t m = 5, n = 37;
  Tensor a(DType::BF16, {m, 1}, {0, 1}, random);
  Tensor b(DType::BF16, {1, n}, {0, 1}, random);
  Tensor c(DType::BF16, {m, n}, {0, 1}, random);
  // (1 + 2^-7) * 1.5 = 1.5 + 2^-7 + 2^-8, a tie rounded up to even;
  // (1 + 2^-4)^2 = 1 + 2^-3 + 2^-8, a tie rounded down to even;
  // (1 + 2^-7) * (1.5 + 2^-7) = 1.5 + 2^-6 + 2^-8 + 2^-14, above the tie;
  // 0x1.cp62 * 0x1.24p65 = 0x1.ffp127 (f32 bits 0x7f7f8000), a tie rounded
  // up to infinity.
  const float rowFactors[m] = {1.0f + 0x1p-7f, 1.0f + 0x1p-4f, 0x1.cp62f,
                               INFINITY, NAN};
  for (int64_t i = 0; i < m; ++i) {
    a.bits[i] = roundBF16(rowFactors[i]);
    a.f32[i] = fromBF16(a.bits[i]);
  }
  const float columnFactors[] = {1.5f,     1.0f + 0x1p-1f + 0x1p-7f,
                                 1.0f + 0x1p-4f, 0x1.24p65f,
                                 0.0f,     -3.0f};
  for (size_t j = 0; j < std::size(columnFactors); ++j) {
    b.bits[j] = roundBF16(columnFactors[j]);
    b.f32[j] = fromBF16(b.bits[j]);
  }
  _mlir_ciface_ampCpuMatmulBF16ToBF16(&a.memref, &b.memref, &c.memref);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float product = a.f32[i] * b.f32[j];
      uint16_t bits = c.bits[i * n + j];
      if (std::isnan(product)) {
        EXPECT_EQ(bits & 0x7fc0, 0x7fc0) << "quiet NaN at " << i << "," << j;
        continue;
      }
      EXPECT_EQ(bits, roundBF16(product))
          << a.f32[i] << " * " << b.f32[j] << " at " << i << "," << j;
    }
  EXPECT_EQ(ampCpuTakeError(), nullptr);
}

/// A call oneDNN refuses (a filter of 4 channels for an image of 3) writes
/// nothing and leaves an error naming it, which the runner takes after the
/// step; later calls do nothing until it is taken.
TEST(CpuRuntime, KeepsTheFirstErrorUntilTaken) {
  std::mt19937 random(5);
  Tensor input(DType::F32, {2, 3, 9, 7}, {0, 1, 2, 3}, random);
  Tensor badFilter(DType::F32, {5, 4, 3, 3}, {0, 1, 2, 3}, random);
  Tensor filter(DType::F32, {5, 3, 3, 3}, {0, 1, 2, 3}, random);
  Tensor output(DType::F32, {2, 5, 7, 5}, {0, 1, 2, 3}, random);
  std::vector<float> initial = output.f32;
  auto conv = [&](Tensor &weights) {
    _mlir_ciface_ampCpuConv2DF32(&input.memref, &weights.memref,
                                 &output.memref, 1, 1, 1, 1, 0, 0, 0, 0, 0);
  };
  ASSERT_EQ(ampCpuTakeError(), nullptr);
  conv(badFilter);
  conv(filter);
  EXPECT_EQ(output.f32, initial);
  const char *error = ampCpuTakeError();
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(std::string(error).rfind(
                "convolution of 2x3x9x7 and 5x4x3x3 into 2x5x7x5: ", 0),
            0u)
      << error;
  EXPECT_EQ(ampCpuTakeError(), nullptr);
  conv(filter);
  EXPECT_EQ(ampCpuTakeError(), nullptr);
  EXPECT_NE(output.f32, initial);
}

/// Calls that no convolution could compute are errors on every path, the
/// direct convolutions' too, which leave them to oneDNN: channels-last bf16
/// images whose output size disagrees with the padding, and operands that
/// are not 4-d.
TEST(CpuRuntime, RefusesConvolutionsOfTheWrongShape) {
  std::mt19937 random(5);
  Tensor input(DType::BF16, {1, 8, 6, 6}, {0, 2, 3, 1}, random);
  Tensor filter(DType::BF16, {8, 8, 3, 3}, {0, 1, 2, 3}, random);
  Tensor output(DType::F32, {1, 8, 4, 4}, {0, 2, 3, 1}, random);
  std::vector<float> initial = output.f32;
  // Padding 5 after: a 9 x 9 output, not 4 x 4.
  _mlir_ciface_ampCpuConv2DBF16(&input.memref, &filter.memref, &output.memref,
                                1, 1, 1, 1, 0, 0, 5, 5, 0);
  const char *error = ampCpuTakeError();
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(std::string(error).rfind(
                "convolution of 1x8x6x6 and 8x8x3x3 into 1x8x4x4: ", 0),
            0u)
      << error;
  EXPECT_EQ(output.f32, initial);
  Tensor input5(DType::BF16, {1, 8, 6, 6, 1}, {0, 1, 2, 3, 4}, random);
  Tensor gradient(DType::BF16, {1, 8, 4, 4}, {0, 2, 3, 1}, random);
  Tensor filterGradient(DType::F32, {8, 8, 3, 3}, {0, 1, 2, 3}, random);
  _mlir_ciface_ampCpuConv2DBackwardWeightsBF16(
      &input5.memref, &gradient.memref, &filterGradient.memref, 1, 1, 1, 1, 0,
      0, 0, 0, 0);
  error = ampCpuTakeError();
  ASSERT_NE(error, nullptr);
  EXPECT_NE(std::string(error).find("1x8x6x6x1"), std::string::npos) << error;
}

TEST(CpuRuntime, SaysWhichLibraryRunsMatrixProducts) {
  std::string library = ampCpuGemmLibrary();
  EXPECT_TRUE(library == "openblas" || library == "onednn") << library;
  // Set by the lit tests, which choose it (AMP_CPU_GEMM) or cap the ISA.
  if (const char *expected = std::getenv("AMP_EXPECT_GEMM_LIBRARY")) {
    EXPECT_EQ(library, expected);
  }
}

TEST(CpuRuntime, SaysWhichChannelBlockConvolutionsChoose) {
  int32_t block = ampCpuChannelBlock();
  EXPECT_TRUE(block == 0 || block == 8 || block == 16) << block;
  // Set by the ISA-capped lit tests, which know which one it must be.
  if (const char *expected = std::getenv("AMP_EXPECT_CHANNEL_BLOCK")) {
    EXPECT_EQ(block, std::atoi(expected));
  }
}

TEST(CpuRuntime, SaysHowLowPrecisionInputsRun) {
  struct Query {
    const char *(*path)(int32_t);
    int32_t isF16;
    const char *variable;
  };
  for (Query query :
       {Query{ampCpuLowPrecisionPath, 1, "AMP_EXPECT_F16_PATH"},
        Query{ampCpuLowPrecisionPath, 0, "AMP_EXPECT_BF16_PATH"},
        Query{ampCpuConv2DLowPrecisionPath, 1, "AMP_EXPECT_CONV_F16_PATH"},
        Query{ampCpuConv2DLowPrecisionPath, 0, "AMP_EXPECT_CONV_BF16_PATH"}}) {
    std::string path = query.path(query.isF16);
    EXPECT_TRUE(path == "native" || path == "f32" ||
                (path == "packed" && query.path == ampCpuLowPrecisionPath) ||
                (path == "direct" &&
                 query.path == ampCpuConv2DLowPrecisionPath))
        << path;
    // Set by the ISA-capped lit test, which knows which one it must be.
    if (const char *expected = std::getenv(query.variable)) {
      EXPECT_EQ(path, expected) << query.variable;
    }
  }
}

/// packedGemm reads operands that have no BLAS layout in place (which
/// oneDNN refuses for negative strides): B's rows all one row (row stride 0,
/// as a broadcast view has), A's columns backwards (a negative stride).
TEST(CpuRuntime, PackedProductsReadZeroAndNegativeStrides) {
  if (std::string(ampCpuLowPrecisionPath(0)) != "packed")
    GTEST_SKIP() << "bf16 products are not packedGemm's on this host";
  const int64_t m = 9, n = 21, k = 300;
  for (DType dtype : {DType::F16, DType::BF16}) {
    std::mt19937 random(5);
    Tensor a(dtype, {m, k}, {0, 1}, random);
    Tensor b(dtype, {1, n}, {0, 1}, random);
    Tensor out(DType::F32, {m, n}, {0, 1}, random);
    auto view = [](Tensor &t, std::vector<int64_t> sizes,
                   std::vector<int64_t> strides, int64_t offset) {
      t.sizes = sizes;
      t.strides = strides;
      std::vector<int64_t> descriptor = {t.descriptor[0], t.descriptor[1],
                                         offset};
      descriptor.insert(descriptor.end(), sizes.begin(), sizes.end());
      descriptor.insert(descriptor.end(), strides.begin(), strides.end());
      t.descriptor = descriptor;
      t.memref.descriptor = t.descriptor.data();
    };
    view(b, {k, n}, {0, 1}, 0);
    view(a, {m, k}, {k, -1}, k - 1);
    getMatmul(dtype)(&a.memref, &b.memref, &out.memref, /*accumulate=*/0);
    const char *error = ampCpuTakeError();
    ASSERT_EQ(error, nullptr) << error;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, magnitude = 0;
        for (int64_t l = 0; l < k; ++l) {
          double product = double(a.f32[i * k + k - 1 - l]) * b.f32[j];
          sum += product;
          magnitude += std::fabs(product);
        }
        ASSERT_NEAR(out.f32[i * n + j], sum, 1e-5 * magnitude + 1e-30)
            << i << "," << j;
      }
  }
}

/// Where the runtime's packedGemm computes f16 and bf16 products, each
/// element is the same sum on any number of threads: the same bits at 1
/// and 3 threads, for a product of several blocks along every dimension.
TEST(CpuRuntime, PackedProductsAreTheSameOnAnyThreads) {
  if (std::string(ampCpuLowPrecisionPath(0)) != "packed")
    GTEST_SKIP() << "bf16 products are not packedGemm's on this host";
  for (DType dtype : {DType::F16, DType::BF16}) {
    std::mt19937 random(11);
    Tensor a(dtype, {150, 600}, {1, 0}, random);
    Tensor b(dtype, {600, 3200}, {0, 1}, random);
    std::vector<std::vector<float>> outputs;
    for (int threads : {1, 3}) {
      ampCpuSetNumThreads(threads);
      Tensor out(DType::F32, {150, 3200}, {0, 1}, random);
      getMatmul(dtype)(&a.memref, &b.memref, &out.memref, /*accumulate=*/0);
      outputs.push_back(out.f32);
    }
    ampCpuSetNumThreads(1);
    EXPECT_EQ(std::memcmp(outputs[0].data(), outputs[1].data(),
                          outputs[0].size() * sizeof(float)),
              0);
  }
}

/// Where the runtime's direct convolutions compute f16 and bf16 forward
/// convolutions and filter gradients of channels-last images, and f32
/// filter gradients (ampCpuConv2DLowPrecisionPath says "direct"), each
/// output is the same sum on any number of threads: the same bits at 1 and
/// 3 threads, over several images and bands of rows, and the loops' sums.
TEST(CpuRuntime, DirectConvolutionsAreTheSameOnAnyThreads) {
  if (std::string(ampCpuConv2DLowPrecisionPath(0)) != "direct")
    GTEST_SKIP() << "bf16 convolutions are not the direct ones on this host";
  // Stride 2, padding 1 before: 3 bands of up to 32 output rows.
  const ConvCase conv{2, 1, 3, 1, 3, 16, 24, 140, 30};
  const Conv forward[] = {nullptr, _mlir_ciface_ampCpuConv2DF16,
                          _mlir_ciface_ampCpuConv2DBF16};
  const Conv filterGradients[] = {_mlir_ciface_ampCpuConv2DBackwardWeightsF32,
                                  _mlir_ciface_ampCpuConv2DBackwardWeightsF16,
                                  _mlir_ciface_ampCpuConv2DBackwardWeightsBF16};
  for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
    std::mt19937 random(13);
    Tensor input(dtype, {conv.n, conv.c, conv.h, conv.w}, {0, 2, 3, 1},
                 random);
    Tensor filter(dtype, {conv.f, conv.c, 3, 3}, {0, 1, 2, 3}, random);
    Tensor gradient(dtype, {conv.n, conv.f, conv.oh(), conv.ow()},
                    {0, 2, 3, 1}, random);
    std::vector<std::vector<float>> outputs, filterGradient;
    for (int threads : {1, 3}) {
      ampCpuSetNumThreads(threads);
      auto run = [&](Conv call, Tensor &a, Tensor &b, Tensor &result) {
        call(&a.memref, &b.memref, &result.memref, conv.stride, conv.stride,
             1, 1, conv.pad, conv.pad, conv.padAfter(conv.h),
             conv.padAfter(conv.w), /*accumulate=*/0);
        const char *error = ampCpuTakeError();
        ASSERT_EQ(error, nullptr) << error;
      };
      if (Conv call = forward[static_cast<int>(dtype)]) {
        Tensor out(DType::F32, {conv.n, conv.f, conv.oh(), conv.ow()},
                   {0, 2, 3, 1}, random);
        run(call, input, filter, out);
        checkForward(conv, input, filter, out, out.f32, /*accumulate=*/false);
        outputs.push_back(out.f32);
      }
      Tensor filterOut(DType::F32, {conv.f, conv.c, 3, 3}, {0, 1, 2, 3},
                       random);
      run(filterGradients[static_cast<int>(dtype)], input, gradient,
          filterOut);
      checkWeightGradient(conv, input, gradient, filterOut, filterOut.f32,
                          /*accumulate=*/false);
      filterGradient.push_back(filterOut.f32);
    }
    ampCpuSetNumThreads(1);
    for (auto *results : {&outputs, &filterGradient})
      if (!results->empty()) {
        EXPECT_EQ(std::memcmp((*results)[0].data(), (*results)[1].data(),
                              (*results)[0].size() * sizeof(float)),
                  0);
      }
  }
}

} // namespace
