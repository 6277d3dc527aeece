/*===- AmpRuntime.h - C ABI of the AMP CUDA runtime -------------*- C -*-===*\
|*                                                                            *|
|* The entry points that compiled training steps call besides the mgpu*      *|
|* functions of MLIR's GPU host ABI (declared in MgpuWrappers.h): the error   *|
|* state, driver selection, the cuBLASLt matmul and the NCCL sums of         *|
|* data-parallel steps. docs/Runtime.md is the reference for every function  *|
|* here.                                                                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef AMP_RUNTIME_AMPRUNTIME_H
#define AMP_RUNTIME_AMPRUNTIME_H

#include "amp/Runtime/AmpStepABI.h"

#include <stdint.h>

#if defined(_WIN32)
#define AMP_RUNTIME_EXPORT __declspec(dllexport)
#else
#define AMP_RUNTIME_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes of the sticky error state. */
typedef enum AmpRuntimeStatus {
  AMP_RUNTIME_SUCCESS = 0,
  /* libcuda.so.1 could not be loaded, lacks a symbol, or reports no device. */
  AMP_RUNTIME_ERROR_NO_DEVICE = 1,
  /* A CUDA driver call returned an error. */
  AMP_RUNTIME_ERROR_CUDA = 2,
  /* A cuBLASLt call returned an error. */
  AMP_RUNTIME_ERROR_CUBLAS = 3,
  /* Operands the runtime cannot handle (ranks, shapes, strides, types). */
  AMP_RUNTIME_ERROR_INVALID_ARGUMENT = 4,
  /* NCCL is missing (not built in, or its library does not load) or an
   * NCCL call returned an error. */
  AMP_RUNTIME_ERROR_NCCL = 5,
} AmpRuntimeStatus;

/* The first error since start or since the last ampRuntimeClearError, and
 * its message ("" when none). While an error is pending every entry point
 * returns at once without touching the device (pointer results are NULL). */
AMP_RUNTIME_EXPORT int32_t ampRuntimeGetLastError(void);
AMP_RUNTIME_EXPORT const char *ampRuntimeGetLastErrorMessage(void);
AMP_RUNTIME_EXPORT void ampRuntimeClearError(void);

/* Loads the CUDA driver from `path` (NULL: $AMP_CUDA_DRIVER_PATH if set,
 * else "libcuda.so.1"), replacing a driver loaded before; handles obtained
 * from an earlier driver become invalid. Without this call the first entry
 * point that needs the device loads the default. Returns the status, which
 * is also recorded as the sticky error on failure. */
AMP_RUNTIME_EXPORT int32_t ampRuntimeLoadDriver(const char *path);

/* D = alpha * A.B + beta * C with D written over C, on `stream` (a CUstream;
 * NULL is the legacy default stream), through cuBLASLt with f32 compute.
 *
 * `a`, `b` and `c` point to MLIR ranked memref descriptors
 * ({T *allocated; T *aligned; int64_t offset; int64_t sizes[rank];
 * int64_t strides[rank];}) of device memory, all of rank `rank`:
 *   rank 2: A is MxK, B is KxN, C is MxN;
 *   rank 3: the same with a leading batch dimension of equal size.
 * Each matrix must have a unit stride in one of its two inner dimensions
 * (row- or column-major, any leading dimension); transposes are views.
 * Types (AmpElementType, AmpStepABI.h): A and B alike; f16 -> f16|f32,
 * bf16 -> bf16|f32, f32 -> f32.
 * `callSiteId` names the call in the compiled code; plans (descriptors and
 * the heuristic's algorithm) are cached per call site, shapes and layouts. */
AMP_RUNTIME_EXPORT void ampMatmul(int64_t rank, const void *a, const void *b,
                                  void *c, int32_t aType, int32_t bType,
                                  int32_t cType, float alpha, float beta,
                                  void *stream, int64_t callSiteId);

/* Plan-cache counters since start, for tests and benchmarks. */
AMP_RUNTIME_EXPORT void ampRuntimeGetPlanCacheStats(int64_t *hits,
                                                    int64_t *misses);

/* Data-parallel steps: one NCCL communicator per process, given by the
 * runner; without one the process is a world of one. NCCL
 * ($AMP_NCCL_PATH, else the library found when the runtime was built) is
 * loaded by the first of the two calls below. */
#define AMP_NCCL_UNIQUE_ID_BYTES 128

/* Writes a new ncclUniqueId (AMP_NCCL_UNIQUE_ID_BYTES bytes) to `id`: rank 0
 * calls it and sends the bytes to every rank (MPI_Bcast). */
AMP_RUNTIME_EXPORT int32_t ampRuntimeGetNcclUniqueId(void *id);

/* Makes this process rank `rank` of a communicator of `size` ranks on the
 * calling thread's default device (ncclCommInitRank; every rank calls it
 * with rank 0's id). With size 1, `id` may be NULL: a one-rank
 * communicator. Returns the status. */
AMP_RUNTIME_EXPORT int32_t ampRuntimeInitCommunicator(int32_t size,
                                                      int32_t rank,
                                                      const void *id);

/* Ends the communicator (ncclCommDestroy); the process is a world of one
 * again. */
AMP_RUNTIME_EXPORT void ampRuntimeDestroyCommunicator(void);

/* The number of ranks of the communicator, 1 without one. */
AMP_RUNTIME_EXPORT int32_t ampRuntimeWorldSize(void);

/* recv = the sum over the ranks of every rank's send: `count` elements of
 * `elementType` (AMP_ELEMENT_F32, F16 or BF16) in device memory, on
 * `stream` (ncclAllReduce with ncclSum, in that type). Without a
 * communicator, a copy of send into recv. Every rank must call the same
 * sums in the same order. */
AMP_RUNTIME_EXPORT void ampAllReduceSum(const void *send, void *recv,
                                        int64_t count, int32_t elementType,
                                        void *stream);

#ifdef __cplusplus
}
#endif

#endif /* AMP_RUNTIME_AMPRUNTIME_H */
