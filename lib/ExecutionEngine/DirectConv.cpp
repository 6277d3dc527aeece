//===- DirectConv.cpp - Convolutions that read and write f16 and bf16 -----===//
//
// Direct convolutions of channels-last images. For a band of output rows
// of one image, the input rows they read are extended to f32 into a
// buffer, with the padding as zeros: rows of `width` pixels of C floats,
// where the window of each output pixel on each filter row is one run of
// KW x C floats. The forward convolution's 6 x 16 kernel of AVX2 FMAs
// (PackedGemm's) computes six output pixels, consecutive in the band, by
// 16 filters packed as [KH][KW x C][16] f32, and rounds the sums to the
// output's type as it stores them; bands go to the threads whole. The
// filter gradient's kernel sums a band's pixels for six consecutive window
// elements of one filter row by 16 filters; its tiles go to the threads.
// On AMD Zen 3 (1 thread, the benchmark CNN's 3 x 3 convolutions of 16 and
// 32 channels) the forward one ran bf16 at 68-92 GFLOP/s where oneDNN's
// f32 kernel (`brgconv:avx2`) ran at 61-93 on f32 images, the filter
// gradient at 64-85 against oneDNN's 41-71 (bench/RESULTS.md, twenty-first
// round).
//
//===----------------------------------------------------------------------===//

#include "DirectConv.h"
#include <algorithm>
#include <atomic>
#include <cmath>
#include <omp.h>

namespace amp::cpu {
namespace {

/// The kernel's tile: kPixels output pixels by kFilters filters.
constexpr int64_t kPixels = 6, kFilters = 16;
/// A band's input rows take at most this many floats (128 KB, in L2 with
/// the packed filters), unless one output row needs more.
constexpr int64_t kBandFloats = 32 * 1024;

/// `out`[i] = element i of the run of `count` at `at` of `source`, as f32.
template <ElementType type>
AMP_AVX2 void extendRun(const void *source, int64_t at, int64_t count,
                        float *out) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8)
    _mm256_storeu_ps(out + i, load8<type>(source, at + i));
  for (; i < count; ++i)
    out[i] = load1<type>(source, at + i);
}

/// Rows `firstRow` .. `firstRow` + rows - 1 of image `n` of `input`, as the
/// padding `window` puts them, `width` pixels each from the first pixel of
/// the padding on, extended into `band`: zeros outside the image.
template <ElementType type>
AMP_AVX2 void fillBand(const ArrayRef4 &input, const ConvWindow &window,
                       int64_t n, int64_t firstRow, int64_t rows, int64_t width,
                       float *band) {
  int64_t channels = input.sizes[1], height = input.sizes[2],
          columns = input.sizes[3];
  int64_t left = window.padBefore[1];
  // The image's columns that land in the band: [left, end).
  int64_t end = std::min(width, left + columns);
  for (int64_t r = 0; r < rows; ++r) {
    float *row = band + r * width * channels;
    int64_t y = firstRow + r - window.padBefore[0];
    if (y < 0 || y >= height || end <= left) {
      std::fill(row, row + width * channels, 0.0f);
      continue;
    }
    std::fill(row, row + left * channels, 0.0f);
    std::fill(row + end * channels, row + width * channels, 0.0f);
    int64_t at = n * input.strides[0] + y * input.strides[2];
    if (input.strides[1] == 1 && input.strides[3] == channels) {
      extendRun<type>(input.data, at, (end - left) * channels,
                      row + left * channels);
    } else if (input.strides[1] == 1) {
      for (int64_t x = left; x < end; ++x)
        extendRun<type>(input.data, at + (x - left) * input.strides[3],
                        channels, row + x * channels);
    } else {
      // Channels apart (NCHW): gathered one element at a time.
      for (int64_t x = left; x < end; ++x)
        for (int64_t c = 0; c < channels; ++c)
          row[x * channels + c] = load1<type>(
              input.data,
              at + (x - left) * input.strides[3] + c * input.strides[1]);
    }
  }
}

