//===- gemm_rates.cpp - The CPU runtime's GEMM and convolution rates ------===//
//
// amp-gemm-rates: the rates of the libraries the CPU runtime calls on this
// host, on 1 thread or N, for f32, bf16 and f16 inputs with f32
// accumulation: a matmul M x K by K x N through the runtime's own entry
// point (in the library it chose, ampCpuGemmLibrary, and the path of its
// low-precision inputs) and in oneDNN directly, and oneDNN's forward,
// weight- and input-gradient convolutions of one 3 x 3 layer with padding
// 1 (batch N, C channels of H x H, F filters). For oneDNN it names the
// kernel chosen, so that a run tells whether the host's low-precision
// kernels beat its f32 ones (docs/CPU.md, "The libraries"), and
// bench/bench_vs_torch.py takes its floor from the faster of the runtime's
// and PyTorch's rates.
//
//   amp-gemm-rates [--threads N] [M K N] [--conv N C H F STRIDE]
//
// One line per measurement:
//   runtime f32 256x1024x1024 87.1 GFLOP/s openblas
//   runtime bf16 256x1024x1024 92.8 GFLOP/s openblas, inputs converted as packed
//   matmul f32 256x1024x1024 103.2 GFLOP/s brg:avx512_core
//   conv-forward bf16 64x16x32x32/32s2 245.0 GFLOP/s jit_bf16:avx512_core_bf16
// or `... none` where oneDNN has no kernel for the types.
//
//===----------------------------------------------------------------------===//

#include "amp/ExecutionEngine/CpuRuntime.h"
#include "dnnl.hpp"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

using namespace dnnl;
using dt = memory::data_type;

namespace {

/// The one CPU engine that makes every primitive and its memory.
engine &cpu() {
  static engine eng(engine::kind::cpu, 0);
  return eng;
}

const char *name(dt type) {
  return type == dt::f32 ? "f32" : type == dt::bf16 ? "bf16" : "f16";
}

/// The best rate over 5 rounds of `reps` runs, after 3 to warm up.
double measure(const std::function<void()> &run, double flops) {
  for (int i = 0; i < 3; ++i)
    run();
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    int reps = 10;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i)
      run();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    best = std::max(best, flops * reps / seconds / 1e9);
  }
  return best;
}

/// Runs `primitive` with fresh memory of each argument's layout.
std::function<void()> runner(stream &s, const primitive &prim,
                             const primitive_desc &pd,
                             std::initializer_list<int> arguments) {
  std::unordered_map<int, memory> args;
  for (int argument : arguments) {
    memory m(pd.query_md(query::exec_arg_md, argument), cpu());
    std::memset(m.get_data_handle(), 0, m.get_desc().get_size());
    args[argument] = m;
  }
  return [&s, prim, args] {
    prim.execute(s, args);
    s.wait();
  };
}

void report(const char *what, dt type, const std::string &shape,
            const std::function<primitive_desc()> &make,
            std::initializer_list<int> arguments, double flops) {
  stream s(cpu());
  primitive_desc pd;
  try {
    pd = make();
  } catch (const error &) {
    std::printf("%s %s %s none\n", what, name(type), shape.c_str());
    return;
  }
  primitive prim(pd);
  double rate = measure(runner(s, prim, pd, arguments), flops);
  std::printf("%s %s %s %.1f GFLOP/s %s\n", what, name(type), shape.c_str(),
              rate, pd.impl_info_str());
  std::fflush(stdout);
}

/// A dense row-major rows x columns memref of `elements` for the runtime.
struct Matrix {
  std::vector<int64_t> descriptor;
  AmpUnrankedMemRef memref;
  Matrix(void *elements, int64_t rows, int64_t columns)
      : descriptor{reinterpret_cast<int64_t>(elements),
                   reinterpret_cast<int64_t>(elements), 0, rows, columns,
                   columns, 1},
        memref{2, descriptor.data()} {}
};

/// The runtime's matmul M x K by K x N into f32, as a compiled step calls
/// it, for each input type.
void runtimeRates(memory::dim m, memory::dim k, memory::dim n) {
  std::string shape =
      std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  using Entry = void (*)(AmpUnrankedMemRef *, AmpUnrankedMemRef *,
                         AmpUnrankedMemRef *, int32_t);
  struct {
    dt type;
    Entry entry;
  } entries[] = {{dt::f32, _mlir_ciface_ampCpuMatmulF32},
                 {dt::bf16, _mlir_ciface_ampCpuMatmulBF16},
                 {dt::f16, _mlir_ciface_ampCpuMatmulF16}};
  for (auto [type, entry] : entries) {
    // Zeros in every type (an all-zero bit pattern).
    std::vector<float> a(m * k, 0.0f), b(k * n, 0.0f), c(m * n);
    Matrix ma(a.data(), m, k), mb(b.data(), k, n), mc(c.data(), m, n);
    double rate = measure(
        [&] { entry(&ma.memref, &mb.memref, &mc.memref, /*accumulate=*/0); },
        2.0 * m * k * n);
    if (const char *error = ampCpuTakeError()) {
      std::printf("runtime %s %s failed: %s\n", name(type), shape.c_str(),
                  error);
      continue;
    }
    std::string path = ampCpuGemmLibrary();
    if (type != dt::f32) {
      std::string how = ampCpuLowPrecisionPath(type == dt::f16);
      path +=
          ", inputs " + (how == "f32"      ? std::string("extended to f32")
                         : how == "packed" ? std::string("converted as packed")
                                           : how);
    }
    std::printf("runtime %s %s %.1f GFLOP/s %s\n", name(type), shape.c_str(),
                rate, path.c_str());
    std::fflush(stdout);
  }
}

