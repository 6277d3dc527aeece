//===- MgpuWrappers.cpp - MLIR 22's GPU host ABI over the driver API -------===//
//
// Each wrapper enters the runtime (driver loaded, context current, no error
// pending) and checks every driver status; nothing throws, and a wrapper that
// fails returns null or does nothing after recording the error.
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/MgpuWrappers.h"

#include "Error.h"
#include "Runtime.h"

#include <climits>
#include <cstdio>
#include <optional>
#include <string_view>
#include <unordered_set>

using namespace amp::runtime;

namespace {

/// Managed allocations (isHostShared) are freed with cuMemFree, everything
/// else with cuMemFreeAsync; this set tells them apart.
struct ManagedAllocations {
  std::mutex mutex;
  std::unordered_set<void *> pointers;
};

ManagedAllocations &managedAllocations() {
  static ManagedAllocations *allocations = new ManagedAllocations;
  return *allocations;
}

/// Launch dimensions arrive as intptr_t (MLIR's index type).
bool toLaunchDims(const char *what, std::initializer_list<intptr_t> dims,
                  unsigned *out) {
  for (intptr_t dim : dims) {
    if (dim < 0 || static_cast<uint64_t>(dim) > UINT_MAX)
      return recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT,
                         std::string(entryPoint()) + ": " + what + " " +
                             std::to_string(dim) + " is out of range");
    *out++ = static_cast<unsigned>(dim);
  }
  return true;
}

/// Kernels asking for more than the default 48 KiB of dynamic shared memory
/// must opt in first.
bool allowSharedMemory(const CudaDriver &cu, CUfunction function,
                       int32_t smemBytes) {
  if (smemBytes < 0)
    return recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT,
                       std::string(entryPoint()) +
                           ": negative dynamic shared memory size " +
                           std::to_string(smemBytes));
  if (smemBytes <= 48 * 1024)
    return true;
  return AMP_CHECK(cu.cuFuncSetAttribute(
      function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smemBytes));
}

/// The first element and byte size of a dense ranked memref descriptor.
bool denseMemRef(int64_t rank, void *descriptor, int64_t elementSizeBytes,
                 char *&data, uint64_t &sizeBytes) {
  struct Header {
    char *allocated;
    char *aligned;
    int64_t offset;
  };
  auto *header = static_cast<Header *>(descriptor);
  auto *sizes = reinterpret_cast<int64_t *>(header + 1);
  const int64_t *strides = sizes + rank;
  int64_t elements = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    if (sizes[i] != 1 && strides[i] != elements)
      return recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT,
                         std::string(entryPoint()) +
                             ": only dense memrefs can be registered "
                             "(dimension " +
                             std::to_string(i) + " has stride " +
                             std::to_string(strides[i]) + ", expected " +
                             std::to_string(elements) + ")");
    elements *= sizes[i];
  }
  data = header->aligned + header->offset * elementSizeBytes;
  sizeBytes = static_cast<uint64_t>(elements * elementSizeBytes);
  return true;
}

/// What mgpuMemHost(Un)registerMemRef act on: the driver and the bytes of a
/// dense memref.
struct HostRange {
  const CudaDriver *cu;
  char *data;
  uint64_t sizeBytes;
};

/// Enters the device for the entry point `where` and finds the bytes of the
/// memref; none when there is nothing to do: no usable device or a memref
/// that is not dense (the error recorded), or an empty memref.
std::optional<HostRange> enterHostRange(const char *where, int64_t rank,
                                        void *descriptor,
                                        int64_t elementSizeBytes) {
  HostRange range{enterDevice(where), nullptr, 0};
  if (!range.cu ||
      !denseMemRef(rank, descriptor, elementSizeBytes, range.data,
                   range.sizeBytes) ||
      range.sizeBytes == 0)
    return std::nullopt;
  return range;
}

} // namespace

extern "C" {

CUstream mgpuStreamCreate(void) {
  const CudaDriver *cu = enterDevice(__func__);
  CUstream stream = nullptr;
  if (!cu || !AMP_CHECK(cu->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING)))
    return nullptr;
  return stream;
}