/// Stores `low` and `high`, filters f0 .. f0 + 15 of one pixel, rounded to
/// `type`, at `out`: the first `columns` of them.
template <ElementType type>
AMP_AVX2 inline void storeFilters(__m256 low, __m256 high, void *out,
                                  int64_t columns) {
  alignas(32) uint16_t bits[kFilters];
  alignas(32) float values[kFilters];
  bool whole = columns == kFilters;
  if constexpr (type == ElementType::F32) {
    float *at = whole ? static_cast<float *>(out) : values;
    _mm256_storeu_ps(at, low);
    _mm256_storeu_ps(at + 8, high);
    if (!whole)
      std::copy(values, values + columns, static_cast<float *>(out));
    return;
  }
  auto *at = whole ? static_cast<uint16_t *>(out) : bits;
  if constexpr (type == ElementType::BF16) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(at),
                        roundToBF16(low, high));
  } else {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(at),
                     _mm256_cvtps_ph(low, _MM_FROUND_TO_NEAREST_INT));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(at + 8),
                     _mm256_cvtps_ph(high, _MM_FROUND_TO_NEAREST_INT));
  }
  if (!whole)
    std::copy(bits, bits + columns, static_cast<uint16_t *>(out));
}

/// The outputs of `count` (at most kPixels) pixels by `columns` (at most
/// kFilters) filters, stored at `outputs` in `type`: for each of `rows`
/// filter rows, the products of the pixels' windows (runs of `depth` floats
/// from `pixels`[i] + row * `rowStride`) by the filters' rows (runs of
/// `depth` x 16 floats from `filters` + row * depth * 16). Pixels from
/// `count` on are read but not stored.
template <ElementType type>
AMP_AVX2 void convolveTile(const float *const pixels[kPixels], int64_t rows,
                           int64_t depth, int64_t rowStride,
                           const float *filters, void *const outputs[kPixels],
                           int64_t count, int64_t columns) {
  Tile6x16 tile = zeroTile();
  for (int64_t row = 0; row < rows; ++row) {
    const float *a0 = pixels[0] + row * rowStride,
                *a1 = pixels[1] + row * rowStride,
                *a2 = pixels[2] + row * rowStride,
                *a3 = pixels[3] + row * rowStride,
                *a4 = pixels[4] + row * rowStride,
                *a5 = pixels[5] + row * rowStride;
    const float *b = filters + row * depth * kFilters;
#pragma GCC unroll 4
    for (int64_t p = 0; p < depth; ++p, b += kFilters)
      multiplyAdd(tile, b, a0 + p, a1 + p, a2 + p, a3 + p, a4 + p, a5 + p);
  }
  static_assert(kPixels == 6 && kFilters == 16, "a Tile6x16");
  __m256 sums[kPixels][2];
  tileRows(tile, sums);
  for (int64_t i = 0; i < count; ++i)
    storeFilters<type>(sums[i][0], sums[i][1], outputs[i], columns);
}

/// Everything one call needs, worked out once.
struct Plan {
  int64_t batch, channels, filters, filterRows, outputRows, outputColumns;
  /// The floats of a window on one filter row: KW x C.
  int64_t depth;
  /// Pixels and floats of one band row, from the padding's first pixel.
  int64_t width, rowFloats;
  int64_t rowsPerBand, bands;
};

Plan makePlan(const ArrayRef4 &input, const ArrayRef4 &filter,
              const ArrayRef4 &output, const ConvWindow &window) {
  Plan plan;
  plan.batch = input.sizes[0];
  plan.channels = input.sizes[1];
  plan.filters = filter.sizes[0];
  plan.filterRows = filter.sizes[2];
  plan.outputRows = output.sizes[2];
  plan.outputColumns = output.sizes[3];
  plan.depth = filter.sizes[3] * plan.channels;
  plan.width = (plan.outputColumns - 1) * window.strides[1] + filter.sizes[3];
  plan.rowFloats = plan.width * plan.channels;
  int64_t bandRows = std::max(kBandFloats / plan.rowFloats, plan.filterRows);
  plan.rowsPerBand = std::min(
      (bandRows - plan.filterRows) / window.strides[0] + 1, plan.outputRows);
  plan.bands = ceilDiv(plan.outputRows, plan.rowsPerBand);
  return plan;
}

