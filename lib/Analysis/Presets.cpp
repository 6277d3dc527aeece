//===- Presets.cpp - The built-in precision presets -----------------------===//
//
// Builds the presets from their rows in Presets.def, and prints the tables
// of docs/Presets.md from them.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/Policy.h"
#include "amp/Interfaces/UpstreamPrecisionModels.h"
#include "llvm/ADT/StringExtras.h"
#include <array>
#include <vector>

using namespace mlir;
using namespace mlir::amp;

namespace {

enum PresetIndex : unsigned {
#define AMP_PRESET(Id, Name, UnknownOps, Description) Id##Index,
#include "Presets.def"
  NumPresets
};

/// The masks of the Presets column of Presets.def.
enum PresetMask : unsigned {
#define AMP_PRESET(Id, Name, UnknownOps, Description) Id = 1u << Id##Index,
#include "Presets.def"
};

#define AMP_REASON(Name, Text) constexpr llvm::StringLiteral Name = Text;
#include "Presets.def"

struct PresetRow {
  unsigned presets;
  PresetEntry entry;
};

struct UnmappedRow {
  unsigned presets;
  UnmappedEntry entry;
};

struct DefaultsRow {
  unsigned presets;
  OpCategory category;
};

struct PresetHeader {
  llvm::StringLiteral name;
  std::optional<UnknownOpMode> unknownOps;
  llvm::StringLiteral description;
};

constexpr PresetHeader kHeaders[] = {
#define AMP_PRESET(Id, Name, UnknownOps, Description)                          \
  {Name, UnknownOps, Description},
#include "Presets.def"
};

constexpr DefaultsRow kDefaults[] = {
#define AMP_DEFAULTS(Presets, Category) {Presets, OpCategory::Category},
#include "Presets.def"
};

constexpr PresetRow kRows[] = {
#define AMP_OVERRIDE(Presets, Op, Category, Source)                            \
  {Presets, {Op, OpCategory::Category, Source}},
#define AMP_UNLISTED(Presets, Op, Source) {Presets, {Op, std::nullopt, Source}},
#include "Presets.def"
};

constexpr UnmappedRow kUnmapped[] = {
#define AMP_UNMAPPED(Presets, Category, Source, Reason)                        \
  {Presets, {Source, OpCategory::Category, Reason}},
#include "Presets.def"
};

/// The rows of `rows` that belong to the preset `index`, in file order.
template <typename RowT>
auto rowsOf(llvm::ArrayRef<RowT> rows, unsigned index) {
  std::vector<decltype(RowT::entry)> entries;
  for (const RowT &row : rows)
    if (row.presets & (1u << index))
      entries.push_back(row.entry);
  return entries;
}

} // namespace

llvm::ArrayRef<PresetInfo> amp::getPresets() {
  struct Storage {
    std::array<std::vector<PresetEntry>, NumPresets> entries;
    std::array<std::vector<UnmappedEntry>, NumPresets> unmapped;
    std::vector<PresetInfo> presets;
  };
  static const Storage storage = [] {
    Storage storage;
    for (unsigned index = 0; index < NumPresets; ++index) {
      storage.entries[index] = rowsOf<PresetRow>(kRows, index);
      storage.unmapped[index] = rowsOf<UnmappedRow>(kUnmapped, index);
      unsigned defaultCategories = 0;
      for (const DefaultsRow &row : kDefaults)
        if (row.presets & (1u << index))
          defaultCategories |= getCategoryBit(row.category);
      const PresetHeader &header = kHeaders[index];
      storage.presets.push_back(
          {header.name, header.description, storage.entries[index],
           storage.unmapped[index], header.unknownOps, defaultCategories});
    }
    return storage;
  }();
  return storage.presets;
}

//===----------------------------------------------------------------------===//
// Documentation
//===----------------------------------------------------------------------===//

/// Table cells cannot hold a raw `|`.
static std::string cell(llvm::StringRef text) {
  std::string escaped;
  for (char c : text) {
    if (c == '|')
      escaped += '\\';
    escaped += c;
  }
  return escaped;
}

void amp::printPresetTableMarkdown(llvm::raw_ostream &os) {
  os << "| preset | takes the defaults that are | an op in no list gets |\n"
     << "|---|---|---|\n";
  for (const PresetInfo &preset : getPresets()) {
    os << "| " << preset.name << " | ";
    llvm::ListSeparator separator(", ");
    for (uint32_t value = 0; value <= getMaxEnumValForOpCategory(); ++value)
      if (preset.takesDefault(static_cast<OpCategory>(value)))
        os << separator << stringifyOpCategory(static_cast<OpCategory>(value));
    os << " | "
       << stringifyUnknownOpMode(
              preset.unknownOps.value_or(UnknownOpMode::Deny))
       << " |\n";
  }
  os << "\nThe defaults of upstream ops by name (linalg's structured ops "
        "have theirs by structure: contractions and convolutions, pooling "
        "included, are allow, other ops take their body's category):\n\n"
     << "| MLIR op | default | why |\n|---|---|---|\n";
  for (const UpstreamPrecisionDefault &entry : getUpstreamPrecisionDefaults())
    os << "| `" << entry.opName << "` | " << stringifyOpCategory(entry.category)
       << " | " << cell(entry.reason) << " |\n";
  os << "\n| preset | MLIR op | category | source list entry |\n"
     << "|---|---|---|---|\n";
  for (const PresetInfo &preset : getPresets())
    for (const PresetEntry &entry : preset.entries)
      os << "| " << preset.name << " | `" << entry.opName << "` | "
         << (entry.category ? stringifyOpCategory(*entry.category)
                            : "in no list")
         << " | " << cell(entry.source) << " |\n";
  os << "\nList entries with no MLIR counterpart:\n\n"
     << "| preset | source list entry | category | why it is not mapped |\n"
     << "|---|---|---|---|\n";
  for (const PresetInfo &preset : getPresets())
    for (const UnmappedEntry &entry : preset.unmapped)
      os << "| " << preset.name << " | " << cell(entry.source) << " | "
         << stringifyOpCategory(entry.category) << " | " << cell(entry.reason)
         << " |\n";
}
