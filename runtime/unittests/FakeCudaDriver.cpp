//===- FakeCudaDriver.cpp - A host-only stand-in for libcuda.so.1 ----------===//
//
// Exports every driver function the runtime looks up, under cuda.h's
// versioned names. "Device" memory is host memory, so copies and memsets
// really happen; handles are dummies. Tests steer it through the fakeCuda*
// functions: make one function fail, set the device count, read the calls.
// With $AMP_FAKE_CUDA_LOG set, the calls that carry sizes (allocations,
// copies, launches) are also written to that file, one line each, so that a
// test of a compiled step can see the sizes its code computed from the
// memref descriptors it was given.
//
// Where the runtime is built with NCCL, it also exports the NCCL functions
// the runtime looks up ($AMP_NCCL_PATH pointed here): a communicator whose
// other ranks contribute zeros, so a sum is a copy of this rank's buffer.
// Each ncclAllReduce is logged with its count, type, operation and whether
// it got the runtime's communicator.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

// Never destroyed: a compiled step's destructors may call in after this
// library's own static destructors have run.
std::map<std::string, CUresult> &failures =
    *new std::map<std::string, CUresult>;
std::vector<std::string> &calls = *new std::vector<std::string>;
int deviceCount = 1;
thread_local CUcontext current = nullptr;
char handleStorage[64];

/// Logs the call; the failure a test asked for, else CUDA_SUCCESS.
CUresult enter(const char *name) {
  calls.push_back(name);
  auto it = failures.find(name);
  return it == failures.end() ? CUDA_SUCCESS : it->second;
}

/// Appends a line to $AMP_FAKE_CUDA_LOG, if set.
void logLine(const std::string &line) {
  static std::FILE *log = [] {
    const char *path = std::getenv("AMP_FAKE_CUDA_LOG");
    return path ? std::fopen(path, "w") : nullptr;
  }();
  if (log) {
    std::fprintf(log, "%s\n", line.c_str());
    std::fflush(log);
  }
}

template <typename T> T handle(int index) {
  return reinterpret_cast<T>(&handleStorage[index]);
}

} // namespace

#define FAKE_ENTER()                                                           \
  if (CUresult fakeResult = enter(__func__))                                   \
    return fakeResult;

