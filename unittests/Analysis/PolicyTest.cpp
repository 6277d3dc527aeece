//===- PolicyTest.cpp - Presets and JSON policy files ---------------------===//

#include "amp/Analysis/Policy.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::amp;

namespace {

/// The category of `op` in `policy` by its name, or nullopt when it is in
/// no list.
std::optional<OpCategory> categoryOf(const Policy &policy, StringRef op) {
  return policy.getCategoryByName(op);
}

Policy preset(StringRef name) {
  llvm::Expected<Policy> policy = Policy::load(name);
  EXPECT_TRUE(static_cast<bool>(policy)) << name.str();
  return std::move(*policy);
}

/// The message of a policy that must fail to parse.
std::string parseError(StringRef text, StringRef fileName = "policy.json") {
  llvm::Expected<Policy> policy = Policy::parse(text, fileName);
  if (policy)
    return "<parsed without error>";
  return llvm::toString(policy.takeError());
}

TEST(OpCategory, ParsesAndPrintsTheFourNames) {
  for (OpCategory c : {OpCategory::Allow, OpCategory::Deny, OpCategory::Infer,
                       OpCategory::Clear})
    EXPECT_EQ(symbolizeOpCategory(stringifyOpCategory(c)), c);
  EXPECT_EQ(stringifyOpCategory(OpCategory::Clear), "clear");
  EXPECT_FALSE(symbolizeOpCategory("white"));
  EXPECT_FALSE(symbolizeOpCategory("Allow"));
}

TEST(UnknownOpMode, ParsesAndPrintsTheFourNames) {
  for (UnknownOpMode m : {UnknownOpMode::Deny, UnknownOpMode::Infer,
                          UnknownOpMode::Allow, UnknownOpMode::Error})
    EXPECT_EQ(symbolizeUnknownOpMode(stringifyUnknownOpMode(m)), m);
  EXPECT_FALSE(symbolizeUnknownOpMode("clear"));
}

// A rule wins over the default of its op; an op's default counts only when
// the policy takes defaults of its category.
TEST(Policy, CategoryByNameIsTheRuleElseATakenDefault) {
  Policy torch = preset("torch");
  EXPECT_EQ(categoryOf(torch, "math.exp"), OpCategory::Deny);
  EXPECT_EQ(torch.lookup("math.exp")->origin,
            "preset torch: exp (autocast fp32 list)");
  EXPECT_EQ(torch.lookup("arith.addf"), nullptr);
  EXPECT_EQ(categoryOf(torch, "arith.addf"), OpCategory::Infer);
  EXPECT_EQ(categoryOf(torch, "tensor.expand_shape"), OpCategory::Clear);
  // linalg's structured ops have their defaults by structure, not by name.
  EXPECT_EQ(categoryOf(torch, "linalg.matmul"), std::nullopt);
  EXPECT_EQ(categoryOf(torch, "my.op"), std::nullopt);
  Policy tco = preset("tensor-cores-only");
  EXPECT_FALSE(tco.takesDefault(OpCategory::Infer));
  EXPECT_EQ(categoryOf(tco, "arith.addf"), std::nullopt);
  Policy tf = preset("tf");
  EXPECT_EQ(tf.lookup("math.rsqrt")->category, std::nullopt);
  EXPECT_EQ(categoryOf(tf, "math.rsqrt"), std::nullopt);
}

//===----------------------------------------------------------------------===//
// Policy files
//===----------------------------------------------------------------------===//

TEST(PolicyFile, ExtendsAddsAndRemoves) {
  llvm::Expected<Policy> policy = Policy::parse(R"({
  "extends": "tf",
  "dtype": "bf16",
  "unknown-ops": "infer",
  "remove": {"clear": ["tensor.pad"]},
  "add": {
    "deny": ["math.log", "linalg.generic"],
    "allow": ["my.matmul"]
  }
})",
                                                "p.json");
  ASSERT_TRUE(static_cast<bool>(policy)) << llvm::toString(policy.takeError());
  EXPECT_EQ(policy->getName(), "p.json");
  EXPECT_EQ(policy->getDtype(), Precision::BF16);
  EXPECT_EQ(policy->getUnknownOpMode(), UnknownOpMode::Infer);
  // Removing an op takes it out of the defaults too.
  EXPECT_EQ(categoryOf(*policy, "tensor.pad"), std::nullopt);
  EXPECT_EQ(policy->lookup("tensor.pad")->origin, "p.json:5: remove.clear");
  EXPECT_EQ(categoryOf(*policy, "math.log"), OpCategory::Deny);
  EXPECT_EQ(categoryOf(*policy, "linalg.generic"), OpCategory::Deny);
  EXPECT_EQ(categoryOf(*policy, "my.matmul"), OpCategory::Allow);
  EXPECT_EQ(policy->lookup("math.log")->origin, "p.json:7: add.deny");
  EXPECT_EQ(policy->lookup("my.matmul")->origin, "p.json:8: add.allow");
  // Untouched ops keep the preset's rule or their default.
  EXPECT_EQ(categoryOf(*policy, "linalg.softmax"), OpCategory::Infer);
  EXPECT_EQ(categoryOf(*policy, "math.rsqrt"), std::nullopt);
  EXPECT_EQ(policy->lookup("math.exp")->origin,
            "preset tf: Exp (grappler deny list)");
}

