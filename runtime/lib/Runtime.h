//===- Runtime.h - Driver, devices and their contexts -----------*- C++ -*-===//
//
// Process-wide state behind the entry points: the loaded driver and, per
// device, its primary context (shared with the CUDA runtime API, cuBLASLt and
// frameworks such as PyTorch) and its cuBLASLt state.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_RUNTIME_H
#define AMP_RUNTIME_RUNTIME_H

#include "CudaDriver.h"
#include "PlanCache.h"

#include <cublasLt.h>

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace amp::runtime {

/// cuBLASLt objects for one call site and shape.
struct MatmulPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, output = nullptr;
  cublasLtMatmulAlgo_t algo = {};
  size_t workspaceSize = 0;
  MatmulPlan() = default;
  MatmulPlan(const MatmulPlan &) = delete;
  MatmulPlan &operator=(const MatmulPlan &) = delete;
  ~MatmulPlan();
};

struct DeviceState {
  int ordinal = 0;
  CUcontext context = nullptr;

  /// cuBLASLt state, created by the first ampMatmul on the device. Each
  /// stream gets its own workspace, so matmuls on concurrent streams never
  /// share one; a destroyed stream's workspace is kept for the next stream.
  std::mutex matmulMutex;
  cublasLtHandle_t cublasLt = nullptr;
  std::unordered_map<CUstream, CUdeviceptr> streamWorkspaces;
  std::vector<CUdeviceptr> idleWorkspaces;
  PlanCache<MatmulPlan> plans;

  /// The kernels looked up so far, per module and name: MLIR's host code
  /// asks before every launch, and a loaded module's functions never change.
  std::mutex kernelMutex;
  std::unordered_map<CUmodule, std::map<std::string, CUfunction, std::less<>>>
      kernels;
};

/// Prepares an entry point named `where`: loads the driver and initializes
/// CUDA on first use, and makes the primary context of the calling thread's
/// default device current. Null when an error is pending or the device cannot
/// be used (the error is then recorded).
const CudaDriver *enterDevice(const char *where,
                              DeviceState **device = nullptr);

/// The driver, or null before a successful load.
const CudaDriver *loadedDriver();

/// Selects the device later entry points of the calling thread use.
void setDefaultDevice(int32_t ordinal);

/// Hands a stream's matmul workspace back for reuse (after the stream's work
/// finished); called when the stream is destroyed.
void releaseStreamWorkspace(const CudaDriver &driver, DeviceState &device,
                            CUstream stream);

/// Calls `visit` for every device initialized so far.
void forEachDevice(const std::function<void(DeviceState &)> &visit);

} // namespace amp::runtime

#endif // AMP_RUNTIME_RUNTIME_H
