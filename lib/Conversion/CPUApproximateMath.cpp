//===- CPUApproximateMath.cpp - Polynomial math for the CPU ---------------===//
//
// Implements `amp-cpu-approximate-math`.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUAPPROXIMATEMATH
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// The math functions approximated, by op name: those of activations,
/// softmax and losses.
bool isApproximated(StringRef name) {
  return name.consume_front("math.") &&
         llvm::is_contained({"exp", "expm1", "log", "log1p", "tanh", "erf"},
                            name);
}

struct CPUApproximateMathPass
    : public amp::impl::AmpCPUApproximateMathBase<CPUApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError(
          "amp-cpu-approximate-math: the rewrites did not converge");
      return signalPassFailure();
    }
  }
};

} // namespace