TEST(PolicyFile, DefaultsToTorchAndLaterCategoriesOverride) {
  llvm::Expected<Policy> policy = Policy::parse(
      R"({"add": {"deny": ["arith.addf"], "infer": ["arith.addf"]}})",
      "p.json");
  ASSERT_TRUE(static_cast<bool>(policy)) << llvm::toString(policy.takeError());
  EXPECT_EQ(categoryOf(*policy, "arith.addf"), OpCategory::Infer);
  EXPECT_EQ(categoryOf(*policy, "math.exp"), OpCategory::Deny);
  EXPECT_FALSE(policy->getDtype());
  EXPECT_FALSE(policy->getUnknownOpMode());

  // Removals apply to the preset before additions.
  policy = Policy::parse(R"({"add": {"infer": ["math.exp"]},
                             "remove": {"deny": ["math.exp"]}})",
                         "p.json");
  ASSERT_TRUE(static_cast<bool>(policy)) << llvm::toString(policy.takeError());
  EXPECT_EQ(categoryOf(*policy, "math.exp"), OpCategory::Infer);
}

// A file extending a level's preset keeps its mode for ops in no list
// unless it sets its own.
TEST(PolicyFile, InheritsThePresetsUnknownOps) {
  llvm::Expected<Policy> policy = Policy::parse(
      R"({"extends": "mindspore-o2", "add": {"deny": ["math.tanh"]}})",
      "p.json");
  ASSERT_TRUE(static_cast<bool>(policy)) << llvm::toString(policy.takeError());
  EXPECT_EQ(policy->getUnknownOpMode(), UnknownOpMode::Allow);
  EXPECT_EQ(categoryOf(*policy, "math.tanh"), OpCategory::Deny);
  policy = Policy::parse(
      R"({"extends": "mindspore-o3", "unknown-ops": "infer"})", "p.json");
  ASSERT_TRUE(static_cast<bool>(policy)) << llvm::toString(policy.takeError());
  EXPECT_EQ(policy->getUnknownOpMode(), UnknownOpMode::Infer);
}

TEST(PolicyFile, EmptyObjectIsThePreset) {
  llvm::Expected<Policy> policy = Policy::parse("{}", "p.json");
  ASSERT_TRUE(static_cast<bool>(policy)) << llvm::toString(policy.takeError());
  EXPECT_EQ(policy->getRules().size(), getPresets()[0].entries.size());
}

TEST(PolicyFileErrors, SyntaxError) {
  EXPECT_EQ(parseError("{\"add\": {\"deny\": [\"math.exp\",]}}"),
            "policy.json:1:30: error: invalid JSON: Invalid JSON value");
  EXPECT_EQ(parseError("{\n  \"dtype\": \"f16\"\n  \"add\": {}\n}"),
            "policy.json:3:3: error: invalid JSON: Expected , or } after "
            "object property");
  EXPECT_EQ(parseError(""),
            "policy.json:1:1: error: invalid JSON: Unexpected EOF");
}

// A hostile file nested 100000 deep overflowed the parsers' stacks.
TEST(PolicyFileErrors, DeepNesting) {
  std::string deep = "{\"add\": \n " + std::string(100000, '[') +
                     std::string(100000, ']') + "}";
  EXPECT_EQ(parseError(deep),
            "policy.json:2:65: error: arrays and objects nested deeper than 64 "
            "levels; a policy file has at most 3");
  // Brackets inside strings, escaped quotes included, are no nesting.
  std::string quoted = "{\"add\": {\"deny\": [\"\\\"" +
                       std::string(100, '[') + "\"]}}";
  EXPECT_EQ(parseError(quoted).find("nested"), std::string::npos);
}

