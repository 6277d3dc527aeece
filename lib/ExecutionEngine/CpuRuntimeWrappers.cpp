//===- CpuRuntimeWrappers.cpp - Library calls of CPU-lowered steps --------===//
//
// The entry points of amp/ExecutionEngine/CpuRuntime.h over oneDNN (3.2,
// GNU OpenMP threads), and over OpenBLAS for f32 matrix products on hosts
// where oneDNN has only its AVX2 GEMM (gemmLibrary). A primitive is made
// once per shape, strides, types and accumulation and cached across steps;
// operands are passed with their own strides, so transposed views are read
// in place. Low-precision inputs use the library's own kernels where they
// are as fast as its f32 ones (bf16 with AMX, f16 with AMX or AVX512-FP16);
// elsewhere they are converted to f32, the same arithmetic since products
// of two bf16 or f16 numbers are exact in f32: as they are packed where
// OpenBLAS computes the f32 matrix products (PackedGemm.h), as they are
// read by the runtime's direct convolutions where oneDNN's are AVX2 ones
// (DirectConv.h), else extended into scratch first.
//
//===----------------------------------------------------------------------===//

#include "DirectConv.h"
#include "PackedGemm.h"
#include "amp/ExecutionEngine/CpuRuntime.h"
#include "dnnl.hpp"
#include <algorithm>
#include <cblas.h>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <immintrin.h>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <omp.h>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

using dnnl::memory;

namespace {

/// One operand of a call: where its elements are and how they are laid out.
struct Operand {
  memory::data_type type;
  memory::dims dims, strides;
  void *data;
};

size_t getElementSize(memory::data_type type) {
  return type == memory::data_type::f32 ? 4 : 2;
}

/// Reads an unranked memref descriptor: {base, aligned, offset, sizes[rank],
/// strides[rank]}.
Operand readOperand(const AmpUnrankedMemRef *memref, memory::data_type type) {
  auto *bytes = static_cast<char *>(memref->descriptor);
  char *aligned = *reinterpret_cast<char **>(bytes + sizeof(void *));
  int64_t offset = *reinterpret_cast<int64_t *>(bytes + 2 * sizeof(void *));
  auto *sizes =
      reinterpret_cast<int64_t *>(bytes + 2 * sizeof(void *) + sizeof(int64_t));
  Operand operand;
  operand.type = type;
  operand.dims.assign(sizes, sizes + memref->rank);
  operand.strides.assign(sizes + memref->rank, sizes + 2 * memref->rank);
  operand.data = aligned + offset * getElementSize(type);
  return operand;
}

float extendF16(uint16_t bits) {
  uint32_t sign = (bits & 0x8000u) << 16, exponent = (bits >> 10) & 0x1f,
           mantissa = bits & 0x3ff, word;
  if (exponent == 0x1f) {
    word = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    word = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    word = sign;
  } else { // subnormal: normalize
    exponent = 113;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      --exponent;
    }
    word = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
  }
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}

float extendBF16(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}

int64_t getNumElements(const Operand &operand) {
  int64_t count = 1;
  for (int64_t d : operand.dims)
    count *= d;
  return count;
}

/// Whether the elements of `operand` fill one run of memory from its first
/// element on, in some order of its dimensions (a dense array or a
/// transposed view of one).
bool isDenseInSomeOrder(const Operand &operand) {
  std::vector<std::pair<int64_t, int64_t>> byStride; // (stride, size)
  for (size_t d = 0; d < operand.dims.size(); ++d)
    if (operand.dims[d] != 1)
      byStride.emplace_back(operand.strides[d], operand.dims[d]);
  std::sort(byStride.begin(), byStride.end());
  int64_t expected = 1;
  for (auto [stride, size] : byStride) {
    if (stride != expected)
      return false;
    expected *= size;
  }
  return true;
}

/// out[i] = in[i] for i < n, `in` f16 or bf16 bits. The F16C loop converts
/// eight f16 numbers per instruction (exactly, as the scalar one does).
__attribute__((target("avx,f16c"))) void extendF16WithF16C(
    const uint16_t *in, float *out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                  reinterpret_cast<const __m128i *>(in + i))));
  for (; i < n; ++i)
    out[i] = extendF16(in[i]);
}

void extendRun(memory::data_type type, const void *in, float *out,
               int64_t n) {
  static const bool hasF16C = __builtin_cpu_supports("f16c");
  if (type == memory::data_type::f32) {
    std::memcpy(out, in, n * sizeof(float));
  } else if (type == memory::data_type::f16) {
    auto *bits = static_cast<const uint16_t *>(in);
    if (hasF16C)
      return extendF16WithF16C(bits, out, n);
    for (int64_t i = 0; i < n; ++i)
      out[i] = extendF16(bits[i]);
  } else {
    auto *bits = static_cast<const uint16_t *>(in);
    for (int64_t i = 0; i < n; ++i)
      out[i] = extendBF16(bits[i]);
  }
}

/// The elements one thread converts at a time: conversions of large
/// operands are split over the library's threads (`threads`), in blocks that
/// each convert as before.
constexpr int64_t kElementsPerBlock = 1 << 15;

/// A dense f32 copy of `operand` at `data`: with its own strides when it is
/// dense in some order (one run to convert), else row-major. The layout
/// depends on the operand's alone, so a primitive made for one call fits
/// the next.
Operand describeF32Copy(const Operand &operand, float *data) {
  Operand copy = operand;
  copy.type = memory::data_type::f32;
  copy.data = data;
  if (!isDenseInSomeOrder(operand)) {
    int64_t stride = 1;
    for (int d = static_cast<int>(operand.dims.size()) - 1; d >= 0;
         stride *= operand.dims[d--])
      copy.strides[d] = stride;
  }
  return copy;
}

/// Calls `convert(first, n, at, stride)` for runs that cover the elements of
/// `operand` and of its describeF32Copy: elements first .. first + n - 1 of
/// the copy are those at `at`, `at + stride`, ... of `operand`. A dense
/// operand is one run, in blocks over the library's threads; another, row
/// by row along its last dimension.
template <typename ConvertFn>
void forEachRun(const Operand &operand, ConvertFn convert) {
  int64_t count = getNumElements(operand);
  if (isDenseInSomeOrder(operand)) {
    int64_t blocks = (count + kElementsPerBlock - 1) / kElementsPerBlock;
#pragma omp parallel for schedule(static) if (blocks > 1)
    for (int64_t block = 0; block < blocks; ++block) {
      int64_t first = block * kElementsPerBlock;
      convert(first, std::min(kElementsPerBlock, count - first), first,
              int64_t(1));
    }
    return;
  }
  int rank = operand.dims.size();
  int64_t rowLength = rank ? operand.dims[rank - 1] : 1;
  int64_t rowStride = rank ? operand.strides[rank - 1] : 1;
  std::vector<int64_t> index(std::max(rank - 1, 0), 0);
  for (int64_t row = 0; row * rowLength < count; ++row) {
    int64_t at = 0;
    for (int d = 0; d + 1 < rank; ++d)
      at += index[d] * operand.strides[d];
    convert(row * rowLength, rowLength, at, rowStride);
    for (int d = rank - 2; d >= 0 && ++index[d] == operand.dims[d]; --d)
      index[d] = 0;
  }
}

/// f32 scratch that every use writes before it reads. It only grows, and
/// growing does not zero it: std::vector::resize zeroes what a smaller call
/// before left out, a memset per call where sizes alternate.
class Scratch {
public:
  float *get(int64_t count) {
    if (count > capacity) {
      storage.reset(new float[count]);
      capacity = count;
    }
    return storage.get();
  }

private:
  std::unique_ptr<float[]> storage;
  int64_t capacity = 0;
};

/// `operand` extended to f32 in `scratch`, laid out as describeF32Copy.
Operand extendToF32(const Operand &operand, Scratch &scratch) {
  float *storage = scratch.get(getNumElements(operand));
  size_t elementSize = getElementSize(operand.type);
  auto *in = static_cast<const char *>(operand.data);
  forEachRun(operand, [&](int64_t first, int64_t n, int64_t at,
                          int64_t stride) {
    if (stride == 1)
      return extendRun(operand.type, in + at * elementSize, storage + first, n);
    for (int64_t i = 0; i < n; ++i)
      extendRun(operand.type, in + (at + i * stride) * elementSize,
                storage + first + i, 1);
  });
  return describeF32Copy(operand, storage);
}

