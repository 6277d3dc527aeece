//===- MpiRuntimeWrappers.cpp - MPI entry points of data-parallel steps ---===//
//
// The entry points of amp/ExecutionEngine/MpiRuntime.h over MPICH. MPI has
// no 16-bit float datatype, so f16 and bf16 buffers travel as a contiguous
// 2-byte datatype and are added by user-defined reduction ops, created once.
// MPI errors keep MPI's default handler: they end the job with MPICH's
// message (a collective has no one to return an error to).
//
//===----------------------------------------------------------------------===//

#include "amp/ExecutionEngine/MpiRuntime.h"
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

// MPIToLLVM's default ABI, which the f32 collectives of the steps follow.
#ifndef MPICH
#error "libAmpMpiRuntime is built against MPICH's mpi.h"
#endif

namespace {

MPI_Datatype bits16 = MPI_DATATYPE_NULL;
MPI_Op sumF16 = MPI_OP_NULL, sumBF16 = MPI_OP_NULL;

float extendF16(uint16_t bits) {
  _Float16 half;
  std::memcpy(&half, &bits, sizeof(half));
  return static_cast<float>(half);
}

uint16_t roundF16(float value) {
  _Float16 half = static_cast<_Float16>(value);
  uint16_t bits;
  std::memcpy(&bits, &half, sizeof(bits));
  return bits;
}

float extendBF16(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

/// To nearest even; a NaN stays a (quiet) NaN. Without branches, so that
/// the loop of addHalves vectorizes.
uint16_t roundBF16(float value) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof(word));
  uint32_t rounded = (word + 0x7fff + ((word >> 16) & 1)) >> 16;
  uint32_t quiet = (word >> 16) | 0x40;
  bool isNaN = (word & 0x7fffffff) > 0x7f800000;
  return static_cast<uint16_t>(isNaN ? quiet : rounded);
}

/// inout[i] = in[i] + inout[i], added in f32.
template <float (*Extend)(uint16_t), uint16_t (*Round)(float)>
void addHalves(void *in, void *inout, int *length, MPI_Datatype *) {
  const auto *a = static_cast<const uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *length; ++i)
    b[i] = Round(Extend(a[i]) + Extend(b[i]));
}

#if defined(__x86_64__)
/// addHalves<extendF16, roundF16> with F16C's conversions, 8 at a time: the
/// same roundings (to nearest even), 60x faster than libgcc's conversion
/// calls that _Float16 compiles to without F16C.
__attribute__((target("avx,f16c"))) void addF16C(void *in, void *inout,
                                                int *length, MPI_Datatype *) {
  const auto *a = static_cast<const uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  int i = 0;
  for (; i + 8 <= *length; i += 8) {
    __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(a + i)));
    __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(b + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(b + i),
                     _mm256_cvtps_ph(_mm256_add_ps(x, y), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < *length; ++i)
    b[i] = _cvtss_sh(_cvtsh_ss(a[i]) + _cvtsh_ss(b[i]), _MM_FROUND_TO_NEAREST_INT);
}
#endif

/// The sum of f16 buffers: with F16C where the CPU has it.
MPI_User_function *getF16Sum() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("f16c"))
    return &addF16C;
#endif
  return &addHalves<extendF16, roundF16>;
}

void finalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return;
  MPI_Op_free(&sumF16);
  MPI_Op_free(&sumBF16);
  MPI_Type_free(&bits16);
  MPI_Finalize();
}

/// MPI_Init unless someone else initialized MPI (then finalizing is theirs),
/// and the reduction ops of 16-bit floats.
void ensureInitialized() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      MPI_Init(nullptr, nullptr);
      std::atexit(finalizeAtExit);
    }
    MPI_Type_contiguous(2, MPI_BYTE, &bits16);
    MPI_Type_commit(&bits16);
    MPI_Op_create(getF16Sum(), /*commute=*/1, &sumF16);
    MPI_Op_create(&addHalves<extendBF16, roundBF16>, /*commute=*/1, &sumBF16);
  });
}

/// The elements of a contiguous 1-D memref: {base, aligned, offset,
/// sizes[1], strides[1]}.
struct Buffer {
  void *data;
  int count;
};

Buffer readBuffer(const AmpUnrankedMemRef *memref) {
  auto *fields = static_cast<char *>(memref->descriptor);
  char *aligned = *reinterpret_cast<char **>(fields + sizeof(void *));
  auto *numbers = reinterpret_cast<int64_t *>(fields + 2 * sizeof(void *));
  int64_t offset = numbers[0], size = numbers[1], stride = numbers[2];
  // amp-mpi-to-cpu-runtime passes only such buffers.
  if (memref->rank != 1 || stride != 1 || size > INT32_MAX) {
    std::fprintf(stderr, "libAmpMpiRuntime: expected a contiguous 1-D buffer "
                         "of at most 2^31-1 elements\n");
    std::abort();
  }
  return {aligned + offset * sizeof(uint16_t), static_cast<int>(size)};
}

/// `op` by reference: ensureInitialized creates it.
void allreduceHalves(AmpUnrankedMemRef *send, AmpUnrankedMemRef *recv,
                     const MPI_Op &op) {
  ensureInitialized();
  Buffer in = readBuffer(send), out = readBuffer(recv);
  MPI_Allreduce(in.data, out.data, in.count, bits16, op, MPI_COMM_WORLD);
}

} // namespace

extern "C" {

void _mlir_ciface_ampMpiAllreduceSumF16(AmpUnrankedMemRef *send,
                                        AmpUnrankedMemRef *recv) {
  allreduceHalves(send, recv, sumF16);
}

void _mlir_ciface_ampMpiAllreduceSumBF16(AmpUnrankedMemRef *send,
                                         AmpUnrankedMemRef *recv) {
  allreduceHalves(send, recv, sumBF16);
}

int32_t _mlir_ciface_ampMpiWorldSize(void) {
  ensureInitialized();
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

void ampMpiInitialize(int32_t *rank, int32_t *size) {
  ensureInitialized();
  int r = 0, s = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  *rank = r;
  *size = s;
}

double ampMpiAllreduceSumF64(double value) {
  ensureInitialized();
  double sum = 0.0;
  MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

void ampMpiAllgatherU64(uint64_t value, uint64_t *values) {
  ensureInitialized();
  MPI_Allgather(&value, 1, MPI_UINT64_T, values, 1, MPI_UINT64_T,
                MPI_COMM_WORLD);
}

void ampMpiAbort(int32_t code) {
  ensureInitialized();
  MPI_Abort(MPI_COMM_WORLD, code);
}

} // extern "C"
