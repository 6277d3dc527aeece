//===- AmpPipeline.cpp - The AMP pipeline and its options -----------------===//

#include "amp/Pipelines/AmpPipeline.h"
#include "amp/Analysis/Policy.h"
#include "amp/Transforms/DataParallel.h"
#include "amp/Transforms/Passes.h"
#include "amp/Transforms/Scaling.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::amp;

namespace {
/// A value of the `level` option: MindSpore's `amp_level`, which selects the
/// policy and the default scaling in one word.
struct AmpLevel {
  StringRef name;
  /// The preset the casts follow; empty: no casts.
  StringRef policy;
  /// The scaling mode unless `scaling` is given; empty: by dtype (dynamic
  /// for f16, none for bf16).
  StringRef scaling;
};

/// The one place where a level becomes a policy and a default scaling.
/// MindSpore's O2 also defaults to dynamic scaling (DynamicLossScaleManager);
/// O1 follows Apex's O1 there, as MindSpore's O1 has no scaling.
// clang-format off
constexpr AmpLevel kLevels[] = {
    {"O0",   "",             "none"},
    {"O1",   "mindspore-o1", ""},
    {"O2",   "mindspore-o2", ""},
    {"O3",   "mindspore-o3", "none"},
    {"auto", "mindspore",    ""},
};
// clang-format on
} // namespace

/// The level of `options`, or null when `level` is not given.
static llvm::Expected<const AmpLevel *>
getLevel(const AmpPipelineOptions &options) {
  if (!options.level.hasValue())
    return nullptr;
  StringRef name = options.level;
  const AmpLevel *level = llvm::find_if(
      kLevels, [&](const AmpLevel &known) { return known.name == name; });
  if (level == std::end(kLevels))
    return llvm::createStringError(
        "option 'level' must be O0, O1, O2, O3 or auto, got '" + name + "'");
  if (options.policy.hasValue()) {
    std::string hint;
    if (!level->policy.empty())
      hint =
          (" (to change the lists of level=" + name +
           ", give a policy file with \"extends\": \"" + level->policy + "\")")
              .str();
    return llvm::createStringError(
        "options 'level' and 'policy' both choose the policy; give one" + hint);
  }
  if (level->policy.empty() &&
      (options.dtype.hasValue() || options.scaling.hasValue() ||
       options.unknownOps.hasValue()))
    return llvm::createStringError(
        "option 'level=" + name +
        "' keeps the step in f32 and unscaled; it takes no 'dtype', "
        "'scaling' or 'unknown-ops'");
  return level;
}

/// The policy the casts follow: the level's, else the `policy` option;
/// empty when no casts are inserted.
static std::string getEffectivePolicy(const AmpPipelineOptions &options,
                                      const AmpLevel *level) {
  return level ? level->policy.str() : options.policy.getValue();
}

/// The low type the step is converted to: an explicit `dtype` wins over the
/// policy file's own, as amp-insert-casts decides; without either, the
/// scaling passes' default.
static std::string getEffectiveDtype(const AmpPipelineOptions &options,
                                     const AmpLevel *level) {
  if (!options.dtype.empty())
    return options.dtype;
  std::string policyName = getEffectivePolicy(options, level);
  std::string fallback = AmpGuardUpdateOptions().dtype;
  if (policyName.empty())
    return fallback;
  llvm::Expected<Policy> policy = Policy::load(policyName);
  if (!policy) {
    // amp-insert-casts reports it.
    llvm::consumeError(policy.takeError());
    return fallback;
  }
  std::optional<Precision> fileDtype = policy->getDtype();
  return fileDtype ? stringifyPrecision(*fileDtype).str() : fallback;
}

/// The options of amp-loss-scaling or amp-guard-update (the same list) with
/// the effective dtype and the level's default scaling.
template <typename ScalingOptionsT>
static ScalingOptionsT withEffectiveScaling(ScalingOptionsT scaling,
                                            const AmpPipelineOptions &options,
                                            const AmpLevel *level) {
  scaling.dtype = getEffectiveDtype(options, level);
  if (level && !options.scaling.hasValue())
    scaling.scaling = level->scaling.str();
  return scaling;
}

/// The type gradients are summed in: the option's, else f32 at a level
/// that keeps the step in f32, else the low type.
static std::string getEffectiveCommDtype(const AmpPipelineOptions &options,
                                         const AmpLevel *level) {
  if (options.gradCommDtype.hasValue())
    return options.gradCommDtype;
  if (level && level->policy.empty())
    return "f32";
  return getEffectiveDtype(options, level);
}

