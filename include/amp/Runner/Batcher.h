//===- Batcher.h - Batches of a data set for a step --------------*- C++ -*-===//
//
// Feeds the data arguments of a compiled step from data sets that hold every
// sample along dimension 0, as amp-run and Session.fit do: a batch is a run
// of samples in an order drawn from the seed and the epoch number, so any
// step of a run can be reproduced from its number alone (resuming needs it).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNNER_BATCHER_H
#define AMP_RUNNER_BATCHER_H

#include "amp/Runner/CompiledStep.h"
#include "amp/Runner/Npy.h"
#include "amp/Step/StepSignature.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace mlir::amp {

struct BatchOptions {
  /// Samples per step: required for a step whose batch dimension is
  /// dynamic; for a static step 0 or its own batch size.
  int64_t batchSize = 0;
  /// Run the last partial batch of an epoch instead of dropping it (dynamic
  /// batch only).
  bool keepLastBatch = false;
  /// A new permutation of the samples every epoch, else in order.
  bool shuffle = true;
  uint64_t seed = 0;
  /// Data-parallel runs: of every batch of `batchSize` samples this process
  /// takes share `shard` of `numShards` (rows [shard * B / numShards,
  /// (shard + 1) * B / numShards)), so the batches are the same for any
  /// number of ranks. numShards must divide the batch size; above 1 it
  /// needs a dynamic batch dimension and no kept partial batch.
  int64_t shard = 0;
  int64_t numShards = 1;
};

/// "f32[Nx3]": the samples of a batch of `shape`.
std::string describeSamples(DType dtype, llvm::ArrayRef<int64_t> shape);

class Batcher {
public:
  /// Checks one data set per data argument of `signature` (its dtype, its
  /// samples' shape, one number of samples for all), named by `names` in
  /// errors (file names), against `options`.
  static llvm::Expected<Batcher> create(const StepSignature &signature,
                                        std::vector<HostArray> dataSets,
                                        std::vector<std::string> names,
                                        const BatchOptions &options);

  /// Batches per epoch; 1 for a step without data arguments.
  int64_t getBatchesPerEpoch() const;
  /// Samples per step over all shards.
  int64_t getBatchSize() const { return batchSize; }
  /// Samples per step in this process's share.
  int64_t getShardSize() const { return batchSize / options.numShards; }
  llvm::ArrayRef<unsigned> getDataArguments() const { return dataArgs; }

  /// Sets the data arguments of `step` to this shard of the batch of step
  /// `number` (0-based, counted from the start of the run).
  llvm::Error fill(int64_t number, CompiledStep &step);

private:
  Batcher() = default;

  BatchOptions options;
  llvm::SmallVector<unsigned> dataArgs;
  std::vector<HostArray> dataSets;
  int64_t numSamples = 0, batchSize = 1;
  std::vector<int64_t> order;
  int64_t orderEpoch = -1;
};

} // namespace mlir::amp

#endif // AMP_RUNNER_BATCHER_H
