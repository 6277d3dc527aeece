//===- Policy.cpp - Precision policies: presets and JSON policy files -----===//
//
// A policy file is strict JSON, checked by llvm::json first (it reports the
// line of a syntax error), then walked as an llvm::yaml tree, which keeps the
// position of every value so that each error names its line and column.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/Policy.h"
#include "amp/Interfaces/UpstreamPrecisionModels.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::amp;
using llvm::StringRef;
using llvm::Twine;

#include "amp/Analysis/PolicyEnums.cpp.inc"

const PresetInfo *amp::lookupPreset(StringRef name) {
  for (const PresetInfo &preset : getPresets())
    if (preset.name == name)
      return &preset;
  return nullptr;
}

/// "a, b, c or d", each option between `quote`s.
static std::string listOf(llvm::ArrayRef<StringRef> options,
                          StringRef quote = "") {
  std::string text;
  for (auto [i, option] : llvm::enumerate(options)) {
    if (i)
      text += i + 1 == options.size() ? " or " : ", ";
    text += (quote + option + quote).str();
  }
  return text;
}

/// The names of every value of an ODS enum, in their order.
template <typename EnumT, typename StringifyT>
static llvm::SmallVector<StringRef> getEnumNames(uint32_t maxValue,
                                                 StringifyT stringify) {
  llvm::SmallVector<StringRef> names;
  for (uint32_t value = 0; value <= maxValue; ++value)
    names.push_back(stringify(static_cast<EnumT>(value)));
  return names;
}

static llvm::SmallVector<StringRef> getCategoryNames() {
  return getEnumNames<OpCategory>(getMaxEnumValForOpCategory(),
                                  stringifyOpCategory);
}

static llvm::SmallVector<StringRef> getUnknownOpModeNames() {
  return getEnumNames<UnknownOpMode>(getMaxEnumValForUnknownOpMode(),
                                     stringifyUnknownOpMode);
}

static llvm::SmallVector<StringRef> getPresetNames() {
  llvm::SmallVector<StringRef> names;
  for (const PresetInfo &preset : getPresets())
    names.push_back(preset.name);
  return names;
}

//===----------------------------------------------------------------------===//
// Policy
//===----------------------------------------------------------------------===//

Policy Policy::fromPreset(const PresetInfo &preset) {
  Policy policy;
  policy.name = preset.name.str();
  policy.unknownOps = preset.unknownOps;
  policy.defaultCategories = preset.defaultCategories;
  for (const PresetEntry &entry : preset.entries)
    policy.set(entry.opName, entry.category,
               ("preset " + preset.name + ": " + entry.source).str());
  return policy;
}

const Policy::Rule *Policy::lookup(StringRef opName) const {
  auto it = rules.find(opName);
  return it == rules.end() ? nullptr : &it->second;
}

void Policy::set(StringRef opName, std::optional<OpCategory> category,
                 std::string origin) {
  rules.insert_or_assign(opName, Rule{category, std::move(origin)});
}

std::optional<OpCategory> Policy::getCategoryByName(StringRef opName) const {
  if (const Rule *rule = lookup(opName))
    return rule->category;
  const UpstreamPrecisionDefault *entry =
      lookupUpstreamPrecisionDefault(opName);
  if (!entry || !takesDefault(entry->category))
    return std::nullopt;
  return entry->category;
}

llvm::Expected<Policy> Policy::load(StringRef presetOrPath) {
  if (const PresetInfo *preset = lookupPreset(presetOrPath))
    return fromPreset(*preset);
  auto buffer = llvm::MemoryBuffer::getFile(presetOrPath, /*IsText=*/true);
  if (std::error_code ec = buffer.getError())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        Twine(presetOrPath) +
            ": error: cannot read the policy file: " + ec.message() +
            " (it is not a preset either: " + listOf(getPresetNames()) + ")");
  return parse((*buffer)->getBuffer(), presetOrPath);
}

//===----------------------------------------------------------------------===//
// Policy files
//===----------------------------------------------------------------------===//

