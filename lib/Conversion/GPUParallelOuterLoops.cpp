//===- GPUParallelOuterLoops.cpp - One kernel per linalg op ---------------===//
//
// Implements `amp-gpu-parallel-outer-loops`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUPARALLELOUTERLOOPS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// The loop order with every parallel loop before every reduction loop, or
/// nullopt when the op already starts with its parallel loops.
std::optional<SmallVector<unsigned>> getParallelFirstOrder(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> order;
  for (auto [loop, iterator] : llvm::enumerate(iterators))
    if (iterator == utils::IteratorType::parallel)
      order.push_back(loop);
  for (auto [loop, iterator] : llvm::enumerate(iterators))
    if (iterator != utils::IteratorType::parallel)
      order.push_back(loop);
  if (llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
    return std::nullopt;
  return order;
}

/// Runs `op` inside a one-iteration scf.parallel.
void wrapInParallelLoop(RewriterBase &rewriter, Operation *op) {
  rewriter.setInsertionPoint(op);
  Location loc = op->getLoc();
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto loop = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                      ValueRange{one}, ValueRange{one});
  rewriter.moveOpBefore(op, loop.getBody()->getTerminator());
}

struct GPUParallelOuterLoopsPass
    : public amp::impl::AmpGPUParallelOuterLoopsBase<
          GPUParallelOuterLoopsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics() &&
          !op->getParentOfType<scf::ParallelOp>())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      if (op.getNumParallelLoops() == 0) {
        wrapInParallelLoop(rewriter, op);
        continue;
      }
      std::optional<SmallVector<unsigned>> order = getParallelFirstOrder(op);
      if (!order)
        continue;
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized)) {
          op.emitOpError("starts with a reduction loop and cannot be "
                         "generalized to reorder its loops");
          return signalPassFailure();
        }
        generic = *generalized;
      }
      if (failed(linalg::interchangeGenericOp(rewriter, generic, *order))) {
        generic.emitOpError("loops cannot be reordered parallel-first");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
