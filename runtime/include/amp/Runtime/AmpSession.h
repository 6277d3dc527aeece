/*===- AmpSession.h - Running ahead-of-time compiled steps ------*- C -*-===*\
|*                                                                            *|
|* A training step compiled by amp-compile is an object file that defines    *|
|* one AmpCompiledStep (AmpStepABI.h). A session owns the device buffers of  *|
|* that step: it keeps the parameters, the optimizer state and the scaler    *|
|* state on the device from one step to the next, and copies to or from the  *|
|* host only what it is asked for. docs/GPU.md is the reference for every    *|
|* function.                                                                  *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef AMP_RUNTIME_AMPSESSION_H
#define AMP_RUNTIME_AMPSESSION_H

#include "amp/Runtime/AmpRuntime.h"
#include "amp/Runtime/AmpStepABI.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct AmpSession AmpSession;

typedef struct AmpSessionBufferInfo {
  const char *name;
  int32_t role;        /* AmpBufferRole */
  int32_t type;        /* AmpElementType */
  int32_t rank;
  /* The shape at the current batch size: the dynamic dimension holds the
   * size of the last ampSessionSetBatchSize (0 before the first). */
  const int64_t *shape;
  /* The bytes at the current batch size. */
  int64_t numBytes;
  int32_t isArgument;  /* 1: an argument of the step, 0: a result */
  int32_t feeds;       /* for new state: the argument it becomes, else -1 */
  int32_t dynamicBatch; /* 1: dimension 0 is the batch size */
} AmpSessionBufferInfo;

/* Checks that `step` has this runtime's AMP_STEP_ABI_VERSION and a valid
 * table, allocates its buffers on the device (those of a dynamic batch
 * size at the first ampSessionSetBatchSize) and fills the arguments from
 * their AmpInitKind (glorot and normal with the session's own generator,
 * seeded by `seed`). NULL on failure; ampRuntimeGetLastErrorMessage() says
 * why. */
AMP_RUNTIME_EXPORT AmpSession *ampSessionCreate(const AmpCompiledStep *step,
                                                uint64_t seed);
AMP_RUNTIME_EXPORT void ampSessionDestroy(AmpSession *session);

AMP_RUNTIME_EXPORT int32_t ampSessionNumBuffers(const AmpSession *session);
/* Fills `info` for buffer `index`; returns a status (AmpRuntimeStatus). */
AMP_RUNTIME_EXPORT int32_t ampSessionBufferInfo(const AmpSession *session,
                                                int32_t index,
                                                AmpSessionBufferInfo *info);
/* The index of the buffer named `name` (argument names: the step's,
 * results: "result<i>" or their state name), or -1. */
AMP_RUNTIME_EXPORT int32_t ampSessionFindBuffer(const AmpSession *session,
                                                const char *name);

/* The batch size of the following calls, for a step whose data arguments
 * have a dynamic dimension 0 (a step of static shapes accepts only its own
 * batch size). Device buffers of batch-sized data and results grow to the
 * largest size set and are never shrunk. A new size discards the data
 * arguments: set each of them again before the next ampSessionRun. */
AMP_RUNTIME_EXPORT int32_t ampSessionSetBatchSize(AmpSession *session,
                                                  int64_t batchSize);
/* The current batch size: the static one, or the last one set (0 before
 * the first ampSessionSetBatchSize of a dynamic step, or without data). */
AMP_RUNTIME_EXPORT int64_t ampSessionGetBatchSize(const AmpSession *session);

/* Copies `numBytes` (the buffer's size at the current batch size) from the
 * host into argument `index` (a parameter, a data batch, any state). */
AMP_RUNTIME_EXPORT int32_t ampSessionSetInput(AmpSession *session,
                                              int32_t index, const void *host,
                                              int64_t numBytes);
/* Copies the current value of buffer `index` to the host: for a carried
 * argument, the state the next step will read. */
AMP_RUNTIME_EXPORT int32_t ampSessionRead(AmpSession *session, int32_t index,
                                          void *host, int64_t numBytes);

/* Runs `steps` steps on the current inputs, at the current batch size.
 * After each one, every new state becomes the argument it feeds (no copy:
 * the buffers are swapped). */
AMP_RUNTIME_EXPORT int32_t ampSessionRun(AmpSession *session, int64_t steps);

/* The loss of the last step (copied to the host now). */
AMP_RUNTIME_EXPORT int32_t ampSessionGetLoss(AmpSession *session, float *loss);
/* Whether the last step was skipped for a non-finite gradient (0 or 1);
 * 0 when the step checks nothing (scaling=none). */
AMP_RUNTIME_EXPORT int32_t ampSessionGetFoundInf(AmpSession *session,
                                                 int32_t *foundInf);

#ifdef __cplusplus
}
#endif

#endif /* AMP_RUNTIME_AMPSESSION_H */