TEST(PolicyFileErrors, WrongTypes) {
  EXPECT_EQ(parseError("[]"),
            "policy.json:1:1: error: $: expected an object, got an array");
  EXPECT_EQ(parseError("{\n  \"add\": {\n    \"deny\": [\"math.exp\", 42]\n  "
                       "}\n}"),
            "policy.json:3:26: error: $.add.deny[1]: expected an op name such "
            "as \"math.exp\", got 42");
  EXPECT_EQ(parseError(R"({"add": {"deny": ["exp"]}})"),
            "policy.json:1:19: error: $.add.deny[0]: expected an op name such "
            "as \"math.exp\", got \"exp\"");
  EXPECT_EQ(parseError(R"({"add": {"deny": "math.exp"}})"),
            "policy.json:1:18: error: $.add.deny: expected an array of op "
            "names, got \"math.exp\"");
  EXPECT_EQ(parseError(R"({"add": ["math.exp"]})"),
            "policy.json:1:9: error: $.add: expected an object, got an array");
  EXPECT_EQ(parseError(R"({"remove": {"deny": [{"op": "math.exp"}]}})"),
            "policy.json:1:22: error: $.remove.deny[0]: expected an op name "
            "such as \"math.exp\", got an object");
}

TEST(PolicyFileErrors, UnknownKey) {
  EXPECT_EQ(parseError("{\n  \"extend\": \"tf\"\n}"),
            "policy.json:2:3: error: $.extend: unknown key \"extend\" "
            "(expected extends, dtype, unknown-ops, add or remove); did you "
            "mean \"extends\"?");
  EXPECT_EQ(parseError(R"({"colour": 1})"),
            "policy.json:1:2: error: $.colour: unknown key \"colour\" "
            "(expected extends, dtype, unknown-ops, add or remove)");
  EXPECT_EQ(parseError(R"({"dtype": "f16", "dtype": "bf16"})"),
            "policy.json:1:18: error: $.dtype: duplicate key \"dtype\"");
}

TEST(PolicyFileErrors, UnknownCategory) {
  EXPECT_EQ(parseError(R"({"add": {"alow": ["math.exp"]}})"),
            "policy.json:1:10: error: $.add.alow: unknown category \"alow\" "
            "(expected allow, deny, infer or clear); did you mean \"allow\"?");
  EXPECT_EQ(parseError(R"({"remove": {"white": []}})"),
            "policy.json:1:13: error: $.remove.white: unknown category "
            "\"white\" (expected allow, deny, infer or clear)");
}

TEST(PolicyFileErrors, BadDtype) {
  EXPECT_EQ(parseError(R"({"dtype": "fp16"})"),
            "policy.json:1:11: error: $.dtype: expected \"f16\" or \"bf16\", "
            "got \"fp16\"; did you mean \"f16\"?");
  // f32 is a precision, but not a low one.
  EXPECT_EQ(parseError(R"({"dtype": "f32"})"),
            "policy.json:1:11: error: $.dtype: expected \"f16\" or \"bf16\", "
            "got \"f32\"; did you mean \"f16\"?");
  EXPECT_EQ(parseError(R"({"dtype": 16})"),
            "policy.json:1:11: error: $.dtype: expected \"f16\" or \"bf16\", "
            "got 16");
  // A number's text stops at the number, not at the next token.
  EXPECT_EQ(parseError("{\"dtype\": 16\r\n}"),
            "policy.json:1:11: error: $.dtype: expected \"f16\" or \"bf16\", "
            "got 16");
}

TEST(PolicyFileErrors, BadUnknownOps) {
  EXPECT_EQ(parseError(R"({"unknown-ops": "clear"})"),
            "policy.json:1:17: error: $.unknown-ops: expected \"deny\", "
            "\"infer\", \"allow\" or \"error\", got \"clear\"");
  EXPECT_EQ(parseError(R"({"unknown-ops": "infr"})"),
            "policy.json:1:17: error: $.unknown-ops: expected \"deny\", "
            "\"infer\", \"allow\" or \"error\", got \"infr\"; did you mean "
            "\"infer\"?");
}

TEST(PolicyFileErrors, BadExtends) {
  EXPECT_EQ(parseError(R"({"extends": "pytorch"})"),
            "policy.json:1:13: error: $.extends: expected a preset name "
            "(torch, tf, mindspore, tensor-cores-only, mindspore-o1, "
            "mindspore-o2 or mindspore-o3), got \"pytorch\"; "
            "did you mean \"torch\"?");
  EXPECT_EQ(parseError(R"({"extends": null})"),
            "policy.json:1:13: error: $.extends: expected a preset name "
            "(torch, tf, mindspore, tensor-cores-only, mindspore-o1, "
            "mindspore-o2 or mindspore-o3), got null");
}

