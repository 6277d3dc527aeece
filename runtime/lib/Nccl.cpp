//===- Nccl.cpp - dlopen of libnccl and symbol lookup ----------------------===//

#include "Nccl.h"

#include <dlfcn.h>

#include <cstdlib>

namespace amp::runtime {

std::string defaultNcclPath() {
  const char *env = std::getenv("AMP_NCCL_PATH");
  return env && *env ? env : AMP_NCCL_LIBRARY;
}

bool loadNccl(const std::string &path, NcclLibrary &nccl, std::string &error) {
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *reason = dlerror();
    error = "cannot load NCCL " + path + " (" +
            (reason ? reason : "dlopen failed") + ")";
    return false;
  }
  NcclLibrary loaded;
  const char *missing = nullptr;
#define AMP_NCCL_LOOKUP(name)                                                  \
  loaded.name = reinterpret_cast<decltype(loaded.name)>(dlsym(handle, #name)); \
  if (!loaded.name && !missing)                                                \
    missing = #name;
  AMP_NCCL_FUNCTIONS(AMP_NCCL_LOOKUP)
#undef AMP_NCCL_LOOKUP
  if (missing) {
    error = "cannot use NCCL " + path + ": it has no symbol " + missing;
    dlclose(handle);
    return false;
  }
  nccl = loaded;
  return true;
}

const char *ncclResultName(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "ncclSuccess";
  case ncclUnhandledCudaError:
    return "ncclUnhandledCudaError";
  case ncclSystemError:
    return "ncclSystemError";
  case ncclInternalError:
    return "ncclInternalError";
  case ncclInvalidArgument:
    return "ncclInvalidArgument";
  case ncclInvalidUsage:
    return "ncclInvalidUsage";
  case ncclRemoteError:
    return "ncclRemoteError";
  case ncclInProgress:
    return "ncclInProgress";
  default:
    return "ncclResult_t (unknown)";
  }
}

} // namespace amp::runtime