/// f32 to bf16 bits, rounded to nearest even (NaNs stay NaNs).
uint16_t truncateBF16(float value) {
  uint32_t word;
  std::memcpy(&word, &value, 4);
  if ((word & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((word >> 16) | 0x40);
  return static_cast<uint16_t>((word + 0x7fffu + ((word >> 16) & 1)) >> 16);
}

/// f32 to f16 bits, rounded to nearest even (overflow to infinity).
uint16_t truncateF16(float value) {
  uint32_t word;
  std::memcpy(&word, &value, 4);
  uint32_t sign = (word >> 16) & 0x8000u, magnitude = word & 0x7fffffffu;
  if (magnitude > 0x7f800000u)
    return static_cast<uint16_t>(sign | 0x7e00u);
  if (magnitude >= 0x477ff000u) // 65520 and above round to infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude < 0x38800000u) { // below 2^-14: a multiple of 2^-24
    float scaled;
    std::memcpy(&scaled, &magnitude, 4);
    return static_cast<uint16_t>(
        sign | static_cast<uint32_t>(std::nearbyint(scaled * 16777216.0f)));
  }
  uint32_t bits = ((magnitude >> 23) - 112) << 10 | ((magnitude >> 13) & 0x3ff);
  uint32_t rest = magnitude & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (bits & 1)))
    ++bits; // a carry into the exponent is the right result
  return static_cast<uint16_t>(sign | bits);
}

/// out[i] = in[i] rounded to f16 for i < n. The F16C loop rounds eight
/// numbers per instruction, to nearest even as truncateF16 does.
__attribute__((target("avx,f16c"))) void truncateF16WithF16C(const float *in,
                                                             uint16_t *out,
                                                             int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(
        reinterpret_cast<__m128i *>(out + i),
        _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i)
    out[i] = truncateF16(in[i]);
}

/// out[i] = in[i] rounded to bf16 for i < n, sixteen numbers a step, as
/// truncateBF16 rounds them (the scalar loop, with its NaN branch, is not
/// vectorized: 3% of the CNN's bf16 step on AMD Zen 3; sixteen a step
/// instead of eight took 0.16 instead of 0.21 ms for 1M numbers in cache).
AMP_AVX2 void truncateBF16WithAVX2(const float *in, uint16_t *out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + i),
                        amp::cpu::roundToBF16(_mm256_loadu_ps(in + i),
                                              _mm256_loadu_ps(in + i + 8)));
  for (; i < n; ++i)
    out[i] = truncateBF16(in[i]);
}

/// out[i * stride] = in[i] in `type` (f32, f16 or bf16) for i < n.
void truncateRun(memory::data_type type, const float *in, void *out,
                 int64_t n, int64_t stride) {
  static const bool hasF16C = __builtin_cpu_supports("f16c");
  if (type == memory::data_type::f32) {
    auto *values = static_cast<float *>(out);
    for (int64_t i = 0; i < n; ++i)
      values[i * stride] = in[i];
    return;
  }
  auto *bits = static_cast<uint16_t *>(out);
  if (type == memory::data_type::f16 && hasF16C && stride == 1)
    return truncateF16WithF16C(in, bits, n);
  if (type == memory::data_type::bf16 && amp::cpu::hasAvx2() && stride == 1)
    return truncateBF16WithAVX2(in, bits, n);
  for (int64_t i = 0; i < n; ++i)
    bits[i * stride] = type == memory::data_type::f16 ? truncateF16(in[i])
                                                      : truncateBF16(in[i]);
}

/// `dst` (f16 or bf16) = `wide`, its describeF32Copy, rounded to nearest
/// even (oneDNN's own f32 to f16 reorder is a scalar reference loop without
/// AVX512-FP16).
void roundInto(const Operand &wide, const Operand &dst) {
  auto *in = static_cast<const float *>(wide.data);
  auto *out = static_cast<char *>(dst.data);
  size_t elementSize = getElementSize(dst.type);
  forEachRun(dst, [&](int64_t first, int64_t n, int64_t at, int64_t stride) {
    truncateRun(dst.type, in + first, out + at * elementSize, n, stride);
  });
}

memory::desc describe(const Operand &operand) {
  return memory::desc(operand.dims, operand.type, operand.strides);
}

/// The same dimensions and type in the layout a primitive chooses.
memory::desc describeAnyLayout(const Operand &operand) {
  return memory::desc(operand.dims, operand.type, memory::format_tag::any);
}

/// A primitive and whether it computes low-precision inputs natively.
struct Cached {
  dnnl::primitive primitive;
  bool native = true;
  /// The primitive writes f32 where the output is f16 or bf16, which
  /// roundInto then rounds: no optimized kernel here writes the low type
  /// from f32 inputs (an f16 convolution without AVX512-FP16 or AMX).
  bool wideOutput = false;
  /// The layouts the primitive reads its operands in (src, weights, dst),
  /// and buffers in them where they differ from the operands' own, made at
  /// the first call that needs them.
  memory::desc layouts[3];
  memory relaid[3];
};

using Key = std::tuple<int, std::vector<int64_t>>;

/// The process's engine, stream and primitive cache.
class Library {
public:
  static Library &get() {
    static Library library;
    return library;
  }

  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::mutex mutex;
  std::map<Key, Cached> cache;
  /// Scratch for inputs extended to f32, and for f32 outputs rounded after.
  Scratch scratch[3];
  /// Whether oneDNN fuses the epilogue of a matmul (by its key); where it
  /// does not, runEpilogueLoops computes it around the product.
  std::map<Key, bool> fusable;

private:
  Library() { omp_set_num_threads(1); }
};

/// The key of a call: its kind, types, shapes, strides and parameters, and
/// the calling thread's thread count (ampCpuSetNumThreads): oneDNN divides a
/// primitive's work among the threads it had when it was created.
Key makeKey(int kind, std::initializer_list<const Operand *> operands,
            std::initializer_list<int64_t> parameters) {
  std::vector<int64_t> key = {omp_get_max_threads()};
  for (const Operand *operand : operands) {
    key.push_back(static_cast<int64_t>(operand->type));
    key.insert(key.end(), operand->dims.begin(), operand->dims.end());
    key.insert(key.end(), operand->strides.begin(), operand->strides.end());
  }
  key.insert(key.end(), parameters);
  return {kind, std::move(key)};
}

dnnl::primitive_attr makeAttributes(bool accumulate) {
  dnnl::primitive_attr attributes;
  if (accumulate) {
    dnnl::post_ops ops;
    ops.append_sum(1.0f);
    attributes.set_post_ops(ops);
  }
  return attributes;
}

/// The addends of a matmul's epilogue, added in order to the f32 product
/// before it is converted to the output's type: f32, of the output's rank,
/// with dimensions of 1 where they are broadcast (a bias is 1 x N).
using Epilogue = std::vector<Operand>;

/// oneDNN's post-ops for `epilogue`: binary adds, their operands read at
/// run time (DNNL_ARG_ATTR_MULTIPLE_POST_OP).
dnnl::primitive_attr makeAttributes(const Epilogue &epilogue) {
  dnnl::post_ops ops;
  for (const Operand &addend : epilogue)
    ops.append_binary(dnnl::algorithm::binary_add, describe(addend));
  dnnl::primitive_attr attributes;
  attributes.set_post_ops(ops);
  return attributes;
}

/// Whether a primitive runs low-precision inputs at least as fast as f32
/// would: the library's kernels on bf16 dot-product instructions (AMX, and
/// AVX512-BF16's `vdpbf16ps`: on AMD Zen 4, 2x the f32 rate for matmuls and
/// 1.2-3x for convolutions, bench/RESULTS.md), and for f16 its AVX512-FP16
/// matmuls (at the f32 rate, without extending the inputs first). Its
/// AVX512-FP16 convolutions are not (on the Xeon of docs/CPU.md, 9-13 ms
/// against 2-3 ms in f32 for the CNN's 64 x 16 x 32 x 32 3x3 convolutions).
/// Elsewhere (AVX2, or bf16 emulated on AVX-512 alone) inputs are extended
/// instead. A fixed rule, not a timing, so that a step computes the same on
/// every run.
bool isFastLowPrecision(memory::data_type type,
                        const dnnl::primitive_desc &descriptor) {
  std::string implementation = descriptor.impl_info_str();
  auto has = [&](const char *isa) {
    return implementation.find(isa) != std::string::npos;
  };
  bool convolution =
      descriptor.get_kind() == dnnl::primitive::kind::convolution;
  if (type == memory::data_type::bf16)
    return has("amx") || has("avx512_core_bf16");
  return has("amx") || (has("avx512_core_fp16") && !convolution);
}

/// Whether `descriptor` runs one of oneDNN's reference kernels (plain
/// loops, e.g. `ref:any`), which it picks where no optimized one takes the
/// types.
bool isReferenceKernel(const dnnl::primitive_desc &descriptor) {
  return std::string(descriptor.impl_info_str()).find("ref") !=
         std::string::npos;
}

