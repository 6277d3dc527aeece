/*===- MgpuWrappers.h - MLIR 22's GPU host ABI, implemented here -*- C -*-===*\
|*                                                                            *|
|* The functions `gpu-to-llvm` and `mlir-translate` emit calls to, with the   *|
|* prototypes MLIR 22 uses (shared/notes/mlir22-gpu-and-jit-facts.md, A).    *|
|* They report failures through the sticky error of AmpRuntime.h.             *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef AMP_RUNTIME_MGPUWRAPPERS_H
#define AMP_RUNTIME_MGPUWRAPPERS_H

#include "amp/Runtime/AmpRuntime.h"

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

AMP_RUNTIME_EXPORT CUstream mgpuStreamCreate(void);
AMP_RUNTIME_EXPORT void mgpuStreamSynchronize(CUstream stream);
AMP_RUNTIME_EXPORT void mgpuStreamDestroy(CUstream stream);
AMP_RUNTIME_EXPORT void mgpuStreamWaitEvent(CUstream stream, CUevent event);

AMP_RUNTIME_EXPORT CUevent mgpuEventCreate(void);
AMP_RUNTIME_EXPORT void mgpuEventRecord(CUevent event, CUstream stream);
AMP_RUNTIME_EXPORT void mgpuEventSynchronize(CUevent event);
AMP_RUNTIME_EXPORT void mgpuEventDestroy(CUevent event);

/* Stream-ordered device memory; isHostShared gives managed memory. */
AMP_RUNTIME_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream,
                                      bool isHostShared);
AMP_RUNTIME_EXPORT void mgpuMemFree(void *ptr, CUstream stream);
AMP_RUNTIME_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                                   CUstream stream);
/* `count` is in elements. */
AMP_RUNTIME_EXPORT void mgpuMemset32(void *dst, uint32_t value, size_t count,
                                     CUstream stream);
AMP_RUNTIME_EXPORT void mgpuMemset16(void *dst, uint16_t value, size_t count,
                                     CUstream stream);
AMP_RUNTIME_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank,
                                                  void *descriptor,
                                                  int64_t elementSizeBytes);
AMP_RUNTIME_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank,
                                                    void *descriptor,
                                                    int64_t elementSizeBytes);
AMP_RUNTIME_EXPORT void mgpuSetDefaultDevice(int32_t device);

AMP_RUNTIME_EXPORT CUmodule mgpuModuleLoad(void *data, size_t gpuBlobSize);
AMP_RUNTIME_EXPORT CUmodule mgpuModuleLoadJIT(void *data, int optLevel);
AMP_RUNTIME_EXPORT void mgpuModuleUnload(CUmodule module);
AMP_RUNTIME_EXPORT CUfunction mgpuModuleGetFunction(CUmodule module,
                                                    const char *name);
AMP_RUNTIME_EXPORT void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                                         intptr_t gridY, intptr_t gridZ,
                                         intptr_t blockX, intptr_t blockY,
                                         intptr_t blockZ, int32_t smemBytes,
                                         CUstream stream, void **params,
                                         void **extra, size_t paramsCount);
AMP_RUNTIME_EXPORT void
mgpuLaunchClusterKernel(CUfunction function, intptr_t clusterX,
                        intptr_t clusterY, intptr_t clusterZ, intptr_t gridX,
                        intptr_t gridY, intptr_t gridZ, intptr_t blockX,
                        intptr_t blockY, intptr_t blockZ, int32_t smemBytes,
                        CUstream stream, void **params, void **extra);

#ifdef __cplusplus
}
#endif

#endif /* AMP_RUNTIME_MGPUWRAPPERS_H */
