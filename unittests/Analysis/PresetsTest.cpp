//===- PresetsTest.cpp - The built-in presets -----------------------------===//
//
// The presets' rows and what they make of real ops: each op of kOps is
// classified by the analysis under every preset, through rules, the ops'
// PrecisionOpInterface defaults and the unknown-ops mode.
//
//===----------------------------------------------------------------------===//

#include "PrecisionTestContext.h"
#include "amp/Analysis/Policy.h"
#include "amp/Analysis/PrecisionAnalysis.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <cstdlib>
#include <vector>

using namespace mlir;
using namespace mlir::amp;

namespace {

/// One op of every name a preset row names, and a few more.
constexpr llvm::StringLiteral kOps = R"mlir(
func.func @ops(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %i: tensor<4x4xi32>,
              %m: tensor<4x4xi1>, %v: tensor<4xf32>, %s: tensor<f32>,
              %g: tensor<2x1x4xf32>, %gi: tensor<2x1xindex>,
              %x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>,
              %x3: tensor<1x4x2xf32>, %x5: tensor<1x4x4x4x2xf32>,
              %w0: tensor<1xf32>, %w1: tensor<1x1xf32>,
              %w3: tensor<1x1x1xf32>) {
  %math_absf = math.absf %a : tensor<4x4xf32>
  %math_acos = math.acos %a : tensor<4x4xf32>
  %math_acosh = math.acosh %a : tensor<4x4xf32>
  %math_asin = math.asin %a : tensor<4x4xf32>
  %math_asinh = math.asinh %a : tensor<4x4xf32>
  %math_atan = math.atan %a : tensor<4x4xf32>
  %math_atanh = math.atanh %a : tensor<4x4xf32>
  %math_ceil = math.ceil %a : tensor<4x4xf32>
  %math_cos = math.cos %a : tensor<4x4xf32>
  %math_cosh = math.cosh %a : tensor<4x4xf32>
  %math_exp = math.exp %a : tensor<4x4xf32>
  %math_exp2 = math.exp2 %a : tensor<4x4xf32>
  %math_expm1 = math.expm1 %a : tensor<4x4xf32>
  %math_floor = math.floor %a : tensor<4x4xf32>
  %math_log = math.log %a : tensor<4x4xf32>
  %math_log10 = math.log10 %a : tensor<4x4xf32>
  %math_log1p = math.log1p %a : tensor<4x4xf32>
  %math_log2 = math.log2 %a : tensor<4x4xf32>
  %math_roundeven = math.roundeven %a : tensor<4x4xf32>
  %math_rsqrt = math.rsqrt %a : tensor<4x4xf32>
  %math_sin = math.sin %a : tensor<4x4xf32>
  %math_sinh = math.sinh %a : tensor<4x4xf32>
  %math_sqrt = math.sqrt %a : tensor<4x4xf32>
  %math_tan = math.tan %a : tensor<4x4xf32>
  %math_tanh = math.tanh %a : tensor<4x4xf32>
  %math_trunc = math.trunc %a : tensor<4x4xf32>
  %math_cbrt = math.cbrt %a : tensor<4x4xf32>
  %math_isnan = math.isnan %a : tensor<4x4xf32>
  %math_isinf = math.isinf %a : tensor<4x4xf32>
  %math_isfinite = math.isfinite %a : tensor<4x4xf32>
  %math_atan2 = math.atan2 %a, %b : tensor<4x4xf32>
  %math_copysign = math.copysign %a, %b : tensor<4x4xf32>
  %math_powf = math.powf %a, %b : tensor<4x4xf32>
  %math_fpowi = math.fpowi %a, %i : tensor<4x4xf32>, tensor<4x4xi32>
  %math_clampf = math.clampf %a to [%b, %b] : tensor<4x4xf32>
  %arith_addf = arith.addf %a, %b : tensor<4x4xf32>
  %arith_mulf = arith.mulf %a, %b : tensor<4x4xf32>
  %arith_remf = arith.remf %a, %b : tensor<4x4xf32>
  %arith_maximumf = arith.maximumf %a, %b : tensor<4x4xf32>
  %arith_minimumf = arith.minimumf %a, %b : tensor<4x4xf32>
  %arith_maxnumf = arith.maxnumf %a, %b : tensor<4x4xf32>
  %arith_minnumf = arith.minnumf %a, %b : tensor<4x4xf32>
  %arith_negf = arith.negf %a : tensor<4x4xf32>
  %arith_select = arith.select %m, %a, %b : tensor<4x4xi1>, tensor<4x4xf32>
  %arith_cmpf = arith.cmpf olt, %a, %b : tensor<4x4xf32>
  %tensor_expand_shape = tensor.expand_shape %a [[0, 1], [2]] output_shape [2,
      2, 4] : tensor<4x4xf32> into tensor<2x2x4xf32>
  %tensor_scatter = tensor.scatter %g into %b[%gi] scatter_dims([0]) unique :
      (tensor<2x1x4xf32>, tensor<4x4xf32>, tensor<2x1xindex>) -> tensor<4x4xf32>
  %linalg_reciprocal = linalg.reciprocal ins(%a : tensor<4x4xf32>) outs(%b :
      tensor<4x4xf32>) -> tensor<4x4xf32>
  %linalg_sqrt = linalg.sqrt ins(%a : tensor<4x4xf32>) outs(%b :
      tensor<4x4xf32>) -> tensor<4x4xf32>
  %linalg_max = linalg.max ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
      outs(%b : tensor<4x4xf32>) -> tensor<4x4xf32>
  %linalg_transpose = linalg.transpose ins(%a : tensor<4x4xf32>) outs(%b :
      tensor<4x4xf32>) permutation = [1, 0]
  %linalg_softmax = linalg.softmax dimension(1) ins(%a : tensor<4x4xf32>)
      outs(%b : tensor<4x4xf32>) -> tensor<4x4xf32>
  %linalg_matmul = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
      outs(%b : tensor<4x4xf32>) -> tensor<4x4xf32>
  %linalg_dot = linalg.dot ins(%v, %v : tensor<4xf32>, tensor<4xf32>) outs(%s :
      tensor<f32>) -> tensor<f32>
  %linalg_conv_2d_nchw_fchw = linalg.conv_2d_nchw_fchw ins(%x, %w :
      tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) outs(%x : tensor<1x2x4x4xf32>)
      -> tensor<1x2x4x4xf32>
  %linalg_pooling_nhwc_max = linalg.pooling_nhwc_max ins(%x, %w1 :
      tensor<1x2x4x4xf32>, tensor<1x1xf32>) outs(%x : tensor<1x2x4x4xf32>) ->
      tensor<1x2x4x4xf32>
  %linalg_pooling_nchw_max = linalg.pooling_nchw_max ins(%x, %w1 :
      tensor<1x2x4x4xf32>, tensor<1x1xf32>) outs(%x : tensor<1x2x4x4xf32>) ->
      tensor<1x2x4x4xf32>
  %linalg_pooling_nwc_max = linalg.pooling_nwc_max ins(%x3, %w0 :
      tensor<1x4x2xf32>, tensor<1xf32>) outs(%x3 : tensor<1x4x2xf32>) ->
      tensor<1x4x2xf32>
  %linalg_pooling_ncw_max = linalg.pooling_ncw_max ins(%x3, %w0 :
      tensor<1x4x2xf32>, tensor<1xf32>) outs(%x3 : tensor<1x4x2xf32>) ->
      tensor<1x4x2xf32>
  %linalg_pooling_ndhwc_max = linalg.pooling_ndhwc_max ins(%x5, %w3 :
      tensor<1x4x4x4x2xf32>, tensor<1x1x1xf32>) outs(%x5 :
      tensor<1x4x4x4x2xf32>) -> tensor<1x4x4x4x2xf32>
  %linalg_pooling_nhwc_sum = linalg.pooling_nhwc_sum ins(%x, %w1 :
      tensor<1x2x4x4xf32>, tensor<1x1xf32>) outs(%x : tensor<1x2x4x4xf32>) ->
      tensor<1x2x4x4xf32>
  %linalg_pooling_nchw_sum = linalg.pooling_nchw_sum ins(%x, %w1 :
      tensor<1x2x4x4xf32>, tensor<1x1xf32>) outs(%x : tensor<1x2x4x4xf32>) ->
      tensor<1x2x4x4xf32>
  %linalg_pooling_nwc_sum = linalg.pooling_nwc_sum ins(%x3, %w0 :
      tensor<1x4x2xf32>, tensor<1xf32>) outs(%x3 : tensor<1x4x2xf32>) ->
      tensor<1x4x2xf32>
  %linalg_pooling_ncw_sum = linalg.pooling_ncw_sum ins(%x3, %w0 :
      tensor<1x4x2xf32>, tensor<1xf32>) outs(%x3 : tensor<1x4x2xf32>) ->
      tensor<1x4x2xf32>
  %linalg_pooling_ndhwc_sum = linalg.pooling_ndhwc_sum ins(%x5, %w3 :
      tensor<1x4x4x4x2xf32>, tensor<1x1x1xf32>) outs(%x5 :
      tensor<1x4x4x4x2xf32>) -> tensor<1x4x4x4x2xf32>
  return
}
)mlir";

