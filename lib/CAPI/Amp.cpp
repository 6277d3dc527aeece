//===- Amp.cpp - C API of the AMP compiler --------------------------------===//

#include "amp-c/Amp.h"
#include "amp/Analysis/Policy.h"
#include "amp/InitAllAmp.h"
#include "amp/Pipelines/TransformStep.h"
#include "amp/Support/Diagnostics.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Pass.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"

using namespace mlir;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Amp, amp, amp::AmpDialect)

void mlirAmpRegisterAllDialects(MlirDialectRegistry registry) {
  DialectRegistry &unwrapped = *unwrap(registry);
  registerAllDialects(unwrapped);
  registerAllExtensions(unwrapped);
  amp::registerAllAmpDialects(unwrapped);
}

void mlirAmpRegisterPasses(void) {
  static bool registered = [] {
    registerAllPasses();
    amp::registerAllAmpPasses();
    amp::registerAllAmpPipelines();
    return true;
  }();
  (void)registered;
}

static MlirLogicalResult fail(MlirStringCallback onError, void *userData,
                              llvm::StringRef message) {
  if (onError)
    onError(wrap(message), userData);
  return mlirLogicalResultFailure();
}

/// Parses and verifies `options` with the one AmpPipelineOptions parser.
static std::unique_ptr<amp::AmpPipelineOptions>
parseOptions(MlirStringRef options, MlirStringCallback onError,
             void *userData) {
  llvm::Expected<std::unique_ptr<amp::AmpPipelineOptions>> parsed =
      amp::parseAmpPipelineOptions(unwrap(options));
  if (!parsed) {
    fail(onError, userData, llvm::toString(parsed.takeError()));
    return nullptr;
  }
  return std::move(*parsed);
}

MlirLogicalResult mlirAmpValidateOptions(MlirStringRef options,
                                         MlirStringCallback onError,
                                         void *userData) {
  return parseOptions(options, onError, userData)
             ? mlirLogicalResultSuccess()
             : mlirLogicalResultFailure();
}

MlirLogicalResult mlirAmpPassManagerAddPipeline(MlirOpPassManager passManager,
                                                MlirStringRef options,
                                                MlirStringCallback onError,
                                                void *userData) {
  OpPassManager &pm = *unwrap(passManager);
  // Module passes on another anchor would abort when added.
  llvm::StringRef anchor = pm.getOpAnchorName();
  if (anchor != ModuleOp::getOperationName() &&
      anchor != OpPassManager::getAnyOpAnchorName())
    return fail(onError, userData,
                "the AMP pipeline runs on 'builtin.module', not on '" +
                    anchor.str() + "'");
  std::unique_ptr<amp::AmpPipelineOptions> parsed =
      parseOptions(options, onError, userData);
  if (!parsed)
    return mlirLogicalResultFailure();
  amp::buildAmpPipeline(pm, *parsed);
  return mlirLogicalResultSuccess();
}

MlirLogicalResult mlirAmpValidatePolicy(MlirStringRef presetOrPath,
                                        MlirStringCallback onError,
                                        void *userData) {
  llvm::Expected<amp::Policy> policy = amp::Policy::load(unwrap(presetOrPath));
  if (!policy)
    return fail(onError, userData, llvm::toString(policy.takeError()));
  return mlirLogicalResultSuccess();
}

MlirLogicalResult mlirAmpTransformModule(
    MlirModule module, MlirStringRef options, MlirStringCallback onReport,
    MlirAmpExplanationCallback onExplanation, MlirStringCallback onError,
    void *userData) {
  std::unique_ptr<amp::AmpPipelineOptions> parsed =
      parseOptions(options, onError, userData);
  if (!parsed)
    return mlirLogicalResultFailure();
  ModuleOp op = unwrap(module);
  amp::DiagnosticCollector errors(op.getContext());
  amp::PipelineOutputs outputs;
  if (failed(amp::transformStep(op, parsed.get(), &outputs)))
    return fail(onError, userData, errors.take());
  if (onReport && !outputs.report.empty())
    onReport(wrap(llvm::StringRef(outputs.report)), userData);
  if (onExplanation)
    for (const amp::Explanation &explanation : outputs.explanations) {
      std::string location = amp::printLocation(explanation.location);
      onExplanation(wrap(llvm::StringRef(explanation.opName)),
                    wrap(llvm::StringRef(location)),
                    wrap(llvm::StringRef(explanation.message)), userData);
    }
  return mlirLogicalResultSuccess();
}
