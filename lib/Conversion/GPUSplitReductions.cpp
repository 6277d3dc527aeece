//===- GPUSplitReductions.cpp - Reductions over many threads --------------===//
//
// Implements `amp-gpu-split-reductions`.
//
//===----------------------------------------------------------------------===//

#include "SplitReductions.h"
#include "amp/Conversion/Passes.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUSPLITREDUCTIONS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// Each thread of a split reduction reduces about this many elements: enough
/// to pay for writing and re-reading its partial result.
constexpr int64_t kElementsPerThread = 64;
/// Reductions of fewer elements per output are left to one thread: a split
/// adds two launches (filling the partials, combining them), a few
/// microseconds, which a serial loop this short costs about as much as.
constexpr int64_t kMinReductionExtent = 512;
/// Ops with this many outputs in parallel already occupy the GPU.
constexpr int64_t kMaxParallelExtent = 1024;

/// The smallest divisor of `n` that is at least `atLeast` (`n` if none).
int64_t getSmallestDivisorAtLeast(int64_t n, int64_t atLeast) {
  int64_t best = n;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0)
      continue;
    for (int64_t divisor : {d, n / d})
      if (divisor >= atLeast)
        best = std::min(best, divisor);
  }
  return best;
}

/// How to split `op`'s reduction loops over threads, or nullopt when it is
/// not worth it or the op is not a plain reduction (analyzeReductionSplit).
std::optional<ReductionSplit> planReductionSplit(linalg::GenericOp op) {
  std::optional<ReductionSplit> split = analyzeReductionSplit(op);
  if (!split)
    return std::nullopt;
  if (split->parallelExtent >= kMaxParallelExtent ||
      split->reductionExtent < kMinReductionExtent)
    return std::nullopt;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();

  // The outer reduction loops become serial until a thread has enough work;
  // the inner ones go to threads, so neighbouring threads read neighbouring
  // elements.
  int64_t serialExtent = 1;
  for (auto [size, iterator] : llvm::zip(sizes, iterators)) {
    if (iterator == utils::IteratorType::parallel) {
      split->loops.push_back({false, 1, size});
      continue;
    }
    int64_t wanted = llvm::divideCeil(kElementsPerThread, serialExtent);
    int64_t serial = wanted <= 1 ? 1 : getSmallestDivisorAtLeast(size, wanted);
    serialExtent *= serial;
    split->loops.push_back({true, serial, size / serial});
  }
  if (serialExtent == split->reductionExtent)
    return std::nullopt;
  return split;
}

struct GPUSplitReductionsPass
    : public amp::impl::AmpGPUSplitReductionsBase<GPUSplitReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> worklist;
    getOperation().walk([&](linalg::GenericOp op) { worklist.push_back(op); });
    IRRewriter rewriter(&getContext());
    // The ops accumulating the partials are split again while they qualify.
    while (!worklist.empty()) {
      linalg::GenericOp op = worklist.pop_back_val();
      if (std::optional<ReductionSplit> split = planReductionSplit(op))
        worklist.append(applyReductionSplit(rewriter, op, *split));
    }
  }
};

} // namespace
