//===- Collectives.cpp - Sums of data-parallel steps over NCCL -------------===//
//
// One communicator per process, given by the runner (ampRuntimeInit-
// Communicator); without one the process is a world of one and a sum is a
// copy. NCCL is loaded with the first communicator (Nccl.h).
//
//===----------------------------------------------------------------------===//

#include "Error.h"
#include "Runtime.h"
#if AMP_HAVE_NCCL
#include "Nccl.h"
#endif

#include <cstring>
#include <mutex>

namespace amp::runtime {
namespace {

struct CommunicatorState {
  std::mutex mutex;
  int32_t size = 1;
#if AMP_HAVE_NCCL
  std::string loadedPath;
  NcclLibrary nccl;
  ncclComm_t comm = nullptr;
#endif
};

// Never destroyed, like the rest of the runtime's state.
CommunicatorState &communicatorState() {
  static CommunicatorState *state = new CommunicatorState;
  return *state;
}

#if AMP_HAVE_NCCL
bool checkNccl(const NcclLibrary &nccl, ncclResult_t result,
               const char *expression) {
  if (result == ncclSuccess)
    return true;
  return recordError(AMP_RUNTIME_ERROR_NCCL,
                     formatCallError(expression, entryPoint(),
                                     ncclResultName(result),
                                     nccl.ncclGetErrorString(result)));
}

/// Loads NCCL from its current path (which a communicator keeps); false,
/// with the error recorded, if it cannot.
bool loadNcclLocked(CommunicatorState &state) {
  std::string path = defaultNcclPath();
  if (path == state.loadedPath || state.comm)
    return true;
  std::string error;
  if (!loadNccl(path, state.nccl, error))
    return recordError(AMP_RUNTIME_ERROR_NCCL,
                       std::string(entryPoint()) + ": " + error);
  state.loadedPath = path;
  return true;
}
#else
bool noNccl() {
  return recordError(AMP_RUNTIME_ERROR_NCCL,
                     std::string(entryPoint()) +
                         ": this runtime was built without NCCL (CMake found "
                         "no nccl.h and libnccl): it runs data-parallel "
                         "steps as a world of one only");
}
#endif

/// The element types of the sums (also NCCL's).
bool isSummable(int32_t elementType) {
  return elementType == AMP_ELEMENT_F32 || elementType == AMP_ELEMENT_F16 ||
         elementType == AMP_ELEMENT_BF16;
}

} // namespace
} // namespace amp::runtime

using namespace amp::runtime;

extern "C" int32_t ampRuntimeGetNcclUniqueId(void *id) {
  setEntryPoint("ampRuntimeGetNcclUniqueId");
  if (hasPendingError())
    return ampRuntimeGetLastError();
#if AMP_HAVE_NCCL
  CommunicatorState &state = communicatorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (!loadNcclLocked(state))
    return AMP_RUNTIME_ERROR_NCCL;
  ncclUniqueId unique;
  if (!checkNccl(state.nccl, state.nccl.ncclGetUniqueId(&unique),
                 "nccl.ncclGetUniqueId(&unique)"))
    return AMP_RUNTIME_ERROR_NCCL;
  std::memcpy(id, &unique, sizeof unique);
  return AMP_RUNTIME_SUCCESS;
#else
  (void)id;
  noNccl();
  return AMP_RUNTIME_ERROR_NCCL;
#endif
}

extern "C" int32_t ampRuntimeInitCommunicator(int32_t size, int32_t rank,
                                              const void *id) {
  setEntryPoint("ampRuntimeInitCommunicator");
  if (hasPendingError())
    return ampRuntimeGetLastError();
  if (size < 1 || rank < 0 || rank >= size || (!id && size != 1)) {
    recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT,
                "ampRuntimeInitCommunicator: rank " + std::to_string(rank) +
                    " of " + std::to_string(size) +
                    (id ? "" : " without a unique id") +
                    ": needs 0 <= rank < size, and the id of rank 0's "
                    "ampRuntimeGetNcclUniqueId unless size is 1");
    return AMP_RUNTIME_ERROR_INVALID_ARGUMENT;
  }
