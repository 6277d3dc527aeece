//===- UpstreamPrecisionModelsTest.cpp - PrecisionOpInterface upstream ----===//

#include "PrecisionTestContext.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::amp;

namespace {

class UpstreamPrecisionModelsTest : public ::testing::Test {
protected:
  void SetUp() override {
    registerPrecisionTestDialects(context);
    context.loadAllAvailableDialects();
  }

  /// The first op named `name` in `module`.
  static Operation *find(ModuleOp module, StringRef name) {
    Operation *found = nullptr;
    module.walk([&](Operation *op) {
      if (!found && op->getName().getStringRef() == name)
        found = op;
    });
    return found;
  }

  MLIRContext context;
};

// Every op of the table is a registered op that answers with its entry.
TEST_F(UpstreamPrecisionModelsTest, TableOpsAnswerWithTheirEntry) {
  ASSERT_FALSE(getUpstreamPrecisionDefaults().empty());
  OpBuilder builder(&context);
  for (const UpstreamPrecisionDefault &entry : getUpstreamPrecisionDefaults()) {
    std::optional<RegisteredOperationName> name =
        RegisteredOperationName::lookup(entry.opName, &context);
    ASSERT_TRUE(name) << entry.opName.str();
    ASSERT_TRUE(name->hasInterface<PrecisionOpInterface>())
        << entry.opName.str();
    EXPECT_EQ(lookupUpstreamPrecisionDefault(entry.opName), &entry);
    // The default does not depend on operands: an empty op of that name
    // answers too.
    OperationState state(builder.getUnknownLoc(), *name);
    Operation *op = Operation::create(state);
    std::optional<PrecisionDefault> byDefault =
        cast<PrecisionOpInterface>(op).getPrecisionDefault();
    op->destroy();
    ASSERT_TRUE(byDefault) << entry.opName.str();
    EXPECT_EQ(byDefault->category, entry.category) << entry.opName.str();
    EXPECT_EQ(byDefault->reason, entry.reason) << entry.opName.str();
  }
  EXPECT_EQ(lookupUpstreamPrecisionDefault("math.cbrt"), nullptr);
}

// linalg's structured ops: contractions and convolutions allow, other ops
// by their body, the inits of reductions accumulating.
TEST_F(UpstreamPrecisionModelsTest, StructuredOpsByStructure) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %v: tensor<4xf32>) {
      %mm = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                          outs(%b : tensor<4x4xf32>) -> tensor<4x4xf32>
      %add = linalg.add ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                        outs(%b : tensor<4x4xf32>) -> tensor<4x4xf32>
      %sum = linalg.reduce ins(%a : tensor<4x4xf32>) outs(%v : tensor<4xf32>)
                           dimensions = [1]
        (%x: f32, %acc: f32) {
          %0 = arith.addf %x, %acc : f32
          linalg.yield %0 : f32
        }
      return
    }
  )mlir",
                                                             &context);
  ASSERT_TRUE(module);
  auto matmul = cast<PrecisionOpInterface>(find(*module, "linalg.matmul"));
  std::optional<PrecisionDefault> byDefault = matmul.getPrecisionDefault();
  ASSERT_TRUE(byDefault);
  EXPECT_EQ(byDefault->category, OpCategory::Allow);
  EXPECT_EQ(byDefault->reason, "a linalg contraction");
  EXPECT_FALSE(matmul.isAccumulator(matmul->getOpOperand(0)));
  EXPECT_TRUE(matmul.isAccumulator(matmul->getOpOperand(2)));

  auto add = cast<PrecisionOpInterface>(find(*module, "linalg.add"));
  EXPECT_FALSE(add.getPrecisionDefault());
  ASSERT_TRUE(add.getPrecisionBody());
  EXPECT_EQ(add.getPrecisionBody()->front().getName().getStringRef(),
            "arith.addf");
  EXPECT_FALSE(add.isAccumulator(add->getOpOperand(2)));

  auto reduce = cast<PrecisionOpInterface>(find(*module, "linalg.reduce"));
  EXPECT_FALSE(reduce.getPrecisionDefault());
  EXPECT_TRUE(reduce.isAccumulator(reduce->getOpOperand(1)));
}

} // namespace
