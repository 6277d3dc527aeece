/*===- AmpStepABI.h - The ABI of ahead-of-time compiled steps ---*- C -*-===*\
|*                                                                            *|
|* What amp-compile emits and the runtime's sessions read: one               *|
|* AmpCompiledStep per object, with a table that describes every buffer of   *|
|* the step (its role, element type, shape, how it starts, which argument a  *|
|* new state feeds), in the order `invoke` takes their memref descriptors.   *|
|* amp-compile includes this header for every constant it emits, and         *|
|* ampSessionCreate rejects a step of another AMP_STEP_ABI_VERSION. Plain C, *|
|* no dependencies: docs/GPU.md describes the table.                         *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef AMP_RUNTIME_AMPSTEPABI_H
#define AMP_RUNTIME_AMPSTEPABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version 1 described the buffers as text; version 2 as an AmpStepBuffer
 * table and allows a dynamic batch dimension. Whatever the version,
 * `abiVersion` is the first field of AmpCompiledStep, so that a runtime can
 * read it before anything else. */
#define AMP_STEP_ABI_VERSION 2

/* The size in a buffer's shape that is the batch size, given at each call
 * (ampSessionSetBatchSize). Only dimension 0 of data arguments and of
 * results may have it, and only in a step whose data arguments all do. */
#define AMP_STEP_DYNAMIC_DIM (-1)

/* Element types (f16/bf16 held on the host as uint16_t bits, i1 as one
 * byte). ampMatmul takes the first three. */
typedef enum AmpElementType {
  AMP_ELEMENT_F32 = 0,
  AMP_ELEMENT_F16 = 1,
  AMP_ELEMENT_BF16 = 2,
  AMP_ELEMENT_I32 = 3,
  AMP_ELEMENT_I1 = 4,
  AMP_ELEMENT_I64 = 5,
  AMP_ELEMENT_F64 = 6,
} AmpElementType;

/* What a buffer is to the step (docs/TrainingStepIR.md). Arguments first,
 * then results; the role says which of the two a buffer is. */
typedef enum AmpBufferRole {
  /* Arguments. */
  AMP_BUFFER_PARAM = 0,
  AMP_BUFFER_OPTIMIZER_STATE = 1,
  AMP_BUFFER_DATA = 2,
  AMP_BUFFER_SCALER_STATE = 3,
  /* Results. */
  AMP_BUFFER_LOSS = 4,
  AMP_BUFFER_NEW_STATE = 5,
  AMP_BUFFER_FOUND_INF = 6,
  AMP_BUFFER_OUTPUT = 7,
  /* Arguments: carried state the forward updates (BatchNorm's running
   * statistics), and an input of the optimizer update (a learning rate). */
  AMP_BUFFER_FORWARD_STATE = 8,
  AMP_BUFFER_HYPERPARAMETER = 9,
} AmpBufferRole;

/* How a session fills an argument when it is created. */
typedef enum AmpInitKind {
  /* Not filled: data arguments (set before each step) and results. */
  AMP_INIT_NONE = 0,
  AMP_INIT_ZEROS = 1,
  AMP_INIT_ONES = 2,
  /* Uniform in +-sqrt(6 / (fan_in + fan_out)), fan_out the last dimension. */
  AMP_INIT_GLOROT = 3,
  /* Normal with mean 0 and standard deviation `initValue`. */
  AMP_INIT_NORMAL = 4,
  /* Every element `initValue` (hyperparameters, scaler state). */
  AMP_INIT_CONSTANT = 5,
} AmpInitKind;

/* One buffer of the step. */
typedef struct AmpStepBuffer {
  /* Arguments: their `amp.name`, else "arg<i>"; scaler state: its state
   * name ("scale", ...); results: "loss", "found_inf", else "result<i>". */
  const char *name;
  /* `rank` sizes (NULL for rank 0); AMP_STEP_DYNAMIC_DIM for the batch. */
  const int64_t *shape;
  /* The parameter of AMP_INIT_NORMAL and AMP_INIT_CONSTANT, else 0. */
  double initValue;
  int32_t role;        /* AmpBufferRole */
  int32_t elementType; /* AmpElementType */
  int32_t rank;
  /* AMP_BUFFER_NEW_STATE: the index of the argument it becomes at the next
   * step; -1 for every other buffer. */
  int32_t feeds;
  int32_t initKind;    /* AmpInitKind */
} AmpStepBuffer;

/* What amp-compile emits (under the symbol named by its --symbol option,
 * `amp_compiled_step` by default). */
typedef struct AmpCompiledStep {
  /* AMP_STEP_ABI_VERSION of the amp-compile that emitted it. */
  uint32_t abiVersion;
  uint32_t numBuffers;
  /* `numBuffers` entries: the arguments, then the results, in the order of
   * `invoke`'s descriptors. */
  const AmpStepBuffer *buffers;
  /* Runs one step: `descriptors[i]` points to the memref descriptor
   * ({T *allocated, *aligned; int64_t offset, sizes[rank], strides[rank];})
   * of buffer i, in device memory, with the batch size in the sizes of its
   * dynamic dimension. Synchronous: returns when the step's stream is done. */
  void (*invoke)(void **descriptors);
} AmpCompiledStep;

#ifdef __cplusplus
}
#endif

#endif /* AMP_RUNTIME_AMPSTEPABI_H */
