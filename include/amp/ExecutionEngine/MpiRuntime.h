/*===- MpiRuntime.h - MPI entry points of data-parallel steps ------*- C -*-===*\
|*                                                                            *|
|* libAmpMpiRuntime.so, over MPICH (the ABI MPIToLLVM lowers f32 collectives *|
|* for). Steps lowered by amp-lower-to-llvm call the first three entry       *|
|* points (amp-mpi-to-cpu-runtime), for what MPIToLLVM cannot lower: sums    *|
|* of f16 and bf16 buffers, which MPI has no datatype for, and the world     *|
|* size. Runners load the library (only for data-parallel steps, so that     *|
|* everything else runs without MPI installed) and call the others through   *|
|* dlsym. docs/DataParallel.md describes them.                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef AMP_EXECUTIONENGINE_MPIRUNTIME_H
#define AMP_EXECUTIONENGINE_MPIRUNTIME_H

#include "amp/ExecutionEngine/CpuRuntime.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* recv = the sum over the ranks of MPI_COMM_WORLD of each rank's send, both
 * contiguous 1-D memrefs of 16-bit floats (bits in uint16_t) of one size,
 * through a user-defined MPI_Op that adds two of them in f32 and rounds to
 * nearest even: every partial sum is rounded to the 16-bit type, as it
 * travels in it. Initializes MPI (a world of one) if nothing did. */
void _mlir_ciface_ampMpiAllreduceSumF16(AmpUnrankedMemRef *send,
                                        AmpUnrankedMemRef *recv);
void _mlir_ciface_ampMpiAllreduceSumBF16(AmpUnrankedMemRef *send,
                                         AmpUnrankedMemRef *recv);
/* The size of MPI_COMM_WORLD; initializes MPI if nothing did. */
int32_t _mlir_ciface_ampMpiWorldSize(void);

/* Initializes MPI unless it is (MPI_Finalize then runs at exit), and
 * returns this process's rank and the world's size. */
void ampMpiInitialize(int32_t *rank, int32_t *size);
/* The sum over the ranks of one number per rank. */
double ampMpiAllreduceSumF64(double value);
/* Every rank's `value`, in rank order, into `values` (world-size entries). */
void ampMpiAllgatherU64(uint64_t value, uint64_t *values);
/* Ends every rank of the job with `code` (MPI_Abort). */
void ampMpiAbort(int32_t code);

#ifdef __cplusplus
}
#endif

#endif /* AMP_EXECUTIONENGINE_MPIRUNTIME_H */