enum Kind {
  Matmul = 1,
  Conv2D = 2,
  Conv2DBackwardWeights = 3,
  Conv2DBackwardData = 4,
  MatmulEpilogue = 5
};

/// The execution arguments a primitive reads its two inputs from and writes
/// its output to, and whether it can add into its output (a sum post-op;
/// oneDNN's backward convolutions cannot).
struct Roles {
  int arguments[3];
  bool sums;
};
constexpr Roles kForwardRoles{{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                              true};

/// The first error a library call of this thread met, until
/// ampCpuTakeError hands it to the runner: a call cannot return one to the
/// compiled step, which goes on (its results are then not used).
thread_local std::string pendingError;

/// Records the error of the call `what` on these operands unless one is
/// pending: "convolution of 2x3x9x7 and 5x4x3x3 into 2x5x7x5: <message>".
void recordError(const char *what, const Operand &src, const Operand &weights,
                 const Operand &dst, const char *error) {
  if (!pendingError.empty())
    return;
  auto shape = [](const Operand &operand) {
    std::string text;
    for (memory::dim size : operand.dims)
      text += (text.empty() ? "" : "x") + std::to_string(size);
    return text;
  };
  pendingError = std::string(what) + " of " + shape(src) + " and " +
                 shape(weights) + " into " + shape(dst) + ": " + error;
}

/// `operand` with its last two dimensions swapped (a transposed view).
Operand transposed(Operand operand) {
  size_t rank = operand.dims.size();
  std::swap(operand.dims[rank - 1], operand.dims[rank - 2]);
  std::swap(operand.strides[rank - 1], operand.strides[rank - 2]);
  return operand;
}

void runMatmul(const Operand &a, const Operand &b, const Operand &c,
               bool accumulate);

/// oneDNN's fast matmuls write row-major outputs: a column-major C is
/// computed as C^T = B^T A^T, every operand a view of its own storage.
void runMatmulRowMajor(const Operand &a, const Operand &b, const Operand &c,
                       bool accumulate) {
  size_t rank = c.dims.size();
  if (c.strides[rank - 1] != 1 && c.strides[rank - 2] == 1)
    return runMatmul(transposed(b), transposed(a), transposed(c), accumulate);
  runMatmul(a, b, c, accumulate);
}

/// Whether `operand`'s elements are where `layout` puts them. Besides an
/// equal description, that holds for a blocked layout whose one inner block
/// spans its whole dimension: for 16 channels, oneDNN's nChw16c is
/// channels-last (NHWC) byte for byte, which amp-cpu-channels-last gives
/// such activations so that no reorder runs.
bool hasLayout(const Operand &operand, const memory::desc &layout) {
  if (describe(operand) == layout)
    return true;
  memory::dims dims = layout.get_dims();
  if (layout.get_format_kind() != memory::format_kind::blocked ||
      layout.get_data_type() != operand.type || dims != operand.dims ||
      layout.get_padded_dims() != dims ||
      layout.get_padded_offsets() != memory::dims(dims.size(), 0) ||
      layout.get_submemory_offset() != 0 ||
      layout.get_inner_nblks() > 1)
    return false;
  memory::dims strides = layout.get_strides();
  if (layout.get_inner_nblks() == 1) {
    int blocked = layout.get_inner_idxs()[0];
    if (layout.get_inner_blks()[0] != dims[blocked])
      return false;
    strides[blocked] = 1;
  }
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] != 1 && strides[d] != operand.strides[d])
      return false;
  return true;
}

/// `operand` as a primitive reads it: in place when it has the chosen
/// layout, else reordered into `buffer` (copied in when `read`).
memory inLayout(Library &library, const Operand &operand,
                const memory::desc &layout, memory &buffer, bool read) {
  if (hasLayout(operand, layout))
    return memory(layout, library.engine, operand.data);
  memory plain(describe(operand), library.engine, operand.data);
  if (!buffer)
    buffer = memory(layout, library.engine);
  if (read)
    dnnl::reorder(plain, buffer).execute(library.stream, plain, buffer);
  return buffer;
}

/// Runs the primitive cached under `key` on `srcIn` and `weightsIn` into
/// `dst` (added to it when `accumulate`), made from `make(src, weights, out)`
/// (a primitive descriptor) on the first call: on the low-precision inputs
/// where oneDNN has a fast kernel for them (isFastLowPrecision), else on
/// their extension to f32, and into an f32 copy of a low `dst` where no
/// optimized kernel writes its type from f32 inputs. `what` names the call
/// in errors.
template <typename MakeFn>
void runCached(const char *what, Key key, const Operand &srcIn,
               const Operand &weightsIn, const Operand &dst, bool accumulate,
               MakeFn make, const Roles &roles = kForwardRoles,
               const Epilogue &epilogue = {}) {
  // After an error the step's results are discarded: no more work.
  if (!pendingError.empty())
    return;
  Library &library = Library::get();
  std::lock_guard<std::mutex> lock(library.mutex);
  auto it = library.cache.find(key);
  try {
    bool low = srcIn.type != memory::data_type::f32;
    if (it == library.cache.end()) {
      Cached cached;
      auto keep = [&](const dnnl::primitive_desc &descriptor) {
        cached.primitive = dnnl::primitive(descriptor);
        for (int i = 0; i < 3; ++i)
          cached.layouts[i] =
              descriptor.query_md(dnnl::query::exec_arg_md, roles.arguments[i]);
      };
      bool native = false;
      if (low) {
        try {
          dnnl::primitive_desc descriptor = make(srcIn, weightsIn, dst);
          native = isFastLowPrecision(srcIn.type, descriptor);
          if (native)
            keep(descriptor);
        } catch (const dnnl::error &) {
          // No bf16 kernel on this host: extend to f32.
        }
      }
      if (!low || !native) {
        Scratch src, weights;
        Operand extendedSrc = low ? extendToF32(srcIn, src) : srcIn;
        Operand extendedWeights =
            low ? extendToF32(weightsIn, weights) : weightsIn;
        // oneDNN's reference kernels, its last resort, are what it has for
        // f32 convolutions into f16: an f32 copy rounded after costs less.
        bool wide = false;
        if (dst.type != memory::data_type::f32 && !accumulate) {
          try {
            wide = isReferenceKernel(make(extendedSrc, extendedWeights, dst));
          } catch (const dnnl::error &) {
            wide = true;
          }
        }
        Scratch output;
        keep(make(extendedSrc, extendedWeights,
                  wide ? describeF32Copy(dst, output.get(getNumElements(dst)))
                       : dst));
        cached.wideOutput = wide;
      }
      cached.native = !low || native;
      it = library.cache.emplace(std::move(key), std::move(cached)).first;
    }
    Cached &cached = it->second;
    Operand src = srcIn, weights = weightsIn;
    if (!cached.native) {
      src = extendToF32(srcIn, library.scratch[0]);
      weights = extendToF32(weightsIn, library.scratch[1]);
    }
    memory srcArg = inLayout(library, src, cached.layouts[0],
                             cached.relaid[0], /*read=*/true);
    memory weightsArg = inLayout(library, weights, cached.layouts[1],
                                 cached.relaid[1], /*read=*/true);
    // A primitive without a sum post-op writes a buffer of its own, which
    // the reorder back adds into the output.
    bool sumOnReorder = accumulate && !roles.sums;
    if (sumOnReorder && !cached.relaid[2])
      cached.relaid[2] = memory(cached.layouts[2], library.engine);
    // The output the primitive writes: `dst` or an f32 copy of it, rounded
    // into `dst` after.
    Operand out =
        cached.wideOutput
            ? describeF32Copy(dst, library.scratch[2].get(getNumElements(dst)))
            : dst;
    memory dstArg = sumOnReorder
                        ? cached.relaid[2]
                        : inLayout(library, out, cached.layouts[2],
                                   cached.relaid[2], /*read=*/accumulate);
    std::unordered_map<int, memory> args = {{roles.arguments[0], srcArg},
                                            {roles.arguments[1], weightsArg},
                                            {roles.arguments[2], dstArg}};
    for (size_t index = 0; index < epilogue.size(); ++index)
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(index) | DNNL_ARG_SRC_1] = memory(
          describe(epilogue[index]), library.engine, epilogue[index].data);
    cached.primitive.execute(library.stream, args);
    if (sumOnReorder || !hasLayout(out, cached.layouts[2])) {
      memory plain(describe(out), library.engine, out.data);
      dnnl::reorder::primitive_desc back(dstArg, plain,
                                         makeAttributes(sumOnReorder));
      dnnl::reorder(back).execute(library.stream, dstArg, plain);
    }
    library.stream.wait();
    if (cached.wideOutput)
      roundInto(out, dst);
  } catch (const dnnl::error &error) {
    recordError(what, srcIn, weightsIn, dst, error.what());
  } catch (const std::bad_alloc &) {
    // The f32 copies of sizes no memory holds (a hostile descriptor).
    recordError(what, srcIn, weightsIn, dst,
                "out of memory for the f32 copies of its operands");
  }
}

