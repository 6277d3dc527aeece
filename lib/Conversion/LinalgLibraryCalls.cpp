//===- LinalgLibraryCalls.cpp - Linalg ops as library calls ---------------===//

#include "LinalgLibraryCalls.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::amp;

std::optional<MatmulPlan> amp::planMatmul(linalg::LinalgOp op) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
      !op.hasPureBufferSemantics())
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->batch.size() > 1 || dims->m.size() != 1 ||
      dims->n.size() != 1 || dims->k.size() != 1)
    return std::nullopt;
  MatmulPlan plan;
  for (SmallVector<unsigned> *order : {&plan.a, &plan.b, &plan.c})
    llvm::append_range(*order, dims->batch);
  plan.a.append({dims->m[0], dims->k[0]});
  plan.b.append({dims->k[0], dims->n[0]});
  plan.c.append({dims->m[0], dims->n[0]});
  return plan;
}

Value amp::viewInOrder(OpBuilder &builder, Location loc, Value operand,
                       AffineMap map, ArrayRef<unsigned> order) {
  SmallVector<unsigned> permutation;
  for (unsigned loop : order)
    for (unsigned position = 0; position < map.getNumResults(); ++position)
      if (map.getDimPosition(position) == loop)
        permutation.push_back(position);
  if (llvm::equal(permutation, llvm::seq<unsigned>(0, permutation.size())))
    return operand;
  AffineMap transpose =
      AffineMap::getPermutationMap(permutation, builder.getContext());
  return memref::TransposeOp::create(builder, loc, operand,
                                     AffineMapAttr::get(transpose));
}

linalg::FillOp amp::getZeroFillBefore(Operation *op, Value output) {
  Operation *previous = op->getPrevNode();
  while (previous && isMemoryEffectFree(previous))
    previous = previous->getPrevNode();
  auto fill = dyn_cast_if_present<linalg::FillOp>(previous);
  if (!fill || fill.getOutputs()[0] != output ||
      !matchPattern(fill.value(), m_AnyZeroFloat()))
    return nullptr;
  return fill;
}

Type amp::getCpuProductInputType(linalg::LinalgOp op) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp>(
          op.getOperation()))
    return {};
  Type a = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type b = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
  Type c = getElementTypeOrSelf(op.getDpsInits()[0].getType());
  return a == b && c.isF32() ? a : Type();
}

bool amp::isWholeTruncation(linalg::GenericOp op) {
  Block *body = op.getBody();
  return op.getNumDpsInputs() == 1 && op.getNumDpsInits() == 1 &&
         llvm::hasSingleElement(body->without_terminator()) &&
         isa<arith::TruncFOp>(body->front()) &&
         body->front().getOperand(0) == body->getArgument(0) &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); });
}

bool amp::isCpuLibraryCall(func::CallOp call) {
  return call.getCallee().starts_with(kCpuMatmul) ||
         call.getCallee().starts_with(kCpuConv2D);
}

LogicalResult amp::checkNoMpiRetval(Operation *op, Value retval,
                                    StringRef call) {
  if (!retval)
    return success();
  return op->emitOpError("returns an '!mpi.retval', which ")
         << call << " does not give";
}

func::CallOp LibraryCallBuilder::call(OpBuilder &builder, Location loc,
                                      StringRef name, ArrayRef<Value> memrefs,
                                      ArrayRef<Value> scalars,
                                      TypeRange results) {
  SmallVector<Value> operands;
  for (Value memref : memrefs) {
    auto type = cast<MemRefType>(memref.getType());
    operands.push_back(memref::CastOp::create(
        builder, loc,
        UnrankedMemRefType::get(type.getElementType(), type.getMemorySpace()),
        memref));
  }
  llvm::append_range(operands, scalars);
  func::FuncOp callee =
      declare(name, ValueRange(operands).getTypes(), results);
  return func::CallOp::create(builder, loc, callee, operands);
}

func::FuncOp LibraryCallBuilder::declare(StringRef name, TypeRange arguments,
                                         TypeRange results) {
  if (auto existing = symbols.lookup<func::FuncOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto function =
      func::FuncOp::create(builder, module.getLoc(), name,
                           builder.getFunctionType(arguments, results));
  function.setPrivate();
  function->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
  symbols.insert(function);
  return function;
}
