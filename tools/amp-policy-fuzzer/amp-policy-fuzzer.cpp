//===- amp-policy-fuzzer.cpp - libFuzzer target of policy files ----------===//
//
// Policy::parse on arbitrary text, as `policy=<file>` reads it. Besides
// crashes it stops on an error that does not read
// `file:line:column: error: ...` with the line inside the file
// (docs/Policies.md, docs/Hardening.md).
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/Policy.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // NUL-terminated, as a file's buffer is.
  std::string text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<amp::Policy> policy = amp::Policy::parse(text, "fuzz.json");
  if (policy)
    return 0;
  std::string message = llvm::toString(policy.takeError());
  StringRef rest = message;
  unsigned line = 0, column = 0;
  bool located = rest.consume_front("fuzz.json:") &&
                 !rest.consumeInteger(10, line) && rest.consume_front(":") &&
                 !rest.consumeInteger(10, column) &&
                 rest.consume_front(": error: ") && !rest.empty();
  unsigned lines = 1 + StringRef(text).count('\n');
  if (!located || line < 1 || line > lines || column < 1) {
    llvm::errs() << "amp-policy-fuzzer: an error without a valid location: "
                 << message << "\n";
    std::abort();
  }
  return 0;
}
