//===- GPUEmulateOnHost.cpp - The GPU lowering's loops, run on the host ---===//
//
// Implements `amp-gpu-emulate-on-host`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"

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

/// CUDA's limits on a launch: blocks of a grid in x, y, z; threads of a
/// block in x, y, z and in all.
constexpr int64_t kMaxGrid[] = {2147483647, 65535, 65535};
constexpr int64_t kMaxBlock[] = {1024, 1024, 64};
constexpr int64_t kMaxBlockThreads = 1024;

/// Runs a kernel's body for every block and thread in turn (the kernels of
/// the GPU lowering use neither barriers nor shared memory), after
/// asserting that its launch would be within CUDA's limits.
LogicalResult emulateLaunch(RewriterBase &rewriter, gpu::LaunchOp launch) {
  if (launch.hasClusterSize() || launch.getNumWorkgroupAttributions() ||
      launch.getNumPrivateAttributions() || !launch.getBody().hasOneBlock())
    return launch.emitOpError("is emulated on the host without clusters, "
                              "memory attributions or control flow only");
  Location loc = launch.getLoc();
  rewriter.setInsertionPoint(launch);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  SmallVector<Value> gridSizes = {grid.x, grid.y, grid.z};
  SmallVector<Value> blockSizes = {block.x, block.y, block.z};
  auto assertAtMost = [&](Value size, int64_t limit, const Twine &what) {
    Value bound = arith::ConstantIndexOp::create(rewriter, loc, limit);
    Value fits = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule,
                                       size, bound);
    cf::AssertOp::create(rewriter, loc, fits,
                         (what + " exceeds CUDA's limit of " + Twine(limit))
                             .str());
  };
  static constexpr char kAxes[] = {'x', 'y', 'z'};
  for (unsigned axis = 0; axis < 3; ++axis) {
    assertAtMost(gridSizes[axis], kMaxGrid[axis],
                 Twine("a kernel's grid size in ") + Twine(kAxes[axis]));
    assertAtMost(blockSizes[axis], kMaxBlock[axis],
                 Twine("a kernel's block size in ") + Twine(kAxes[axis]));
  }
  Value threadsPerBlock = arith::MulIOp::create(
      rewriter, loc, arith::MulIOp::create(rewriter, loc, block.x, block.y),
      block.z);
  assertAtMost(threadsPerBlock, kMaxBlockThreads, "a kernel's block");

  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  SmallVector<Value> zeros(3, zero), ones(3, one);
  auto blocks = scf::ParallelOp::create(rewriter, loc, zeros, gridSizes, ones);
  rewriter.setInsertionPointToStart(blocks.getBody());
  auto threads =
      scf::ParallelOp::create(rewriter, loc, zeros, blockSizes, ones);
  gpu::KernelDim3 blockIds = launch.getBlockIds(),
                  threadIds = launch.getThreadIds(),
                  gridSize = launch.getGridSize(),
                  blockSize = launch.getBlockSize();
  DenseMap<Value, Value> arguments = {
      {blockIds.x, blocks.getInductionVars()[0]},
      {blockIds.y, blocks.getInductionVars()[1]},
      {blockIds.z, blocks.getInductionVars()[2]},
      {threadIds.x, threads.getInductionVars()[0]},
      {threadIds.y, threads.getInductionVars()[1]},
      {threadIds.z, threads.getInductionVars()[2]},
      {gridSize.x, grid.x},
      {gridSize.y, grid.y},
      {gridSize.z, grid.z},
      {blockSize.x, block.x},
      {blockSize.y, block.y},
      {blockSize.z, block.z}};
  Block &body = launch.getBody().front();
  SmallVector<Value> argumentValues = llvm::map_to_vector(
      body.getArguments(), [&](BlockArgument arg) { return arguments.at(arg); });
  Operation *terminator = body.getTerminator();
  rewriter.inlineBlockBefore(&body, threads.getBody()->getTerminator(),
                             argumentValues);
  rewriter.eraseOp(terminator);
  rewriter.eraseOp(launch);
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
      } else if (auto sum = dyn_cast<amp_gpu::AllReduceSumOp>(op)) {
        // NCCL's sum as MPI's, which the CPU lowering runs: a world of one
        // in a plain process, the ranks of the job under mpiexec.
        Value world = mpi::CommWorldOp::create(
            rewriter, sum.getLoc(), mpi::CommType::get(rewriter.getContext()));
        rewriter.replaceOpWithNewOp<mpi::AllReduceOp>(
            sum, /*retval=*/Type(), sum.getSend(), sum.getRecv(),
            mpi::MPI_ReductionOpEnum::MPI_SUM, world);
      } else if (auto size = dyn_cast<amp_gpu::WorldSizeOp>(op)) {
        Value world = mpi::CommWorldOp::create(
            rewriter, size.getLoc(), mpi::CommType::get(rewriter.getContext()));
        rewriter.replaceOpWithNewOp<mpi::CommSizeOp>(
            size, /*retval=*/Type(), rewriter.getI32Type(), world);
      } else if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
        if (failed(emulateLaunch(rewriter, launch)))
          return WalkResult::interrupt();
        return WalkResult::skip();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