/// Categories of op names: none for an op in no list, whose category is the
/// unknown-ops mode's.
using Categories = llvm::StringMap<std::optional<OpCategory>>;

class PresetsTest : public ::testing::Test {
protected:
  void SetUp() override {
    registerPrecisionTestDialects(context);
    module = parseSourceString<ModuleOp>(kOps, &context);
    ASSERT_TRUE(module);
  }

  /// The category of each op of kOps under `policy`, as the analysis
  /// classifies it. An op that is deny with unknown-ops=deny and allow with
  /// unknown-ops=allow is in no list.
  Categories classify(const Policy &policy) {
    auto run = [&](UnknownOpMode mode) {
      PrecisionOptions options;
      options.unknownOps = mode;
      FailureOr<PrecisionAnalysis> analysis =
          PrecisionAnalysis::run(*module, policy, options);
      EXPECT_TRUE(succeeded(analysis));
      llvm::StringMap<OpCategory> categories;
      for (Operation *op : analysis->getOps())
        if (const PrecisionDecision *decision = analysis->lookup(op);
            decision->role == OpRole::Painted)
          categories[op->getName().getStringRef()] = decision->category;
      return categories;
    };
    llvm::StringMap<OpCategory> deny = run(UnknownOpMode::Deny);
    llvm::StringMap<OpCategory> allow = run(UnknownOpMode::Allow);
    Categories categories;
    for (const auto &[name, category] : deny) {
      bool unknown = category == OpCategory::Deny &&
                     allow.lookup(name) == OpCategory::Allow;
      categories[name] =
          unknown ? std::nullopt : std::optional<OpCategory>(category);
    }
    return categories;
  }

