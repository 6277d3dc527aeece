//===- Error.cpp - Sticky error state and status reporting -----------------===//

#include "Error.h"

#include "Runtime.h"

#include <atomic>
#include <cstdio>
#include <mutex>

namespace amp::runtime {

namespace {

struct ErrorState {
  std::mutex mutex;
  std::atomic<int32_t> status{AMP_RUNTIME_SUCCESS};
  std::string message;
};

// Never destroyed: compiled code calls into the runtime from global
// destructors (mgpuModuleUnload), which may run after ours.
ErrorState &errorState() {
  static ErrorState *state = new ErrorState;
  return *state;
}

thread_local const char *currentEntryPoint = "the AMP runtime";

} // namespace

bool recordError(AmpRuntimeStatus status, const std::string &message) {
  std::fprintf(stderr, "amp runtime: %s\n", message.c_str());
  ErrorState &state = errorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.status.load() == AMP_RUNTIME_SUCCESS) {
    state.message = message;
    state.status.store(status);
  }
  return false;
}

bool hasPendingError() {
  return errorState().status.load(std::memory_order_relaxed) !=
         AMP_RUNTIME_SUCCESS;
}

void setEntryPoint(const char *name) { currentEntryPoint = name; }
const char *entryPoint() { return currentEntryPoint; }

std::string calledFunction(const char *expression) {
  std::string text(expression);
  size_t end = text.find('(');
  if (end == std::string::npos)
    end = text.size();
  size_t begin = text.find_last_of(".>: ", end == 0 ? 0 : end - 1);
  begin = begin == std::string::npos || begin >= end ? 0 : begin + 1;
  return text.substr(begin, end - begin);
}

std::string formatCallError(const char *expression, const char *where,
                            const char *statusName, const char *description) {
  return calledFunction(expression) + " failed in " + where + ": " +
         statusName + " (" + description + ")";
}

bool checkStatus(CUresult status, const char *expression) {
  if (status == CUDA_SUCCESS)
    return true;
  const char *name = nullptr;
  const char *description = nullptr;
  if (const CudaDriver *driver = loadedDriver()) {
    driver->cuGetErrorName(status, &name);
    driver->cuGetErrorString(status, &description);
  }
  std::string unknown = "CUresult " + std::to_string(status);
  std::string message =
      formatCallError(expression, currentEntryPoint,
                      name ? name : unknown.c_str(),
                      description ? description : "no description");
  if (status == CUDA_ERROR_NO_DEVICE)
    return recordError(AMP_RUNTIME_ERROR_NO_DEVICE,
                       "no CUDA device: " + message);
  return recordError(AMP_RUNTIME_ERROR_CUDA, message);
}

bool checkStatus(cublasStatus_t status, const char *expression) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return true;
  return recordError(AMP_RUNTIME_ERROR_CUBLAS,
                     formatCallError(expression, currentEntryPoint,
                                     cublasLtGetStatusName(status),
                                     cublasLtGetStatusString(status)));
}

} // namespace amp::runtime

using namespace amp::runtime;

extern "C" int32_t ampRuntimeGetLastError(void) {
  return errorState().status.load();
}

extern "C" const char *ampRuntimeGetLastErrorMessage(void) {
  ErrorState &state = errorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.message.c_str();
}

extern "C" void ampRuntimeClearError(void) {
  ErrorState &state = errorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.message.clear();
  state.status.store(AMP_RUNTIME_SUCCESS);
}