#if AMP_HAVE_NCCL
  CommunicatorState &state = communicatorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.comm) {
    recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT,
                "ampRuntimeInitCommunicator: the process has a communicator "
                "already (ampRuntimeDestroyCommunicator ends it)");
    return AMP_RUNTIME_ERROR_INVALID_ARGUMENT;
  }
  if (!loadNcclLocked(state))
    return AMP_RUNTIME_ERROR_NCCL;
  // NCCL works on the current device: the runtime's primary context.
  if (!enterDevice("ampRuntimeInitCommunicator"))
    return ampRuntimeGetLastError();
  ncclUniqueId unique;
  if (id)
    std::memcpy(&unique, id, sizeof unique);
  else if (!checkNccl(state.nccl, state.nccl.ncclGetUniqueId(&unique),
                      "nccl.ncclGetUniqueId(&unique)"))
    return AMP_RUNTIME_ERROR_NCCL;
  ncclComm_t comm = nullptr;
  int count = 0;
  if (!checkNccl(state.nccl,
                 state.nccl.ncclCommInitRank(&comm, size, unique, rank),
                 "nccl.ncclCommInitRank(&comm, size, unique, rank)") ||
      !checkNccl(state.nccl, state.nccl.ncclCommCount(comm, &count),
                 "nccl.ncclCommCount(comm, &count)"))
    return AMP_RUNTIME_ERROR_NCCL;
  state.comm = comm;
  state.size = count;
  return AMP_RUNTIME_SUCCESS;
#else
  noNccl();
  return AMP_RUNTIME_ERROR_NCCL;
#endif
}

extern "C" void ampRuntimeDestroyCommunicator(void) {
  setEntryPoint("ampRuntimeDestroyCommunicator");
#if AMP_HAVE_NCCL
  CommunicatorState &state = communicatorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (!state.comm)
    return;
  checkNccl(state.nccl, state.nccl.ncclCommDestroy(state.comm),
            "nccl.ncclCommDestroy(state.comm)");
  state.comm = nullptr;
  state.size = 1;
#endif
}

extern "C" int32_t ampRuntimeWorldSize(void) {
  CommunicatorState &state = communicatorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.size;
}

extern "C" void ampAllReduceSum(const void *send, void *recv, int64_t count,
                                int32_t elementType, void *stream) {
  setEntryPoint("ampAllReduceSum");
  if (hasPendingError())
    return;
  if (count < 0 || !isSummable(elementType)) {
    recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT,
                "ampAllReduceSum: " + std::to_string(count) +
                    " elements of type code " + std::to_string(elementType) +
                    ": sums take a count >= 0 of f32 (0), f16 (1) or bf16 "
                    "(2) elements");
    return;
  }
  if (count == 0)
    return;
  const CudaDriver *cu = enterDevice("ampAllReduceSum");
  if (!cu)
    return;
  CommunicatorState &state = communicatorState();
  std::lock_guard<std::mutex> lock(state.mutex);
#if AMP_HAVE_NCCL
  if (state.comm) {
    ncclDataType_t type = elementType == AMP_ELEMENT_F32   ? ncclFloat32
                          : elementType == AMP_ELEMENT_F16 ? ncclFloat16
                                                           : ncclBfloat16;
    checkNccl(state.nccl,
              state.nccl.ncclAllReduce(send, recv, count, type, ncclSum,
                                       state.comm,
                                       static_cast<cudaStream_t>(stream)),
              "nccl.ncclAllReduce(send, recv, count, type, ncclSum, comm, "
              "stream)");
    return;
  }
#endif
  // A world of one: the sum is the rank's own buffer.
  if (send == recv)
    return;
  size_t bytes = count * (elementType == AMP_ELEMENT_F32 ? 4 : 2);
  AMP_CHECK(cu->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(recv),
                              reinterpret_cast<CUdeviceptr>(send), bytes,
                              static_cast<CUstream>(stream)));
}
