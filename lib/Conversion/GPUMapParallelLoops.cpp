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
/// CUDA's limit on the blocks of a grid in y (x allows 2^31 - 1).
constexpr int64_t kMaxGridY = 65535;

/// The trip count of `loop`'s dimension `dim`, if constant.
std::optional<int64_t> getTripCount(scf::ParallelOp loop, unsigned dim) {
  std::optional<int64_t> lower =
      getConstantIntValue(loop.getLowerBound()[dim]);
  std::optional<int64_t> upper =
      getConstantIntValue(loop.getUpperBound()[dim]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[dim]);
  if (!lower || !upper || !step || *step <= 0)
    return std::nullopt;
  return std::max<int64_t>(0, llvm::divideCeilSigned(*upper - *lower, *step));
}

/// How a loop becomes a kernel, once its dimensions before the innermost
/// are collapsed into one: the threads of a block along the outer and the
/// inner dimension, and whether the blocks step over the inner dimension
/// in y (65535 at most) or, when that would not fit, in x.
struct KernelShape {
  SmallVector<int64_t> tile;
  bool innerBlocksInX = false;
};

/// The innermost dimension (contiguous in the step's row-major buffers)
/// takes as many threads as it has iterations, rounded up to a power of
/// two, up to the whole block; the collapsed outer one the rest.
FailureOr<KernelShape> getKernelShape(scf::ParallelOp loop) {
  unsigned inner = loop.getNumLoops() - 1;
  std::optional<int64_t> innerTrips = getTripCount(loop, inner);
  std::optional<int64_t> outerTrips = 1;
  for (unsigned dim = 0; dim < inner; ++dim) {
    std::optional<int64_t> trips = getTripCount(loop, dim);
    outerTrips = trips && outerTrips ? std::optional(*trips * *outerTrips)
                                     : std::nullopt;
  }
  auto tile = [](std::optional<int64_t> trips, int64_t limit,
                 int64_t dynamic) {
    if (!trips)
      return std::min(limit, dynamic);
    return std::min<int64_t>(
        limit, llvm::PowerOf2Ceil(std::max<int64_t>(*trips, 1)));
  };
  KernelShape shape;
  int64_t innerTile = tile(innerTrips, kBlockThreads, kDynamicInnerTile);
  if (inner == 0) {
    shape.tile = {innerTile};
    shape.innerBlocksInX = true;
    return shape;
  }
  int64_t outerTile = tile(outerTrips, kBlockThreads / innerTile,
                           kDynamicOuterTile);
  shape.tile = {outerTile, innerTile};
  auto blocks = [](std::optional<int64_t> trips, int64_t tile) {
    return trips ? std::optional(llvm::divideCeil(*trips, tile))
                 : std::nullopt;
  };
  std::optional<int64_t> innerBlocks = blocks(innerTrips, innerTile);
  std::optional<int64_t> outerBlocks = blocks(outerTrips, outerTile);
  bool outerFitsY = outerBlocks && *outerBlocks <= kMaxGridY;
  if (innerBlocks && *innerBlocks > kMaxGridY && !outerFitsY)
    return loop.emitOpError("needs more blocks than a GPU grid holds (")
           << *innerBlocks << " along its innermost dimension, "
           << (outerBlocks ? std::to_string(*outerBlocks) : "unknown")
           << " along the others; at most " << kMaxGridY
           << " in one of them)";
  // An innermost dimension of unknown size goes to x when the others fit
  // in y; when neither size is known it stays in y (at most 65535 * 64).
  shape.innerBlocksInX =
      outerFitsY && (!innerBlocks || *innerBlocks > kMaxGridY);
  return shape;
}

/// Maps the blocks loop and the threads loop: the inner dimension to x
/// threads (a warp reads neighbouring elements), the outer one to y threads;
/// blocks step over the outer dimension in x (2^31 - 1 blocks at most) and
/// the inner one in y, or the other way round when the inner one needs more
/// blocks than y holds.
void mapToGPU(scf::ParallelOp blocks, scf::ParallelOp threads,
              const KernelShape &shape) {
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
  if (shape.innerBlocksInX)
    map(blocks, {gpu::Processor::BlockY, gpu::Processor::BlockX});
  else
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

bool startsAtZeroWithUnitSteps(scf::ParallelOp loop) {
  return llvm::all_of(loop.getLowerBound(),
                      [](Value v) { return isConstantIntValue(v, 0); }) &&
         llvm::all_of(loop.getStep(),
                      [](Value v) { return isConstantIntValue(v, 1); });
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
      FailureOr<KernelShape> shape = getKernelShape(loop);
      if (failed(shape))
        return signalPassFailure();
      // All but the innermost dimension become one, so that every kernel
      // has at most two, each with a hardware index; collapsing also makes
      // bounds start at 0 with steps of 1, which the guarded tiling below
      // needs. The collapsed loop replaces `loop` where it was.
      unsigned rank = loop.getNumLoops();
      if (rank > 2 || !startsAtZeroWithUnitSteps(loop)) {
        Operation *next = loop->getNextNode();
        std::vector<unsigned> outer(rank - 1);
        std::iota(outer.begin(), outer.end(), 0);
        SmallVector<std::vector<unsigned>> groups;
        if (!outer.empty())
          groups.push_back(outer);
        groups.push_back({rank - 1});
        collapseParallelLoops(rewriter, loop, groups);
        loop = cast<scf::ParallelOp>(next->getPrevNode());
      }
      auto [blocks, threads] =
          scf::tileParallelLoop(loop, shape->tile, /*noMinMaxBounds=*/true);
      mapToGPU(blocks, threads, *shape);
    }
  }
};

} // namespace
