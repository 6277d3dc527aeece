//===- MPIMemoryEffects.cpp - What mpi.allreduce reads and writes ---------===//

#include "amp/Interfaces/MPIMemoryEffects.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

struct AllReduceMemoryEffects
    : public MemoryEffectOpInterface::ExternalModel<AllReduceMemoryEffects,
                                                    mpi::AllReduceOp> {
  void getEffects(Operation *op,
                  SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                      &effects) const {
    auto allreduce = cast<mpi::AllReduceOp>(op);
    effects.emplace_back(MemoryEffects::Read::get(),
                         &allreduce.getSendbufMutable());
    effects.emplace_back(MemoryEffects::Write::get(),
                         &allreduce.getRecvbufMutable());
  }
};

} // namespace

void amp::registerMPIMemoryEffectsExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, mpi::MPIDialect *) {
    mpi::AllReduceOp::attachInterface<AllReduceMemoryEffects>(*context);
  });
}
