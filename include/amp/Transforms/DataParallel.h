//===- DataParallel.h - Gradients summed over the MPI ranks -----*- C++ -*-===//
//
// What `amp-data-parallel`, `amp-guard-update` and `amp-pipeline` share for
// data-parallel training: the options validated in one place (errors name
// the option and its allowed values), the rewrite that sums a step's
// gradients over the ranks of MPI_COMM_WORLD as a library call that returns
// its buckets, and the world size the guard divides the sums by.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TRANSFORMS_DATAPARALLEL_H
#define AMP_TRANSFORMS_DATAPARALLEL_H

#include "amp/Dialect/Amp/IR/AmpAttributes.h"
#include "amp/Transforms/TransformsEnums.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <cstdint>
#include <optional>

namespace mlir::amp {

/// The validated options of amp-data-parallel.
struct DataParallelConfig {
  /// The type the gradients are summed in (`grad-comm-dtype`).
  Precision commPrecision;
  /// Bytes per all-reduce (`bucket-size`).
  int64_t bucketSize;

  static llvm::Expected<DataParallelConfig> get(llvm::StringRef gradCommDtype,
                                                int64_t bucketSize);
};

/// What allReduceGradients did to a step: one `mpi.allreduce` per bucket.
struct GradientReduction {
  /// The elements of each bucket, in order.
  llvm::SmallVector<int64_t> bucketElements;
  /// The bytes each rank contributes per step.
  int64_t bytes = 0;
};

/// Makes the gradients of every `amp.update` of `func` their sum over the
/// ranks of MPI_COMM_WORLD, in buckets, as the pass description says, and
/// marks the updates with `amp.data_parallel = "mpi"`. Emits a located error
/// (an update in a loop, a gradient of dynamic shape, ...) and fails without
/// changing `func`.
FailureOr<GradientReduction> allReduceGradients(func::FuncOp func,
                                                const DataParallelConfig &config);

/// Records in `module`'s DLTI spec that the MPI ops follow MPICH's ABI (the
/// key `MPIToLLVM` reads); an error if the module names another one.
LogicalResult requireMpichAbi(ModuleOp module);

/// Whether `update` consumes gradients summed over the ranks (its
/// `amp.data_parallel`).
bool hasSummedGradients(Operation *update);

/// The number of ranks of MPI_COMM_WORLD as an f32 scalar (`mpi.comm_size`).
Value buildWorldSize(OpBuilder &builder, Location loc);

} // namespace mlir::amp

#endif // AMP_TRANSFORMS_DATAPARALLEL_H
