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

namespace {
/// MindSpore's `amp_level`. O1, O2 and O3 need MindSpore's O1 white list and
/// O2 black list as presets, which do not exist yet.
enum class AmpLevel { Unset, O0, Auto };
} // namespace

static llvm::Expected<AmpLevel> getLevel(const AmpPipelineOptions &options) {
  if (!options.level.hasValue())
    return AmpLevel::Unset;
  StringRef level = options.level;
  if (level == "O1" || level == "O2" || level == "O3")
    return llvm::createStringError(
        "option 'level=" + level +
        "' is not implemented yet (MindSpore's O1 and O2 op lists are not "
        "presets yet); use O0, auto, or 'policy' and 'scaling'");
  if (level != "O0" && level != "auto")
    return llvm::createStringError(
        "option 'level' must be O0, O1, O2, O3 or auto, got '" + level + "'");
  if (options.policy.hasValue())
    return llvm::createStringError(
        "options 'level' and 'policy' both choose the policy; give one");
  if (level == "auto")
    return AmpLevel::Auto;
  if (options.dtype.hasValue() || options.scaling.hasValue() ||
      options.unknownOps.hasValue())
    return llvm::createStringError(
        "option 'level=O0' keeps the step in f32 and unscaled; it takes no "
        "'dtype', 'scaling' or 'unknown-ops'");
  return AmpLevel::O0;
}

/// The policy the casts follow: `level=auto` is MindSpore's auto lists.
static std::string getEffectivePolicy(const AmpPipelineOptions &options,
                                      AmpLevel level) {
  return level == AmpLevel::Auto ? "mindspore" : options.policy.getValue();
}

/// The low type the step is converted to: an explicit `dtype` wins over the
/// policy file's own, as amp-insert-casts decides.
static std::string getEffectiveDtype(const AmpPipelineOptions &options,
                                     AmpLevel level) {
  if (options.dtype.hasValue())
    return options.dtype;
  llvm::Expected<Policy> policy =
      Policy::load(getEffectivePolicy(options, level));
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
static ScalingOptionsT getScalingOptions(const AmpPipelineOptions &options,
                                         AmpLevel level) {
  ScalingOptionsT scaling;
  scaling.dtype = getEffectiveDtype(options, level);
  scaling.scaling = level == AmpLevel::O0 ? "none" : options.scaling.getValue();
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
  llvm::Expected<AmpLevel> level = getLevel(options);
  if (!level)
    return level.takeError();
  llvm::Expected<Policy> policy =
      Policy::load(getEffectivePolicy(options, *level));
  if (!policy)
    return llvm::createStringError("option 'policy': " +
                                   llvm::toString(policy.takeError()));
  if (!options.unknownOps.empty() && !parseUnknownOpMode(options.unknownOps))
    return llvm::createStringError(
        "option 'unknown-ops' must be 'deny', 'infer' or 'error', got '" +
        options.unknownOps + "'");
  return ScalingConfig::get(
             getScalingOptions<AmpGuardUpdateOptions>(options, *level))
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

static void addInsertCasts(OpPassManager &pm,
                           const AmpPipelineOptions &options,
                           StringRef policy) {
  AmpInsertCastsOptions casts;
  casts.dtype = options.dtype;
  casts.policy = policy.str();
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
}

void amp::buildAmpPipeline(OpPassManager &pm,
                           const AmpPipelineOptions &options) {
  // The options were verified (see the header): the level is valid.
  llvm::Expected<AmpLevel> expectedLevel = getLevel(options);
  AmpLevel level = AmpLevel::Unset;
  if (expectedLevel)
    level = *expectedLevel;
  else
    llvm::consumeError(expectedLevel.takeError());
  if (level != AmpLevel::O0)
    addInsertCasts(pm, options, getEffectivePolicy(options, level));
  pm.addPass(createAmpLossScaling(
      getScalingOptions<AmpLossScalingOptions>(options, level)));
  pm.addPass(createAmpGuardUpdate(
      getScalingOptions<AmpGuardUpdateOptions>(options, level)));
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
