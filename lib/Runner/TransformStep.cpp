//===- TransformStep.cpp - The AMP pipeline as a library call -------------===//

#include "amp/Runner/TransformStep.h"
#include "amp/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::amp;

static std::string printLocation(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto fileLoc = dyn_cast<FileLineColLoc>(loc))
    os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
       << fileLoc.getColumn();
  else
    loc.print(os);
  return text;
}

/// Runs the pipeline with `explain` on and the report written to a
/// temporary file when the user gave no path, and reads both back.
static LogicalResult runCollecting(ModuleOp module,
                                   const AmpPipelineOptions &userOptions,
                                   PipelineOutputs &outputs) {
  MLIRContext *context = module.getContext();
  AmpPipelineOptions options;
  options.copyOptionValuesFrom(userOptions);
  options.explain = true;
  llvm::SmallString<128> temporary;
  if (options.report.empty()) {
    int fd;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("amp-report", "json", fd,
                                               temporary))
      return module.emitError("cannot create a temporary report file: ")
             << ec.message();
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
    options.report = std::string(temporary);
  }
  llvm::scope_exit removeTemporary([&] {
    if (!temporary.empty())
      llvm::sys::fs::remove(temporary);
  });
  // The explanation of an op names it; remarks carry only a location.
  llvm::DenseMap<Location, std::string> opNames;
  module.walk([&](Operation *op) {
    auto [it, inserted] =
        opNames.try_emplace(op->getLoc(), op->getName().getStringRef().str());
    if (!inserted)
      it->second.clear();
  });
  // Only explicitly requested explanations reach the user's handlers.
  bool forward = userOptions.explain;
  LogicalResult result = success();
  {
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diagnostic) {
      if (diagnostic.getSeverity() != DiagnosticSeverity::Remark)
        return failure();
      outputs.explanations.push_back({opNames.lookup(diagnostic.getLocation()),
                                      printLocation(diagnostic.getLocation()),
                                      diagnostic.str()});
      return forward ? failure() : success();
    });
    PassManager pm(context, module->getName().getStringRef());
    buildAmpPipeline(pm, options);
    result = pm.run(module);
  }
  if (failed(result))
    return failure();
  // amp-insert-casts does not run at level=O0: no report then.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> report =
      llvm::MemoryBuffer::getFile(options.report.getValue());
  if (report && (*report)->getBufferSize() > 0)
    outputs.report = (*report)->getBuffer().str();
  return success();
}

LogicalResult amp::transformStep(ModuleOp module,
                                 const AmpPipelineOptions *options,
                                 PipelineOutputs *outputs) {
  if (options && outputs)
    return runCollecting(module, *options, *outputs);
  PassManager pm(module.getContext(), module->getName().getStringRef());
  if (options)
    buildAmpPipeline(pm, *options);
  else
    pm.addPass(createAmpStripMarkers());
  return pm.run(module);
}

DiagnosticCollector::DiagnosticCollector(MLIRContext *context)
    : handler(context, [this](Diagnostic &diagnostic) {
        if (diagnostic.getSeverity() != DiagnosticSeverity::Error &&
            diagnostic.getSeverity() != DiagnosticSeverity::Warning)
          return failure();
        llvm::raw_string_ostream os(text);
        auto print = [&](Diagnostic &d, StringRef kind) {
          os << printLocation(d.getLocation()) << ": " << kind << ": " << d
             << "\n";
        };
        print(diagnostic, diagnostic.getSeverity() == DiagnosticSeverity::Error
                              ? "error"
                              : "warning");
        for (Diagnostic &note : diagnostic.getNotes())
          print(note, "note");
        return success();
      }) {}

std::string DiagnosticCollector::take() {
  std::string taken = std::move(text);
  text.clear();
  return taken;
}
