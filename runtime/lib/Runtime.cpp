//===- Runtime.cpp - Driver loading, CUDA initialization, contexts ---------===//

#include "Runtime.h"

#include "Error.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace amp::runtime {

namespace {

struct RuntimeState {
  std::mutex mutex;
  void *library = nullptr;
  CudaDriver driver;
  std::atomic<const CudaDriver *> loaded{nullptr};
  bool initialized = false;
  int deviceCount = 0;
  std::map<int, std::unique_ptr<DeviceState>> devices;
  /// Devices opened through a driver loaded before the current one: their
  /// objects cannot be released through the new driver, so they are kept,
  /// never destroyed, rather than lost.
  std::vector<std::unique_ptr<DeviceState>> retiredDevices;
};

// Never destroyed: compiled code calls into the runtime from global
// destructors (mgpuModuleUnload), which may run after ours.
RuntimeState &runtimeState() {
  static RuntimeState *state = new RuntimeState;
  return *state;
}

// Like MLIR's CUDA wrappers, the default device is per thread.
thread_local int32_t defaultDevice = 0;

AmpRuntimeStatus loadDriverLocked(RuntimeState &state,
                                  const std::string &path) {
  // Objects made through a previous driver cannot be released through the
  // new one: they are retired, and the old library stays mapped.
  for (auto &entry : state.devices)
    state.retiredDevices.push_back(std::move(entry.second));
  state.devices.clear();
  state.initialized = false;
  state.loaded.store(nullptr);
  void *library = nullptr;
  std::string error;
  if (!loadCudaDriver(path, state.driver, library, error)) {
    recordError(AMP_RUNTIME_ERROR_NO_DEVICE, error);
    return AMP_RUNTIME_ERROR_NO_DEVICE;
  }
  state.library = library;
  state.loaded.store(&state.driver);
  return AMP_RUNTIME_SUCCESS;
}

DeviceState *openDevice(RuntimeState &state, int ordinal) {
  const CudaDriver &cu = state.driver;
  auto device = std::make_unique<DeviceState>();
  device->ordinal = ordinal;
  CUdevice handle = 0;
  CUmemoryPool pool = nullptr;
  // Stream-ordered allocations are kept in the pool across synchronizations
  // instead of going back to the OS, so per-step temporaries cost no
  // cuMemAlloc after the first step.
  cuuint64_t keepAll = UINT64_MAX;
  if (!AMP_CHECK(cu.cuDeviceGet(&handle, ordinal)) ||
      !AMP_CHECK(cu.cuDevicePrimaryCtxRetain(&device->context, handle)) ||
      !AMP_CHECK(cu.cuDeviceGetDefaultMemPool(&pool, handle)) ||
      !AMP_CHECK(cu.cuMemPoolSetAttribute(
          pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keepAll)))
    return nullptr;
  return (state.devices[ordinal] = std::move(device)).get();
}

} // namespace

const CudaDriver *loadedDriver() { return runtimeState().loaded.load(); }

void setDefaultDevice(int32_t ordinal) { defaultDevice = ordinal; }

const CudaDriver *enterDevice(const char *where, DeviceState **device) {
  setEntryPoint(where);
  if (hasPendingError())
    return nullptr;
  RuntimeState &state = runtimeState();
  DeviceState *current = nullptr;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    if (!state.loaded.load() &&
        loadDriverLocked(state, defaultDriverPath()) != AMP_RUNTIME_SUCCESS)
      return nullptr;
    const CudaDriver &cu = state.driver;
    if (!state.initialized) {
      int count = 0;
      if (!AMP_CHECK(cu.cuInit(0)) || !AMP_CHECK(cu.cuDeviceGetCount(&count)))
        return nullptr;
      if (count == 0) {
        recordError(AMP_RUNTIME_ERROR_NO_DEVICE,
                    std::string("no CUDA device: the driver reports no "
                                "devices (in ") +
                        where + ")");
        return nullptr;
      }
      state.deviceCount = count;
      state.initialized = true;
    }
    int ordinal = defaultDevice;
    if (ordinal < 0 || ordinal >= state.deviceCount) {
      recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT,
                  std::string(where) + ": default device " +
                      std::to_string(ordinal) + " requested, the driver has " +
                      std::to_string(state.deviceCount));
      return nullptr;
    }
    auto it = state.devices.find(ordinal);
    current = it != state.devices.end() ? it->second.get()
                                        : openDevice(state, ordinal);
    if (!current)
      return nullptr;
  }
  const CudaDriver &cu = state.driver;
  CUcontext bound = nullptr;
  if (!AMP_CHECK(cu.cuCtxGetCurrent(&bound)))
    return nullptr;
  if (bound != current->context && !AMP_CHECK(cu.cuCtxSetCurrent(current->context)))
    return nullptr;
  if (device)
    *device = current;
  return &cu;
}

void forEachDevice(const std::function<void(DeviceState &)> &visit) {
  RuntimeState &state = runtimeState();
  std::lock_guard<std::mutex> lock(state.mutex);
  for (auto &entry : state.devices)
    visit(*entry.second);
}

} // namespace amp::runtime

using namespace amp::runtime;

extern "C" int32_t ampRuntimeLoadDriver(const char *path) {
  setEntryPoint("ampRuntimeLoadDriver");
  RuntimeState &state = runtimeState();
  std::lock_guard<std::mutex> lock(state.mutex);
  return loadDriverLocked(state, path ? path : defaultDriverPath());
}
