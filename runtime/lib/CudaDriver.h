//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// The runtime never links libcuda: machines without a GPU have no
// libcuda.so.1, and the library must still load there. The driver functions
// are looked up with dlsym under the versioned names cuda.h maps them to
// (cuMemAlloc -> cuMemAlloc_v2), so the table has cuda.h's exact prototypes.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_CUDADRIVER_H
#define AMP_RUNTIME_CUDADRIVER_H

#include <cuda.h>

#include <string>

namespace amp::runtime {

// Every driver function the runtime calls. Each name expands to cuda.h's
// versioned symbol before it is declared or looked up.
#define AMP_CUDA_DRIVER_FUNCTIONS(X)                                           \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuInit)                                                                    \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetDefaultMemPool)                                                 \
  X(cuMemPoolSetAttribute)                                                     \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxSetCurrent)                                                           \
  X(cuStreamCreate)                                                            \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamDestroy)                                                           \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventDestroy)                                                            \
  X(cuMemAlloc)                                                                \
  X(cuMemAllocAsync)                                                           \
  X(cuMemAllocManaged)                                                         \
  X(cuMemFree)                                                                 \
  X(cuMemFreeAsync)                                                            \
  X(cuMemcpyAsync)                                                             \
  X(cuMemsetD32Async)                                                          \
  X(cuMemsetD16Async)                                                          \
  X(cuMemHostRegister)                                                         \
  X(cuMemHostUnregister)                                                       \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuLaunchKernelEx)

#define AMP_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;

/// The driver's entry points, all non-null once loaded.
struct CudaDriver {
  AMP_CUDA_DRIVER_FUNCTIONS(AMP_CUDA_DRIVER_MEMBER)
};

#undef AMP_CUDA_DRIVER_MEMBER

/// The library loaded when no path is given: $AMP_CUDA_DRIVER_PATH if set,
/// else "libcuda.so.1".
std::string defaultDriverPath();

/// dlopens `path` and resolves every function into `driver`. On failure
/// returns false and sets `error` to a "no CUDA device: ..." message; the
/// library handle is closed again.
bool loadCudaDriver(const std::string &path, CudaDriver &driver,
                    void *&handle, std::string &error);

} // namespace amp::runtime

#endif // AMP_RUNTIME_CUDADRIVER_H