extern "C" {

__attribute__((visibility("default"))) void fakeCudaReset(void) {
  failures.clear();
  calls.clear();
  deviceCount = 1;
  current = nullptr;
}

__attribute__((visibility("default"))) void
fakeCudaFail(const char *name, int result) {
  failures[name] = static_cast<CUresult>(result);
}

__attribute__((visibility("default"))) void fakeCudaSetDeviceCount(int count) {
  deviceCount = count;
}

/// How often `name` was called since the last reset.
__attribute__((visibility("default"))) int fakeCudaCalls(const char *name) {
  int count = 0;
  for (const std::string &call : calls)
    count += call == name;
  return count;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr) {
  switch (error) {
  case CUDA_SUCCESS:
    *pStr = "CUDA_SUCCESS";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_VALUE:
    *pStr = "CUDA_ERROR_INVALID_VALUE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_OUT_OF_MEMORY:
    *pStr = "CUDA_ERROR_OUT_OF_MEMORY";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NO_DEVICE:
    *pStr = "CUDA_ERROR_NO_DEVICE";
    return CUDA_SUCCESS;
  default:
    *pStr = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr) {
  switch (error) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    *pStr = "out of memory";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NO_DEVICE:
    *pStr = "no CUDA-capable device is detected";
    return CUDA_SUCCESS;
  default:
    *pStr = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult CUDAAPI cuInit(unsigned int) {
  FAKE_ENTER();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
  FAKE_ENTER();
  *count = deviceCount;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  FAKE_ENTER();
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice) {
  FAKE_ENTER();
  *pool = handle<CUmemoryPool>(0);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool, CUmemPool_attribute,
                                       void *) {
  FAKE_ENTER();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  FAKE_ENTER();
  *context = handle<CUcontext>(1 + device);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *context) {
  FAKE_ENTER();
  *context = current;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) {
  FAKE_ENTER();
  current = context;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream *stream, unsigned int) {
  FAKE_ENTER();
  *stream = handle<CUstream>(16);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream) {
  FAKE_ENTER();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream) {
  FAKE_ENTER();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream, CUevent, unsigned int) {
  FAKE_ENTER();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent *event, unsigned int) {
  FAKE_ENTER();
  *event = handle<CUevent>(17);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent, CUstream) {
  FAKE_ENTER();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent) {
  FAKE_ENTER();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent) {
  FAKE_ENTER();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *pointer, size_t size) {
  FAKE_ENTER();
  *pointer = reinterpret_cast<CUdeviceptr>(std::malloc(size));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *pointer, size_t size, CUstream) {
  FAKE_ENTER();
  logLine("cuMemAllocAsync " + std::to_string(size));
  *pointer = reinterpret_cast<CUdeviceptr>(std::malloc(size));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *pointer, size_t size,
                                   unsigned int) {
  FAKE_ENTER();
  *pointer = reinterpret_cast<CUdeviceptr>(std::malloc(size));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr pointer) {
  FAKE_ENTER();
  std::free(reinterpret_cast<void *>(pointer));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr pointer, CUstream) {
  FAKE_ENTER();
  std::free(reinterpret_cast<void *>(pointer));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t size,
                               CUstream) {
  FAKE_ENTER();
  logLine("cuMemcpyAsync " + std::to_string(size));
  std::memcpy(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src),
              size);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int value,
                                  size_t count, CUstream) {
  FAKE_ENTER();
  auto *out = reinterpret_cast<uint32_t *>(dst);
  for (size_t i = 0; i < count; ++i)
    out[i] = value;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dst, unsigned short value,
                                  size_t count, CUstream) {
  FAKE_ENTER();
  auto *out = reinterpret_cast<uint16_t *>(dst);
  for (size_t i = 0; i < count; ++i)
    out[i] = value;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostRegister(void *, size_t, unsigned int) {
  FAKE_ENTER();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostUnregister(void *) {
  FAKE_ENTER();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *) {
  FAKE_ENTER();
  *module = handle<CUmodule>(18);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *,
                                    unsigned int, CUjit_option *, void **) {
  FAKE_ENTER();
  *module = handle<CUmodule>(18);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleUnload(CUmodule) {
  FAKE_ENTER();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule,
                                     const char *) {
  FAKE_ENTER();
  *function = handle<CUfunction>(19);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) {
  FAKE_ENTER();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction, unsigned int gridX,
                                unsigned int gridY, unsigned int gridZ,
                                unsigned int blockX, unsigned int blockY,
                                unsigned int blockZ, unsigned int, CUstream,
                                void **, void **) {
  FAKE_ENTER();
  logLine("cuLaunchKernel grid " + std::to_string(gridX) + " " +
          std::to_string(gridY) + " " + std::to_string(gridZ) + " block " +
          std::to_string(blockX) + " " + std::to_string(blockY) + " " +
          std::to_string(blockZ));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *, CUfunction, void **,
                                  void **) {
  FAKE_ENTER();
  return CUDA_SUCCESS;
}

} // extern "C"

#if AMP_HAVE_NCCL
#include <nccl.h>

namespace {
struct FakeComm {
  int size, rank;
};
} // namespace

#define FAKE_NCCL_ENTER()                                                      \
  if (CUresult fakeResult = enter(__func__))                                   \
    return static_cast<ncclResult_t>(fakeResult);

extern "C" {

ncclResult_t ncclGetVersion(int *version) {
  FAKE_NCCL_ENTER();
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result) {
  return result == ncclInvalidUsage ? "invalid usage (fake)" : "fake error";
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  FAKE_NCCL_ENTER();
  std::memset(id, 7, sizeof *id);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int size, ncclUniqueId,
                              int rank) {
  FAKE_NCCL_ENTER();
  *comm = reinterpret_cast<ncclComm_t>(new FakeComm{size, rank});
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  FAKE_NCCL_ENTER();
  *count = reinterpret_cast<FakeComm *>(comm)->size;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  FAKE_NCCL_ENTER();
  delete reinterpret_cast<FakeComm *>(comm);
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t) {
  FAKE_NCCL_ENTER();
  const char *typeName = type == ncclFloat32   ? "f32"
                         : type == ncclFloat16 ? "f16"
                         : type == ncclBfloat16 ? "bf16"
                                                : "other";
  auto *fake = reinterpret_cast<FakeComm *>(comm);
  logLine("ncclAllReduce " + std::to_string(count) + " " + typeName +
          (op == ncclSum ? " sum" : " other") + " rank " +
          std::to_string(fake->rank) + " of " + std::to_string(fake->size));
  if (send != recv)
    std::memcpy(recv, send, count * (type == ncclFloat32 ? 4 : 2));
  return ncclSuccess;
}

} // extern "C"
#endif // AMP_HAVE_NCCL