  Categories classify(StringRef presetName) {
    return classify(Policy::fromPreset(*lookupPreset(presetName)));
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

constexpr OpCategory Allow = OpCategory::Allow;
constexpr OpCategory Deny = OpCategory::Deny;
constexpr OpCategory Infer = OpCategory::Infer;
constexpr OpCategory Clear = OpCategory::Clear;
constexpr std::nullopt_t InNoList = std::nullopt;

TEST(Presets, AreTheNamedOnesWithTorchFirst) {
  llvm::SmallVector<StringRef> names;
  for (const PresetInfo &info : getPresets())
    names.push_back(info.name);
  EXPECT_EQ(names, (llvm::SmallVector<StringRef>{
                       "torch", "tf", "mindspore", "tensor-cores-only",
                       "mindspore-o1", "mindspore-o2", "mindspore-o3"}));
  EXPECT_EQ(lookupPreset("tf"), &getPresets()[1]);
  EXPECT_EQ(lookupPreset("pytorch"), nullptr);
}

// Every op of every preset is a real op of MLIR 22 (no invented names), and
// appears once per preset, with a source entry.
TEST_F(PresetsTest, NameRegisteredOpsOncePerPreset) {
  for (const PresetInfo &info : getPresets()) {
    llvm::StringSet<> seen;
    for (const PresetEntry &entry : info.entries) {
      EXPECT_TRUE(RegisteredOperationName::lookup(entry.opName, &context))
          << info.name.str() << ": " << entry.opName.str();
      EXPECT_TRUE(seen.insert(entry.opName).second)
          << info.name.str() << ": duplicate " << entry.opName.str();
      EXPECT_FALSE(entry.source.empty()) << entry.opName.str();
    }
    for (const UnmappedEntry &entry : info.unmapped)
      EXPECT_FALSE(entry.reason.empty()) << entry.source.str();
  }
}

// A preset holds only what differs from the defaults: taking any row out
// changes what the analysis makes of its op.
TEST_F(PresetsTest, RowsDifferFromTheDefaults) {
  for (const PresetInfo &info : getPresets()) {
    Categories with = classify(Policy::fromPreset(info));
    for (const PresetEntry &entry : info.entries) {
      ASSERT_TRUE(with.count(entry.opName))
          << entry.opName.str() << " (" << info.name.str()
          << ") needs an instance in kOps";
      std::vector<PresetEntry> others;
      for (const PresetEntry &other : info.entries)
        if (other.opName != entry.opName)
          others.push_back(other);
      PresetInfo without = info;
      without.entries = others;
      EXPECT_NE(classify(Policy::fromPreset(without)).lookup(entry.opName),
                with.lookup(entry.opName))
          << info.name.str() << ": " << entry.opName.str()
          << " restates its default";
    }
  }
}

TEST_F(PresetsTest, TorchKeyOps) {
  Categories torch = classify("torch");
  EXPECT_EQ(torch.lookup("linalg.matmul"), Allow);
  EXPECT_EQ(torch.lookup("linalg.conv_2d_nchw_fchw"), Allow);
  EXPECT_EQ(torch.lookup("linalg.dot"), Allow);
  EXPECT_EQ(torch.lookup("math.exp"), Deny);
  EXPECT_EQ(torch.lookup("math.log"), Deny);
  EXPECT_EQ(torch.lookup("math.rsqrt"), Deny);
  EXPECT_EQ(torch.lookup("math.powf"), Deny);
  EXPECT_EQ(torch.lookup("linalg.reciprocal"), Deny);
  EXPECT_EQ(torch.lookup("linalg.softmax"), Deny);
  EXPECT_EQ(torch.lookup("arith.addf"), Infer);
  EXPECT_EQ(torch.lookup("arith.maximumf"), Infer);
  EXPECT_EQ(torch.lookup("math.tanh"), Infer);
  EXPECT_EQ(torch.lookup("math.atan2"), Infer);
  EXPECT_EQ(torch.lookup("tensor.scatter"), Infer);
  EXPECT_EQ(torch.lookup("linalg.pooling_nhwc_max"), Infer);
  EXPECT_EQ(torch.lookup("tensor.expand_shape"), Clear);
  EXPECT_EQ(torch.lookup("linalg.transpose"), Clear);
  EXPECT_EQ(torch.lookup("math.cbrt"), InNoList);
  const PresetInfo &info = *lookupPreset("torch");
  EXPECT_FALSE(info.unknownOps);
  EXPECT_EQ(Policy::fromPreset(info).lookup("math.exp")->origin,
            "preset torch: exp (autocast fp32 list)");
}

// Where grappler's lists differ from autocast's, tf follows grappler; an op
// grappler lists nowhere is in no list.
TEST_F(PresetsTest, TfKeyOps) {
  Categories tf = classify("tf");
  EXPECT_EQ(tf.lookup("linalg.matmul"), Allow);
  EXPECT_EQ(tf.lookup("math.exp"), Deny);
  EXPECT_EQ(tf.lookup("math.powf"), Deny);
  EXPECT_EQ(tf.lookup("math.log"), Infer);
  EXPECT_EQ(tf.lookup("linalg.softmax"), Infer);
  EXPECT_EQ(tf.lookup("linalg.reciprocal"), Infer);
  EXPECT_EQ(tf.lookup("arith.mulf"), Infer);
  EXPECT_EQ(tf.lookup("linalg.pooling_nhwc_sum"), Infer);
  EXPECT_EQ(tf.lookup("arith.maximumf"), Clear);
  EXPECT_EQ(tf.lookup("linalg.max"), Clear);
  EXPECT_EQ(tf.lookup("linalg.pooling_nhwc_max"), Clear);
  EXPECT_EQ(tf.lookup("tensor.expand_shape"), Clear);
  EXPECT_EQ(tf.lookup("math.rsqrt"), InNoList);
  EXPECT_EQ(tf.lookup("tensor.scatter"), InNoList);
}

TEST_F(PresetsTest, MindSporeKeyOps) {
  Categories ms = classify("mindspore");
  EXPECT_EQ(ms.lookup("linalg.matmul"), Allow);
  EXPECT_EQ(ms.lookup("linalg.conv_2d_nchw_fchw"), Allow);
  EXPECT_EQ(ms.lookup("math.rsqrt"), Deny);
  EXPECT_EQ(ms.lookup("linalg.softmax"), Deny);
  EXPECT_EQ(ms.lookup("linalg.dot"), Infer);
  EXPECT_EQ(ms.lookup("arith.mulf"), Infer);
  EXPECT_EQ(ms.lookup("tensor.expand_shape"), Clear);
  EXPECT_EQ(ms.lookup("math.exp2"), InNoList);
}

// TENSOR_CORES_ONLY: the contractions and convolutions, allow by default;
// every other op is in no list, but ops whose bodies only move data.
TEST_F(PresetsTest, TensorCoresOnlyIsTheAllowDefaults) {
  const PresetInfo &info = *lookupPreset("tensor-cores-only");
  EXPECT_TRUE(info.entries.empty());
  EXPECT_EQ(info.defaultCategories, getCategoryBit(Allow));
  for (const UnmappedEntry &entry : info.unmapped)
    EXPECT_EQ(entry.category, Allow) << entry.source.str();
  Categories tco = classify("tensor-cores-only");
  EXPECT_EQ(tco.lookup("linalg.matmul"), Allow);
  EXPECT_EQ(tco.lookup("linalg.dot"), Allow);
  EXPECT_EQ(tco.lookup("linalg.pooling_nhwc_max"), Allow);
  EXPECT_EQ(tco.lookup("math.exp"), InNoList);
  EXPECT_EQ(tco.lookup("arith.addf"), InNoList);
  EXPECT_EQ(tco.lookup("linalg.max"), InNoList);
  EXPECT_EQ(tco.lookup("tensor.expand_shape"), InNoList);
  EXPECT_EQ(tco.lookup("linalg.transpose"), Clear);
}

// O1: AMP_WHITE_LIST (matmul, convolutions, ReLU's maximum) is low, data
// movement clear, every other op in no list and deny.
TEST_F(PresetsTest, MindSporeO1IsTheWhiteList) {
  const PresetInfo &info = *lookupPreset("mindspore-o1");
  EXPECT_EQ(info.unknownOps, UnknownOpMode::Deny);
  for (const PresetEntry &entry : info.entries)
    EXPECT_NE(entry.category, Deny) << entry.opName.str();
  Categories o1 = classify("mindspore-o1");
  EXPECT_EQ(o1.lookup("linalg.matmul"), Allow);
  EXPECT_EQ(o1.lookup("linalg.conv_2d_nchw_fchw"), Allow);
  EXPECT_EQ(o1.lookup("linalg.dot"), Allow);
  EXPECT_EQ(o1.lookup("arith.maximumf"), Allow);
  EXPECT_EQ(o1.lookup("linalg.max"), Allow);
  EXPECT_EQ(o1.lookup("tensor.expand_shape"), Clear);
  EXPECT_EQ(o1.lookup("arith.addf"), InNoList);
  EXPECT_EQ(o1.lookup("math.exp"), InNoList);
}

// O2: the norms' statistics (AMP_BLACK_LIST) and the auto_blacklist are
// deny, data movement clear, every other op in no list and allow.
TEST_F(PresetsTest, MindSporeO2IsTheBlackListAndTheUnsafeOps) {
  const PresetInfo &info = *lookupPreset("mindspore-o2");
  EXPECT_EQ(info.unknownOps, UnknownOpMode::Allow);
  EXPECT_EQ(Policy::fromPreset(info).lookup("math.rsqrt")->origin,
            "preset mindspore-o2: BatchNorm1d, BatchNorm2d, BatchNorm3d, "
            "LayerNorm: 1 / sqrt(variance + eps) of their statistics "
            "(AMP_BLACK_LIST)");
  for (const PresetEntry &entry : info.entries)
    EXPECT_EQ(entry.category, Deny) << entry.opName.str();
  Categories ms = classify("mindspore");
  Categories o2 = classify("mindspore-o2");
  for (const auto &[name, category] : ms)
    if (category == Deny || category == Clear)
      EXPECT_EQ(o2.lookup(name), category) << name.str();
  EXPECT_EQ(o2.lookup("math.sqrt"), Deny);
  EXPECT_EQ(o2.lookup("linalg.sqrt"), Deny);
  EXPECT_EQ(o2.lookup("linalg.matmul"), Allow);
  EXPECT_EQ(o2.lookup("arith.addf"), InNoList);
}

// O3: only data movement is clear; every other op is allow.
TEST_F(PresetsTest, MindSporeO3TakesOnlyDataMovement) {
  const PresetInfo &info = *lookupPreset("mindspore-o3");
  EXPECT_EQ(info.unknownOps, UnknownOpMode::Allow);
  EXPECT_TRUE(info.entries.empty());
  EXPECT_TRUE(info.unmapped.empty());
  Categories o3 = classify("mindspore-o3");
  EXPECT_EQ(o3.lookup("linalg.matmul"), Allow);
  EXPECT_EQ(o3.lookup("tensor.expand_shape"), Clear);
  EXPECT_EQ(o3.lookup("math.exp"), InNoList);
  EXPECT_EQ(o3.lookup("arith.addf"), InNoList);
}

//===----------------------------------------------------------------------===//
// docs/Presets.md
//===----------------------------------------------------------------------===//

constexpr StringRef kBegin =
    "<!-- BEGIN GENERATED by printPresetTableMarkdown -->\n";
constexpr StringRef kEnd = "<!-- END GENERATED -->";

// The tables in docs/Presets.md are the data's. To regenerate them:
//   AMP_UPDATE_DOCS=1 build/unittests/AmpAnalysisTests \
//       --gtest_filter=PresetsDoc.*
TEST(PresetsDoc, TablesMatchTheData) {
  std::string path = AMP_SOURCE_DIR "/docs/Presets.md";
  // Volatile: not mapped, so that rewriting the file below cannot empty the
  // text being copied into it.
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true,
                                            /*RequiresNullTerminator=*/true,
                                            /*IsVolatile=*/true);
  ASSERT_TRUE(static_cast<bool>(buffer)) << "cannot read " << path;
  StringRef doc = (*buffer)->getBuffer();
  size_t begin = doc.find(kBegin);
  size_t end = doc.find(kEnd);
  ASSERT_NE(begin, StringRef::npos) << path << " lacks " << kBegin.str();
  ASSERT_NE(end, StringRef::npos) << path << " lacks " << kEnd.str();
  begin += kBegin.size();
  ASSERT_LE(begin, end);

  std::string generated;
  llvm::raw_string_ostream os(generated);
  printPresetTableMarkdown(os);

  if (std::getenv("AMP_UPDATE_DOCS")) {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec);
    ASSERT_FALSE(ec) << ec.message();
    out << doc.take_front(begin) << generated << doc.drop_front(end);
    return;
  }
  // Report the first line that differs rather than both tables.
  llvm::SmallVector<StringRef> expected, actual;
  doc.slice(begin, end).split(actual, '\n');
  StringRef(generated).split(expected, '\n');
  for (size_t i = 0, e = std::max(expected.size(), actual.size()); i < e; ++i) {
    StringRef want = i < expected.size() ? expected[i] : "<end>";
    StringRef have = i < actual.size() ? actual[i] : "<end>";
    if (want != have) {
      ADD_FAILURE() << path << " is stale at table line " << i + 1
                    << ":\n  doc:  " << have.str() << "\n  data: " << want.str()
                    << "\nregenerate it with AMP_UPDATE_DOCS=1 "
                       "build/unittests/AmpAnalysisTests "
                       "--gtest_filter=PresetsDoc.*";
      return;
    }
  }
}

} // namespace
