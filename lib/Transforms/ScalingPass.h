//===- ScalingPass.h - The driver of the loss scaling passes ---*- C++ -*-===//
//
// amp-loss-scaling and amp-guard-update declare the same scaling options
// (Passes.td) and run the same way: validate them once, then rewrite every
// step function of the module. The generated pass bases keep the options
// protected, so the driver derives from them.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_TRANSFORMS_SCALINGPASS_H
#define AMP_LIB_TRANSFORMS_SCALINGPASS_H

#include "amp/Transforms/Scaling.h"

namespace mlir::amp {

/// A scaling pass `DerivedT`, generated as `GeneratedBaseT<DerivedT>`, which
/// defines `LogicalResult rewriteStep(func::FuncOp, const ScalingConfig &)`.
template <typename DerivedT, template <typename> class GeneratedBaseT>
class ScalingPass : public GeneratedBaseT<DerivedT> {
public:
  using GeneratedBase = GeneratedBaseT<DerivedT>;
  using GeneratedBase::GeneratedBase;

  void runOnOperation() override {
    llvm::Expected<ScalingConfig> config = ScalingConfig::get(
        this->dtype, this->scaling, this->initScale, this->growthFactor,
        this->backoffFactor, this->growthInterval, this->minScale,
        this->maxScale, this->hysteresis);
    if (failed(rewriteEachStep(
            this->getOperation(), std::move(config),
            [&](func::FuncOp func, const ScalingConfig &valid) {
              return static_cast<DerivedT &>(*this).rewriteStep(func, valid);
            })))
      this->signalPassFailure();
  }
};

} // namespace mlir::amp

#endif // AMP_LIB_TRANSFORMS_SCALINGPASS_H