/// The libraries that can run the f32 matrix products (with OpenBLAS, the
/// low-precision ones are packedGemm's).
enum class GemmLibrary { OneDNN, OpenBLAS };

/// The library for this host's f32 matrix products: OpenBLAS where oneDNN's
/// f32 matmul is its plain AVX2 GEMM (`gemm:jit`), which runs at half
/// OpenBLAS's rate on AMD Zen 3 (46 against 87 GFLOP/s on 1 thread,
/// docs/CPU.md); oneDNN where it has its AVX-512 or AMX kernels. The
/// environment variable AMP_CPU_GEMM (`onednn` or `openblas`) overrides the
/// choice, which tests use to run both on any host. A fixed rule, not a
/// timing: a step computes the same on every run.
GemmLibrary gemmLibrary() {
  // The variable's value as the process started using the runtime.
  static const std::string forced = [] {
    const char *value = std::getenv("AMP_CPU_GEMM");
    return std::string(value ? value : "");
  }();
  static const std::optional<GemmLibrary> chosen =
      []() -> std::optional<GemmLibrary> {
    if (!forced.empty()) {
      if (forced == "onednn")
        return GemmLibrary::OneDNN;
      if (forced == "openblas")
        return GemmLibrary::OpenBLAS;
      return std::nullopt;
    }
    try {
      memory::desc square({256, 256}, memory::data_type::f32,
                          memory::format_tag::ab);
      dnnl::matmul::primitive_desc descriptor(Library::get().engine, square,
                                              square, square);
      return std::string(descriptor.impl_info_str()).rfind("gemm:jit", 0) == 0
                 ? GemmLibrary::OpenBLAS
                 : GemmLibrary::OneDNN;
    } catch (const dnnl::error &) {
      return GemmLibrary::OneDNN;
    }
  }();
  if (!chosen && pendingError.empty())
    pendingError = "AMP_CPU_GEMM=" + forced +
                   ": not a library of the runtime (onednn or openblas)";
  return chosen.value_or(GemmLibrary::OneDNN);
}

/// How cblas_sgemm reads the last two dimensions of an operand: row-major
/// (or its transpose, column-major) with rows `leading` elements apart.
struct BlasMatrix {
  CBLAS_TRANSPOSE transpose;
  int64_t leading;
};

/// The BlasMatrix of `operand`, if it has one: unit stride along one of its
/// last two dimensions, the other at least as far apart as that one is
/// long, and sizes that fit cblas's ints. A dimension of size 1 takes any
/// stride.
std::optional<BlasMatrix> describeForBlas(const Operand &operand) {
  size_t rank = operand.dims.size();
  int64_t rows = operand.dims[rank - 2], columns = operand.dims[rank - 1];
  int64_t rowStride = operand.strides[rank - 2],
          columnStride = operand.strides[rank - 1];
  std::optional<BlasMatrix> matrix;
  if ((columns == 1 || columnStride == 1) &&
      (rows == 1 || rowStride >= std::max<int64_t>(columns, 1)))
    matrix = {CblasNoTrans, rows == 1 ? std::max<int64_t>(columns, 1)
                                      : rowStride};
  else if ((rows == 1 || rowStride == 1) &&
           (columns == 1 || columnStride >= std::max<int64_t>(rows, 1)))
    matrix = {CblasTrans, columns == 1 ? std::max<int64_t>(rows, 1)
                                       : columnStride};
  if (!matrix || matrix->leading > INT_MAX || rows > INT_MAX ||
      columns > INT_MAX)
    return std::nullopt;
  return matrix;
}

/// Whether this host's low-precision matrix products, where OpenBLAS
/// computes the f32 ones, are the runtime's packedGemm: f16 and bf16
/// inputs converted to f32 as they are packed, no extended copies.
bool packsLowPrecision() {
  return gemmLibrary() == GemmLibrary::OpenBLAS && amp::cpu::hasPackedGemm();
}

/// The runtime's own kernels' name of `type` (f32, f16 or bf16).
amp::cpu::ElementType toElementType(memory::data_type type) {
  return type == memory::data_type::f32   ? amp::cpu::ElementType::F32
         : type == memory::data_type::f16 ? amp::cpu::ElementType::F16
                                          : amp::cpu::ElementType::BF16;
}

/// The last two dimensions of `operand` at `offset` elements, for
/// packedGemm.
amp::cpu::MatrixRef describeForPacking(const Operand &operand, int64_t offset) {
  size_t rank = operand.dims.size();
  return {static_cast<const char *>(operand.data) +
              offset * getElementSize(operand.type),
          toElementType(operand.type), operand.strides[rank - 2],
          operand.strides[rank - 1]};
}

/// C = A.B (C += A.B when `accumulate`) one matrix of the batch at a time
/// (a batch dimension of size 1 in A or B is broadcast), C row-major and
/// f32: f32 inputs by cblas_sgemm, f16 and bf16 ones by packedGemm. Returns
/// false, computing nothing, for f16 and bf16 inputs where not
/// packsLowPrecision (a host without AVX2: oneDNN extends them), and where
/// cblas_sgemm would read an operand that has no BlasMatrix.
bool runBlasMatmul(const Operand &a, const Operand &b, const Operand &c,
                   bool accumulate) {
  size_t rank = c.dims.size();
  // Batch dims equal to C's or broadcast (1), as oneDNN would check.
  for (const Operand *input : {&a, &b}) {
    if (input->dims.size() != rank)
      return false;
    for (size_t d = 0; d + 2 < rank; ++d)
      if (input->dims[d] != 1 && input->dims[d] != c.dims[d])
        return false;
  }
  std::optional<BlasMatrix> matrixC = describeForBlas(c);
  if (!matrixC || matrixC->transpose != CblasNoTrans)
    return false;
  bool packed = a.type != memory::data_type::f32;
  if (packed && !packsLowPrecision())
    return false;
  std::optional<BlasMatrix> matrixA = describeForBlas(a),
                            matrixB = describeForBlas(b);
  if (!packed && (!matrixA || !matrixB))
    return false;
  std::lock_guard<std::mutex> lock(Library::get().mutex);
  int64_t m = c.dims[rank - 2], n = c.dims[rank - 1], k = a.dims[rank - 1];
  if (m == 0 || n == 0)
    return true;
  int64_t batches = getNumElements(c) / (m * n);
  std::vector<int64_t> index(rank - 2, 0);
  for (int64_t batch = 0; batch < batches; ++batch) {
    auto offset = [&](const Operand &operand) {
      int64_t at = 0;
      for (size_t d = 0; d + 2 < rank; ++d)
        if (operand.dims[d] != 1)
          at += index[d] * operand.strides[d];
      return at;
    };
    float *product = static_cast<float *>(c.data) + offset(c);
    if (packed) {
      if (!amp::cpu::packedGemm(m, n, k, describeForPacking(a, offset(a)),
                                describeForPacking(b, offset(b)), product,
                                matrixC->leading, accumulate)) {
        pendingError = "matmul: out of memory for the packed operands";
        return true;
      }
    } else
      cblas_sgemm(
          CblasRowMajor, matrixA->transpose, matrixB->transpose, m, n, k, 1.0f,
          static_cast<const float *>(a.data) + offset(a), matrixA->leading,
          static_cast<const float *>(b.data) + offset(b), matrixB->leading,
          accumulate ? 1.0f : 0.0f, product, matrixC->leading);
    for (size_t d = rank - 2; d-- > 0 && ++index[d] == c.dims[d];)
      index[d] = 0;
  }
  return true;
}

/// The largest matrices (in multiply-adds) of the batched products that go
/// to oneDNN where OpenBLAS computes the host's f32 products: OpenBLAS
/// computes one matrix after another, each too small to share among its
/// threads, where oneDNN splits the batch over them. On AMD Zen 3, 32
/// products of 64 x 64 x 64 (the GPT block's attention) ran at 1.7-2.4x
/// OpenBLAS's rate on 2 threads and at 0.98-1.3x on 1, 8 of 256 x 256 x 256
/// at 1.1x; from 8 of 512 x 512 x 512 up the two ran alike, and 2 of
/// 256 x 1024 x 1024 at 0.9x on 1 thread.
constexpr int64_t kSmallBatchedMatrix = int64_t(256) * 256 * 256;

