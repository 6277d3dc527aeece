//===- MPIMemoryEffects.h - What mpi.allreduce reads and writes -*- C++ -*-===//
//
// MLIR 22's mpi ops declare no memory effects, and the buffer deallocation
// of the lowerings rejects ops with unknown ones: mpi.allreduce, the
// collective of data-parallel steps, gets an external model of
// MemoryEffectOpInterface (it reads its send buffer, writes its receive
// buffer).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_MPIMEMORYEFFECTS_H
#define AMP_INTERFACES_MPIMEMORYEFFECTS_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::amp {

/// Attaches the model to mpi.allreduce when the mpi dialect loads.
void registerMPIMemoryEffectsExternalModels(DialectRegistry &registry);

} // namespace mlir::amp

#endif // AMP_INTERFACES_MPIMEMORYEFFECTS_H
