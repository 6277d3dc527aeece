//===- Policy.h - Allow/deny/infer/clear op lists ---------------*- C++ -*-===//
//
// A precision policy: which ops always run in low precision (allow), which
// always run in f32 (deny), which follow their inputs (infer) and which only
// move data (clear). Presets mirror the lists of PyTorch autocast, TF
// grappler and MindSpore; JSON files extend a preset. The data lives in
// Presets.cpp, apart from the painting algorithm that reads it.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_ANALYSIS_POLICY_H
#define AMP_ANALYSIS_POLICY_H

#include "amp/Dialect/Amp/IR/AmpAttributes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <optional>
#include <string>

// OpCategory (allow, deny, infer, clear) and UnknownOpMode (deny, infer,
// allow, error), with their symbolize and stringify functions.
#include "amp/Interfaces/PrecisionEnums.h.inc"
#include "amp/Analysis/PolicyEnums.h.inc"

namespace mlir::amp {

/// One op of a preset: its MLIR name, its category, and the entry of the
/// source list it mirrors (e.g. "torch.matmul (autocast fp16 list)").
struct PresetEntry {
  llvm::StringRef opName;
  OpCategory category;
  llvm::StringRef source;
};

/// An entry of a source list that has no MLIR counterpart, documented rather
/// than mapped onto an invented op.
struct UnmappedEntry {
  llvm::StringRef source;
  OpCategory category;
  llvm::StringRef reason;
};

struct PresetInfo {
  llvm::StringRef name;
  llvm::StringRef description;
  llvm::ArrayRef<PresetEntry> entries;
  llvm::ArrayRef<UnmappedEntry> unmapped;
  /// What an op in no list gets under this preset, unless a policy file or
  /// the `unknown-ops` option says otherwise; unset: deny.
  std::optional<UnknownOpMode> unknownOps = std::nullopt;
};

/// All presets, the default (`torch`) first.
llvm::ArrayRef<PresetInfo> getPresets();
const PresetInfo *lookupPreset(llvm::StringRef name);

/// The preset tables of docs/Presets.md (mapped ops, then unmapped list
/// entries), generated from the data so that the docs cannot drift.
void printPresetTableMarkdown(llvm::raw_ostream &os);

class Policy {
public:
  /// Where an op's category came from, for explanations.
  struct Rule {
    OpCategory category;
    /// "preset torch: torch.matmul (autocast fp16 list)" or
    /// "policy.json: add.deny".
    std::string origin;
  };

  /// A preset by name, or a JSON policy file by path. Errors name the file,
  /// the JSON path of the bad value, its line and column, and what is wrong.
  static llvm::Expected<Policy> load(llvm::StringRef presetOrPath);
  static Policy fromPreset(const PresetInfo &preset);
  /// Parses a policy file's text; `fileName` is used in errors.
  static llvm::Expected<Policy> parse(llvm::StringRef text,
                                      llvm::StringRef fileName);

  /// The rule of an op name such as "linalg.matmul", if it is in a list.
  const Rule *lookup(llvm::StringRef opName) const;
  void set(llvm::StringRef opName, OpCategory category, std::string origin);
  void remove(llvm::StringRef opName) { rules.erase(opName); }

  void setName(std::string newName) { name = std::move(newName); }
  void setDtype(Precision newDtype) { dtype = newDtype; }
  void setUnknownOpMode(UnknownOpMode mode) { unknownOps = mode; }

  llvm::StringRef getName() const { return name; }
  /// The policy file's own `dtype`, if it sets one.
  std::optional<Precision> getDtype() const { return dtype; }
  /// The policy file's or its preset's mode for ops in no list, if either
  /// sets one.
  std::optional<UnknownOpMode> getUnknownOpMode() const { return unknownOps; }
  const llvm::StringMap<Rule> &getRules() const { return rules; }

private:
  std::string name;
  std::optional<Precision> dtype;
  std::optional<UnknownOpMode> unknownOps;
  llvm::StringMap<Rule> rules;
};

} // namespace mlir::amp

#endif // AMP_ANALYSIS_POLICY_H