namespace {
/// The closest of `options` to a misspelt `given`, if any is close.
std::optional<StringRef> closest(StringRef given,
                                 llvm::ArrayRef<StringRef> options) {
  std::optional<StringRef> best;
  unsigned bestDistance = std::max<unsigned>(2, given.size() / 3) + 1;
  for (StringRef option : options) {
    unsigned distance = given.edit_distance(option);
    if (distance < bestDistance) {
      best = option;
      bestDistance = distance;
    }
  }
  return best;
}

std::string didYouMean(StringRef given, llvm::ArrayRef<StringRef> options) {
  if (std::optional<StringRef> match = closest(given, options))
    return ("; did you mean \"" + *match + "\"?").str();
  return "";
}

/// An op name is `dialect.op`, as in the generic form of MLIR ops.
bool isOpName(StringRef name) {
  auto [dialect, op] = name.split('.');
  auto isNameChar = [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$';
  };
  return !dialect.empty() && !op.empty() && llvm::isAlpha(dialect.front()) &&
         llvm::all_of(name, isNameChar);
}

/// A JSON value and where it starts. llvm::yaml nodes can be walked only
/// once, as they parse; this tree can be read in any order.
struct JsonNode {
  enum class Kind { Object, Array, String, Other };
  Kind kind = Kind::Other;
  llvm::SMLoc loc;
  /// The text as written (strings with their quotes and escapes).
  std::string raw;
  /// The decoded value of a string.
  std::string string;
  /// The members of an object (each with its key) or the elements of an
  /// array.
  std::vector<JsonNode> children;
  /// The key of an object member, and where the key starts.
  std::string key;
  llvm::SMLoc keyLoc;

  bool isString() const { return kind == Kind::String; }
  const JsonNode *find(StringRef name) const {
    for (const JsonNode &child : children)
      if (child.key == name)
        return &child;
    return nullptr;
  }
  /// How the value appears in an error: its text, or its JSON kind.
  std::string describe() const {
    if (kind == Kind::Object)
      return "an object";
    if (kind == Kind::Array)
      return "an array";
    if (raw.size() > 40)
      return raw.substr(0, 37) + "...";
    return raw;
  }
};

class PolicyFileParser {
public:
  PolicyFileParser(StringRef text, StringRef fileName)
      : text(text), fileName(fileName) {}

  llvm::Expected<Policy> parse();

private:
  /// `file:line:col: error: message`.
  llvm::Error error(llvm::SMLoc loc, const Twine &message);
  /// `file:line:col: error: path: message`, at the value of `node`.
  llvm::Error error(const JsonNode &node, const Twine &path,
                    const Twine &message) {
    return error(node.loc, path + ": " + message);
  }
  llvm::Error syntaxError(const llvm::json::ParseError &error);
  /// An error at the first array or object nested deeper than the parsers
  /// can take.
  llvm::Error checkNesting();
  JsonNode convert(llvm::yaml::Node &node);
  unsigned getLine(llvm::SMLoc loc) {
    return sourceMgr.getLineAndColumn(loc).first;
  }

  /// Errors for duplicate keys and keys not in `keys`; `what` names a key
  /// in errors ("key", "category").
  llvm::Error checkKeys(const JsonNode &node, const Twine &path,
                        llvm::ArrayRef<StringRef> keys, StringRef what);
  /// Applies `"add"` (remove = false) or `"remove"` to the policy.
  llvm::Error applyLists(Policy &policy, const JsonNode &node, StringRef key,
                         bool remove);

  StringRef text;
  StringRef fileName;
  llvm::SourceMgr sourceMgr;
};
} // namespace

llvm::Error PolicyFileParser::error(llvm::SMLoc loc, const Twine &message) {
  auto [line, column] = sourceMgr.getLineAndColumn(loc);
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 llvm::formatv("{0}:{1}:{2}: error: {3}",
                                               fileName, line, column,
                                               message.str()));
}

llvm::Error
PolicyFileParser::syntaxError(const llvm::json::ParseError &parseError) {
  // ParseError keeps its position private; its log reads
  // "[line:column, byte=offset]: message".
  std::string logged;
  llvm::raw_string_ostream os(logged);
  parseError.log(os);
  StringRef rest = logged;
  StringRef position =
      rest.drop_front().take_until([](char c) { return c == ','; });
  auto [line, columnText] = position.split(':');
  // It counts columns from 1, except at the very start of a line (EOF of an
  // empty file).
  unsigned column = 1;
  columnText.getAsInteger(10, column);
  StringRef message = rest.split("]: ").second;
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      llvm::formatv("{0}:{1}:{2}: error: invalid JSON: {3}", fileName, line,
                    std::max(column, 1u), message));
}

/// The deepest nesting of arrays and objects a policy file may have (its
/// lists are at depth 3). The JSON and YAML parsers recurse once per level:
/// a hostile file nested 100000 deep overflowed the stack.
static constexpr unsigned kMaxNesting = 64;

