//===- PrecisionTestContext.h - A context for precision tests ---*- C++ -*-===//

#ifndef AMP_UNITTESTS_ANALYSIS_PRECISIONTESTCONTEXT_H
#define AMP_UNITTESTS_ANALYSIS_PRECISIONTESTCONTEXT_H

#include "amp/Interfaces/UpstreamPrecisionModels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"

namespace mlir::amp {

/// Makes `context` know the dialects of a training step, with amp's
/// precision models on their ops, as registerAllAmpDialects does in tools.
inline void registerPrecisionTestDialects(MLIRContext &context) {
  DialectRegistry registry;
  registry.insert<arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect>();
  registerAmpPrecisionInterfaceExternalModels(registry);
  context.appendDialectRegistry(registry);
}

} // namespace mlir::amp

#endif // AMP_UNITTESTS_ANALYSIS_PRECISIONTESTCONTEXT_H