/// Band `bandIndex` of image `n`: fills the band, then runs the tiles.
template <ElementType inType, ElementType outType>
AMP_AVX2 bool convolveBand(const ArrayRef4 &input, const ArrayRef4 &output,
                           const ConvWindow &window, const Plan &plan,
                           const float *packed, int64_t n, int64_t bandIndex) {
  static thread_local Buffer buffer;
  int64_t first = bandIndex * plan.rowsPerBand,
          rows = std::min(plan.rowsPerBand, plan.outputRows - first);
  int64_t inputRows = (rows - 1) * window.strides[0] + plan.filterRows;
  float *band = buffer.get(inputRows * plan.rowFloats);
  if (!band)
    return false;
  fillBand<inType>(input, window, n, first * window.strides[0], inputRows,
                   plan.width, band);
  int64_t pixels = rows * plan.outputColumns,
          blocks = ceilDiv(plan.filters, kFilters);
  char *outBase = static_cast<char *>(output.data);
  int64_t outSize = sizeOf(output.type);
  for (int64_t t = 0; t < pixels; t += kPixels) {
    int64_t count = std::min(kPixels, pixels - t);
    const float *windows[kPixels];
    char *outs[kPixels];
    for (int64_t i = 0; i < kPixels; ++i) {
      int64_t q = t + std::min(i, count - 1);
      int64_t y = q / plan.outputColumns, x = q % plan.outputColumns;
      windows[i] =
          band + (y * window.strides[0] * plan.width + x * window.strides[1]) *
                     plan.channels;
      outs[i] =
          outBase + (n * output.strides[0] + (first + y) * output.strides[2] +
                     x * output.strides[3]) *
                        outSize;
    }
    for (int64_t block = 0; block < blocks; ++block) {
      void *at[kPixels];
      for (int64_t i = 0; i < kPixels; ++i)
        at[i] = outs[i] + block * kFilters * outSize;
      convolveTile<outType>(
          windows, plan.filterRows, plan.depth, plan.rowFloats,
          packed + block * plan.filterRows * plan.depth * kFilters, at, count,
          std::min(kFilters, plan.filters - block * kFilters));
    }
  }
  return true;
}

/// `filter` (F x C x KH x KW) as f32 blocks of 16 filters, zeros past F:
/// [block][KH][KW x C][16].
template <ElementType type>
void packFilters(const ArrayRef4 &filter, float *packed) {
  int64_t filters = filter.sizes[0], channels = filter.sizes[1],
          rows = filter.sizes[2], columns = filter.sizes[3];
  const int64_t *s = filter.strides;
  for (int64_t block = 0; block < ceilDiv(filters, kFilters); ++block)
    for (int64_t y = 0; y < rows; ++y)
      for (int64_t x = 0; x < columns; ++x)
        for (int64_t c = 0; c < channels; ++c, packed += kFilters)
          for (int64_t j = 0; j < kFilters; ++j) {
            int64_t f = block * kFilters + j;
            packed[j] = f < filters
                            ? load1<type>(filter.data, f * s[0] + c * s[1] +
                                                           y * s[2] + x * s[3])
                            : 0.0f;
          }
}

template <ElementType inType, ElementType outType>
bool run(const ArrayRef4 &input, const ArrayRef4 &filter,
         const ArrayRef4 &output, const ConvWindow &window) {
  Plan plan = makePlan(input, filter, output, window);
  static thread_local Buffer packedFilters;
  float *packed = packedFilters.get(ceilDiv(plan.filters, kFilters) * kFilters *
                                    plan.filterRows * plan.depth);
  if (!packed)
    return false;
  packFilters<inType>(filter, packed);
  int64_t jobs = plan.batch * plan.bands;
  double work = double(plan.batch) * plan.outputRows * plan.outputColumns *
                plan.filters * plan.filterRows * plan.depth;
  std::atomic<bool> failed{false};
  bool parallel = jobs > 1 && work >= kMinParallelWork;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t job = 0; job < jobs; ++job)
    if (!convolveBand<inType, outType>(input, output, window, plan, packed,
                                       job / plan.bands, job % plan.bands))
      failed = true;
  return !failed;
}

template <ElementType inType>
bool runFrom(const ArrayRef4 &input, const ArrayRef4 &filter,
             const ArrayRef4 &output, const ConvWindow &window) {
  switch (output.type) {
  case ElementType::F32:
    return run<inType, ElementType::F32>(input, filter, output, window);
  case ElementType::F16:
    return run<inType, ElementType::F16>(input, filter, output, window);
  case ElementType::BF16:
    return run<inType, ElementType::BF16>(input, filter, output, window);
  }
  return false;
}

