//===- MPIToGPU.cpp - The collectives of a step as NCCL calls -------------===//
//
// Implements `amp-mpi-to-gpu`: the mpi ops of a data-parallel step become
// amp_gpu ops, which the runtime implements with NCCL on the step's stream.
// It runs on tensors, before amp-gpu-bufferize, so that the receive buffers
// become device allocations freed like every other temporary.
//
//===----------------------------------------------------------------------===//

#include "LinalgLibraryCalls.h"
#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/MPI/IR/MPI.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPMPITOGPU
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// The calls the ops become, as errors name them; NCCL's errors go to the
/// runtime's error state.
constexpr StringLiteral kNcclCall = "the runtime's NCCL call";

/// The communicator must be the world: NCCL's communicator is the runtime's
/// one, of every rank.
LogicalResult checkWorld(Operation *op, Value comm) {
  if (comm.getDefiningOp<mpi::CommWorldOp>())
    return success();
  return op->emitOpError("works on a communicator other than "
                         "MPI_COMM_WORLD; the GPU runtime has one NCCL "
                         "communicator, of every rank");
}

/// Makes `buffer` device memory: a memref.alloc becomes a gpu.alloc; a
/// bufferization.to_buffer of a tensor is bufferized into device memory
/// anyway. Anything else could be host memory, which NCCL cannot read.
LogicalResult placeOnDevice(Operation *op, Value buffer) {
  Operation *source = buffer.getDefiningOp();
  if (isa_and_nonnull<bufferization::ToBufferOp, gpu::AllocOp>(source))
    return success();
  auto alloc = dyn_cast_or_null<memref::AllocOp>(source);
  if (!alloc || !alloc.getSymbolOperands().empty())
    return op->emitOpError("takes a buffer that is neither a memref.alloc nor "
                           "a bufferization.to_buffer of a tensor, which "
                           "could be host memory: NCCL sums device buffers");
  OpBuilder builder(alloc);
  Value device = gpu::AllocOp::create(builder, alloc.getLoc(), alloc.getType(),
                                      /*asyncToken=*/Type(),
                                      /*asyncDependencies=*/ValueRange(),
                                      alloc.getDynamicSizes(),
                                      /*symbolOperands=*/ValueRange(),
                                      /*hostShared=*/false)
                     .getMemref();
  alloc.getMemref().replaceAllUsesWith(device);
  alloc.erase();
  return success();
}

LogicalResult convertAllReduce(mpi::AllReduceOp allreduce) {
  if (allreduce.getOp() != mpi::MPI_ReductionOpEnum::MPI_SUM)
    return allreduce.emitOpError("reduces with ")
           << mpi::stringifyMPI_ReductionOpEnum(allreduce.getOp())
           << "; the GPU lowering takes sums (MPI_SUM) only";
  if (failed(checkWorld(allreduce, allreduce.getComm())) ||
      failed(checkNoMpiRetval(allreduce, allreduce.getRetval(), kNcclCall)))
    return failure();
  Value send = allreduce.getSendbuf(), recv = allreduce.getRecvbuf();
  // The checks of amp_gpu.all_reduce_sum, reported on the op they stem from.
  auto sendType = cast<MemRefType>(send.getType());
  auto recvType = cast<MemRefType>(recv.getType());
  if (!amp_gpu::isContiguousVector(sendType) ||
      !amp_gpu::isContiguousVector(recvType) ||
      sendType.getShape() != recvType.getShape() ||
      sendType.getElementType() != recvType.getElementType() ||
      !amp_gpu::getRuntimeElementType(sendType.getElementType()))
    return allreduce.emitOpError("sums ")
           << sendType << " into " << recvType
           << "; the GPU lowering sums 1-D contiguous buffers of one size "
              "and of f32, f16 or bf16";
  if (failed(placeOnDevice(allreduce, send)) ||
      failed(placeOnDevice(allreduce, recv)))
    return failure();
  OpBuilder builder(allreduce);
  amp_gpu::AllReduceSumOp::create(builder, allreduce.getLoc(),
                                  /*asyncToken=*/Type(),
                                  /*asyncDependencies=*/ValueRange(),
                                  allreduce.getSendbuf(),
                                  allreduce.getRecvbuf());
  allreduce.erase();
  return success();
}

LogicalResult convertCommSize(mpi::CommSizeOp size) {
  if (failed(checkWorld(size, size.getComm())) ||
      failed(checkNoMpiRetval(size, size.getRetval(), kNcclCall)))
    return failure();
  OpBuilder builder(size);
  Value worldSize = amp_gpu::WorldSizeOp::create(builder, size.getLoc(),
                                                 builder.getI32Type());
  size.getSize().replaceAllUsesWith(worldSize);
  size.erase();
  return success();
}

struct MPIToGPUPass : public amp::impl::AmpMPIToGPUBase<MPIToGPUPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<mpi::MPIDialect>(op->getDialect()))
        ops.push_back(op);
    });
    bool failedOp = false;
    SmallVector<mpi::CommWorldOp> worlds;
    for (Operation *op : ops) {
      LogicalResult converted = success();
      if (auto allreduce = dyn_cast<mpi::AllReduceOp>(op))
        converted = convertAllReduce(allreduce);
      else if (auto size = dyn_cast<mpi::CommSizeOp>(op))
        converted = convertCommSize(size);
      else if (auto world = dyn_cast<mpi::CommWorldOp>(op))
        worlds.push_back(world);
      else
        converted = op->emitOpError(
            "has no GPU lowering; of the mpi dialect, the GPU lowering takes "
            "what amp-data-parallel emits (mpi.comm_world, mpi.allreduce "
            "with MPI_SUM, mpi.comm_size)");
      failedOp |= failed(converted);
    }
    if (failedOp)
      return signalPassFailure();
    for (mpi::CommWorldOp world : worlds)
      if (world->use_empty())
        world.erase();
  }
};

} // namespace
