//===- GPUBufferize.cpp - Bufferize a step into device memory -------------===//
//
// Implements `amp-gpu-bufferize`: one-shot bufferization with device
// allocations and copies, results as out-parameters, constants copied to
// the device, and a gpu.dealloc for every temporary. The upstream
// deallocation pipeline is no use here: it frees with memref.dealloc (host
// free) and clones returned buffers on the host.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUBUFFERIZE
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

FailureOr<Value> allocateOnDevice(OpBuilder &builder, Location loc,
                                  MemRefType type, ValueRange dynamicSizes) {
  return gpu::AllocOp::create(builder, loc, type, /*asyncToken=*/Type(),
                              /*asyncDependencies=*/ValueRange(),
                              dynamicSizes, /*symbolOperands=*/ValueRange(),
                              /*hostShared=*/false)
      .getMemref();
}

/// A DMA copy where both sides are dense; a copy kernel otherwise, since
/// gpu.memcpy cannot express strides.
LogicalResult copyOnDevice(OpBuilder &builder, Location loc, Value from,
                           Value to) {
  auto isDense = [](Value memref) {
    return cast<MemRefType>(memref.getType()).getLayout().isIdentity();
  };
  if (isDense(from) && isDense(to))
    gpu::MemcpyOp::create(builder, loc, /*asyncToken=*/Type(),
                          /*asyncDependencies=*/ValueRange(), to, from);
  else
    linalg::CopyOp::create(builder, loc, from, to);
  return success();
}

/// A fill whose tensor several ops write into would be one filled buffer
/// copied for each of them: each op of the fill's block that writes into it
/// gets its own fill, right before it, which costs what the copy did, and a
/// matmul's own zero fill becomes beta = 0 (amp-linalg-to-gpu-matmul). Ops
/// that only read the fill, or sit in a loop, keep the shared one.
void fillEachWriter(func::FuncOp func) {
  SmallVector<linalg::FillOp> fills;
  func.walk([&](linalg::FillOp fill) {
    if (fill.hasPureTensorSemantics() && !fill->getResult(0).hasOneUse())
      fills.push_back(fill);
  });
  for (linalg::FillOp fill : fills) {
    SmallVector<OpOperand *> uses = llvm::map_to_vector(
        fill->getResult(0).getUses(), [](OpOperand &use) { return &use; });
    for (OpOperand *use : uses) {
      auto writer = dyn_cast<DestinationStyleOpInterface>(use->getOwner());
      if (!writer || !writer.isDpsInit(use) ||
          writer->getBlock() != fill->getBlock())
        continue;
      OpBuilder builder(writer);
      use->set(builder.clone(*fill)->getResult(0));
    }
    if (fill->use_empty())
      fill.erase();
  }
}

/// A result computed into a fresh buffer and then copied into its
/// out-parameter is computed into the out-parameter instead.
void computeIntoOutParameters(func::FuncOp func) {
  SmallVector<gpu::MemcpyOp> copies;
  func.walk([&](gpu::MemcpyOp copy) { copies.push_back(copy); });
  for (gpu::MemcpyOp copy : copies) {
    auto outParam = dyn_cast<BlockArgument>(copy.getDst());
    auto alloc = copy.getSrc().getDefiningOp<gpu::AllocOp>();
    if (!outParam || outParam.getOwner() != &func.front() ||
        !outParam.hasOneUse() || !alloc ||
        alloc->getBlock() != copy->getBlock() ||
        alloc.getType() != outParam.getType())
      continue;
    alloc.getMemref().replaceAllUsesWith(outParam);
    copy.erase();
    alloc.erase();
  }
}

/// Tensor constants bufferize to host globals: each use site gets a device
/// copy (freed like any temporary).
void copyConstantsToDevice(func::FuncOp func) {
  SmallVector<memref::GetGlobalOp> globals;
  func.walk([&](memref::GetGlobalOp global) { globals.push_back(global); });
  for (memref::GetGlobalOp global : globals) {
    SmallVector<OpOperand *> uses = llvm::map_to_vector(
        global->getUses(), [](OpOperand &use) { return &use; });
    OpBuilder builder(global->getContext());
    builder.setInsertionPointAfter(global);
    Value device =
        *allocateOnDevice(builder, global.getLoc(), global.getType(), {});
    (void)copyOnDevice(builder, global.getLoc(), global, device);
    for (OpOperand *use : uses)
      use->set(device);
  }
}

/// Frees every device allocation at the end of its block, unless the buffer
/// (or a view of it) leaves the block through the terminator.
LogicalResult freeAllocations(func::FuncOp func) {
  SmallVector<gpu::AllocOp> allocs;
  func.walk([&](gpu::AllocOp alloc) { allocs.push_back(alloc); });
  for (gpu::AllocOp alloc : allocs) {
    Operation *terminator = alloc->getBlock()->getTerminator();
    SmallVector<Value> aliases = {alloc.getMemref()};
    for (size_t i = 0; i < aliases.size(); ++i)
      for (Operation *user : aliases[i].getUsers()) {
        if (user == terminator)
          return alloc.emitOpError(
              "holds a buffer that leaves its block (a loop or branch "
              "yielding a new tensor), which the GPU lowering cannot free");
        auto view = dyn_cast<ViewLikeOpInterface>(user);
        if (view && view.getViewSource() == aliases[i])
          llvm::append_range(aliases, user->getResults());
      }
    OpBuilder builder(terminator);
    gpu::DeallocOp::create(builder, alloc.getLoc(), /*asyncToken=*/Type(),
                           /*asyncDependencies=*/ValueRange(),
                           alloc.getMemref());
  }
  return success();
}

struct GPUBufferizePass
    : public amp::impl::AmpGPUBufferizeBase<GPUBufferizePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>())
      fillEachWriter(func);
    bufferization::OneShotBufferizationOptions options;
    options.bufferizeFunctionBoundaries = true;
    options.setFunctionBoundaryTypeConversion(
        bufferization::LayoutMapOption::IdentityLayoutMap);
    options.allocationFn = [](OpBuilder &builder, Location loc,
                              MemRefType type, ValueRange dynamicSizes,
                              unsigned /*alignment: the driver's is 256*/) {
      return allocateOnDevice(builder, loc, type, dynamicSizes);
    };
    options.memCpyFn = copyOnDevice;
    bufferization::BufferizationState state;
    if (failed(bufferization::runOneShotModuleBufferize(module, options,
                                                        state)))
      return signalPassFailure();

    bufferization::BufferResultsToOutParamsOpts outParams;
    outParams.modifyPublicFunctions = true;
    outParams.allocationFn = allocateOnDevice;
    outParams.memCpyFn = copyOnDevice;
    if (failed(bufferization::promoteBufferResultsToOutParams(module,
                                                              outParams)))
      return signalPassFailure();

    for (auto func : module.getOps<func::FuncOp>()) {
      computeIntoOutParameters(func);
      copyConstantsToDevice(func);
      if (failed(freeAllocations(func)))
        return signalPassFailure();
    }
  }
};

} // namespace
