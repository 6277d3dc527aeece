//===- Batcher.cpp - Batches of a data set for a step ---------------------===//

#include "amp/Runner/Batcher.h"
#include <cstring>
#include <numeric>

using namespace mlir;
using namespace mlir::amp;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string amp::describeSamples(DType dtype, llvm::ArrayRef<int64_t> shape) {
  std::string rest = describeArray(dtype, shape.drop_front());
  size_t open = rest.find('[');
  return rest.substr(0, open + 1) + (shape.size() > 1 ? "Nx" : "N") +
         rest.substr(open + 1);
}

/// Checks that every batch of `batchSize` samples splits into the shares of
/// `options.numShards` ranks.
static llvm::Error checkShards(const BatchOptions &options, bool dynamic,
                               int64_t batchSize) {
  int64_t ranks = options.numShards;
  if (ranks < 1 || options.shard < 0 || options.shard >= ranks)
    return makeError("share " + llvm::Twine(options.shard) + " of " +
                     llvm::Twine(ranks) + " does not exist");
  if (ranks == 1)
    return llvm::Error::success();
  if (!dynamic)
    return makeError("data-parallel training over " + llvm::Twine(ranks) +
                     " ranks gives each rank its share of every batch, which "
                     "needs a step whose batch dimension is dynamic; this one "
                     "takes batches of " +
                     llvm::Twine(batchSize) + " on every rank");
  if (options.keepLastBatch)
    return makeError("the last partial batch of an epoch may not split over " +
                     llvm::Twine(ranks) +
                     " ranks; keeping it needs a run of one process");
  if (batchSize % ranks != 0)
    return makeError("the batch size " + llvm::Twine(batchSize) +
                     " does not split over " + llvm::Twine(ranks) +
                     " ranks: give a multiple of " + llvm::Twine(ranks));
  return llvm::Error::success();
}

llvm::Expected<Batcher> Batcher::create(const StepSignature &signature,
                                        std::vector<HostArray> dataSets,
                                        std::vector<std::string> names,
                                        const BatchOptions &options) {
  Batcher batcher;
  batcher.options = options;
  batcher.dataArgs = signature.getArguments(ArgumentRole::Data);
  if (dataSets.size() != batcher.dataArgs.size() ||
      names.size() != dataSets.size())
    return makeError("the step has " + llvm::Twine(batcher.dataArgs.size()) +
                     " data argument(s) (arguments that are not carried "
                     "state), got " + llvm::Twine(dataSets.size()) +
                     " data set(s)");
  bool dynamic = signature.dynamicBatch;
  if (options.keepLastBatch && !dynamic)
    return makeError("keeping the last partial batch needs a step whose "
                     "batch dimension is dynamic; this one takes batches of "
                     "a fixed size");
  if (dynamic && !dataSets.empty() && options.batchSize <= 0)
    return makeError("the step's batch dimension is dynamic; give a batch "
                     "size");
  for (auto [set, name, index] :
       llvm::zip_equal(dataSets, names, batcher.dataArgs)) {
    const StepArgument &argument = signature.arguments[index];
    RankedTensorType type = argument.type;
    std::optional<DType> dtype = getDType(type.getElementType());
    llvm::ArrayRef<int64_t> shape = set.getShape();
    if (set.getDType() != dtype || shape.empty() ||
        shape.drop_front() != type.getShape().drop_front())
      return makeError(name + ": holds " + describeArray(set.getDType(), shape) +
                       "; data argument '" + argument.name + "' (#" +
                       llvm::Twine(index) + ") is " +
                       describeType(*dtype, type) +
                       " (one batch), so the file needs " +
                       describeSamples(*dtype, type.getShape()));
    if (shape[0] != dataSets.front().getShape()[0])
      return makeError(name + ": holds " + llvm::Twine(shape[0]) +
                       " samples, " + names.front() + " holds " +
                       llvm::Twine(dataSets.front().getShape()[0]));
    if (dynamic)
      continue;
    batcher.batchSize = type.getShape()[0];
    if (options.batchSize > 0 && options.batchSize != batcher.batchSize)
      return makeError("batch size " + llvm::Twine(options.batchSize) +
                       ": the step takes batches of " +
                       llvm::Twine(batcher.batchSize) + " (data argument '" +
                       argument.name + "' is " +
                       describeArray(*dtype, type.getShape()) + ")");
  }
  if (dynamic)
    batcher.batchSize = options.batchSize;
  if (llvm::Error error = checkShards(options, dynamic, batcher.batchSize))
    return std::move(error);
  if (dataSets.empty())
    return std::move(batcher);
  batcher.numSamples = dataSets.front().getShape()[0];
  if (batcher.numSamples < batcher.batchSize && !options.keepLastBatch)
    return makeError(names.front() + ": holds " +
                     llvm::Twine(batcher.numSamples) +
                     " samples, fewer than one batch of " +
                     llvm::Twine(batcher.batchSize));
  batcher.dataSets = std::move(dataSets);
  return std::move(batcher);
}

int64_t Batcher::getBatchesPerEpoch() const {
  if (dataSets.empty())
    return 1;
  return options.keepLastBatch ? llvm::divideCeil(numSamples, batchSize)
                               : numSamples / batchSize;
}

llvm::Error Batcher::fill(int64_t number, CompiledStep &step) {
  if (dataSets.empty())
    return llvm::Error::success();
  int64_t epoch = number / getBatchesPerEpoch();
  if (epoch != orderEpoch) {
    order.resize(numSamples);
    std::iota(order.begin(), order.end(), 0);
    if (options.shuffle) {
      Random random = makeRandom(options.seed, RandomStream::Shuffle, epoch);
      for (int64_t i = numSamples - 1; i > 0; --i)
        std::swap(order[i], order[random.next() % (i + 1)]);
    }
    orderEpoch = epoch;
  }
  int64_t rows = getShardSize();
  int64_t first =
      (number % getBatchesPerEpoch()) * batchSize + options.shard * rows;
  rows = std::min(rows, numSamples - first);
  for (auto [set, index] : llvm::zip_equal(dataSets, dataArgs)) {
    llvm::SmallVector<int64_t> shape(set.getShape());
    shape[0] = rows;
    HostArray batch(set.getDType(), shape);
    size_t rowBytes = set.getNumBytes() / numSamples;
    for (int64_t b = 0; b < rows; ++b)
      std::memcpy(batch.data() + b * rowBytes,
                  set.data() + order[first + b] * rowBytes, rowBytes);
    if (llvm::Error error = step.setArgument(index, std::move(batch)))
      return error;
  }
  return llvm::Error::success();
}
