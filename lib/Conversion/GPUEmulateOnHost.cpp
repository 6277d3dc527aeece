//===- GPUEmulateOnHost.cpp - The GPU lowering's loops, run on the host ---===//
//
// Implements `amp-gpu-emulate-on-host`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUEMULATEONHOST
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// C += A.B (C = A.B after a zero fill when beta is 0), accumulated in f32
/// like the runtime's cuBLASLt matmul.
LogicalResult emulateMatmul(RewriterBase &rewriter, amp_gpu::MatmulOp matmul) {
  auto outputType = cast<MemRefType>(matmul.getC().getType());
  float beta = matmul.getBeta().convertToFloat();
  if (matmul.getAlpha().convertToFloat() != 1.0f ||
      (beta != 0.0f && beta != 1.0f) || !outputType.getElementType().isF32())
    return matmul.emitOpError(
        "is emulated on the host with alpha = 1, beta = 0 or 1 and an f32 "
        "output only");
  rewriter.setInsertionPoint(matmul);
  Location loc = matmul.getLoc();
  Type f32 = rewriter.getF32Type();
  if (beta == 0.0f) {
    Value zero = arith::ConstantOp::create(rewriter, loc, f32,
                                           rewriter.getF32FloatAttr(0.0f));
    linalg::FillOp::create(rewriter, loc, zero, matmul.getC());
  }
  // (batch,) m, n, k.
  unsigned batch = outputType.getRank() - 2;
  MLIRContext *context = rewriter.getContext();
  auto dims = [&](ArrayRef<unsigned> positions) {
    SmallVector<AffineExpr> exprs;
    for (unsigned dim = 0; dim < batch; ++dim)
      exprs.push_back(getAffineDimExpr(dim, context));
    for (unsigned position : positions)
      exprs.push_back(getAffineDimExpr(batch + position, context));
    return AffineMap::get(batch + 3, 0, exprs, context);
  };
  SmallVector<utils::IteratorType> iterators(batch + 2,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  auto toF32 = [&](OpBuilder &b, Location bodyLoc, Value value) {
    return value.getType() == f32
               ? value
               : arith::ExtFOp::create(b, bodyLoc, f32, value).getResult();
  };
  linalg::GenericOp::create(
      rewriter, loc, ValueRange{matmul.getA(), matmul.getB()},
      ValueRange{matmul.getC()}, {dims({0, 2}), dims({2, 1}), dims({0, 1})},
      iterators, [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
        Value lhs = toF32(b, bodyLoc, args[0]);
        Value rhs = toF32(b, bodyLoc, args[1]);
        Value product = arith::MulFOp::create(b, bodyLoc, lhs, rhs);
        Value sum = arith::AddFOp::create(b, bodyLoc, args[2], product);
        linalg::YieldOp::create(b, bodyLoc, sum);
      });
  rewriter.eraseOp(matmul);
  return success();
}

struct GPUEmulateOnHostPass
    : public amp::impl::AmpGPUEmulateOnHostBase<GPUEmulateOnHostPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    WalkResult result = getOperation().walk([&](Operation *op) {
      if (isa<gpu::AsyncOpInterface>(op) &&
          cast<gpu::AsyncOpInterface>(op).getAsyncToken()) {
        op->emitOpError("is asynchronous: emulate the step on the host "
                        "before gpu-async-region");
        return WalkResult::interrupt();
      }
      rewriter.setInsertionPoint(op);
      if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        rewriter.replaceOpWithNewOp<memref::AllocOp>(
            alloc, alloc.getMemref().getType(), alloc.getDynamicSizes(),
            alloc.getSymbolOperands());
      } else if (isa<gpu::DeallocOp>(op)) {
        // The CPU lowering frees host buffers itself.
        rewriter.eraseOp(op);
      } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
        rewriter.replaceOpWithNewOp<memref::CopyOp>(copy, copy.getSrc(),
                                                    copy.getDst());
      } else if (auto matmul = dyn_cast<amp_gpu::MatmulOp>(op)) {
        if (failed(emulateMatmul(rewriter, matmul)))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
