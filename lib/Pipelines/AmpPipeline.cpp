//===- AmpPipeline.cpp - The AMP pipeline and its options -----------------===//

#include "amp/Pipelines/AmpPipeline.h"
#include "amp/Analysis/Policy.h"
#include "amp/Transforms/Passes.h"
#include "amp/Transforms/Scaling.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::amp;

/// The low type the step is converted to: an explicit `dtype` wins over the
/// policy file's own, as amp-insert-casts decides.
static std::string getEffectiveDtype(const AmpPipelineOptions &options) {
  if (options.dtype.hasValue())
    return options.dtype;
  llvm::Expected<Policy> policy = Policy::load(options.policy);
  if (!policy) {
    // amp-insert-casts reports it.
    llvm::consumeError(policy.takeError());
    return options.dtype;
  }
  std::optional<Precision> fileDtype = policy->getDtype();
  return fileDtype ? stringifyPrecision(*fileDtype).str()
                   : options.dtype.getValue();
}

/// The options of amp-loss-scaling or amp-guard-update (the same list).
template <typename ScalingOptionsT>
static ScalingOptionsT getScalingOptions(const AmpPipelineOptions &options) {
  ScalingOptionsT scaling;
  scaling.dtype = getEffectiveDtype(options);
  scaling.scaling = options.scaling;
  scaling.initScale = options.initScale;
  scaling.growthFactor = options.growthFactor;
  scaling.backoffFactor = options.backoffFactor;
  scaling.growthInterval = options.growthInterval;
  scaling.minScale = options.minScale;
  scaling.maxScale = options.maxScale;
  scaling.hysteresis = options.hysteresis;
  return scaling;
}

llvm::Error amp::verifyAmpPipelineOptions(const AmpPipelineOptions &options) {
  if (options.level.hasValue())
    return llvm::createStringError(
        "option 'level' (O0, O1, O2, O3, auto) is not implemented yet; leave "
        "it unset and choose 'policy' and 'scaling' instead");
  llvm::Expected<Policy> policy = Policy::load(options.policy);
  if (!policy)
    return llvm::createStringError("option 'policy': " +
                                   llvm::toString(policy.takeError()));
  if (!options.unknownOps.empty() && !parseUnknownOpMode(options.unknownOps))
    return llvm::createStringError(
        "option 'unknown-ops' must be 'deny', 'infer' or 'error', got '" +
        options.unknownOps + "'");
  return ScalingConfig::get(getScalingOptions<AmpGuardUpdateOptions>(options))
      .takeError();
}

llvm::Expected<std::unique_ptr<AmpPipelineOptions>>
amp::parseAmpPipelineOptions(StringRef text) {
  auto options = std::make_unique<AmpPipelineOptions>();
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (failed(options->parseFromString(text, errorStream)))
    return llvm::createStringError("invalid amp-pipeline options '" + text +
                                   "': " + StringRef(errors).trim());
  if (llvm::Error error = verifyAmpPipelineOptions(*options))
    return std::move(error);
  return std::move(options);
}

void amp::buildAmpPipeline(OpPassManager &pm,
                           const AmpPipelineOptions &options) {
  AmpInsertCastsOptions casts;
  casts.dtype = options.dtype;
  casts.policy = options.policy;
  casts.unknownOps = options.unknownOps;
  casts.explain = options.explain;
  casts.report = options.report;
  casts.dot = options.dot;
  std::unique_ptr<Pass> insertCasts = createAmpInsertCasts(casts);
  // Only a dtype given as an option overrides the policy file's, so it is
  // passed the way a user passes it.
  if (options.dtype.hasValue())
    (void)insertCasts->initializeOptions(
        "dtype=" + options.dtype.getValue(),
        [](const Twine &) { return failure(); });
  pm.addPass(std::move(insertCasts));

  pm.addPass(createAmpLossScaling(
      getScalingOptions<AmpLossScalingOptions>(options)));
  pm.addPass(
      createAmpGuardUpdate(getScalingOptions<AmpGuardUpdateOptions>(options)));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void amp::registerAmpPipeline() {
  registerPassPipeline(
      "amp-pipeline",
      "Mixed precision for a training step: casts by policy, loss scaling, "
      "the overflow-guarded update with the scaler state, cleanup",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        llvm::Expected<std::unique_ptr<AmpPipelineOptions>> options =
            parseAmpPipelineOptions(text);
        if (!options)
          return errorHandler(llvm::toString(options.takeError()));
        buildAmpPipeline(pm, **options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optionHandler) {
        optionHandler(AmpPipelineOptions());
      });
}
