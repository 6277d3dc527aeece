//===- AmpAttributesTest.cpp - Parsing of amp.* attribute values ----------===//

#include "amp/Dialect/Amp/IR/AmpAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::amp;

TEST(Precision, ParsesTheThreeNamesAndRoundTrips) {
  for (Precision p : {Precision::F32, Precision::F16, Precision::BF16})
    EXPECT_EQ(symbolizePrecision(stringifyPrecision(p)), p);
  EXPECT_FALSE(symbolizePrecision("fp16"));
  EXPECT_FALSE(symbolizePrecision("F16"));
  EXPECT_FALSE(symbolizePrecision(""));
}

TEST(Precision, MapsToFloatTypes) {
  MLIRContext context;
  EXPECT_TRUE(getFloatType(&context, Precision::F32).isF32());
  EXPECT_TRUE(getFloatType(&context, Precision::F16).isF16());
  EXPECT_TRUE(getFloatType(&context, Precision::BF16).isBF16());
  EXPECT_FALSE(isLowPrecision(Precision::F32));
  EXPECT_TRUE(isLowPrecision(Precision::BF16));
}

TEST(Initializer, ParsesNamedInitializers) {
  EXPECT_EQ(parseInitializer("zeros")->kind, Initializer::Kind::Zeros);
  EXPECT_EQ(parseInitializer("ones")->kind, Initializer::Kind::Ones);
  EXPECT_EQ(parseInitializer("glorot")->kind, Initializer::Kind::Glorot);
}

TEST(Initializer, ParsesNormalWithPositiveDeviation) {
  std::optional<Initializer> init = parseInitializer("normal:0.02");
  ASSERT_TRUE(init);
  EXPECT_EQ(init->kind, Initializer::Kind::Normal);
  EXPECT_DOUBLE_EQ(init->stddev, 0.02);
}

TEST(Initializer, RejectsMalformedText) {
  for (const char *text : {"normal", "normal:", "normal:-1", "normal:0",
                           "normal:abc", "normal:inf", "normal:nan", "Zeros",
                           "uniform", ""})
    EXPECT_FALSE(parseInitializer(text)) << text;
}
