//===- Nccl.h - NCCL, loaded at run time ------------------------*- C++ -*-===//
//
// The sums of data-parallel steps go through NCCL, which only such steps
// need: like the driver, the library is dlopened (when a communicator is
// created), so that the runtime loads where NCCL is not installed. The
// table has nccl.h's exact prototypes. Built only when CMake finds nccl.h
// (AMP_HAVE_NCCL).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_NCCL_H
#define AMP_RUNTIME_NCCL_H

#include <nccl.h>

#include <string>

namespace amp::runtime {

// Every NCCL function the runtime calls.
#define AMP_NCCL_FUNCTIONS(X)                                                  \
  X(ncclGetVersion)                                                            \
  X(ncclGetErrorString)                                                        \
  X(ncclGetUniqueId)                                                           \
  X(ncclCommInitRank)                                                          \
  X(ncclCommCount)                                                             \
  X(ncclCommDestroy)                                                           \
  X(ncclAllReduce)

#define AMP_NCCL_MEMBER(name) decltype(&::name) name = nullptr;

/// NCCL's entry points, all non-null once loaded.
struct NcclLibrary {
  AMP_NCCL_FUNCTIONS(AMP_NCCL_MEMBER)
};

#undef AMP_NCCL_MEMBER

/// The library loaded: $AMP_NCCL_PATH if set, else the one CMake found
/// (AMP_NCCL_LIBRARY).
std::string defaultNcclPath();

/// dlopens `path` and resolves every function into `nccl`. On failure
/// returns false and sets `error`; the library handle is closed again.
bool loadNccl(const std::string &path, NcclLibrary &nccl, std::string &error);

/// "ncclInvalidUsage" for ncclInvalidUsage, ...
const char *ncclResultName(ncclResult_t result);

} // namespace amp::runtime

#endif // AMP_RUNTIME_NCCL_H
