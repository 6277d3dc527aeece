//===- LinalgLibraryCalls.h - Linalg ops as library calls -------*- C++ -*-===//
//
// What the CPU and GPU lowerings share when they hand contractions to a
// vendor library (oneDNN, cuBLASLt): which loops of a matmul are batch, M,
// N and K, views of the operands in the library's order (transposes, never
// copies), and the zero fill a beta = 0 product makes redundant; and the
// calls of runtime functions with memref operands (oneDNN's, MPI's) and
// the checks of the mpi ops such calls replace.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_LINALGLIBRARYCALLS_H
#define AMP_LIB_CONVERSION_LINALGLIBRARYCALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include <optional>

namespace mlir::amp {

/// The loops of each operand in the library's order: [batch,] M x K,
/// [batch,] K x N, [batch,] M x N.
struct MatmulPlan {
  SmallVector<unsigned> a, b, c;
};

/// The plan of `op` when it is a linalg.matmul or linalg.batch_matmul on
/// memrefs (any transposed indexing maps) with at most one batch dimension;
/// the element types are the caller's to check.
std::optional<MatmulPlan> planMatmul(linalg::LinalgOp op);

/// `operand`, read through `map`, as a view whose dimensions are the loops
/// `order`: the operand itself, or a memref.transpose of it.
Value viewInOrder(OpBuilder &builder, Location loc, Value operand,
                  AffineMap map, ArrayRef<unsigned> order);

/// The `linalg.fill` of zero into `output` right before `op` (skipping ops
/// without memory effects), which a product with beta = 0 makes redundant.
linalg::FillOp getZeroFillBefore(Operation *op, Value output);

/// The type of both inputs of `op` when it is a product that the CPU
/// runtime's matmuls and convolutions take: a linalg.matmul,
/// linalg.batch_matmul or linalg.conv_2d_nchw_fchw of two inputs of one type
/// into an f32 output; else null. (Which input types the runtime has entries
/// for is the caller's to check.)
Type getCpuProductInputType(linalg::LinalgOp op);

/// Whether `op` only rounds its one input, whole, to its output's type: a
/// `linalg.generic` of one `arith.truncf` through identity maps.
bool isWholeTruncation(linalg::GenericOp op);

/// The name prefixes of the CPU runtime's matmuls and convolutions
/// (include/amp/ExecutionEngine/CpuRuntime.h); a suffix names the inputs'
/// type and epilogue.
constexpr StringLiteral kCpuMatmul = "ampCpuMatmul";
constexpr StringLiteral kCpuConv2D = "ampCpuConv2D";
constexpr StringLiteral kCpuConv2DBackwardData = "ampCpuConv2DBackwardData";
constexpr StringLiteral kCpuConv2DBackwardWeights =
    "ampCpuConv2DBackwardWeights";

/// Whether `call` calls one of the CPU runtime's matmuls or convolutions:
/// each reads its memrefs with any strides and writes only the third, its
/// output.
bool isCpuLibraryCall(func::CallOp call);

/// An error unless the mpi op that a runtime call (`call`, as the message
/// names it) replaces returns no `!mpi.retval`: the calls return none.
LogicalResult checkNoMpiRetval(Operation *op, Value retval, StringRef call);

/// Calls of runtime functions through their C interface, each declared once
/// per module (private, `llvm.emit_c_interface`).
class LibraryCallBuilder {
public:
  explicit LibraryCallBuilder(ModuleOp module)
      : module(module), symbols(module) {}

  /// Calls `name` with `memrefs` (cast to unranked) and `scalars`, declaring
  /// the runtime function on first use.
  func::CallOp call(OpBuilder &builder, Location loc, StringRef name,
                    ArrayRef<Value> memrefs, ArrayRef<Value> scalars,
                    TypeRange results = {});

private:
  func::FuncOp declare(StringRef name, TypeRange arguments,
                       TypeRange results);

  ModuleOp module;
  SymbolTable symbols;
};

} // namespace mlir::amp

#endif // AMP_LIB_CONVERSION_LINALGLIBRARYCALLS_H
