//===- Diagnostics.cpp - Diagnostics as text for APIs ---------------------===//

#include "amp/Support/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::amp;

std::string amp::printLocation(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto fileLoc = dyn_cast<FileLineColLoc>(loc))
    os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
       << fileLoc.getColumn();
  else
    loc.print(os);
  return text;
}

LogicalResult amp::writeOptionFile(Operation *anchor, StringRef option,
                                   StringRef path, StringRef text) {
  std::error_code error;
  llvm::ToolOutputFile file(path, error, llvm::sys::fs::OF_Text);
  if (error)
    return anchor->emitError("option '")
           << option << "': cannot write '" << path << "': " << error.message();
  file.os() << text;
  file.keep();
  return success();
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