/// Whether C = A.B is a batch of more than one small matrix product.
bool isBatchOfSmallProducts(const Operand &a, const Operand &c) {
  size_t rank = c.dims.size();
  if (rank < 3)
    return false;
  int64_t m = c.dims[rank - 2], n = c.dims[rank - 1], k = a.dims.back();
  return getNumElements(c) > m * n &&
         m * n <= kSmallBatchedMatrix / std::max<int64_t>(k, 1);
}

void runMatmul(const Operand &a, const Operand &b, const Operand &c,
               bool accumulate) {
  if (!pendingError.empty())
    return;
  if (gemmLibrary() == GemmLibrary::OpenBLAS && !isBatchOfSmallProducts(a, c) &&
      runBlasMatmul(a, b, c, accumulate))
    return;
  runCached("matmul", makeKey(Matmul, {&a, &b, &c}, {accumulate}), a, b, c,
            accumulate,
            [&](const Operand &src, const Operand &weights,
                const Operand &out) {
              return dnnl::matmul::primitive_desc(
                  Library::get().engine, describe(src), describe(weights),
                  describe(out), makeAttributes(accumulate));
            });
}

/// The spatial parameters of a 2-d convolution: strides, dilations (from
/// 1, as linalg counts them), padding before and after, each {H, W}.
struct ConvGeometry {
  int64_t strideH, strideW, dilationH, dilationW, padTop, padLeft, padBottom,
      padRight;

  memory::dims strides() const { return {strideH, strideW}; }
  /// oneDNN counts dilation from 0.
  memory::dims dilations() const { return {dilationH - 1, dilationW - 1}; }
  memory::dims padLow() const { return {padTop, padLeft}; }
  memory::dims padHigh() const { return {padBottom, padRight}; }
};

/// The key of a convolution call of `kind`.
Key makeConvKey(int kind, std::initializer_list<const Operand *> operands,
                const ConvGeometry &g, bool accumulate) {
  return makeKey(kind, operands,
                 {g.strideH, g.strideW, g.dilationH, g.dilationW, g.padTop,
                  g.padLeft, g.padBottom, g.padRight, accumulate});
}

/// Whether `image` (N x C x H x W) is a dense channels-last (NHWC) array.
bool isChannelsLast(const Operand &image) {
  const memory::dims &d = image.dims, &s = image.strides;
  return d.size() == 4 && s[1] == 1 && s[3] == d[1] && s[2] == d[3] * d[1] &&
         s[0] == d[2] * d[3] * d[1];
}

/// `operand` with another element type (a primitive's own output type for
/// an input of its backward).
memory::desc describeAnyLayout(memory::dims dims, memory::data_type type) {
  return memory::desc(dims, type, memory::format_tag::any);
}

/// The forward convolution of `src` by `weights` into `dst` dimensions
/// (forward_training, as the backward primitives' hint), every layout the
/// library's choice.
dnnl::convolution_forward::primitive_desc
makeForwardConv(const memory::desc &src, const memory::desc &weights,
                const memory::desc &dst, const ConvGeometry &geometry,
                const dnnl::primitive_attr &attributes = {}) {
  return dnnl::convolution_forward::primitive_desc(
      Library::get().engine, dnnl::prop_kind::forward_training,
      dnnl::algorithm::convolution_direct, src, weights, dst,
      geometry.strides(), geometry.dilations(), geometry.padLow(),
      geometry.padHigh(), attributes);
}

/// A 3 x 3 convolution of 16 channels (the CNN's kind) of `type` inputs
/// into f32, every layout oneDNN's choice: what the queries below ask
/// oneDNN about.
dnnl::convolution_forward::primitive_desc
makeProbeConv(memory::data_type type) {
  auto any = memory::format_tag::any;
  memory::desc image({1, 16, 8, 8}, type, any);
  memory::desc weights({16, 16, 3, 3}, type, any);
  memory::desc output({1, 16, 8, 8}, memory::data_type::f32, any);
  return makeForwardConv(image, weights, output, {1, 1, 1, 1, 1, 1, 1, 1});
}

/// "native" where oneDNN runs the primitive that `make(type)` describes for
/// low-precision inputs of `type` on its own fast kernels, else "f32".
template <typename MakeFn>
const char *lowPrecisionPath(int32_t isF16, MakeFn make) {
  memory::data_type type =
      isF16 ? memory::data_type::f16 : memory::data_type::bf16;
  try {
    return isFastLowPrecision(type, make(type)) ? "native" : "f32";
  } catch (const dnnl::error &) {
    return "f32";
  }
}

/// ampCpuChannelBlock: the channel block of the image layout oneDNN picks
/// for the probe convolution in f32 (0 where it has none).
int32_t channelBlock() {
  static const int32_t block = [] {
    try {
      memory::desc image = makeProbeConv(memory::data_type::f32).src_desc();
      memory::dims dims = image.get_inner_idxs(),
                   blocks = image.get_inner_blks();
      for (size_t i = 0; i < dims.size(); ++i)
        if (dims[i] == 1)
          return static_cast<int32_t>(blocks[i]);
    } catch (const dnnl::error &) {
    }
    return 0;
  }();
  return block;
}

/// Whether oneDNN's convolutions here are its AVX2 kernels (8-channel
/// blocks) and the host runs the runtime's AVX2 code: where the runtime's
/// direct convolutions, AVX2 too, are at least as fast as oneDNN's f32
/// ones (bench/RESULTS.md, twenty-first round). With AVX-512, oneDNN's f32
/// kernels are twice as wide.
bool convolvesWithAvx2() {
  static const bool avx2 = amp::cpu::hasAvx2() && channelBlock() == 8;
  return avx2;
}

/// ampCpuConv2DLowPrecisionPath for `type` (f16 or bf16), worked out once:
/// "direct" where oneDNN would extend the inputs and convolvesWithAvx2.
const char *conv2DLowPrecisionPath(memory::data_type type) {
  auto path = [](int32_t isF16) {
    const char *library = lowPrecisionPath(isF16, makeProbeConv);
    return std::strcmp(library, "f32") == 0 && convolvesWithAvx2() ? "direct"
                                                                   : library;
  };
  static const char *bf16 = path(0), *f16 = path(1);
  return type == memory::data_type::f16 ? f16 : bf16;
}

/// The layout a convolution reads or writes `image` in: the library's
/// choice, a blocked layout (nChw16c, nChw8c) into and from which the
/// runtime reorders, except for channels-last images (amp-cpu-channels-
/// last): those of one channel block of the host's layouts
/// (ampCpuChannelBlock) are that layout already (hasLayout), the others are
/// taken as they are. oneDNN's channels-last kernels took 5-19% longer than
/// its blocked ones on the benchmark CNN's 32-channel convolutions on
/// AVX-512; the reorders they save took 7% of its bf16 step there
/// (bench/RESULTS.md, tenth round). On AVX2, whose blocks of 8 no
/// channels-last image of 16 channels is, reading those in place made its
/// fp32 step 14% faster (eighteenth round).
memory::desc describeImage(const Operand &image) {
  if (isChannelsLast(image) && image.dims[1] != channelBlock())
    return describe(image);
  return describeAnyLayout(image);
}

/// `operand` as the operand of a post-op of a product of rank `rank`:
/// leading dimensions of 1 added (a per-column bias becomes 1 x N, a
/// scalar 1 x 1).
Operand broadcastTo(Operand operand, size_t rank) {
  while (operand.dims.size() < rank) {
    int64_t stride =
        operand.dims.empty() ? 1 : operand.dims[0] * operand.strides[0];
    operand.dims.insert(operand.dims.begin(), 1);
    operand.strides.insert(operand.strides.begin(), stride);
  }
  return operand;
}

/// Calls `body(row, rowOf)` for every row (along the last dimension) of
/// `c`, over the library's threads when `c` has more than
/// `kElementsPerBlock` elements. rowOf(operand) is the first element of
/// `operand` in the row (the row's index in the dimensions before the last,
/// a broadcast dimension at 0) and its stride along the row.
template <typename RowFn> void forEachRowOf(const Operand &c, RowFn body) {
  size_t last = c.dims.size() - 1;
  int64_t count = getNumElements(c);
  int64_t rows = count / std::max<int64_t>(c.dims[last], 1);
#pragma omp parallel for schedule(static) if (count > kElementsPerBlock)
  for (int64_t row = 0; row < rows; ++row)
    body(row, [&](const Operand &operand) {
      int64_t at = 0;
      for (int64_t rest = row, d = last; d-- > 0; rest /= c.dims[d])
        if (operand.dims[d] != 1)
          at += rest % c.dims[d] * operand.strides[d];
      return std::pair{at, operand.dims[last] != 1 ? operand.strides[last] : 0};
    });
}