llvm::Error PolicyFileParser::checkNesting() {
  unsigned depth = 0;
  bool inString = false, escaped = false;
  for (auto [offset, c] : llvm::enumerate(text)) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth <= kMaxNesting)
        continue;
      StringRef before = text.take_front(offset);
      size_t lineStart = before.rfind('\n');
      size_t column = offset - (lineStart == StringRef::npos ? 0 : lineStart + 1);
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("{0}:{1}:{2}: error: arrays and objects nested deeper "
                        "than {3} levels; a policy file has at most 3",
                        fileName, before.count('\n') + 1, column + 1,
                        kMaxNesting));
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  return llvm::Error::success();
}

JsonNode PolicyFileParser::convert(llvm::yaml::Node &node) {
  JsonNode result;
  const char *start = node.getSourceRange().Start.getPointer();
  result.loc = llvm::SMLoc::getFromPointer(start);
  if (auto *scalar = dyn_cast<llvm::yaml::ScalarNode>(&node)) {
    // A plain scalar's range runs to the next token, over line breaks.
    result.raw = scalar->getRawValue().rtrim().str();
    // Plain scalars are JSON numbers, booleans and null.
    result.kind = result.raw.front() == '"' ? JsonNode::Kind::String
                                            : JsonNode::Kind::Other;
    llvm::SmallString<32> storage;
    result.string = scalar->getValue(storage).str();
    return result;
  }
  // The range of an object or array starts at its first element: point at
  // the bracket that opens it instead.
  const char *bracket = start;
  while (bracket > text.begin() && llvm::isSpace(bracket[-1]))
    --bracket;
  if (bracket > text.begin() && (bracket[-1] == '[' || bracket[-1] == '{'))
    result.loc = llvm::SMLoc::getFromPointer(bracket - 1);
  if (auto *mapping = dyn_cast<llvm::yaml::MappingNode>(&node)) {
    result.kind = JsonNode::Kind::Object;
    for (llvm::yaml::KeyValueNode &member : *mapping) {
      // The JSON check guarantees that keys are strings.
      JsonNode key = convert(*member.getKey());
      JsonNode &child =
          result.children.emplace_back(convert(*member.getValue()));
      child.key = key.string;
      child.keyLoc = key.loc;
    }
    return result;
  }
  if (auto *sequence = dyn_cast<llvm::yaml::SequenceNode>(&node)) {
    result.kind = JsonNode::Kind::Array;
    for (llvm::yaml::Node &element : *sequence)
      result.children.push_back(convert(element));
    return result;
  }
  // Only a YAML parse error leaves other nodes; it is reported.
  result.kind = JsonNode::Kind::Other;
  return result;
}

llvm::Error PolicyFileParser::checkKeys(const JsonNode &node, const Twine &path,
                                        llvm::ArrayRef<StringRef> keys,
                                        StringRef what) {
  if (node.kind != JsonNode::Kind::Object)
    return error(node, path, "expected an object, got " + node.describe());
  llvm::StringSet<> seen;
  for (const JsonNode &member : node.children) {
    std::string memberPath = (path + "." + member.key).str();
    if (!llvm::is_contained(keys, member.key))
      return error(member.keyLoc, memberPath + ": unknown " + what + " \"" +
                                      member.key + "\" (expected " +
                                      listOf(keys) + ")" +
                                      didYouMean(member.key, keys));
    if (!seen.insert(member.key).second)
      return error(member.keyLoc, memberPath + ": duplicate " + what + " \"" +
                                      member.key + "\"");
  }
  return llvm::Error::success();
}

llvm::Error PolicyFileParser::applyLists(Policy &policy, const JsonNode &node,
                                         StringRef key, bool remove) {
  std::string path = ("$." + key).str();
  if (llvm::Error err = checkKeys(node, path, getCategoryNames(), "category"))
    return err;
  // Document order: an op added to two categories ends in the later one.
  for (const JsonNode &list : node.children) {
    OpCategory category = *symbolizeOpCategory(list.key);
    std::string listPath = path + "." + list.key;
    if (list.kind != JsonNode::Kind::Array)
      return error(list, listPath,
                   "expected an array of op names, got " + list.describe());
    for (auto [i, op] : llvm::enumerate(list.children)) {
      std::string opPath = llvm::formatv("{0}[{1}]", listPath, i);
      if (!op.isString() || !isOpName(op.string))
        return error(op, opPath,
                     "expected an op name such as \"math.exp\", got " +
                         op.describe());
      std::string origin = llvm::formatv("{0}:{1}: {2}.{3}", fileName,
                                         getLine(op.loc), key, list.key);
      if (!remove) {
        policy.set(op.string, category, std::move(origin));
        continue;
      }
      // A removed op is in no list, whatever its default.
      std::optional<OpCategory> current = policy.getCategoryByName(op.string);
      if (current != category) {
        std::string actual =
            current ? ("it is " + stringifyOpCategory(*current)).str()
                    : "it is in no list";
        return error(op, opPath,
                     llvm::formatv("cannot remove \"{0}\": it is not in the "
                                   "{1} list of preset {2} ({3})",
                                   op.string, list.key, policy.getName(),
                                   actual));
      }
      policy.set(op.string, std::nullopt, std::move(origin));
    }
  }
  return llvm::Error::success();
}

