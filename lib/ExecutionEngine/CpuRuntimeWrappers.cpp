//===- CpuRuntimeWrappers.cpp - Library calls of CPU-lowered steps --------===//
//
// The entry points of amp/ExecutionEngine/CpuRuntime.h over oneDNN (Debian's
// libdnnl 2.6, OpenMP threads). A primitive is made once per shape, strides,
// types and accumulation and cached across steps; operands are passed with
// their own strides, so transposed views are read in place. Low-precision
// inputs use the library's own kernels where they are faster than its f32
// ones (bf16 with AMX); elsewhere they are extended to f32 first, the same
// arithmetic since products of two bf16 or f16 numbers are exact in f32.
//
//===----------------------------------------------------------------------===//

#include "amp/ExecutionEngine/CpuRuntime.h"
#include "dnnl.hpp"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <omp.h>
#include <tuple>
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

/// `operand` as a dense f32 array in `storage` (row-major in its own dims).
Operand toDenseF32(const Operand &operand, std::vector<float> &storage) {
  int64_t count = 1;
  for (int64_t d : operand.dims)
    count *= d;
  storage.resize(count);
  int rank = operand.dims.size();
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t at = 0;
    for (int d = 0; d < rank; ++d)
      at += index[d] * operand.strides[d];
    if (operand.type == memory::data_type::f32)
      storage[i] = static_cast<const float *>(operand.data)[at];
    else if (operand.type == memory::data_type::f16)
      storage[i] = extendF16(static_cast<const uint16_t *>(operand.data)[at]);
    else
      storage[i] = extendBF16(static_cast<const uint16_t *>(operand.data)[at]);
    for (int d = rank - 1; d >= 0 && ++index[d] == operand.dims[d]; --d)
      index[d] = 0;
  }
  Operand dense;
  dense.type = memory::data_type::f32;
  dense.dims = operand.dims;
  dense.strides.assign(rank, 1);
  for (int d = rank - 2; d >= 0; --d)
    dense.strides[d] = dense.strides[d + 1] * dense.dims[d + 1];
  dense.data = storage.data();
  return dense;
}

memory::desc describe(const Operand &operand) {
  return memory::desc(operand.dims, operand.type, operand.strides);
}

/// A primitive and whether it computes low-precision inputs natively.
struct Cached {
  dnnl::primitive primitive;
  bool native = true;
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
  /// Scratch for inputs extended to f32.
  std::vector<float> scratch[2];

private:
  Library() { omp_set_num_threads(1); }
};