/// The epilogue where oneDNN does not fuse it or OpenBLAS computes the
/// product (gemmLibrary). An f32 output takes the sum of the addends first
/// and then the product added into it: one pass over the output fewer than
/// a product in scratch, and OpenBLAS zeroes no output before a product
/// that accumulates (beta = 1). The addends never overlap `c`
/// (amp-linalg-to-cpu-library fuses no bias that may alias the output).
/// A low output gets the product in dense f32 scratch, then row by row each
/// post-op and the conversion to its type, as the fused primitive computes
/// them. (oneDNN's own f32 to f16 reorder is a scalar reference loop on
/// hosts without AVX512-FP16: 60% of an f16 MLP step on AMD Zen 4.)
void runEpilogueLoops(const Operand &a, const Operand &b, const Operand &c,
                      const Epilogue &epilogue) {
  if (!pendingError.empty())
    return;
  int64_t rowLength = c.dims.back();
  if (c.type == memory::data_type::f32 && !epilogue.empty()) {
    forEachRowOf(c, [&](int64_t, auto rowOf) {
      auto [at, step] = rowOf(c);
      float *out = static_cast<float *>(c.data) + at;
      for (size_t index = 0; index < epilogue.size(); ++index) {
        auto [addendAt, addendStep] = rowOf(epilogue[index]);
        const float *in =
            static_cast<const float *>(epilogue[index].data) + addendAt;
        for (int64_t j = 0; j < rowLength; ++j)
          out[j * step] = (index ? out[j * step] : 0.0f) + in[j * addendStep];
      }
    });
    return runMatmul(a, b, c, /*accumulate=*/true);
  }
  // Kept per thread: filled anew by every call.
  static thread_local Scratch product;
  float *products = product.get(getNumElements(c));
  Operand scratch = c;
  scratch.type = memory::data_type::f32;
  scratch.data = products;
  int64_t stride = 1;
  for (size_t d = c.dims.size(); d-- > 0; stride *= c.dims[d])
    scratch.strides[d] = stride;
  runMatmul(a, b, scratch, /*accumulate=*/false);
  size_t elementSize = getElementSize(c.type);
  // Each row converted as one run; `product` is this thread's, so the
  // workers get its data.
  forEachRowOf(c, [&](int64_t row, auto rowOf) {
    float *values = products + row * rowLength;
    for (const Operand &addend : epilogue) {
      auto [at, step] = rowOf(addend);
      const float *in = static_cast<const float *>(addend.data) + at;
      for (int64_t j = 0; j < rowLength; ++j)
        values[j] += in[j * step];
    }
    auto [at, step] = rowOf(c);
    truncateRun(c.type, values,
                static_cast<char *>(c.data) + at * elementSize, rowLength,
                step);
  });
}

/// C = A.B + epilogue, never accumulating: post-ops on the f32 product, then
/// the conversion to C's type (f32, f16 or bf16), all in one oneDNN
/// primitive where the library makes one for these types (as runCached
/// would: native low-precision inputs or their extension to f32), else
/// runEpilogueLoops.
void runMatmulEpilogue(const Operand &a, const Operand &b, const Operand &c,
                       const Epilogue &epilogue) {
  // OpenBLAS fuses nothing: runEpilogueLoops around its product.
  if (gemmLibrary() == GemmLibrary::OpenBLAS)
    return runEpilogueLoops(a, b, c, epilogue);
  Key key = makeKey(MatmulEpilogue, {&a, &b, &c}, {});
  std::vector<int64_t> &values = std::get<1>(key);
  for (const Operand &addend : epilogue) {
    values.insert(values.end(), addend.dims.begin(), addend.dims.end());
    values.insert(values.end(), addend.strides.begin(), addend.strides.end());
  }
  auto make = [&](const Operand &src, const Operand &weights,
                  const Operand &out) {
    return dnnl::matmul::primitive_desc(Library::get().engine, describe(src),
                                        describe(weights), describe(out),
                                        makeAttributes(epilogue));
  };
  Library &library = Library::get();
  bool fused;
  {
    std::lock_guard<std::mutex> lock(library.mutex);
    auto it = library.fusable.find(key);
    if (it == library.fusable.end()) {
      bool supported = false;
      if (a.type != memory::data_type::f32) {
        try {
          supported = isFastLowPrecision(a.type, make(a, b, c));
        } catch (const dnnl::error &) {
        }
      }
      if (!supported) {
        Operand extendedA = a, extendedB = b;
        extendedA.type = extendedB.type = memory::data_type::f32;
        try {
          make(extendedA, extendedB, c);
          supported = true;
        } catch (const dnnl::error &) {
        }
      }
      it = library.fusable.emplace(key, supported).first;
    }
    fused = it->second;
  }
  if (!fused)
    return runEpilogueLoops(a, b, c, epilogue);
  runCached("matmul with epilogue", std::move(key), a, b, c,
            /*accumulate=*/false, make, kForwardRoles, epilogue);
}

/// runMatmulEpilogue with a row-major C, as runMatmulRowMajor: the
/// operands of the post-ops are transposed with C.
void runMatmulEpilogueRowMajor(const Operand &a, const Operand &b,
                               const Operand &c, Epilogue epilogue) {
  size_t rank = c.dims.size();
  if (!(c.strides[rank - 1] != 1 && c.strides[rank - 2] == 1))
    return runMatmulEpilogue(a, b, c, epilogue);
  for (Operand &addend : epilogue)
    addend = transposed(addend);
  runMatmulEpilogue(transposed(b), transposed(a), transposed(c), epilogue);
}

/// `operand` (4-d) for DirectConv.h.
amp::cpu::ArrayRef4 describeForDirectConv(const Operand &operand) {
  amp::cpu::ArrayRef4 array{operand.data, toElementType(operand.type), {}, {}};
  std::copy(operand.dims.begin(), operand.dims.end(), array.sizes);
  std::copy(operand.strides.begin(), operand.strides.end(), array.strides);
  return array;
}

/// The geometry for DirectConv.h.
amp::cpu::ConvWindow describeWindow(const ConvGeometry &geometry) {
  return {{geometry.strideH, geometry.strideW},
          {geometry.dilationH, geometry.dilationW},
          {geometry.padTop, geometry.padLeft},
          {geometry.padBottom, geometry.padRight}};
}

/// Whether `a`, `b` and `c` are 4-d, as DirectConv.h describes operands
/// (else oneDNN reports the call's error).
bool areImages(const Operand &a, const Operand &b, const Operand &c) {
  return a.dims.size() == 4 && b.dims.size() == 4 && c.dims.size() == 4;
}

/// Whether the runtime's own direct convolutions may take calls on `type`
/// inputs (conv2DLowPrecisionPath says "direct").
bool convolvesDirectly(memory::data_type type) {
  return pendingError.empty() && type != memory::data_type::f32 &&
         std::strcmp(conv2DLowPrecisionPath(type), "direct") == 0;
}

/// Computes the forward convolution with the runtime's direct convolution
/// where it takes it (convolvesDirectly, canDirectConv); else returns
/// false, computing nothing.
bool runDirectConv(const Operand &input, const Operand &filter,
                   const Operand &output, const ConvGeometry &geometry) {
  if (!convolvesDirectly(input.type) || !areImages(input, filter, output))
    return false;
  amp::cpu::ArrayRef4 in = describeForDirectConv(input),
                      weights = describeForDirectConv(filter),
                      out = describeForDirectConv(output);
  amp::cpu::ConvWindow window = describeWindow(geometry);
  if (!amp::cpu::canDirectConv(in, weights, out, window))
    return false;
  if (!amp::cpu::directConv(in, weights, out, window))
    pendingError = "convolution: out of memory for the direct convolution";
  return true;
}

/// The same for the filter gradient (canDirectConvWeightGradient); f32
/// ones too where convolvesWithAvx2, for windows larger than 1 x 1: there
/// oneDNN's f32 kernel (`jit:avx2`) ran the CNN's 3 x 3 ones at 41-71
/// GFLOP/s and the direct one at 64-85 (its 1 x 1 one at 51-54 against
/// 33-35: few products per element converted; bench/RESULTS.md,
/// twenty-first round).
bool runDirectConvWeightGradient(const Operand &input,
                                 const Operand &outputGradient,
                                 const Operand &filterGradient,
                                 const ConvGeometry &geometry,
                                 bool accumulate) {
  if (!areImages(input, outputGradient, filterGradient))
    return false;
  bool f32 = input.type == memory::data_type::f32 && pendingError.empty() &&
             convolvesWithAvx2() &&
             filterGradient.dims[2] * filterGradient.dims[3] > 1;
  if (!f32 && !convolvesDirectly(input.type))
    return false;
  amp::cpu::ArrayRef4 in = describeForDirectConv(input),
                      gradient = describeForDirectConv(outputGradient),
                      out = describeForDirectConv(filterGradient);
  amp::cpu::ConvWindow window = describeWindow(geometry);
  if (!amp::cpu::canDirectConvWeightGradient(in, gradient, out, window))
    return false;
  if (!amp::cpu::directConvWeightGradient(in, gradient, out, window,
                                          accumulate))
    pendingError = "convolution weight gradient: out of memory for the direct "
                   "convolution";
  return true;
}