llvm::Expected<Policy> PolicyFileParser::parse() {
  if (llvm::Error error = checkNesting())
    return std::move(error);
  // Strict JSON first: llvm::yaml would accept YAML-only syntax.
  if (llvm::Expected<llvm::json::Value> json = llvm::json::parse(text); !json) {
    llvm::Error result = llvm::Error::success();
    llvm::handleAllErrors(json.takeError(),
                          [&](const llvm::json::ParseError &parseError) {
                            result = syntaxError(parseError);
                          });
    return std::move(result);
  }

  // Valid JSON is valid YAML; a YAML error here would be a YAML parser
  // limit, still reported at its position.
  std::optional<llvm::SMDiagnostic> yamlError;
  sourceMgr.setDiagHandler(
      [](const llvm::SMDiagnostic &diag, void *context) {
        auto &first =
            *static_cast<std::optional<llvm::SMDiagnostic> *>(context);
        if (!first)
          first = diag;
      },
      &yamlError);
  llvm::yaml::Stream stream(text, sourceMgr, /*ShowColors=*/false);
  llvm::yaml::Node *yamlRoot = stream.begin()->getRoot();
  JsonNode root = yamlRoot ? convert(*yamlRoot) : JsonNode();
  if (yamlError || !yamlRoot)
    return error(yamlError ? yamlError->getLoc()
                           : llvm::SMLoc::getFromPointer(text.begin()),
                 "cannot read the JSON: " +
                     (yamlError ? yamlError->getMessage() : "no value"));

  static constexpr StringRef kKeys[] = {"extends", "dtype", "unknown-ops",
                                        "add", "remove"};
  if (llvm::Error err = checkKeys(root, "$", kKeys, "key"))
    return std::move(err);

  const PresetInfo *base = &getPresets().front();
  if (const JsonNode *node = root.find("extends")) {
    base = node->isString() ? lookupPreset(node->string) : nullptr;
    if (!base) {
      llvm::SmallVector<StringRef> names = getPresetNames();
      return error(
          *node, "$.extends",
          "expected a preset name (" + listOf(names) + "), got " +
              node->describe() +
              (node->isString() ? didYouMean(node->string, names) : ""));
    }
  }
  Policy policy = Policy::fromPreset(*base);

  if (const JsonNode *node = root.find("dtype")) {
    std::optional<Precision> dtype =
        node->isString() ? symbolizePrecision(node->string) : std::nullopt;
    if (!dtype || !isLowPrecision(*dtype))
      return error(*node, "$.dtype",
                   "expected \"f16\" or \"bf16\", got " + node->describe() +
                       (node->isString()
                            ? didYouMean(node->string, {"f16", "bf16"})
                            : ""));
    policy.setDtype(*dtype);
  }

  if (const JsonNode *node = root.find("unknown-ops")) {
    std::optional<UnknownOpMode> mode =
        node->isString() ? symbolizeUnknownOpMode(node->string) : std::nullopt;
    if (!mode) {
      llvm::SmallVector<StringRef> modes = getUnknownOpModeNames();
      return error(
          *node, "$.unknown-ops",
          "expected " + listOf(modes, "\"") + ", got " + node->describe() +
              (node->isString() ? didYouMean(node->string, modes) : ""));
    }
    policy.setUnknownOpMode(*mode);
  }

  // Removals apply to the preset, then additions move ops between lists.
  if (const JsonNode *node = root.find("remove"))
    if (llvm::Error err = applyLists(policy, *node, "remove", /*remove=*/true))
      return std::move(err);
  if (const JsonNode *node = root.find("add"))
    if (llvm::Error err = applyLists(policy, *node, "add", /*remove=*/false))
      return std::move(err);

  policy.setName(fileName.str());
  return policy;
}

llvm::Expected<Policy> Policy::parse(StringRef text, StringRef fileName) {
  return PolicyFileParser(text, fileName).parse();
}