/// Adds to `sums` (kPixels x kFilters, rows of kFilters) the products of
/// `rows` x `columns` output pixels: for pixel (y, x), six consecutive
/// floats of the band from `band` + y * rowStep + x * columnStep (six
/// window elements, one filter row's) by 16 filters' output gradients, a
/// row of `gradients`, one per pixel in order. The pixels' products are
/// summed first, in order, then added.
AMP_AVX2 void accumulateWeightTile(const float *band, int64_t rows,
                                   int64_t columns, int64_t rowStep,
                                   int64_t columnStep, const float *gradients,
                                   float *sums) {
  Tile6x16 tile = zeroTile();
  const float *b = gradients;
  for (int64_t y = 0; y < rows; ++y) {
    const float *a = band + y * rowStep;
#pragma GCC unroll 4
    for (int64_t x = 0; x < columns; ++x, a += columnStep, b += kFilters)
      multiplyAdd(tile, b, a, a + 1, a + 2, a + 3, a + 4, a + 5);
  }
  __m256 partial[kPixels][2];
  tileRows(tile, partial);
  for (int64_t i = 0; i < kPixels; ++i)
    for (int64_t h = 0; h < 2; ++h) {
      float *at = sums + i * kFilters + 8 * h;
      _mm256_storeu_ps(at, _mm256_add_ps(_mm256_loadu_ps(at), partial[i][h]));
    }
}

/// Row `y` of image `n`'s output gradient as f32 rows of 16 filters, zeros
/// past F, for band row `row`: filters 16 j .. 16 j + 15 of the band's
/// pixel p at `packed` + (j * pixels + p) * 16, `pixels` the band's.
template <ElementType type>
AMP_AVX2 void packGradientRow(const ArrayRef4 &gradient, int64_t n, int64_t y,
                              int64_t row, int64_t pixels, float *packed) {
  int64_t filters = gradient.sizes[1], columns = gradient.sizes[3];
  for (int64_t x = 0; x < columns; ++x) {
    int64_t at = n * gradient.strides[0] + y * gradient.strides[2] +
                 x * gradient.strides[3];
    for (int64_t block = 0; block * kFilters < filters; ++block) {
      float *to = packed + (block * pixels + row * columns + x) * kFilters;
      int64_t valid = std::min(kFilters, filters - block * kFilters);
      extendRun<type>(gradient.data, at + block * kFilters, valid, to);
      std::fill(to + valid, to + kFilters, 0.0f);
    }
  }
}

/// The filter gradient: for each band of each image in order, the band's
/// input rows and output gradients are extended (rows spread over the
/// threads), then every tile of 6 window elements of one filter row by 16
/// filters adds the band's products to its sums (tiles spread over the
/// threads). The sums go to `filterGradient` last.
template <ElementType type>
bool runWeightGradient(const ArrayRef4 &input, const ArrayRef4 &gradient,
                       const ArrayRef4 &filterGradient,
                       const ConvWindow &window, bool accumulate) {
  Plan plan = makePlan(input, filterGradient, gradient, window);
  int64_t rowBlocks = ceilDiv(plan.depth, kPixels),
          blocks = ceilDiv(plan.filters, kFilters);
  int64_t tiles = plan.filterRows * rowBlocks * blocks;
  int64_t bandPixels = plan.rowsPerBand * plan.outputColumns;
  int64_t stride = window.strides[0];
  static thread_local Buffer bandBuffer, gradientBuffer, sumBuffer;
  float *band = bandBuffer.get(
      ((plan.rowsPerBand - 1) * stride + plan.filterRows) * plan.rowFloats);
  float *gradients = gradientBuffer.get(blocks * bandPixels * kFilters);
  float *sums = sumBuffer.get(tiles * kPixels * kFilters);
  if (!band || !gradients || !sums)
    return false;
  std::fill(sums, sums + tiles * kPixels * kFilters, 0.0f);
  double work = double(plan.batch) * plan.outputRows * plan.outputColumns *
                plan.filters * plan.filterRows * plan.depth;
#pragma omp parallel if (work >= kMinParallelWork)
  for (int64_t n = 0; n < plan.batch; ++n)
    for (int64_t bandIndex = 0; bandIndex < plan.bands; ++bandIndex) {
      int64_t first = bandIndex * plan.rowsPerBand,
              rows = std::min(plan.rowsPerBand, plan.outputRows - first);
      int64_t inputRows = (rows - 1) * stride + plan.filterRows;
#pragma omp for schedule(static)
      for (int64_t r = 0; r < inputRows + rows; ++r) {
        if (r < inputRows)
          fillBand<type>(input, window, n, first * stride + r, 1, plan.width,
                         band + r * plan.rowFloats);
        else
          packGradientRow<type>(gradient, n, first + r - inputRows,
                                r - inputRows, bandPixels, gradients);
      }
#pragma omp for schedule(static)
      for (int64_t tile = 0; tile < tiles; ++tile) {
        int64_t row = tile / (rowBlocks * blocks),
                rowBlock = tile / blocks % rowBlocks, block = tile % blocks;
        accumulateWeightTile(band + row * plan.rowFloats + rowBlock * kPixels,
                             rows, plan.outputColumns, stride * plan.rowFloats,
                             window.strides[1] * plan.channels,
                             gradients + block * bandPixels * kFilters,
                             sums + tile * kPixels * kFilters);
      }
    }
  auto *out = static_cast<float *>(filterGradient.data);
  const int64_t *s = filterGradient.strides;
  for (int64_t f = 0; f < plan.filters; ++f)
    for (int64_t y = 0; y < plan.filterRows; ++y)
      for (int64_t r = 0; r < plan.depth; ++r) {
        int64_t tile = (y * rowBlocks + r / kPixels) * blocks + f / kFilters;
        float sum =
            sums[(tile * kPixels + r % kPixels) * kFilters + f % kFilters];
        float &to = out[f * s[0] + r % plan.channels * s[1] + y * s[2] +
                        r / plan.channels * s[3]];
        to = accumulate ? to + sum : sum;
      }
  return true;
}