/// The key of a call: its kind, types, shapes, strides and parameters.
Key makeKey(int kind, std::initializer_list<const Operand *> operands,
            std::initializer_list<int64_t> parameters) {
  std::vector<int64_t> key;
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

/// Whether a primitive runs low-precision inputs faster than f32 would: the
/// library's AMX kernels. Without AMX (oneDNN 2.6's avx512_core_bf16 bf16
/// matmul runs at about 0.6x its f32 one) inputs are extended instead.
bool isFastLowPrecision(const std::string &implementation) {
  return implementation.find("amx") != std::string::npos;
}

enum Kind { Matmul = 1, Conv2D = 2 };

[[noreturn]] void fail(const char *what, const dnnl::error &error) {
  std::fprintf(stderr, "amp cpu runtime: %s: %s\n", what, error.what());
  std::abort();
}

/// `operand` with its last two dimensions swapped (a transposed view).
Operand transposed(Operand operand) {
  size_t rank = operand.dims.size();
  std::swap(operand.dims[rank - 1], operand.dims[rank - 2]);
  std::swap(operand.strides[rank - 1], operand.strides[rank - 2]);
  return operand;
}

void runMatmul(const Operand &aIn, const Operand &bIn, const Operand &cIn,
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

void runMatmul(const Operand &aIn, const Operand &bIn, const Operand &c,
               bool accumulate) {
  Library &library = Library::get();
  std::lock_guard<std::mutex> lock(library.mutex);
  Key key = makeKey(Matmul, {&aIn, &bIn, &c}, {accumulate});
  auto it = library.cache.find(key);
  try {
    bool low = aIn.type != memory::data_type::f32;
    if (it == library.cache.end()) {
      auto make = [&](const Operand &a, const Operand &b) {
        dnnl::matmul::primitive_desc descriptor(
            dnnl::matmul::desc(describe(a), describe(b), describe(c)),
            makeAttributes(accumulate), library.engine);
        return std::make_pair(dnnl::matmul(descriptor),
                              std::string(descriptor.impl_info_str()));
      };
      Cached cached;
      bool native = false;
      if (low && aIn.type == memory::data_type::bf16) {
        try {
          auto [primitive, implementation] = make(aIn, bIn);
          native = isFastLowPrecision(implementation);
          if (native)
            cached.primitive = primitive;
        } catch (const dnnl::error &) {
          // No bf16 kernel on this host: extend to f32.
        }
      }
      if (!low || !native) {
        std::vector<float> a, b;
        Operand denseA = low ? toDenseF32(aIn, a) : aIn;
        Operand denseB = low ? toDenseF32(bIn, b) : bIn;
        cached.primitive = make(denseA, denseB).first;
      }
      cached.native = !low || native;
      it = library.cache.emplace(std::move(key), std::move(cached)).first;
    }
    Operand a = aIn, b = bIn;
    if (!it->second.native) {
      a = toDenseF32(aIn, library.scratch[0]);
      b = toDenseF32(bIn, library.scratch[1]);
    }
    it->second.primitive.execute(
        library.stream,
        {{DNNL_ARG_SRC, memory(describe(a), library.engine, a.data)},
         {DNNL_ARG_WEIGHTS, memory(describe(b), library.engine, b.data)},
         {DNNL_ARG_DST, memory(describe(c), library.engine, c.data)}});
    library.stream.wait();
  } catch (const dnnl::error &error) {
    fail("matmul", error);
  }
}

void runConv2D(const Operand &inputIn, const Operand &filterIn,
               const Operand &output, int64_t strideH, int64_t strideW,
               int64_t dilationH, int64_t dilationW, bool accumulate) {
  Library &library = Library::get();
  std::lock_guard<std::mutex> lock(library.mutex);
  Key key = makeKey(Conv2D, {&inputIn, &filterIn, &output},
                    {strideH, strideW, dilationH, dilationW, accumulate});
  auto it = library.cache.find(key);
  try {
    bool low = inputIn.type != memory::data_type::f32;
    if (it == library.cache.end()) {
      auto make = [&](const Operand &input, const Operand &filter) {
        // oneDNN counts dilation from 0, linalg from 1.
        dnnl::convolution_forward::desc desc(
            dnnl::prop_kind::forward_training,
            dnnl::algorithm::convolution_direct, describe(input),
            describe(filter), describe(output), {strideH, strideW},
            {dilationH - 1, dilationW - 1}, {0, 0}, {0, 0});
        dnnl::convolution_forward::primitive_desc descriptor(
            desc, makeAttributes(accumulate), library.engine);
        return std::make_pair(dnnl::convolution_forward(descriptor),
                              std::string(descriptor.impl_info_str()));
      };
      Cached cached;
      bool native = false;
      if (low && inputIn.type == memory::data_type::bf16) {
        try {
          auto [primitive, implementation] = make(inputIn, filterIn);
          native = isFastLowPrecision(implementation);
          if (native)
            cached.primitive = primitive;
        } catch (const dnnl::error &) {
          // No bf16 kernel on this host: extend to f32.
        }
      }
      if (!low || !native) {
        std::vector<float> input, filter;
        Operand denseInput = low ? toDenseF32(inputIn, input) : inputIn;
        Operand denseFilter = low ? toDenseF32(filterIn, filter) : filterIn;
        cached.primitive = make(denseInput, denseFilter).first;
      }
      cached.native = !low || native;
      it = library.cache.emplace(std::move(key), std::move(cached)).first;
    }
    Operand input = inputIn, filter = filterIn;
    if (!it->second.native) {
      input = toDenseF32(inputIn, library.scratch[0]);
      filter = toDenseF32(filterIn, library.scratch[1]);
    }
    it->second.primitive.execute(
        library.stream,
        {{DNNL_ARG_SRC, memory(describe(input), library.engine, input.data)},
         {DNNL_ARG_WEIGHTS,
          memory(describe(filter), library.engine, filter.data)},
         {DNNL_ARG_DST, memory(describe(output), library.engine, output.data)}});
    library.stream.wait();
  } catch (const dnnl::error &error) {
    fail("convolution", error);
  }
}

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

#define AMP_CPU_CONV2D(SUFFIX, TYPE)                                           \
  extern "C" void _mlir_ciface_ampCpuConv2D##SUFFIX(                          \
      AmpUnrankedMemRef *input, AmpUnrankedMemRef *filter,                     \
      AmpUnrankedMemRef *output, int64_t strideH, int64_t strideW,             \
      int64_t dilationH, int64_t dilationW, int32_t accumulate) {              \
    runConv2D(readOperand(input, memory::data_type::TYPE),                     \
              readOperand(filter, memory::data_type::TYPE),                    \
              readOperand(output, memory::data_type::f32), strideH, strideW,   \
              dilationH, dilationW, accumulate != 0);                          \
  }
AMP_CPU_CONV2D(F32, f32)
AMP_CPU_CONV2D(F16, f16)
AMP_CPU_CONV2D(BF16, bf16)

extern "C" void ampCpuSetNumThreads(int32_t threads) {
  Library::get();
  omp_set_num_threads(threads > 0 ? threads : 1);
}

extern "C" const char *ampCpuLowPrecisionPath(int32_t isF16) {
  if (isF16)
    return "f32";
  Library &library = Library::get();
  try {
    memory::desc a({64, 64}, memory::data_type::bf16, memory::format_tag::ab);
    memory::desc c({64, 64}, memory::data_type::f32, memory::format_tag::ab);
    dnnl::matmul::primitive_desc descriptor(dnnl::matmul::desc(a, a, c),
                                            library.engine);
    return isFastLowPrecision(descriptor.impl_info_str()) ? "native" : "f32";
  } catch (const dnnl::error &) {
    return "f32";
  }
}
