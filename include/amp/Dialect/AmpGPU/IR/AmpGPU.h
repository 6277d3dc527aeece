//===- AmpGPU.h - The amp_gpu dialect ---------------------------*- C++ -*-===//

#ifndef AMP_DIALECT_AMPGPU_IR_AMPGPU_H
#define AMP_DIALECT_AMPGPU_IR_AMPGPU_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "amp/Dialect/AmpGPU/IR/AmpGPUOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "amp/Dialect/AmpGPU/IR/AmpGPUOps.h.inc"

namespace mlir::amp_gpu {

/// The element-type codes of the runtime's ampMatmul (AmpElementType in
/// runtime/include/amp/Runtime/AmpRuntime.h), or nullopt for another type.
std::optional<int32_t> getRuntimeElementType(Type type);

/// Whether `type` is 1-D with unit stride: a buffer the runtime's sums (and
/// MPI's) count by the size of dimension 0.
bool isContiguousVector(MemRefType type);

} // namespace mlir::amp_gpu

#endif // AMP_DIALECT_AMPGPU_IR_AMPGPU_H
