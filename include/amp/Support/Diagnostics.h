//===- Diagnostics.h - Diagnostics as text for APIs -------------*- C++ -*-===//
//
// APIs that return errors as text (the C API, the Python bindings) collect a
// context's diagnostics in amp-opt's format; locations print the same way in
// every report.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_SUPPORT_DIAGNOSTICS_H
#define AMP_SUPPORT_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include <string>

namespace mlir::amp {

/// "file:line:col" for a file location, MLIR's printed form otherwise.
std::string printLocation(Location loc);

/// Writes `text` to `path` for the option `option` (a report, a picture);
/// on failure emits a located error at `anchor` naming the option and path.
LogicalResult writeOptionFile(Operation *anchor, llvm::StringRef option,
                              llvm::StringRef path, llvm::StringRef text);

/// Collects the error and warning diagnostics of a context while it lives,
/// formatted as amp-opt prints them ("loc: error: message", notes
/// included), for APIs that return errors as text.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *context);
  DiagnosticCollector(const DiagnosticCollector &) = delete;
  DiagnosticCollector &operator=(const DiagnosticCollector &) = delete;
  /// Everything collected, one diagnostic per line; clears it.
  std::string take();

private:
  std::string text;
  ScopedDiagnosticHandler handler;
};

} // namespace mlir::amp

#endif // AMP_SUPPORT_DIAGNOSTICS_H
