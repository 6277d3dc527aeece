//===- gpu_selftest.cpp - The runtime on a real GPU ------------------------===//
//
// Usage: amp-gpu-selftest            correctness checks (exit 0 when all pass):
//                                     memory, the NCCL sums, matmuls
//        amp-gpu-selftest --bench [N] N^3 f16 and bf16 GEMMs (default 8192)
//                                     through ampMatmul vs cuBLASLt directly
//
// Needs a GPU; without one it prints the runtime's "no CUDA device" error
// and exits with status 2. Every buffer and stream comes from the runtime's
// mgpu* functions; only event timing and the direct baseline use cudart and
// cuBLASLt themselves.
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/MgpuWrappers.h"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

int failures = 0;

void report(bool ok, const std::string &what, const std::string &detail = "") {
  std::printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what.c_str(),
              detail.empty() ? "" : ": ", detail.c_str());
  if (!ok)
    ++failures;
}

bool runtimeOk(const std::string &what) {
  if (ampRuntimeGetLastError() == AMP_RUNTIME_SUCCESS)
    return true;
  report(false, what, ampRuntimeGetLastErrorMessage());
  ampRuntimeClearError();
  return false;
}

#define CHECK_CUDART(call)                                                     \
  do {                                                                         \
    cudaError_t status = (call);                                               \
    if (status != cudaSuccess) {                                               \
      std::fprintf(stderr, "%s failed: %s\n", #call,                          \
                   cudaGetErrorString(status));                                \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

#define CHECK_CUBLAS(call)                                                     \
  do {                                                                         \
    cublasStatus_t status = (call);                                            \
    if (status != CUBLAS_STATUS_SUCCESS) {                                     \
      std::fprintf(stderr, "%s failed: %s\n", #call,                          \
                   cublasLtGetStatusName(status));                             \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

//===----------------------------------------------------------------------===//
// Element types on the host
//===----------------------------------------------------------------------===//

size_t elementSize(int32_t type) { return type == AMP_ELEMENT_F32 ? 4 : 2; }

const char *typeName(int32_t type) {
  return type == AMP_ELEMENT_F32 ? "f32" : type == AMP_ELEMENT_F16 ? "f16"
                                                                   : "bf16";
}

/// Rounds `value` to `type` and stores it at `out`.
void store(int32_t type, float value, void *out) {
  if (type == AMP_ELEMENT_F16) {
    __half h = __float2half_rn(value);
    std::memcpy(out, &h, 2);
  } else if (type == AMP_ELEMENT_BF16) {
    __nv_bfloat16 b = __float2bfloat16_rn(value);
    std::memcpy(out, &b, 2);
  } else {
    std::memcpy(out, &value, 4);
  }
}

float load(int32_t type, const void *in) {
  if (type == AMP_ELEMENT_F16) {
    __half h;
    std::memcpy(&h, in, 2);
    return __half2float(h);
  }
  if (type == AMP_ELEMENT_BF16) {
    __nv_bfloat16 b;
    std::memcpy(&b, in, 2);
    return __bfloat162float(b);
  }
  float f;
  std::memcpy(&f, in, 4);
  return f;
}

/// A host array of `type` plus its device copy from mgpuMemAlloc.
struct Buffer {
  int32_t type;
  size_t count;
  std::vector<char> host;
  void *device = nullptr;

  Buffer(int32_t type, size_t count, CUstream stream)
      : type(type), count(count), host(count * elementSize(type)) {
    device = mgpuMemAlloc(host.size(), stream, false);
  }
  float get(size_t i) const { return load(type, &host[i * elementSize(type)]); }
  void set(size_t i, float v) { store(type, v, &host[i * elementSize(type)]); }
  void upload(CUstream stream) {
    mgpuMemcpy(device, host.data(), host.size(), stream);
  }
  void download(CUstream stream) {
    mgpuMemcpy(host.data(), device, host.size(), stream);
    mgpuStreamSynchronize(stream);
  }
  void release(CUstream stream) { mgpuMemFree(device, stream); }
};

template <int Rank> struct Descriptor {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

//===----------------------------------------------------------------------===//
// Memory, streams and events
//===----------------------------------------------------------------------===//

void checkMemory(CUstream stream) {
  const size_t n = 1 << 20;
  auto *device = static_cast<uint32_t *>(mgpuMemAlloc(n * 4, stream, false));
  std::vector<uint32_t> in(n), out(n, 0);
  for (size_t i = 0; i < n; ++i)
    in[i] = static_cast<uint32_t>(i * 2654435761u);
  mgpuMemcpy(device, in.data(), n * 4, stream);
  mgpuMemcpy(out.data(), device, n * 4, stream);
  mgpuStreamSynchronize(stream);
  report(runtimeOk("memcpy") && in == out, "memcpy host->device->host 4 MiB");

  mgpuMemset32(device, 0x3fc00000u, n, stream); // 1.5f
  mgpuMemset16(device, 0x3c00, 2, stream);      // two f16 ones: word 0
  mgpuMemcpy(out.data(), device, n * 4, stream);
  mgpuStreamSynchronize(stream);
  bool ok = out[0] == 0x3c003c00u;
  for (size_t i = 1; i < n && ok; ++i)
    ok = out[i] == 0x3fc00000u;
  report(runtimeOk("memset") && ok, "memset32 and memset16 (counts in elements)");

  // Cross-stream ordering through an event.
  CUstream other = mgpuStreamCreate();
  CUevent event = mgpuEventCreate();
  mgpuMemset32(device, 7, n, stream);
  mgpuEventRecord(event, stream);
  mgpuStreamWaitEvent(other, event);
  mgpuMemcpy(out.data(), device, n * 4, other);
  mgpuEventSynchronize(event);
  mgpuStreamSynchronize(other);
  ok = true;
  for (size_t i = 0; i < n && ok; ++i)
    ok = out[i] == 7;
  report(runtimeOk("events") && ok, "event orders a copy on a second stream");
  mgpuEventDestroy(event);
  mgpuStreamDestroy(other);
  mgpuMemFree(device, stream);

  auto *shared = static_cast<uint32_t *>(mgpuMemAlloc(64, nullptr, true));
  if (shared) {
    shared[3] = 42; // host_shared memory is host-accessible
    uint32_t back = 0;
    mgpuMemcpy(&back, shared + 3, 4, stream);
    mgpuStreamSynchronize(stream);
    mgpuMemFree(shared, nullptr);
    report(runtimeOk("host-shared") && back == 42, "host-shared allocation");
  } else {
    runtimeOk("host-shared allocation");
  }
}

//===----------------------------------------------------------------------===//
// Sums of data-parallel steps
//===----------------------------------------------------------------------===//

/// ampAllReduceSum in each type, as a copy without a communicator and
/// through ncclAllReduce on a one-rank one: the sum of one rank is its own
/// buffer, bit for bit.
void checkSums(CUstream stream) {
  for (bool nccl : {false, true}) {
    if (nccl && ampRuntimeInitCommunicator(1, 0, nullptr) != AMP_RUNTIME_SUCCESS) {
      runtimeOk("one-rank NCCL communicator");
      return;
    }
    const char *how = nccl ? "ncclAllReduce, one rank" : "no communicator";
    report(ampRuntimeWorldSize() == 1,
           std::string("world size 1 (") + how + ")");
    for (int32_t type : {AMP_ELEMENT_F32, AMP_ELEMENT_F16, AMP_ELEMENT_BF16}) {
      const size_t n = 4099;
      Buffer send(type, n, stream), recv(type, n, stream);
      for (size_t i = 0; i < n; ++i)
        send.set(i, static_cast<float>(i % 97) * 0.25f - 11.0f);
      send.upload(stream);
      ampAllReduceSum(send.device, recv.device, n, type, stream);
      recv.download(stream);
      report(runtimeOk("ampAllReduceSum") && send.host == recv.host,
             std::string("ampAllReduceSum ") + typeName(type) + " (" + how +
                 ")");
      send.release(stream);
      recv.release(stream);
    }
    if (nccl)
      ampRuntimeDestroyCommunicator();
  }
}

//===----------------------------------------------------------------------===//
// Matmul correctness
//===----------------------------------------------------------------------===//

/// One checked matmul: shapes, how A and B are stored, types, batch.
struct MatmulCase {
  const char *name;
  int32_t inType, outType;
  int64_t batch, m, n, k;
  bool transposeA = false, transposeB = false;
  float alpha = 1.0f, beta = 0.0f;
};

/// Relative tolerance of the output's rounding; f32 accumulation adds a
/// K-proportional term relative to sum |a||b|.
double outputTolerance(int32_t type) {
  return type == AMP_ELEMENT_F16 ? 1e-3 : type == AMP_ELEMENT_BF16 ? 8e-3
                                                                    : 1e-6;
}

void checkMatmul(const MatmulCase &c, CUstream stream, std::mt19937 &rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const int64_t B = c.batch, M = c.m, N = c.n, K = c.k;
  Buffer a(c.inType, B * M * K, stream), b(c.inType, B * K * N, stream),
      out(c.outType, B * M * N, stream);
  // A transposed operand is a view: its memory holds the KxM (or NxK)
  // transpose row-major, its descriptor swaps the strides.
  auto aIndex = [&](int64_t s, int64_t i, int64_t p) {
    return s * M * K + (c.transposeA ? p * M + i : i * K + p);
  };
  auto bIndex = [&](int64_t s, int64_t p, int64_t j) {
    return s * K * N + (c.transposeB ? j * K + p : p * N + j);
  };
  for (size_t i = 0; i < a.count; ++i)
    a.set(i, uniform(rng));
  for (size_t i = 0; i < b.count; ++i)
    b.set(i, uniform(rng));
  for (size_t i = 0; i < out.count; ++i)
    out.set(i, uniform(rng));
  std::vector<char> initial = out.host;
  a.upload(stream);
  b.upload(stream);
  out.upload(stream);

  Descriptor<3> da{a.device, a.device, 0, {B, M, K},
                   {M * K, c.transposeA ? 1 : K, c.transposeA ? M : 1}};
  Descriptor<3> db{b.device, b.device, 0, {B, K, N},
                   {K * N, c.transposeB ? 1 : N, c.transposeB ? K : 1}};
  Descriptor<3> dc{out.device, out.device, 0, {B, M, N}, {M * N, N, 1}};
  // Unbatched cases use rank-2 descriptors: the tail of the rank-3 one.
  Descriptor<2> da2{a.device, a.device, 0, {M, K}, {da.strides[1], da.strides[2]}};
  Descriptor<2> db2{b.device, b.device, 0, {K, N}, {db.strides[1], db.strides[2]}};
  Descriptor<2> dc2{out.device, out.device, 0, {M, N}, {N, 1}};
  if (B == 1)
    ampMatmul(2, &da2, &db2, &dc2, c.inType, c.inType, c.outType, c.alpha,
              c.beta, stream, /*callSiteId=*/100);
  else
    ampMatmul(3, &da, &db, &dc, c.inType, c.inType, c.outType, c.alpha,
              c.beta, stream, /*callSiteId=*/101);
  out.download(stream);
  if (!runtimeOk(c.name))
    return;

  double tolerance = outputTolerance(c.outType);
  double worst = 0;
  for (int64_t s = 0; s < B; ++s)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double sum = 0, magnitude = 0;
        for (int64_t p = 0; p < K; ++p) {
          double term = double(a.get(aIndex(s, i, p))) * b.get(bIndex(s, p, j));
          sum += term;
          magnitude += std::fabs(term);
        }
        size_t o = s * M * N + i * N + j;
        double c0 = load(c.outType, &initial[o * elementSize(c.outType)]);
        double ref = c.alpha * sum + c.beta * c0;
        double bound = tolerance * std::fabs(ref) +
                       1e-6 * K * (std::fabs(c.alpha) * magnitude +
                                   std::fabs(c.beta * c0)) +
                       1e-30;
        worst = std::max(worst, std::fabs(out.get(o) - ref) / bound);
      }
  char detail[160];
  std::snprintf(detail, sizeof(detail),
                "%s x %s -> %s, %lldx%lldx%lldx%lld, worst error %.3f of the "
                "tolerance",
                typeName(c.inType), typeName(c.inType), typeName(c.outType),
                (long long)B, (long long)M, (long long)N, (long long)K, worst);
  report(worst <= 1.0, c.name, detail);
  a.release(stream);
  b.release(stream);
  out.release(stream);
}

void checkMatmuls(CUstream stream) {
  std::mt19937 rng(1234);
  const MatmulCase cases[] = {
      {"gemm f16->f32", AMP_ELEMENT_F16, AMP_ELEMENT_F32, 1, 96, 72, 160},
      {"gemm f16->f16", AMP_ELEMENT_F16, AMP_ELEMENT_F16, 1, 96, 72, 160},
      {"gemm bf16->bf16", AMP_ELEMENT_BF16, AMP_ELEMENT_BF16, 1, 96, 72, 160},
      {"gemm bf16->f32", AMP_ELEMENT_BF16, AMP_ELEMENT_F32, 1, 96, 72, 160},
      {"gemm f32->f32", AMP_ELEMENT_F32, AMP_ELEMENT_F32, 1, 33, 17, 65},
      {"gemm f16 transposed A", AMP_ELEMENT_F16, AMP_ELEMENT_F32, 1, 64, 48,
       128, true, false},
      {"gemm bf16 transposed B", AMP_ELEMENT_BF16, AMP_ELEMENT_F32, 1, 64, 48,
       128, false, true},
      {"gemm f16 transposed A and B", AMP_ELEMENT_F16, AMP_ELEMENT_F16, 1, 64,
       48, 128, true, true},
      {"batched f16", AMP_ELEMENT_F16, AMP_ELEMENT_F16, 4, 40, 24, 56},
      {"batched bf16 transposed B", AMP_ELEMENT_BF16, AMP_ELEMENT_BF16, 3, 40,
       24, 56, false, true},
      {"gemm f16 alpha 0.5 beta 1 (accumulate)", AMP_ELEMENT_F16,
       AMP_ELEMENT_F32, 1, 64, 64, 64, false, false, 0.5f, 1.0f},
  };
  for (const MatmulCase &c : cases)
    checkMatmul(c, stream, rng);

  int64_t hits = 0, misses = 0;
  ampRuntimeGetPlanCacheStats(&hits, &misses);
  checkMatmul(cases[0], stream, rng);
  int64_t hitsAfter = 0, missesAfter = 0;
  ampRuntimeGetPlanCacheStats(&hitsAfter, &missesAfter);
  report(hitsAfter == hits + 1 && missesAfter == misses,
         "repeated call site and shape reuses its plan");

  uint16_t unused[4];
  Descriptor<2> bad{unused, unused, 0, {2, 2}, {4, 2}};
  ampMatmul(2, &bad, &bad, &bad, AMP_ELEMENT_F16, AMP_ELEMENT_F16,
            AMP_ELEMENT_F16, 1.0f, 0.0f, stream, 102);
  bool rejected =
      ampRuntimeGetLastError() == AMP_RUNTIME_ERROR_INVALID_ARGUMENT;
  ampRuntimeClearError();
  report(rejected, "non-contiguous operand rejected");
}

//===----------------------------------------------------------------------===//
// Benchmark
//===----------------------------------------------------------------------===//

/// cuBLASLt used directly, as an application would: column-major NN, the
/// same problem ampMatmul hands it for row-major operands.
struct DirectGemm {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layout = nullptr;
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize = 0;
  void *workspace = nullptr;

  DirectGemm(cudaDataType_t type, int64_t n) {
    const size_t maxWorkspace = 32u << 20;
    CHECK_CUBLAS(cublasLtCreate(&handle));
    CHECK_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&layout, type, n, n, n));
    cublasLtMatmulPreference_t preference;
    CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&preference));
    CHECK_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxWorkspace,
        sizeof(maxWorkspace)));
    cublasLtMatmulHeuristicResult_t result;
    int found = 0;
    CHECK_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle, desc, layout, layout,
                                                layout, layout, preference, 1,
                                                &result, &found));
    CHECK_CUBLAS(cublasLtMatmulPreferenceDestroy(preference));
    if (found == 0) {
      std::fprintf(stderr, "cuBLASLt found no algorithm\n");
      std::exit(1);
    }
    algo = result.algo;
    workspaceSize = result.workspaceSize;
    CHECK_CUDART(cudaMalloc(&workspace, maxWorkspace));
  }
  ~DirectGemm() {
    cudaFree(workspace);
    cublasLtMatrixLayoutDestroy(layout);
    cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(handle);
  }
  void run(const void *a, const void *b, void *c, cudaStream_t stream) {
    float alpha = 1.0f, beta = 0.0f;
    CHECK_CUBLAS(cublasLtMatmul(handle, desc, &alpha, b, layout, a, layout,
                                &beta, c, layout, c, layout, &algo, workspace,
                                workspaceSize, stream));
  }
};