void mgpuStreamSynchronize(CUstream stream) {
  if (const CudaDriver *cu = enterDevice(__func__))
    AMP_CHECK(cu->cuStreamSynchronize(stream));
}

void mgpuStreamDestroy(CUstream stream) {
  DeviceState *device = nullptr;
  const CudaDriver *cu = enterDevice(__func__, &device);
  if (!cu)
    return;
  releaseStreamWorkspace(*cu, *device, stream);
  AMP_CHECK(cu->cuStreamDestroy(stream));
}

void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  if (const CudaDriver *cu = enterDevice(__func__))
    AMP_CHECK(cu->cuStreamWaitEvent(stream, event, 0));
}

CUevent mgpuEventCreate(void) {
  const CudaDriver *cu = enterDevice(__func__);
  CUevent event = nullptr;
  if (!cu || !AMP_CHECK(cu->cuEventCreate(&event, CU_EVENT_DISABLE_TIMING)))
    return nullptr;
  return event;
}

void mgpuEventRecord(CUevent event, CUstream stream) {
  if (const CudaDriver *cu = enterDevice(__func__))
    AMP_CHECK(cu->cuEventRecord(event, stream));
}

void mgpuEventSynchronize(CUevent event) {
  if (const CudaDriver *cu = enterDevice(__func__))
    AMP_CHECK(cu->cuEventSynchronize(event));
}

void mgpuEventDestroy(CUevent event) {
  if (const CudaDriver *cu = enterDevice(__func__))
    AMP_CHECK(cu->cuEventDestroy(event));
}

void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream, bool isHostShared) {
  const CudaDriver *cu = enterDevice(__func__);
  // A zero-byte buffer is never dereferenced; the driver rejects the size.
  if (!cu || sizeBytes == 0)
    return nullptr;
  CUdeviceptr pointer = 0;
  if (isHostShared) {
    if (!AMP_CHECK(cu->cuMemAllocManaged(&pointer, sizeBytes,
                                         CU_MEM_ATTACH_GLOBAL)))
      return nullptr;
    ManagedAllocations &managed = managedAllocations();
    std::lock_guard<std::mutex> lock(managed.mutex);
    managed.pointers.insert(reinterpret_cast<void *>(pointer));
  } else if (!AMP_CHECK(cu->cuMemAllocAsync(&pointer, sizeBytes, stream))) {
    return nullptr;
  }
  return reinterpret_cast<void *>(pointer);
}

void mgpuMemFree(void *ptr, CUstream stream) {
  const CudaDriver *cu = enterDevice(__func__);
  if (!cu || !ptr)
    return;
  auto pointer = reinterpret_cast<CUdeviceptr>(ptr);
  ManagedAllocations &managed = managedAllocations();
  {
    std::lock_guard<std::mutex> lock(managed.mutex);
    if (managed.pointers.erase(ptr)) {
      AMP_CHECK(cu->cuMemFree(pointer));
      return;
    }
  }
  AMP_CHECK(cu->cuMemFreeAsync(pointer, stream));
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, CUstream stream) {
  if (const CudaDriver *cu = enterDevice(__func__))
    AMP_CHECK(cu->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                                stream));
}

void mgpuMemset32(void *dst, uint32_t value, size_t count, CUstream stream) {
  if (const CudaDriver *cu = enterDevice(__func__))
    AMP_CHECK(cu->cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                   count, stream));
}

void mgpuMemset16(void *dst, uint16_t value, size_t count, CUstream stream) {
  if (const CudaDriver *cu = enterDevice(__func__))
    AMP_CHECK(cu->cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                   count, stream));
}

void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                               int64_t elementSizeBytes) {
  if (std::optional<HostRange> range =
          enterHostRange(__func__, rank, descriptor, elementSizeBytes))
    AMP_CHECK(range->cu->cuMemHostRegister(range->data, range->sizeBytes, 0));
}

void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                 int64_t elementSizeBytes) {
  if (std::optional<HostRange> range =
          enterHostRange(__func__, rank, descriptor, elementSizeBytes))
    AMP_CHECK(range->cu->cuMemHostUnregister(range->data));
}