/// A convolution chooses its operands' layouts (format_tag::any) but for
/// channels-last images (describeImage): oneDNN's direct kernels read
/// blocked layouts (nChw16c and the like) and channels-last ones, and with
/// other strided ones it falls back to im2col and a GEMM, which took 30% of
/// a ResNet step. The reorders cost a pass over each operand.
void runConv2D(const Operand &input, const Operand &filter,
               const Operand &output, const ConvGeometry &geometry,
               bool accumulate) {
  if (!accumulate && runDirectConv(input, filter, output, geometry))
    return;
  runCached("convolution",
            makeConvKey(Conv2D, {&input, &filter, &output}, geometry,
                        accumulate),
            input, filter, output, accumulate,
            [&](const Operand &src, const Operand &weights,
                const Operand &out) {
              return makeForwardConv(describeImage(src),
                                     describeAnyLayout(weights),
                                     describeImage(out), geometry,
                                     makeAttributes(accumulate));
            });
}

/// The filter gradient of a convolution of `input` (N x C x H x W) whose
/// output gradient is `outputGradient` (N x F x OH x OW), into
/// `filterGradient` (F x C x KH x KW): oneDNN's
/// convolution_backward_weights, the forward convolution as its hint.
void runConv2DBackwardWeights(const Operand &input,
                              const Operand &outputGradient,
                              const Operand &filterGradient,
                              const ConvGeometry &geometry, bool accumulate) {
  if (runDirectConvWeightGradient(input, outputGradient, filterGradient,
                                  geometry, accumulate))
    return;
  runCached(
      "convolution weight gradient",
      makeConvKey(Conv2DBackwardWeights,
                  {&input, &outputGradient, &filterGradient}, geometry,
                  accumulate),
      input, outputGradient, filterGradient, accumulate,
      [&](const Operand &src, const Operand &diffDst, const Operand &out) {
        memory::desc srcDesc = describeImage(src);
        memory::desc diffDstDesc = describeImage(diffDst);
        auto hint = makeForwardConv(
            srcDesc, describeAnyLayout(out.dims, src.type), diffDstDesc,
            geometry);
        return dnnl::convolution_backward_weights::primitive_desc(
            Library::get().engine, dnnl::algorithm::convolution_direct, srcDesc,
            describeAnyLayout(out), diffDstDesc, geometry.strides(),
            geometry.dilations(), geometry.padLow(), geometry.padHigh(), hint);
      },
      Roles{{DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS}, false});
}

/// `filter` (F x C x KH x KW, any strides) rotated by 180 degrees in its
/// spatial dimensions, dense, into `storage`.
Operand rotateFilter(const Operand &filter, std::vector<char> &storage) {
  size_t size = getElementSize(filter.type);
  const memory::dims &d = filter.dims;
  storage.resize(getNumElements(filter) * size);
  Operand rotated = filter;
  rotated.strides = {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
  rotated.data = storage.data();
  char *out = storage.data();
  for (int64_t f = 0; f < d[0]; ++f)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t y = 0; y < d[2]; ++y)
        for (int64_t x = 0; x < d[3]; ++x, out += size)
          std::memcpy(out,
                      static_cast<const char *>(filter.data) +
                          (f * filter.strides[0] + c * filter.strides[1] +
                           (d[2] - 1 - y) * filter.strides[2] +
                           (d[3] - 1 - x) * filter.strides[3]) *
                              size,
                      size);
  return rotated;
}

/// The primitive descriptor `make` returns, moved on to oneDNN's direct jit
/// kernel where its first choice is a brgemm convolution without AMX: for
/// the input gradients of strided convolutions oneDNN 3.2 prefers
/// brgconv_strided, which on AVX-512 alone (AMD Zen 4) took 2.2-3.6x the
/// time of its jit kernel (1.52 against 0.68 ms for the CNN's 3x3 stride-2
/// bf16 one, 0.48 against 0.13 ms for its 1x1; f32 alike) and chose
/// channels-last layouts that cost reorders of their own. With AMX the
/// brgemm kernels are the fast ones and stay. A fixed rule, not a timing.
template <typename MakeFn>
auto preferDirectKernel(MakeFn make) -> decltype(make()) {
  auto first = make();
  std::string implementation = first.impl_info_str();
  if (implementation.rfind("brg", 0) != 0 ||
      implementation.find("amx") != std::string::npos)
    return first;
  auto candidate = make();
  while (candidate.next_impl())
    if (std::string(candidate.impl_info_str()).rfind("jit", 0) == 0)
      return candidate;
  return first;
}

/// The input gradient (N x C x H x W) of a convolution by the filter that
/// `rotatedFilter` (F x C x KH x KW) is the 180-degree rotation of, from
/// its output gradient (N x F x OH x OW): oneDNN's
/// convolution_backward_data, the forward convolution as its hint.
void runConv2DBackwardData(const Operand &outputGradient,
                           const Operand &rotatedFilter,
                           const Operand &inputGradient,
                           const ConvGeometry &geometry, bool accumulate) {
  std::vector<char> storage;
  Operand filter = rotateFilter(rotatedFilter, storage);
  runCached(
      "convolution input gradient",
      makeConvKey(Conv2DBackwardData, {&outputGradient, &filter, &inputGradient},
                  geometry, accumulate),
      outputGradient, filter, inputGradient, accumulate,
      [&](const Operand &diffDst, const Operand &weights, const Operand &out) {
        memory::desc diffDstDesc = describeImage(diffDst);
        memory::desc weightsDesc = describeAnyLayout(weights);
        auto hint = makeForwardConv(
            describeAnyLayout(out.dims, weights.type), weightsDesc,
            diffDstDesc, geometry);
        return preferDirectKernel([&] {
          return dnnl::convolution_backward_data::primitive_desc(
              Library::get().engine, dnnl::algorithm::convolution_direct,
              describeImage(out), weightsDesc, diffDstDesc,
              geometry.strides(), geometry.dilations(), geometry.padLow(),
              geometry.padHigh(), hint);
        });
      },
      Roles{{DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC}, false});
}

/// The buffers of lowered steps, kept by size for reuse: a step allocates
/// the same sizes on every call, and a large buffer fresh from malloc is a
/// fresh mmap whose pages the kernel zeroes and faults in on first touch
/// (a fifth of an MLP step's time before). Up to kMaxCachedBytes are kept.
class BufferPool {
public:
  static thread_local uint64_t allocatedBytes;

  static BufferPool &get() {
    static BufferPool *pool = new BufferPool; // outlives static destructors
    return *pool;
  }

  void *allocate(size_t alignment, size_t size) {
    allocatedBytes += size;
    alignment = std::max<size_t>(alignment, 64);
    size = std::max<size_t>((size + alignment - 1) / alignment * alignment,
                            alignment);
    std::pair<size_t, size_t> key{size, alignment};
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = cached.find(key);
      if (it != cached.end() && !it->second.empty()) {
        void *buffer = it->second.back();
        it->second.pop_back();
        cachedBytes -= size;
        live[buffer] = key;
        return buffer;
      }
    }
    void *buffer = std::aligned_alloc(alignment, size);
    if (buffer) {
      std::lock_guard<std::mutex> lock(mutex);
      live[buffer] = key;
    }
    return buffer;
  }

  void release(void *buffer) {
    if (!buffer)
      return;
    std::unique_lock<std::mutex> lock(mutex);
    auto it = live.find(buffer);
    if (it == live.end()) {
      lock.unlock();
      return std::free(buffer);
    }
    std::pair<size_t, size_t> key = it->second;
    live.erase(it);
    if (cachedBytes + key.first > kMaxCachedBytes) {
      lock.unlock();
      return std::free(buffer);
    }
    cached[key].push_back(buffer);
    cachedBytes += key.first;
  }

private:
  static constexpr size_t kMaxCachedBytes = size_t(2) << 30;
  std::mutex mutex;
  std::unordered_map<void *, std::pair<size_t, size_t>> live;
  std::map<std::pair<size_t, size_t>, std::vector<void *>> cached;
  size_t cachedBytes = 0;
};