template <typename Run>
double secondsPerCall(Run run, CUstream stream, int iterations) {
  for (int i = 0; i < 3; ++i)
    run();
  cudaEvent_t start, stop;
  CHECK_CUDART(cudaEventCreate(&start));
  CHECK_CUDART(cudaEventCreate(&stop));
  CHECK_CUDART(cudaEventRecord(start, stream));
  for (int i = 0; i < iterations; ++i)
    run();
  CHECK_CUDART(cudaEventRecord(stop, stream));
  CHECK_CUDART(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK_CUDART(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / 1e3 / iterations;
}

void benchmark(CUstream stream, int64_t n) {
  const int iterations = 20;
  double flops = 2.0 * n * n * n;
  std::printf("%-6s %6s %16s %18s %7s\n", "type", "n", "ampMatmul TFLOP/s",
              "cuBLASLt TFLOP/s", "ratio");
  for (int32_t type : {AMP_ELEMENT_F16, AMP_ELEMENT_BF16}) {
    size_t bytes = size_t(n) * n * 2;
    void *a = mgpuMemAlloc(bytes, stream, false);
    void *b = mgpuMemAlloc(bytes, stream, false);
    void *c = mgpuMemAlloc(bytes, stream, false);
    // Small finite values; the GEMM's speed does not depend on them.
    uint16_t one = type == AMP_ELEMENT_F16 ? 0x2c00 : 0x3d80; // 1/16
    mgpuMemset16(a, one, size_t(n) * n, stream);
    mgpuMemset16(b, one, size_t(n) * n, stream);
    if (!runtimeOk("benchmark buffers"))
      return;
    Descriptor<2> da{a, a, 0, {n, n}, {n, 1}}, db{b, b, 0, {n, n}, {n, 1}},
        dc{c, c, 0, {n, n}, {n, 1}};
    double ours = secondsPerCall(
        [&] {
          ampMatmul(2, &da, &db, &dc, type, type, type, 1.0f, 0.0f, stream,
                    /*callSiteId=*/200 + type);
        },
        stream, iterations);
    if (!runtimeOk("ampMatmul benchmark"))
      return;
    DirectGemm direct(type == AMP_ELEMENT_F16 ? CUDA_R_16F : CUDA_R_16BF, n);
    double theirs = secondsPerCall(
        [&] { direct.run(a, b, c, static_cast<cudaStream_t>(stream)); },
        stream, iterations);
    double oursTflops = flops / ours / 1e12, theirsTflops = flops / theirs / 1e12;
    std::printf("%-6s %6lld %16.1f %18.1f %7.3f\n", typeName(type),
                (long long)n, oursTflops, theirsTflops, oursTflops / theirsTflops);
    mgpuMemFree(a, stream);
    mgpuMemFree(b, stream);
    mgpuMemFree(c, stream);
    mgpuStreamSynchronize(stream);
  }
}

} // namespace

int main(int argc, char **argv) {
  bool bench = argc > 1 && std::strcmp(argv[1], "--bench") == 0;
  int64_t n = bench && argc > 2 ? std::atoll(argv[2]) : 8192;
  CUstream stream = mgpuStreamCreate();
  if (!stream) {
    std::printf("SKIP amp-gpu-selftest: %s\n", ampRuntimeGetLastErrorMessage());
    return 2;
  }
  int device = 0;
  cudaDeviceProp properties;
  CHECK_CUDART(cudaGetDevice(&device));
  CHECK_CUDART(cudaGetDeviceProperties(&properties, device));
  std::printf("device %d: %s (sm_%d%d), cuBLASLt %zu\n", device,
              properties.name, properties.major, properties.minor,
              cublasLtGetVersion());
  if (bench) {
    benchmark(stream, n);
  } else {
    checkMemory(stream);
    checkSums(stream);
    checkMatmuls(stream);
  }
  mgpuStreamDestroy(stream);
  if (!runtimeOk("teardown"))
    return 1;
  if (!bench)
    std::printf("%d failed\n", failures);
  return failures ? 1 : 0;
}
