//===- PrecisionReportTest.cpp - Byte accounting of the cast report -------===//

#include "amp/Analysis/PrecisionReport.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::amp;

namespace {

TEST(ConversionStatsTest, CountsDirectionElementsAndBytes) {
  MLIRContext context;
  Builder b(&context);
  auto f32 = RankedTensorType::get({64, 128}, b.getF32Type());
  auto f16 = RankedTensorType::get({64, 128}, b.getF16Type());
  ConversionStats stats;
  stats.addCast(f32, f16);
  stats.addCast(f16, f32);
  EXPECT_EQ(stats.truncf, 1u);
  EXPECT_EQ(stats.extf, 1u);
  EXPECT_EQ(stats.getNumCasts(), 2u);
  EXPECT_EQ(stats.elements, 2u * 64 * 128);
  // Each cast reads 4 bytes and writes 2 per element, or the reverse.
  EXPECT_EQ(stats.bytes, 2u * 64 * 128 * 6);
  EXPECT_EQ(stats.dynamicCasts, 0u);
}

TEST(ConversionStatsTest, Bf16AndScalars) {
  MLIRContext context;
  Builder b(&context);
  auto f32 = RankedTensorType::get({}, b.getF32Type());
  auto bf16 = RankedTensorType::get({}, b.getBF16Type());
  ConversionStats stats;
  stats.addCast(f32, bf16);
  EXPECT_EQ(stats.elements, 1u);
  EXPECT_EQ(stats.bytes, 6u);
}

TEST(ConversionStatsTest, DynamicShapesAreCountedApart) {
  MLIRContext context;
  Builder b(&context);
  auto f32 = RankedTensorType::get({ShapedType::kDynamic, 8}, b.getF32Type());
  auto f16 = RankedTensorType::get({ShapedType::kDynamic, 8}, b.getF16Type());
  ConversionStats stats;
  stats.addCast(f32, f16);
  EXPECT_EQ(stats.truncf, 1u);
  EXPECT_EQ(stats.dynamicCasts, 1u);
  EXPECT_EQ(stats.elements, 0u);
  EXPECT_EQ(stats.bytes, 0u);
}

} // namespace