TEST(PolicyFileErrors, RemovingAnOpNotInTheList) {
  EXPECT_EQ(parseError("{\"remove\": {\n  \"allow\": [\"math.exp\"]}}"),
            "policy.json:2:13: error: $.remove.allow[0]: cannot remove "
            "\"math.exp\": it is not in the allow list of preset torch (it is "
            "deny)");
  EXPECT_EQ(parseError(R"({"extends": "tensor-cores-only",
                           "remove": {"deny": ["math.exp"]}})"),
            "policy.json:2:48: error: $.remove.deny[0]: cannot remove "
            "\"math.exp\": it is not in the deny list of preset "
            "tensor-cores-only (it is in no list)");
  // A contraction is allow by its structure, which no list holds.
  EXPECT_EQ(parseError(R"({"remove": {"allow": ["linalg.matmul"]}})"),
            "policy.json:1:23: error: $.remove.allow[0]: cannot remove "
            "\"linalg.matmul\": it is not in the allow list of preset torch "
            "(it is in no list)");
}

TEST(PolicyFileErrors, MissingFile) {
  llvm::Expected<Policy> policy = Policy::load("/nonexistent/policy.json");
  ASSERT_FALSE(static_cast<bool>(policy));
  std::string message = llvm::toString(policy.takeError());
  EXPECT_EQ(message.rfind("/nonexistent/policy.json: error: cannot read the "
                          "policy file: ",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("not a preset either: torch, tf, mindspore, "
                         "tensor-cores-only, mindspore-o1, mindspore-o2 or "
                         "mindspore-o3"),
            std::string::npos)
      << message;
}

TEST(PolicyFile, LoadsAFileByPath) {
  llvm::SmallString<128> path;
  int fd;
  ASSERT_FALSE(
      llvm::sys::fs::createTemporaryFile("amp-policy", "json", fd, path));
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << "{\"extends\": \"mindspore\",\n \"add\": {\"clear\": "
          "[\"linalg.softmax\"]}}\n";
  }
  llvm::Expected<Policy> policy = Policy::load(path);
  ASSERT_TRUE(static_cast<bool>(policy)) << llvm::toString(policy.takeError());
  EXPECT_EQ(policy->getName(), path.str());
  EXPECT_EQ(categoryOf(*policy, "linalg.softmax"), OpCategory::Clear);
  EXPECT_EQ(policy->lookup("linalg.softmax")->origin,
            (path + ":2: add.clear").str());
  EXPECT_EQ(categoryOf(*policy, "linalg.dot"), OpCategory::Infer);

  // Errors in a loaded file name its path.
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << "{\"add\": {\"deny\": [1]}}";
  }
  policy = Policy::load(path);
  ASSERT_FALSE(static_cast<bool>(policy));
  EXPECT_EQ(llvm::toString(policy.takeError()),
            (path + ":1:19: error: $.add.deny[0]: expected an op name such "
                    "as \"math.exp\", got 1")
                .str());
  llvm::sys::fs::remove(path);
}

//===----------------------------------------------------------------------===//
// docs/Policies.md
//===----------------------------------------------------------------------===//

// The example of docs/Policies.md parses and means what the page says.
TEST(PoliciesDoc, ExampleParses) {
  std::string path = AMP_SOURCE_DIR "/docs/Policies.md";
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  ASSERT_TRUE(static_cast<bool>(buffer)) << "cannot read " << path;
  StringRef doc = (*buffer)->getBuffer();
  StringRef example = doc.split("```json\n").second.split("```").first;
  ASSERT_FALSE(example.empty()) << path << " lacks a ```json example";
  llvm::Expected<Policy> policy = Policy::parse(example, "example.json");
  ASSERT_TRUE(static_cast<bool>(policy)) << llvm::toString(policy.takeError());
  EXPECT_EQ(policy->getDtype(), Precision::BF16);
  EXPECT_EQ(policy->getUnknownOpMode(), UnknownOpMode::Infer);
  EXPECT_EQ(categoryOf(*policy, "linalg.softmax"), OpCategory::Infer);
  EXPECT_EQ(categoryOf(*policy, "math.tanh"), OpCategory::Deny);
  EXPECT_EQ(categoryOf(*policy, "my_dialect.layer_norm"), OpCategory::Deny);
  EXPECT_EQ(categoryOf(*policy, "tensor.pad"), std::nullopt);
}

} // namespace