void mgpuSetDefaultDevice(int32_t device) { setDefaultDevice(device); }

CUmodule mgpuModuleLoad(void *data, size_t /*gpuBlobSize*/) {
  // The driver finds a fatbin's or cubin's size in its header.
  const CudaDriver *cu = enterDevice(__func__);
  CUmodule module = nullptr;
  if (!cu || !AMP_CHECK(cu->cuModuleLoadData(&module, data)))
    return nullptr;
  return module;
}

CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  const CudaDriver *cu = enterDevice(__func__);
  if (!cu)
    return nullptr;
  char log[4096] = {0};
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel)),
                    log, reinterpret_cast<void *>(sizeof(log))};
  CUmodule module = nullptr;
  if (!AMP_CHECK(cu->cuModuleLoadDataEx(&module, data, 3, options, values))) {
    if (log[0])
      std::fprintf(stderr, "amp runtime: PTX JIT log:\n%s\n", log);
    return nullptr;
  }
  return module;
}

void mgpuModuleUnload(CUmodule module) {
  forEachDevice([&](DeviceState &device) {
    std::lock_guard<std::mutex> lock(device.kernelMutex);
    device.kernels.erase(module);
  });
  if (const CudaDriver *cu = enterDevice(__func__))
    AMP_CHECK(cu->cuModuleUnload(module));
}

CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  DeviceState *device = nullptr;
  const CudaDriver *cu = enterDevice(__func__, &device);
  if (!cu)
    return nullptr;
  std::lock_guard<std::mutex> lock(device->kernelMutex);
  auto &functions = device->kernels[module];
  auto found = functions.find(std::string_view(name));
  if (found != functions.end())
    return found->second;
  CUfunction function = nullptr;
  if (!AMP_CHECK(cu->cuModuleGetFunction(&function, module, name)))
    return nullptr;
  functions.emplace(name, function);
  return function;
}

void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smemBytes, CUstream stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  // The driver knows the kernel's parameter list; paramsCount is redundant.
  const CudaDriver *cu = enterDevice(__func__);
  unsigned grid[3], block[3];
  if (!cu || !toLaunchDims("grid size", {gridX, gridY, gridZ}, grid) ||
      !toLaunchDims("block size", {blockX, blockY, blockZ}, block) ||
      !allowSharedMemory(*cu, function, smemBytes))
    return;
  AMP_CHECK(cu->cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0],
                               block[1], block[2],
                               static_cast<unsigned>(smemBytes), stream,
                               params, extra));
}

void mgpuLaunchClusterKernel(CUfunction function, intptr_t clusterX,
                             intptr_t clusterY, intptr_t clusterZ,
                             intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                             intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                             int32_t smemBytes, CUstream stream, void **params,
                             void **extra) {
  const CudaDriver *cu = enterDevice(__func__);
  unsigned cluster[3], grid[3], block[3];
  if (!cu ||
      !toLaunchDims("cluster size", {clusterX, clusterY, clusterZ}, cluster) ||
      !toLaunchDims("grid size", {gridX, gridY, gridZ}, grid) ||
      !toLaunchDims("block size", {blockX, blockY, blockZ}, block) ||
      !allowSharedMemory(*cu, function, smemBytes))
    return;
  // Clusters of more than 8 blocks are "non-portable" and need an opt-in.
  if (uint64_t(cluster[0]) * cluster[1] * cluster[2] > 8 &&
      !AMP_CHECK(cu->cuFuncSetAttribute(
          function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)))
    return;
  CUlaunchAttribute attribute = {};
  attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attribute.value.clusterDim.x = cluster[0];
  attribute.value.clusterDim.y = cluster[1];
  attribute.value.clusterDim.z = cluster[2];
  CUlaunchConfig config = {};
  config.gridDimX = grid[0];
  config.gridDimY = grid[1];
  config.gridDimZ = grid[2];
  config.blockDimX = block[0];
  config.blockDimY = block[1];
  config.blockDimZ = block[2];
  config.sharedMemBytes = static_cast<unsigned>(smemBytes);
  config.hStream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  AMP_CHECK(cu->cuLaunchKernelEx(&config, function, params, extra));
}

} // extern "C"
