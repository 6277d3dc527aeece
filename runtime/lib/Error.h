//===- Error.h - Sticky error state and the checked-call macro --*- C++ -*-===//
//
// Every CUDA driver and cuBLASLt status goes through AMP_CHECK. A failure is
// printed to stderr and, if no error is pending, becomes the sticky error that
// ampRuntimeGetLastError reports; entry points return early while it is set.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_ERROR_H
#define AMP_RUNTIME_ERROR_H

#include "amp/Runtime/AmpRuntime.h"

#include <cublasLt.h>
#include <cuda.h>

#include <string>

namespace amp::runtime {

/// Prints `message` to stderr and keeps it as the sticky error unless an
/// earlier one is pending. Always returns false, so callers can `return`.
bool recordError(AmpRuntimeStatus status, const std::string &message);

/// True while a recorded error has not been cleared.
bool hasPendingError();

/// The function called in a checked expression: "cu->cuMemAlloc(&p, n)"
/// names "cuMemAlloc".
std::string calledFunction(const char *expression);

/// "<call> failed in <where>: <statusName> (<description>)".
std::string formatCallError(const char *expression, const char *where,
                            const char *statusName, const char *description);

/// The runtime entry point the calling thread is in; failures name it.
void setEntryPoint(const char *name);
const char *entryPoint();

/// Status checks behind AMP_CHECK; they record the failure and return false.
bool checkStatus(CUresult status, const char *expression);
bool checkStatus(cublasStatus_t status, const char *expression);

} // namespace amp::runtime

/// Evaluates a CUDA driver or cuBLASLt call; true on success.
#define AMP_CHECK(call) ::amp::runtime::checkStatus((call), #call)

#endif // AMP_RUNTIME_ERROR_H