/// Checks the data-parallel options, which apply with data-parallel=mpi only.
static llvm::Error verifyDataParallelOptions(const AmpPipelineOptions &options,
                                             const AmpLevel *level) {
  std::optional<DataParallelMode> mode =
      symbolizeDataParallelMode(options.dataParallel);
  if (!mode)
    return llvm::createStringError("option 'data-parallel' must be none or "
                                   "mpi, got '" +
                                   options.dataParallel + "'");
  if (*mode == DataParallelMode::None) {
    StringRef given = options.gradCommDtype.hasValue() ? "grad-comm-dtype"
                      : options.bucketSize.hasValue() ? "bucket-size"
                                                      : "";
    if (given.empty())
      return llvm::Error::success();
    return llvm::createStringError("option '" + given +
                                   "' applies to data-parallel training; "
                                   "give data-parallel=mpi");
  }
  return DataParallelConfig::get(getEffectiveCommDtype(options, level),
                                 options.bucketSize)
      .takeError();
}

bool amp::isDataParallel(const AmpPipelineOptions &options) {
  return symbolizeDataParallelMode(options.dataParallel) ==
         DataParallelMode::Mpi;
}

llvm::Error amp::verifyAmpPipelineOptions(const AmpPipelineOptions &options) {
  llvm::Expected<const AmpLevel *> level = getLevel(options);
  if (!level)
    return level.takeError();
  std::string policyName = getEffectivePolicy(options, *level);
  if (!policyName.empty())
    if (llvm::Expected<Policy> policy = Policy::load(policyName); !policy)
      return llvm::createStringError("option 'policy': " +
                                     llvm::toString(policy.takeError()));
  if (!options.unknownOps.empty() &&
      !symbolizeUnknownOpMode(options.unknownOps))
    return llvm::createStringError("option 'unknown-ops' must be 'deny', "
                                   "'infer', 'allow' or 'error', got '" +
                                   options.unknownOps + "'");
  if (llvm::Error error = verifyDataParallelOptions(options, *level))
    return error;
  return ScalingConfig::get(
             withEffectiveScaling(getAmpGuardUpdateOptions(options), options,
                                  *level))
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

/// The level of verified options.
static const AmpLevel *getVerifiedLevel(const AmpPipelineOptions &options) {
  llvm::Expected<const AmpLevel *> level = getLevel(options);
  if (level)
    return *level;
  llvm::consumeError(level.takeError());
  return nullptr;
}

std::optional<CastInsertionOptions>
amp::getCastInsertionOptions(const AmpPipelineOptions &options) {
  std::string policy = getEffectivePolicy(options, getVerifiedLevel(options));
  if (policy.empty())
    return std::nullopt;
  CastInsertionOptions casts;
  casts.policy = policy;
  // Only a dtype given as an option wins over the policy file's.
  if (!options.dtype.empty())
    casts.dtype = symbolizePrecision(options.dtype);
  if (!options.unknownOps.empty())
    casts.unknownOps = symbolizeUnknownOpMode(options.unknownOps);
  casts.report = !options.report.empty();
  casts.dot = !options.dot.empty();
  return casts;
}

void amp::buildScalingPipeline(OpPassManager &pm,
                               const AmpPipelineOptions &options) {
  const AmpLevel *level = getVerifiedLevel(options);
  pm.addPass(createAmpLossScaling(
      withEffectiveScaling(getAmpLossScalingOptions(options), options, level)));
  if (isDataParallel(options)) {
    AmpDataParallelOptions dataParallel = getAmpDataParallelOptions(options);
    dataParallel.gradCommDtype = getEffectiveCommDtype(options, level);
    pm.addPass(createAmpDataParallel(dataParallel));
  }
  pm.addPass(createAmpGuardUpdate(
      withEffectiveScaling(getAmpGuardUpdateOptions(options), options, level)));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void amp::buildAmpPipeline(OpPassManager &pm,
                           const AmpPipelineOptions &options) {
  if (std::optional<CastInsertionOptions> casts =
          getCastInsertionOptions(options)) {
    AmpInsertCastsOptions passOptions = getAmpInsertCastsOptions(options);
    passOptions.policy = casts->policy;
    pm.addPass(createAmpInsertCasts(passOptions));
  }
  buildScalingPipeline(pm, options);
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
