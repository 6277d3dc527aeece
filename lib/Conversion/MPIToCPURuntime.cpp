//===- MPIToCPURuntime.cpp - MPI ops MPIToLLVM cannot lower ---------------===//
//
// Implements `amp-mpi-to-cpu-runtime`: the f16/bf16 sums and the world size
// of a data-parallel step become calls of libAmpMpiRuntime (MpiRuntime.h);
// everything else stays for MPIToLLVM, once checked against what it would
// lower wrong without an error.
//
//===----------------------------------------------------------------------===//

#include "LinalgLibraryCalls.h"
#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/MPI/IR/MPI.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPMPITOCPURUNTIME
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// Whether MPIToLLVM maps `type` to an MPI datatype.
bool hasMpiDatatype(Type type) {
  if (type.isF32() || type.isF64())
    return true;
  auto integer = dyn_cast<IntegerType>(type);
  return integer && llvm::is_contained({8u, 16u, 32u, 64u}, integer.getWidth());
}

/// The runtime's sum of buffers of `type`, if it has one.
StringRef getHalfSumEntry(Type type) {
  if (type.isF16())
    return "ampMpiAllreduceSumF16";
  if (type.isBF16())
    return "ampMpiAllreduceSumBF16";
  return {};
}

/// Checks that the buffers of `op` are what MPIToLLVM and the runtime count
/// right: 1-D and contiguous (MPIToLLVM passes the size of dimension 0), of
/// a type that has an MPI datatype or, for a sum, a runtime entry point.
LogicalResult checkBuffers(Operation *op) {
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type)
      continue;
    if (!amp_gpu::isContiguousVector(type))
      return op->emitOpError("takes a buffer of type ")
             << type
             << "; the MPI lowering counts the elements of dimension 0, so "
                "it needs 1-D contiguous buffers";
    Type element = type.getElementType();
    auto allreduce = dyn_cast<mpi::AllReduceOp>(op);
    bool summedHalves = allreduce && !getHalfSumEntry(element).empty() &&
                        allreduce.getOp() == mpi::MPI_ReductionOpEnum::MPI_SUM;
    if (!hasMpiDatatype(element) && !summedHalves)
      return op->emitOpError("takes a buffer of ")
             << element
             << ", which has no MPI datatype; of f16 and bf16 the MPI "
                "runtime takes sums (mpi.allreduce with MPI_SUM) only";
  }
  return success();
}

/// An error unless the module names MPICH as its MPI implementation, the
/// ABI of MPIToLLVM's default and of the MPI runtime.
LogicalResult checkMpichAbi(ModuleOp module) {
  FailureOr<Attribute> name = dlti::query(module, {"MPI:Implementation"});
  auto text = succeeded(name) ? dyn_cast<StringAttr>(*name) : StringAttr();
  if (text && text.getValue() == "MPICH")
    return success();
  return module.emitError(
      "has MPI ops but its DLTI spec does not name MPICH as "
      "\"MPI:Implementation\" (amp-data-parallel sets it); the MPI runtime "
      "and MPIToLLVM's default follow MPICH's ABI");
}

struct MPIToCPURuntimePass
    : public amp::impl::AmpMPIToCPURuntimeBase<MPIToCPURuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<mpi::MPIDialect>(op->getDialect()))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    if (failed(checkMpichAbi(module)))
      return signalPassFailure();
    LibraryCallBuilder calls(module);
    bool failedOp = false;
    for (Operation *op : ops) {
      if (failed(checkBuffers(op))) {
        failedOp = true;
        continue;
      }
      OpBuilder builder(op);
      if (auto allreduce = dyn_cast<mpi::AllReduceOp>(op)) {
        StringRef entry =
            getHalfSumEntry(allreduce.getSendbuf().getType().getElementType());
        if (entry.empty())
          continue;
        if (failed(checkNoMpiRetval(op, allreduce.getRetval(),
                                    "the MPI runtime's call"))) {
          failedOp = true;
          continue;
        }
        calls.call(builder, op->getLoc(), entry,
                   {allreduce.getSendbuf(), allreduce.getRecvbuf()}, {});
        op->erase();
        continue;
      }
      auto size = dyn_cast<mpi::CommSizeOp>(op);
      if (!size)
        continue;
      if (!size.getComm().getDefiningOp<mpi::CommWorldOp>()) {
        failedOp = true;
        op->emitOpError("asks for the size of a communicator other than "
                        "MPI_COMM_WORLD, which the MPI runtime does not know");
        continue;
      }
      if (failed(checkNoMpiRetval(op, size.getRetval(),
                                    "the MPI runtime's call"))) {
        failedOp = true;
        continue;
      }
      func::CallOp call =
          calls.call(builder, op->getLoc(), "ampMpiWorldSize", {}, {},
                     builder.getI32Type());
      size.getSize().replaceAllUsesWith(call.getResult(0));
      op->erase();
    }
    if (failedOp)
      signalPassFailure();
  }
};

} // namespace
