//===- CudaDriver.cpp - dlopen of libcuda and symbol lookup ----------------===//

#include "CudaDriver.h"

#include <dlfcn.h>

#include <cstdlib>

namespace amp::runtime {

#define AMP_STRINGIFY_EXPANDED(name) AMP_STRINGIFY(name)
#define AMP_STRINGIFY(name) #name

std::string defaultDriverPath() {
  const char *env = std::getenv("AMP_CUDA_DRIVER_PATH");
  return env && *env ? env : "libcuda.so.1";
}

bool loadCudaDriver(const std::string &path, CudaDriver &driver,
                    void *&handle, std::string &error) {
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = dlerror();
    error = "no CUDA device: " + path + " not found (" +
            (reason ? reason : "dlopen failed") + ")";
    return false;
  }
  CudaDriver loaded;
  const char *missing = nullptr;
#define AMP_CUDA_DRIVER_LOOKUP(name)                                           \
  loaded.name = reinterpret_cast<decltype(loaded.name)>(                       \
      dlsym(handle, AMP_STRINGIFY_EXPANDED(name)));                            \
  if (!loaded.name && !missing)                                                \
    missing = AMP_STRINGIFY_EXPANDED(name);
  AMP_CUDA_DRIVER_FUNCTIONS(AMP_CUDA_DRIVER_LOOKUP)
#undef AMP_CUDA_DRIVER_LOOKUP
  if (missing) {
    error = "no CUDA device: " + path + " has no symbol " + missing +
            " (the driver is older than CUDA 12 or not a CUDA driver)";
    dlclose(handle);
    handle = nullptr;
    return false;
  }
  driver = loaded;
  return true;
}

} // namespace amp::runtime