void matmulRates(memory::dim m, memory::dim k, memory::dim n) {
  std::string shape =
      std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  for (dt type : {dt::f32, dt::bf16, dt::f16})
    report(
        "matmul", type, shape,
        [&]() -> primitive_desc {
          using tag = memory::format_tag;
          return matmul::primitive_desc(cpu(),
                                        memory::desc({m, k}, type, tag::ab),
                                        memory::desc({k, n}, type, tag::ab),
                                        memory::desc({m, n}, dt::f32, tag::ab));
        },
        {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST}, 2.0 * m * k * n);
}

void convolutionRates(memory::dim batch, memory::dim channels, memory::dim size,
                      memory::dim filters, memory::dim stride) {
  memory::dim out = (size + 2 - 3) / stride + 1;
  std::string shape = std::to_string(batch) + "x" + std::to_string(channels) +
                      "x" + std::to_string(size) + "x" + std::to_string(size) +
                      "/" + std::to_string(filters) + "s" +
                      std::to_string(stride);
  double flops = 2.0 * batch * filters * out * out * channels * 9;
  for (dt type : {dt::f32, dt::bf16, dt::f16}) {
    using tag = memory::format_tag;
    memory::desc src({batch, channels, size, size}, type, tag::any);
    memory::desc weights({filters, channels, 3, 3}, type, tag::any);
    memory::desc dst({batch, filters, out, out}, type, tag::any);
    memory::desc weightsF32({filters, channels, 3, 3}, dt::f32, tag::any);
    memory::desc srcF32({batch, channels, size, size}, dt::f32, tag::any);
    memory::dims strides{stride, stride}, padding{1, 1};
    auto forward = [&] {
      return convolution_forward::primitive_desc(
          cpu(), prop_kind::forward_training, algorithm::convolution_direct,
          src, weights, dst, strides, padding, padding);
    };
    report("conv-forward", type, shape, forward,
           {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST}, flops);
    report(
        "conv-weights", type, shape,
        [&]() -> primitive_desc {
          return convolution_backward_weights::primitive_desc(
              cpu(), algorithm::convolution_direct, src, weightsF32, dst,
              strides, padding, padding, forward());
        },
        {DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST}, flops);
    report(
        "conv-data", type, shape,
        [&]() -> primitive_desc {
          return convolution_backward_data::primitive_desc(
              cpu(), algorithm::convolution_direct, srcF32, weights, dst,
              strides, padding, padding, forward());
        },
        {DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST}, flops);
  }
}

/// Whether any size is not a positive number.
bool anyNonPositive(const std::vector<memory::dim> &a,
                    const std::vector<memory::dim> &b) {
  for (const auto *sizes : {&a, &b})
    for (memory::dim size : *sizes)
      if (size <= 0)
        return true;
  return false;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<memory::dim> gemm{256, 1024, 1024}, conv;
  int i = 1, threads = 1;
  if (argc >= 3 && std::strcmp(argv[1], "--threads") == 0) {
    threads = std::atoi(argv[2]);
    i = 3;
  }
  if (argc - i >= 3 && std::strcmp(argv[i], "--conv") != 0)
    for (int j = 0; j < 3; ++j)
      gemm[j] = std::atol(argv[i++]);
  if (i < argc && std::strcmp(argv[i], "--conv") == 0 && argc - i == 6)
    for (++i; i < argc; ++i)
      conv.push_back(std::atol(argv[i]));
  if (i != argc || threads <= 0 || anyNonPositive(gemm, conv)) {
    std::fprintf(stderr, "usage: amp-gemm-rates [--threads N] [M K N] "
                         "[--conv N C H F STRIDE]\n");
    return 2;
  }
  const dnnl_version_t *version = dnnl_version();
  std::printf("oneDNN %d.%d.%d, %d thread(s)\n", version->major, version->minor,
              version->patch, threads);
  ampCpuSetNumThreads(threads);
  runtimeRates(gemm[0], gemm[1], gemm[2]);
  matmulRates(gemm[0], gemm[1], gemm[2]);
  if (conv.size() == 5)
    convolutionRates(conv[0], conv[1], conv[2], conv[3], conv[4]);
  return 0;
}
