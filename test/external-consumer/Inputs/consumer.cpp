// Runs the AMP pipeline through the C++ API of the installed package, then
// trains the step a few steps with the CPU runner.
#include "amp/Analysis/Policy.h"
#include "amp/InitAllAmp.h"
#include "amp/Pipelines/AmpPipeline.h"
#include "amp/Runner/CompiledStep.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  amp::registerAllAmpDialects(registry);
  MLIRContext context(registry);

  llvm::Expected<amp::Policy> policy = amp::Policy::load("torch");
  if (!policy)
    return 1;
  llvm::outs() << "policy " << policy->getName() << " has "
               << (policy->getRules().empty() ? "no rules" : "rules") << "\n";
  llvm::Expected<std::unique_ptr<amp::AmpPipelineOptions>> bad =
      amp::parseAmpPipelineOptions("dtype=f8");
  if (!bad)
    llvm::outs() << "rejected: " << llvm::toString(bad.takeError()) << "\n";

  llvm::Expected<std::unique_ptr<amp::AmpPipelineOptions>> options =
      amp::parseAmpPipelineOptions("dtype=f16 scaling=dynamic init-scale=1024");
  if (!options)
    return 1;
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(argv[1], &context);
  if (!module)
    return 1;
  PassManager pm(&context);
  amp::buildAmpPipeline(pm, **options);
  if (failed(pm.run(*module)))
    return 1;
  auto step = module->lookupSymbol<func::FuncOp>("step");
  llvm::outs() << "pipeline: " << step.getFunctionType() << "\n";

  OwningOpRef<ModuleOp> fresh = parseSourceFile<ModuleOp>(argv[1], &context);
  amp::StepCompileOptions compileOptions;
  compileOptions.amp = options->get();
  llvm::Expected<std::unique_ptr<amp::CompiledStep>> compiled =
      amp::CompiledStep::compile(*fresh, compileOptions);
  if (!compiled) {
    llvm::errs() << llvm::toString(compiled.takeError()) << "\n";
    return 1;
  }
  amp::CompiledStep &runner = **compiled;
  for (unsigned index : runner.getSignature().getArguments(
           amp::ArgumentRole::Data)) {
    amp::HostArray &data = runner.getArguments()[index];
    for (int64_t i = 0; i < data.getNumElements(); ++i)
      data.setFromDouble(i, 0.25 * (i % 4));
  }
  for (int s = 1; s <= 3; ++s) {
    llvm::Expected<amp::StepOutcome> outcome = runner.run();
    if (!outcome) {
      llvm::errs() << llvm::toString(outcome.takeError()) << "\n";
      return 1;
    }
    llvm::outs() << "step " << s << " scale " << static_cast<int64_t>(*outcome->scale)
                 << (outcome->foundInf ? " skipped" : " applied") << " loss "
                 << (outcome->loss >= 0 ? "finite" : "negative") << "\n";
  }
  return 0;
}
