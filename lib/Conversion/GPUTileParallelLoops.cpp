//===- GPUTileParallelLoops.cpp - Blocks of threads for coalesced access --===//
//
// Implements `amp-gpu-tile-parallel-loops`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUTILEPARALLELLOOPS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// Threads per block.
constexpr int64_t kBlockThreads = 256;
/// The block's extent along a dimension of unknown size: the innermost, then
/// the one before it.
constexpr int64_t kDynamicInnerTile = 64;
constexpr int64_t kDynamicOuterTile = 4;

/// The trip count of `loop`'s dimension `dim`, if constant.
std::optional<int64_t> getTripCount(scf::ParallelOp loop, unsigned dim) {
  std::optional<int64_t> lower =
      getConstantIntValue(loop.getLowerBound()[dim]);
  std::optional<int64_t> upper =
      getConstantIntValue(loop.getUpperBound()[dim]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[dim]);
  if (!lower || !upper || !step || *step <= 0)
    return std::nullopt;
  return llvm::divideCeil(*upper - *lower, *step);
}

/// The block of threads for `loop`: the innermost dimension (contiguous in
/// memory for the row-major buffers of a step) as wide as it is, up to the
/// whole block, the dimension before it the rest of the block, others 1.
/// Sizes are rounded up to powers of two.
SmallVector<int64_t> getBlockTile(scf::ParallelOp loop) {
  unsigned rank = loop.getNumLoops();
  SmallVector<int64_t> tile(rank, 1);
  auto extent = [&](unsigned dim, int64_t limit, int64_t dynamic) {
    std::optional<int64_t> trips = getTripCount(loop, dim);
    if (!trips)
      return std::min(limit, dynamic);
    return std::min<int64_t>(limit, llvm::PowerOf2Ceil(std::max<int64_t>(*trips, 1)));
  };
  tile[rank - 1] = extent(rank - 1, kBlockThreads, kDynamicInnerTile);
  if (rank > 1)
    tile[rank - 2] =
        extent(rank - 2, kBlockThreads / tile[rank - 1], kDynamicOuterTile);
  return tile;
}

struct GPUTileParallelLoopsPass
    : public amp::impl::AmpGPUTileParallelLoopsBase<GPUTileParallelLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    for (scf::ParallelOp loop : loops)
      scf::tileParallelLoop(loop, getBlockTile(loop), /*noMinMaxBounds=*/true);
  }
};

} // namespace
