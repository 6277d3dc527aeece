//===- AmpGPUDialect.cpp - The amp_gpu dialect ----------------------------===//

#include "amp/Dialect/AmpGPU/IR/AmpGPU.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::amp_gpu;

#include "amp/Dialect/AmpGPU/IR/AmpGPUOpsDialect.cpp.inc"

void AmpGPUDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "amp/Dialect/AmpGPU/IR/AmpGPUOps.cpp.inc"
      >();
}

std::optional<int32_t> amp_gpu::getRuntimeElementType(Type type) {
  if (type.isF32())
    return 0;
  if (type.isF16())
    return 1;
  if (type.isBF16())
    return 2;
  return std::nullopt;
}

bool amp_gpu::isContiguousVector(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getRank() == 1 &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides[0] == 1;
}

/// `async [%deps]`, as the gpu dialect's async ops print it.
static ParseResult parseAsyncDependencies(
    OpAsmParser &parser, Type &asyncTokenType,
    SmallVectorImpl<OpAsmParser::UnresolvedOperand> &asyncDependencies) {
  if (succeeded(parser.parseOptionalKeyword("async")))
    asyncTokenType = parser.getBuilder().getType<gpu::AsyncTokenType>();
  return parser.parseOperandList(asyncDependencies,
                                 OpAsmParser::Delimiter::OptionalSquare);
}

static void printAsyncDependencies(OpAsmPrinter &printer, Operation *,
                                   Type asyncTokenType,
                                   OperandRange asyncDependencies) {
  if (asyncTokenType)
    printer << "async";
  if (asyncDependencies.empty())
    return;
  if (asyncTokenType)
    printer << ' ';
  printer << '[' << asyncDependencies << ']';
}

LogicalResult MatmulOp::verify() {
  auto a = cast<MemRefType>(getA().getType());
  auto b = cast<MemRefType>(getB().getType());
  auto c = cast<MemRefType>(getC().getType());
  int64_t rank = a.getRank();
  if (rank != 2 && rank != 3)
    return emitOpError("operands must have rank 2 or 3, got ") << rank;
  if (b.getRank() != rank || c.getRank() != rank)
    return emitOpError("operands must all have rank ") << rank;
  Type ab = a.getElementType();
  if (!getRuntimeElementType(ab))
    return emitOpError("operand 'a' must have f16, bf16 or f32 elements");
  if (b.getElementType() != ab)
    return emitOpError("operands 'a' and 'b' must have the same element type");
  Type ct = c.getElementType();
  if (ct != ab && !ct.isF32())
    return emitOpError("operand 'c' must have the element type of 'a' or f32");
  // A is [batch] x M x K, B is [batch] x K x N, C is [batch] x M x N.
  auto agree = [](int64_t x, int64_t y) {
    return ShapedType::isDynamic(x) || ShapedType::isDynamic(y) || x == y;
  };
  int64_t m = rank - 2, n = rank - 1;
  if (!agree(a.getDimSize(n), b.getDimSize(m)) ||
      !agree(a.getDimSize(m), c.getDimSize(m)) ||
      !agree(b.getDimSize(n), c.getDimSize(n)) ||
      (rank == 3 && (!agree(a.getDimSize(0), b.getDimSize(0)) ||
                     !agree(a.getDimSize(0), c.getDimSize(0)))))
    return emitOpError("operand shapes do not form a matrix product: ")
           << a << ", " << b << ", " << c;
  return success();
}

LogicalResult AllReduceSumOp::verify() {
  auto send = cast<MemRefType>(getSend().getType());
  auto recv = cast<MemRefType>(getRecv().getType());
  if (!isContiguousVector(send) || !isContiguousVector(recv))
    return emitOpError("buffers must be 1-D and contiguous, got ")
           << send << " and " << recv;
  if (send.getShape() != recv.getShape() ||
      send.getElementType() != recv.getElementType())
    return emitOpError("buffers must have one size and element type, got ")
           << send << " and " << recv;
  if (!getRuntimeElementType(send.getElementType()))
    return emitOpError("buffers must have f16, bf16 or f32 elements");
  return success();
}

#define GET_OP_CLASSES
#include "amp/Dialect/AmpGPU/IR/AmpGPUOps.cpp.inc"