/// Whether the kernels here take the convolution of `input` by filters of
/// `filterSizes` whose output (or output gradient) is `output`, as
/// canDirectConv says, types aside (f32 included): the output's sizes those
/// of the window (as oneDNN requires), no more than 2^40 floats in the
/// buffer of one band, so that no size computed here overflows.
bool takes(const ArrayRef4 &input, const int64_t filterSizes[4],
           const ArrayRef4 &output, const ConvWindow &window) {
  bool shapes = input.sizes[0] == output.sizes[0] &&
                input.sizes[1] == filterSizes[1] &&
                filterSizes[0] == output.sizes[1];
  for (int64_t d = 0; d < 4; ++d)
    shapes &= input.sizes[d] > 0 && filterSizes[d] > 0 && output.sizes[d] > 0;
  for (int64_t d = 0; d < 2 && shapes; ++d) {
    // In doubles: the paddings are the caller's, of any size.
    double span = double(input.sizes[2 + d]) + double(window.padBefore[d]) +
                  double(window.padAfter[d]) - double(filterSizes[2 + d]);
    shapes &= window.strides[d] >= 1 && window.dilations[d] == 1 &&
              window.padBefore[d] >= 0 && span >= 0 &&
              double(output.sizes[2 + d] - 1) ==
                  std::floor(span / double(window.strides[d]));
  }
  double bandFloats = (double(output.sizes[3] - 1) * double(window.strides[1]) +
                       double(filterSizes[3])) *
                      double(input.sizes[1]) * double(filterSizes[2]);
  return hasAvx2() && shapes && output.strides[1] == 1 &&
         bandFloats <= 0x1p40;
}

} // namespace

bool canDirectConv(const ArrayRef4 &input, const ArrayRef4 &filter,
                   const ArrayRef4 &output, const ConvWindow &window) {
  return input.type != ElementType::F32 && filter.type == input.type &&
         (output.type == ElementType::F32 || output.type == input.type) &&
         takes(input, filter.sizes, output, window);
}

bool directConv(const ArrayRef4 &input, const ArrayRef4 &filter,
                const ArrayRef4 &output, const ConvWindow &window) {
  if (input.type == ElementType::F16)
    return runFrom<ElementType::F16>(input, filter, output, window);
  return runFrom<ElementType::BF16>(input, filter, output, window);
}

bool canDirectConvWeightGradient(const ArrayRef4 &input,
                                 const ArrayRef4 &gradient,
                                 const ArrayRef4 &filterGradient,
                                 const ConvWindow &window) {
  return gradient.type == input.type &&
         filterGradient.type == ElementType::F32 &&
         takes(input, filterGradient.sizes, gradient, window);
}

bool directConvWeightGradient(const ArrayRef4 &input, const ArrayRef4 &gradient,
                              const ArrayRef4 &filterGradient,
                              const ConvWindow &window, bool accumulate) {
  if (input.type == ElementType::F32)
    return runWeightGradient<ElementType::F32>(input, gradient, filterGradient,
                                               window, accumulate);
  if (input.type == ElementType::F16)
    return runWeightGradient<ElementType::F16>(input, gradient, filterGradient,
                                               window, accumulate);
  return runWeightGradient<ElementType::BF16>(input, gradient, filterGradient,
                                              window, accumulate);
}

} // namespace amp::cpu
