//===- Policy.h - Allow/deny/infer/clear op lists ---------------*- C++ -*-===//
//
// A precision policy: the categories it gives op names (allow: always low,
// deny: always f32, infer: follows its inputs, clear: only moves data),
// overriding the defaults ops give themselves through PrecisionOpInterface,
// and which of those defaults it takes at all. Presets mirror the lists of
// PyTorch autocast, TF grappler and MindSpore; JSON files extend a preset.
// The data lives in Presets.def, apart from the painting algorithm that
// reads it.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_ANALYSIS_POLICY_H
#define AMP_ANALYSIS_POLICY_H

#include "amp/Dialect/Amp/IR/AmpAttributes.h"
#include "amp/Interfaces/PrecisionOpInterface.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include <optional>
#include <string>

// UnknownOpMode (deny, infer, allow, error) with symbolizeUnknownOpMode and
// stringifyUnknownOpMode.
#include "amp/Analysis/PolicyEnums.h.inc"

namespace mlir::amp {

/// The bit of `category` in a mask of categories.
constexpr unsigned getCategoryBit(OpCategory category) {
  return 1u << static_cast<unsigned>(category);
}

/// One op of a preset: its MLIR name, its category, and the entry of the
/// source list it mirrors (e.g. "exp (autocast fp32 list)").
struct PresetEntry {
  llvm::StringRef opName;
  /// None: the op is in no list of the preset, whatever its default.
  std::optional<OpCategory> category;
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
  /// The ops whose category differs from their default.
  llvm::ArrayRef<PresetEntry> entries;
  llvm::ArrayRef<UnmappedEntry> unmapped;
  /// What an op in no list gets under this preset, unless a policy file or
  /// the `unknown-ops` option says otherwise; unset: deny.
  std::optional<UnknownOpMode> unknownOps;
  /// The categories whose defaults ops keep under this preset, a mask of
  /// getCategoryBit; an op whose default is of another category is in no
  /// list.
  unsigned defaultCategories;

  bool takesDefault(OpCategory category) const {
    return defaultCategories & getCategoryBit(category);
  }
};

/// All presets, the default (`torch`) first.
llvm::ArrayRef<PresetInfo> getPresets();
const PresetInfo *lookupPreset(llvm::StringRef name);

/// The tables of docs/Presets.md (what each preset takes, the upstream ops'
/// defaults, each preset's entries, then unmapped list entries), generated
/// from the data so that the docs cannot drift.
void printPresetTableMarkdown(llvm::raw_ostream &os);

class Policy {
public:
  /// An op name's entry, and where it came from, for explanations.
  struct Rule {
    /// None: the op is in no list, whatever its default.
    std::optional<OpCategory> category;
    /// "preset torch: exp (autocast fp32 list)" or "policy.json:3:
    /// add.deny".
    std::string origin;
  };

  /// A preset by name, or a JSON policy file by path. Errors name the file,
  /// the JSON path of the bad value, its line and column, and what is wrong.
  static llvm::Expected<Policy> load(llvm::StringRef presetOrPath);
  static Policy fromPreset(const PresetInfo &preset);
  /// Parses a policy file's text; `fileName` is used in errors.
  static llvm::Expected<Policy> parse(llvm::StringRef text,
                                      llvm::StringRef fileName);

  /// The rule of an op name such as "math.exp", if the policy has one; it
  /// wins over the op's default.
  const Rule *lookup(llvm::StringRef opName) const;
  void set(llvm::StringRef opName, std::optional<OpCategory> category,
           std::string origin);
  /// Whether an op whose default is `category` keeps it.
  bool takesDefault(OpCategory category) const {
    return defaultCategories & getCategoryBit(category);
  }
  /// The category of the op named `opName` as far as its name tells: its
  /// rule, else the default of the upstream op of that name
  /// (lookupUpstreamPrecisionDefault) if the policy takes it. Other ops'
  /// defaults depend on more than a name (linalg's structured ops) or are
  /// known only to their dialect.
  std::optional<OpCategory> getCategoryByName(llvm::StringRef opName) const;

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
  unsigned defaultCategories = 0;
  llvm::StringMap<Rule> rules;
};

} // namespace mlir::amp

#endif // AMP_ANALYSIS_POLICY_H