thread_local uint64_t BufferPool::allocatedBytes = 0;

} // namespace

#define AMP_CPU_MATMUL(SUFFIX, TYPE)                                           \
  extern "C" void _mlir_ciface_ampCpuMatmul##SUFFIX(                          \
      AmpUnrankedMemRef *a, AmpUnrankedMemRef *b, AmpUnrankedMemRef *c,        \
      int32_t accumulate) {                                                    \
    runMatmulRowMajor(readOperand(a, memory::data_type::TYPE),                 \
                      readOperand(b, memory::data_type::TYPE),                 \
                      readOperand(c, memory::data_type::f32),                  \
                      accumulate != 0);                                        \
  }
AMP_CPU_MATMUL(F32, f32)
AMP_CPU_MATMUL(F16, f16)
AMP_CPU_MATMUL(BF16, bf16)

/* C = A.B + bias (per column), into f32. */
#define AMP_CPU_MATMUL_BIAS(SUFFIX, TYPE)                                      \
  extern "C" void _mlir_ciface_ampCpuMatmul##SUFFIX##Bias(                    \
      AmpUnrankedMemRef *a, AmpUnrankedMemRef *b, AmpUnrankedMemRef *c,        \
      AmpUnrankedMemRef *bias) {                                               \
    Operand output = readOperand(c, memory::data_type::f32);                   \
    runMatmulEpilogueRowMajor(                                                 \
        readOperand(a, memory::data_type::TYPE),                               \
        readOperand(b, memory::data_type::TYPE), output,                       \
        {broadcastTo(readOperand(bias, memory::data_type::f32),                \
                     output.dims.size())});                                    \
  }
AMP_CPU_MATMUL_BIAS(F32, f32)
AMP_CPU_MATMUL_BIAS(F16, f16)
AMP_CPU_MATMUL_BIAS(BF16, bf16)

/* C = A.B rounded to the inputs' low type. */
#define AMP_CPU_MATMUL_LOW_OUTPUT(SUFFIX, TYPE)                                \
  extern "C" void _mlir_ciface_ampCpuMatmul##SUFFIX##To##SUFFIX(              \
      AmpUnrankedMemRef *a, AmpUnrankedMemRef *b, AmpUnrankedMemRef *c) {      \
    runMatmulEpilogueRowMajor(readOperand(a, memory::data_type::TYPE),         \
                              readOperand(b, memory::data_type::TYPE),         \
                              readOperand(c, memory::data_type::TYPE), {});    \
  }
AMP_CPU_MATMUL_LOW_OUTPUT(F16, f16)
AMP_CPU_MATMUL_LOW_OUTPUT(BF16, bf16)

#define AMP_CPU_CONV2D_PARAMETERS                                              \
  int64_t strideH, int64_t strideW, int64_t dilationH, int64_t dilationW,      \
      int64_t padTop, int64_t padLeft, int64_t padBottom, int64_t padRight,    \
      int32_t accumulate
#define AMP_CPU_CONV2D_GEOMETRY                                                \
  ConvGeometry {                                                               \
    strideH, strideW, dilationH, dilationW, padTop, padLeft, padBottom,        \
        padRight                                                               \
  }
/* A forward convolution and an input gradient of TYPE inputs into OUTPUT. */
#define AMP_CPU_CONV2D_FORWARD(NAME, TYPE, OUTPUT)                             \
  extern "C" void _mlir_ciface_##NAME(                                         \
      AmpUnrankedMemRef *input, AmpUnrankedMemRef *filter,                     \
      AmpUnrankedMemRef *output, AMP_CPU_CONV2D_PARAMETERS) {                  \
    runConv2D(readOperand(input, memory::data_type::TYPE),                     \
              readOperand(filter, memory::data_type::TYPE),                    \
              readOperand(output, memory::data_type::OUTPUT),                  \
              AMP_CPU_CONV2D_GEOMETRY, accumulate != 0);                       \
  }
#define AMP_CPU_CONV2D_INPUT_GRADIENT(NAME, TYPE, OUTPUT)                      \
  extern "C" void _mlir_ciface_##NAME(                                         \
      AmpUnrankedMemRef *outputGradient, AmpUnrankedMemRef *rotatedFilter,     \
      AmpUnrankedMemRef *inputGradient, AMP_CPU_CONV2D_PARAMETERS) {           \
    runConv2DBackwardData(readOperand(outputGradient, memory::data_type::TYPE),\
                          readOperand(rotatedFilter, memory::data_type::TYPE), \
                          readOperand(inputGradient,                           \
                                      memory::data_type::OUTPUT),              \
                          AMP_CPU_CONV2D_GEOMETRY, accumulate != 0);           \
  }
#define AMP_CPU_CONV2D(SUFFIX, TYPE)                                           \
  AMP_CPU_CONV2D_FORWARD(ampCpuConv2D##SUFFIX, TYPE, f32)                      \
  extern "C" void _mlir_ciface_ampCpuConv2DBackwardWeights##SUFFIX(           \
      AmpUnrankedMemRef *input, AmpUnrankedMemRef *outputGradient,             \
      AmpUnrankedMemRef *filterGradient, AMP_CPU_CONV2D_PARAMETERS) {          \
    runConv2DBackwardWeights(                                                  \
        readOperand(input, memory::data_type::TYPE),                           \
        readOperand(outputGradient, memory::data_type::TYPE),                  \
        readOperand(filterGradient, memory::data_type::f32),                   \
        AMP_CPU_CONV2D_GEOMETRY, accumulate != 0);                             \
  }                                                                            \
  AMP_CPU_CONV2D_INPUT_GRADIENT(ampCpuConv2DBackwardData##SUFFIX, TYPE, f32)
AMP_CPU_CONV2D(F32, f32)
AMP_CPU_CONV2D(F16, f16)
AMP_CPU_CONV2D(BF16, bf16)

/* Convolutions rounded to the inputs' low type. */
AMP_CPU_CONV2D_FORWARD(ampCpuConv2DF16ToF16, f16, f16)
AMP_CPU_CONV2D_FORWARD(ampCpuConv2DBF16ToBF16, bf16, bf16)
AMP_CPU_CONV2D_INPUT_GRADIENT(ampCpuConv2DBackwardDataF16ToF16, f16, f16)
AMP_CPU_CONV2D_INPUT_GRADIENT(ampCpuConv2DBackwardDataBF16ToBF16, bf16, bf16)

extern "C" void ampCpuSetNumThreads(int32_t threads) {
  Library::get();
  omp_set_num_threads(threads > 0 ? threads : 1);
}

extern "C" void ampCpuParallelFor(void (*body)(void *, int64_t),
                                  void *context, int64_t blocks) {
  if (blocks <= 1) {
    if (blocks == 1)
      body(context, 0);
    return;
  }
  // One block per thread: the compiler made at most `threads` of them.
#pragma omp parallel for num_threads(blocks) schedule(static, 1)
  for (int64_t block = 0; block < blocks; ++block)
    body(context, block);
}

extern "C" const char *ampCpuLowPrecisionPath(int32_t isF16) {
  if (packsLowPrecision())
    return "packed";
  if (gemmLibrary() == GemmLibrary::OpenBLAS)
    return "f32";
  return lowPrecisionPath(isF16, [](memory::data_type type) {
    memory::desc a({64, 64}, type, memory::format_tag::ab);
    memory::desc c({64, 64}, memory::data_type::f32, memory::format_tag::ab);
    return dnnl::matmul::primitive_desc(Library::get().engine, a, a, c);
  });
}

extern "C" const char *ampCpuConv2DLowPrecisionPath(int32_t isF16) {
  return conv2DLowPrecisionPath(isF16 ? memory::data_type::f16
                                      : memory::data_type::bf16);
}

extern "C" int32_t ampCpuChannelBlock(void) { return channelBlock(); }

extern "C" const char *ampCpuGemmLibrary(void) {
  return gemmLibrary() == GemmLibrary::OpenBLAS ? "openblas" : "onednn";
}

extern "C" void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  return BufferPool::get().allocate(alignof(std::max_align_t), size);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment,
                                                    uint64_t size) {
  return BufferPool::get().allocate(alignment, size);
}

extern "C" void _mlir_memref_to_llvm_free(void *buffer) {
  BufferPool::get().release(buffer);
}

extern "C" uint64_t ampCpuAllocatedBytes(void) {
  return BufferPool::allocatedBytes;
}

extern "C" const char *ampCpuTakeError(void) {
  static thread_local std::string taken;
  taken = std::exchange(pendingError, std::string());
  return taken.empty() ? nullptr : taken.c_str();
}
