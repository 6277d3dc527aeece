/*===- AmpSession.h - Running ahead-of-time compiled steps ------*- C -*-===*\
|*                                                                            *|
|* A training step compiled by amp-compile is an object file that defines    *|
|* one AmpCompiledStep. A session owns the device buffers of that step: it   *|
|* keeps the parameters, the optimizer state and the scaler state on the     *|
|* device from one step to the next, and copies to or from the host only     *|
|* what it is asked for. docs/GPU.md is the reference for every function.    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef AMP_RUNTIME_AMPSESSION_H
#define AMP_RUNTIME_AMPSESSION_H

#include "amp/Runtime/AmpRuntime.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AMP_STEP_ABI_VERSION 1

/* What amp-compile emits (under the symbol named by its --symbol option,
 * `amp_compiled_step` by default). */
typedef struct AmpCompiledStep {
  /* AMP_STEP_ABI_VERSION of the amp-compile that emitted it. */
  uint32_t abiVersion;
  /* The step's buffers, one line each, in call order (docs/GPU.md):
   *   <arg|result> <role> <name> <dtype> <dims|scalar> [init=<v>] [feeds=<i>]
   * roles: param, optstate, buffer, hyper, data, scaler (arguments); loss,
   * state, found_inf, output (results). */
  const char *signature;
  /* Runs one step: `descriptors[i]` points to the memref descriptor of
   * buffer i. Synchronous: returns when the step's stream is done. */
  void (*invoke)(void **descriptors);
} AmpCompiledStep;

typedef struct AmpSession AmpSession;

/* Buffer roles, as AmpSessionBufferInfo reports them. */
typedef enum AmpBufferRole {
  AMP_BUFFER_PARAM = 0,
  AMP_BUFFER_OPTIMIZER_STATE = 1,
  AMP_BUFFER_DATA = 2,
  AMP_BUFFER_SCALER_STATE = 3,
  AMP_BUFFER_LOSS = 4,
  AMP_BUFFER_NEW_STATE = 5,
  AMP_BUFFER_FOUND_INF = 6,
  AMP_BUFFER_OUTPUT = 7,
  /* Carried state the forward updates (BatchNorm's running statistics). */
  AMP_BUFFER_FORWARD_STATE = 8,
  /* An input of the optimizer update (a learning rate), set by the caller. */
  AMP_BUFFER_HYPERPARAMETER = 9,
} AmpBufferRole;

/* Host-side element types of buffers (f16/bf16 as uint16_t bits, i1 as one
 * byte). */
typedef enum AmpBufferType {
  AMP_BUFFER_F32 = 0,
  AMP_BUFFER_F16 = 1,
  AMP_BUFFER_BF16 = 2,
  AMP_BUFFER_I32 = 3,
  AMP_BUFFER_I1 = 4,
  AMP_BUFFER_I64 = 5,
  AMP_BUFFER_F64 = 6,
} AmpBufferType;

typedef struct AmpSessionBufferInfo {
  const char *name;
  int32_t role;        /* AmpBufferRole */
  int32_t type;        /* AmpBufferType */
  int32_t rank;
  const int64_t *shape;
  int64_t numBytes;
  int32_t isArgument;  /* 1: an argument of the step, 0: a result */
  int32_t feeds;       /* for new state: the argument it becomes, else -1 */
} AmpSessionBufferInfo;

/* Allocates every buffer of `step` on the device and initializes the state
 * arguments from their init= values (params: "glorot" uniform with the
 * session's own generator seeded by `seed`, "zeros", "ones", a number).
 * NULL on failure; ampRuntimeGetLastErrorMessage() says why. */
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

/* Copies `numBytes` (the buffer's size) from the host into argument
 * `index` (a parameter, a data batch, any state). */
AMP_RUNTIME_EXPORT int32_t ampSessionSetInput(AmpSession *session,
                                              int32_t index, const void *host,
                                              int64_t numBytes);
/* Copies the current value of buffer `index` to the host: for a carried
 * argument, the state the next step will read. */
AMP_RUNTIME_EXPORT int32_t ampSessionRead(AmpSession *session, int32_t index,
                                          void *host, int64_t numBytes);

/* Runs `steps` steps on the current inputs. After each one, every new state
 * becomes the argument it feeds (no copy: the buffers are swapped). */
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
