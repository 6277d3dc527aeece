//===- CPUSplitReductions.cpp - Reductions over the cores -----------------===//
//
// Implements `amp-cpu-split-reductions`.
//
//===----------------------------------------------------------------------===//

#include "SplitReductions.h"
#include "amp/Conversion/Passes.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUSPLITREDUCTIONS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// Reductions with at least this many outputs have 16 vectors of results or
/// more, which amp-cpu-parallel-loops splits over the cores already.
constexpr int64_t kMaxParallelExtent = 256;
/// Reductions of fewer elements in all take a core a few microseconds:
/// twice the grain of amp-cpu-parallel-loops.
constexpr int64_t kMinElements = 2 * 65536;
/// Each partial result reduces at least this many elements, so that writing
/// and re-reading it costs little against computing it.
constexpr int64_t kMinElementsPerPartial = 256;

/// How to split `op`: its outer reduction loops become parallel while the
/// inner ones leave each partial result at least kMinElementsPerPartial
/// elements; nullopt when no loop would be or the op is not worth it. Only
/// shapes decide, not the thread count: every count sums in one order.
std::optional<ReductionSplit> planReductionSplit(linalg::GenericOp op) {
  std::optional<ReductionSplit> split = analyzeReductionSplit(op);
  if (!split || split->parallelExtent >= kMaxParallelExtent ||
      split->parallelExtent * split->reductionExtent < kMinElements)
    return std::nullopt;
  split->threadLoopsFirst = true;
  int64_t serialExtent = split->reductionExtent;
  bool splitting = true, splitAny = false;
  for (auto [size, iterator] :
       llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray())) {
    if (iterator == utils::IteratorType::parallel) {
      split->loops.push_back({false, 1, size});
      continue;
    }
    splitting &= serialExtent / size >= kMinElementsPerPartial;
    if (!splitting) {
      split->loops.push_back({true, size, 1});
      continue;
    }
    serialExtent /= size;
    splitAny |= size > 1;
    split->loops.push_back({true, 1, size});
  }
  if (!splitAny)
    return std::nullopt;
  return split;
}

struct CPUSplitReductionsPass
    : public amp::impl::AmpCPUSplitReductionsBase<CPUSplitReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops)
      if (std::optional<ReductionSplit> split = planReductionSplit(op))
        (void)applyReductionSplit(rewriter, op, *split);
  }
};

} // namespace
