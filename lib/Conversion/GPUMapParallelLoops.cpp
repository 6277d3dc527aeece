//===- GPUMapParallelLoops.cpp - Blocks of threads for coalesced access ---===//
//
// Implements `amp-gpu-map-parallel-loops`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "llvm/Support/MathExtras.h"
#include <numeric>

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUMAPPARALLELLOOPS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// Threads per block.
constexpr int64_t kBlockThreads = 256;
/// The block's extent along the inner and the outer dimension when the
/// size is unknown.
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

/// The block of threads of `loop` once its dimensions before the innermost
/// are collapsed into one: the innermost (contiguous in the step's row-major
/// buffers) as wide as it is, rounded up to a power of two, up to the whole
/// block; the collapsed outer one the rest.
SmallVector<int64_t> getBlockTile(scf::ParallelOp loop) {
  auto tile = [](std::optional<int64_t> trips, int64_t limit,
                 int64_t dynamic) {
    if (!trips)
      return std::min(limit, dynamic);
    return std::min<int64_t>(
        limit, llvm::PowerOf2Ceil(std::max<int64_t>(*trips, 1)));
  };
  unsigned inner = loop.getNumLoops() - 1;
  int64_t innerTile =
      tile(getTripCount(loop, inner), kBlockThreads, kDynamicInnerTile);
  if (inner == 0)
    return {innerTile};
  std::optional<int64_t> outerTrips = 1;
  for (unsigned dim = 0; dim < inner; ++dim) {
    std::optional<int64_t> trips = getTripCount(loop, dim);
    outerTrips = trips && outerTrips ? std::optional(*trips * *outerTrips)
                                     : std::nullopt;
  }
  return {tile(outerTrips, kBlockThreads / innerTile, kDynamicOuterTile),
          innerTile};
}

/// Maps the blocks loop and the threads loop: the inner dimension to x
/// threads (a warp reads neighbouring elements) and y blocks, the outer one
/// to y threads and x blocks (x allows 2^31 - 1 blocks, y 65535).
void mapToGPU(scf::ParallelOp blocks, scf::ParallelOp threads) {
  MLIRContext *context = blocks.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
  auto map = [&](scf::ParallelOp loop, ArrayRef<gpu::Processor> processors) {
    SmallVector<gpu::ParallelLoopDimMappingAttr> mapping;
    for (gpu::Processor processor : processors)
      mapping.push_back(gpu::ParallelLoopDimMappingAttr::get(
          context, processor, identity, identity));
    (void)gpu::setMappingAttr(loop, mapping);
  };
  if (blocks.getNumLoops() == 1) {
    map(blocks, {gpu::Processor::BlockX});
    map(threads, {gpu::Processor::ThreadX});
    return;
  }
  map(blocks, {gpu::Processor::BlockX, gpu::Processor::BlockY});
  map(threads, {gpu::Processor::ThreadY, gpu::Processor::ThreadX});
}

SmallVector<scf::ParallelOp> getOutermostLoops(func::FuncOp func) {
  SmallVector<scf::ParallelOp> loops;
  func.walk([&](scf::ParallelOp loop) {
    if (!loop->getParentOfType<scf::ParallelOp>())
      loops.push_back(loop);
  });
  return loops;
}

struct GPUMapParallelLoopsPass
    : public amp::impl::AmpGPUMapParallelLoopsBase<GPUMapParallelLoopsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : getOutermostLoops(getOperation())) {
      if (loop.getNumReductions() != 0) {
        loop.emitOpError("has reductions, which the GPU lowering cannot map "
                         "to threads");
        return signalPassFailure();
      }
      SmallVector<int64_t> tile = getBlockTile(loop);
      // All but the innermost dimension become one, so that every kernel
      // has at most two, each with a hardware index. The collapsed loop
      // replaces `loop` where it was.
      if (unsigned rank = loop.getNumLoops(); rank > 2) {
        Operation *next = loop->getNextNode();
        std::vector<unsigned> outer(rank - 1);
        std::iota(outer.begin(), outer.end(), 0);
        collapseParallelLoops(rewriter, loop, {outer, {rank - 1}});
        loop = cast<scf::ParallelOp>(next->getPrevNode());
      }
      auto [blocks, threads] =
          scf::tileParallelLoop(loop, tile, /*noMinMaxBounds=*/true);
      mapToGPU(blocks, threads);
    }
  }
};

} // namespace
