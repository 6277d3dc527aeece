//===- amp-pipeline-fuzzer.cpp - libFuzzer target of amp-pipeline --------===//
//
// What `amp-opt --amp-pipeline=...` does with a file, under libFuzzer: parse
// and verify the module, run the pipeline with the options the input gives,
// verify after every pass. An input is an MLIR file whose first line may be
// `// <options>` (e.g. `// dtype=bf16 level=O2`), so a crash reproduces with
// amp-opt as it stands (docs/Hardening.md). Besides crashes it stops on
// what the contract forbids without crashing: a pass that leaves invalid IR,
// a pass that fails without an error, an error without a location.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/Policy.h"
#include "amp/InitAllAmp.h"
#include "amp/Pipelines/AmpPipeline.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>

using namespace mlir;

namespace mlir::amp::test {
void registerAmpTestDialect(DialectRegistry &registry);
} // namespace mlir::amp::test

namespace {
[[noreturn]] void fail(const llvm::Twine &message) {
  llvm::errs() << "amp-pipeline-fuzzer: " << message << "\n";
  std::abort();
}

/// The dialects of amp-opt.
const DialectRegistry &getRegistry() {
  static const DialectRegistry *registry = [] {
    auto *result = new DialectRegistry();
    registerAllDialects(*result);
    registerAllExtensions(*result);
    amp::registerAllAmpDialects(*result);
    amp::test::registerAmpTestDialect(*result);
    return result;
  }();
  return *registry;
}

/// Options from the first line, or none if the input names files: a policy
/// file would read any path, report= and dot= would write one.
std::unique_ptr<amp::AmpPipelineOptions> parseOptions(StringRef text) {
  StringRef line = text.split('\n').first;
  auto options = std::make_unique<amp::AmpPipelineOptions>();
  if (!line.consume_front("//"))
    return options;
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (failed(options->parseFromString(line.trim(), errorStream)))
    return nullptr;
  if (!options->report.empty() || !options->dot.empty() ||
      (!options->policy.empty() && !amp::lookupPreset(options->policy)))
    return nullptr;
  if (llvm::Error error = amp::verifyAmpPipelineOptions(*options)) {
    llvm::consumeError(std::move(error));
    return nullptr;
  }
  return options;
}

/// Verifies after every pass itself, so that invalid IR is told apart from a
/// pass's own error, and checks that a failing pass said why.
class ContractChecks : public PassInstrumentation {
public:
  explicit ContractChecks(const bool &errorEmitted)
      : errorEmitted(errorEmitted) {}

  void runAfterPass(Pass *pass, Operation *op) override {
    if (failed(verify(op)))
      fail("pass '" + pass->getArgument() + "' left invalid IR");
  }
  void runAfterPassFailed(Pass *pass, Operation *) override {
    if (!errorEmitted)
      fail("pass '" + pass->getArgument() + "' failed without an error");
  }

private:
  const bool &errorEmitted;
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // The parser reads a NUL-terminated buffer, as amp-opt's file is.
  std::string text(reinterpret_cast<const char *>(data), size);
  std::unique_ptr<amp::AmpPipelineOptions> options = parseOptions(text);
  if (!options)
    return 0;

  // A fresh context per input: a finding reproduces from its input alone.
  MLIRContext context(getRegistry(), MLIRContext::Threading::DISABLED);
  bool errorEmitted = false;
  bool inputHasUnknownLocs = StringRef(text).contains("unknown");
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    if (diagnostic.getSeverity() != DiagnosticSeverity::Error)
      return success();
    errorEmitted = true;
    // Ops written with loc(unknown) have none to give.
    if (isa<UnknownLoc>(diagnostic.getLocation()) && !inputHasUnknownLocs)
      fail("an error without a location: " + diagnostic.str());
    return success();
  });

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(text, "fuzz.mlir"), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 0;
  // Only the pipeline's own errors from here on are checked.
  errorEmitted = false;

  PassManager pm(&context);
  pm.enableVerifier(false);
  pm.addInstrumentation(std::make_unique<ContractChecks>(errorEmitted));
  amp::buildAmpPipeline(pm, *options);
  (void)pm.run(*module);
  return 0;
}
