//===- StepSignatureTest.cpp - The step signature model -------------------===//

#include "amp/Step/StepSignature.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::amp;

namespace {

class StepSignatureTest : public ::testing::Test {
protected:
  StepSignatureTest() {
    context.loadDialect<AmpDialect, arith::ArithDialect, func::FuncDialect,
                        tensor::TensorDialect>();
  }

  /// Parses `source` and returns the only function's signature, or the first
  /// diagnostic in `error`.
  FailureOr<StepSignature> read(llvm::StringRef source) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (error.empty())
        error = diag.str();
      return success();
    });
    module = parseSourceString<ModuleOp>(source, &context);
    if (!module)
      return failure();
    FailureOr<func::FuncOp> step = findStepFunction(*module, "");
    if (failed(step))
      return failure();
    return readStepSignature(*step);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string error;
};

// x is data, w and b parameters (read by the forward), m optimizer state
// (read only in the update) with its own initializer; results come in another
// order than the arguments, and the loss is result 0.
constexpr llvm::StringLiteral kMomentumStep = R"mlir(
func.func @step(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>,
                %m: tensor<3x4xf32> {amp.init = "ones"}, %b: tensor<4xf32>)
    -> (tensor<f32>, tensor<4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %l = arith.constant dense<1.0> : tensor<f32>
  %s = amp.seed %l : tensor<f32>
  %g = arith.mulf %w, %w : tensor<3x4xf32>
  %gb = arith.addf %b, %b : tensor<4xf32>
  %new:3 = amp.update grads(%g, %gb : tensor<3x4xf32>, tensor<4xf32>)
      state(%w, %m, %b : tensor<3x4xf32>, tensor<3x4xf32>, tensor<4xf32>) {
  ^bb0(%dw: tensor<3x4xf32>, %db: tensor<4xf32>, %w0: tensor<3x4xf32>,
       %m0: tensor<3x4xf32>, %b0: tensor<4xf32>):
    %m1 = arith.addf %m0, %dw : tensor<3x4xf32>
    %w1 = arith.subf %w0, %m1 : tensor<3x4xf32>
    %b1 = arith.subf %b0, %db : tensor<4xf32>
    amp.yield %w1, %m1, %b1 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<4xf32>
  } : tensor<3x4xf32>, tensor<3x4xf32>, tensor<4xf32>
  return %l, %new#2, %new#0, %new#1
      : tensor<f32>, tensor<4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
)mlir";

TEST_F(StepSignatureTest, ReadsRolesFromTheIR) {
  FailureOr<StepSignature> sig = read(kMomentumStep);
  ASSERT_TRUE(succeeded(sig)) << error;
  EXPECT_EQ(sig->functionName, "step");
  EXPECT_EQ(sig->lossResult, 0u);
  ASSERT_EQ(sig->arguments.size(), 4u);
  EXPECT_EQ(sig->arguments[0].role, ArgumentRole::Data);
  EXPECT_EQ(sig->arguments[1].role, ArgumentRole::Parameter);
  EXPECT_EQ(sig->arguments[1].nextResult, 2u);
  EXPECT_EQ(sig->arguments[1].init.kind, Initializer::Kind::Glorot);
  EXPECT_EQ(sig->arguments[2].role, ArgumentRole::OptimizerState);
  EXPECT_EQ(sig->arguments[2].nextResult, 3u);
  EXPECT_EQ(sig->arguments[2].init.kind, Initializer::Kind::Ones);
  EXPECT_EQ(sig->arguments[3].role, ArgumentRole::Parameter);
  EXPECT_EQ(sig->arguments[3].nextResult, 1u);
  EXPECT_EQ(sig->arguments[3].init.kind, Initializer::Kind::Zeros);
  EXPECT_EQ(sig->getArguments(ArgumentRole::Parameter),
            llvm::SmallVector<unsigned>({1, 3}));
}

TEST_F(StepSignatureTest, ReadsScalerStateAfterThePipeline) {
  FailureOr<StepSignature> sig = read(kMomentumStep);
  ASSERT_TRUE(succeeded(sig)) << error;
  // The signature the pipeline gives in dynamic mode.
  OwningOpRef<ModuleOp> transformed = parseSourceString<ModuleOp>(R"mlir(
func.func @step(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>,
                %m: tensor<3x4xf32>, %b: tensor<4xf32>,
                %s: tensor<f32> {amp.state = "scale"},
                %t: tensor<i32> {amp.state = "growth_tracker"})
    -> (tensor<f32>, tensor<4xf32>, tensor<3x4xf32>, tensor<3x4xf32>,
        tensor<f32> {amp.state = "scale"},
        tensor<i32> {amp.state = "growth_tracker"},
        tensor<i1> {amp.state = "found_inf"}) {
  %f = arith.constant dense<false> : tensor<i1>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %l, %b, %w, %m, %s, %t, %f : tensor<f32>, tensor<4xf32>,
      tensor<3x4xf32>, tensor<3x4xf32>, tensor<f32>, tensor<i32>, tensor<i1>
}
)mlir",
                                                                 &context);
  ASSERT_TRUE(transformed);
  auto step = cast<func::FuncOp>(transformed->getBody()->front());
  ASSERT_TRUE(succeeded(addScalerState(*sig, step)));
  EXPECT_EQ(sig->getScalerArgument("scale"), 4u);
  EXPECT_EQ(sig->arguments[4].nextResult, 4u);
  EXPECT_EQ(sig->getScalerArgument("growth_tracker"), 5u);
  EXPECT_EQ(sig->arguments[5].nextResult, 5u);
  EXPECT_FALSE(sig->getScalerArgument("hysteresis"));
  EXPECT_EQ(sig->foundInfResult, 6u);
  EXPECT_EQ(sig->numResults, 7u);
}

TEST_F(StepSignatureTest, RejectsAStepWithoutLoss) {
  EXPECT_TRUE(failed(read(R"mlir(
func.func @step(%w: tensor<4xf32>) -> tensor<4xf32> {
  %n = amp.update grads(%w : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %n : tensor<4xf32>
}
)mlir")));
  EXPECT_NE(error.find("has no 'amp.seed'"), std::string::npos) << error;
}

TEST_F(StepSignatureTest, RejectsDynamicState) {
  EXPECT_TRUE(failed(read(R"mlir(
func.func @step(%w: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %s = amp.seed %w : tensor<?xf32>
  %n = amp.update grads(%s : tensor<?xf32>) state(%w : tensor<?xf32>) {
  ^bb0(%g: tensor<?xf32>, %w0: tensor<?xf32>):
    amp.yield %w0 : tensor<?xf32>
  } : tensor<?xf32>
  return %w, %n : tensor<?xf32>, tensor<?xf32>
}
)mlir")));
  EXPECT_NE(error.find("argument #0 is carried state; a runner needs a "
                       "static shape"),
            std::string::npos)
      << error;
}

// A buffer (the result named like %mean, computed outside the update), names
// from amp.name and a dynamic batch.
constexpr llvm::StringLiteral kBufferStep = R"mlir(
func.func @step(%w: tensor<4xf32> {amp.name = "w"},
                %mean: tensor<4xf32> {amp.name = "bn.running_mean", amp.init = "ones"},
                %x: tensor<?x4xf32> {amp.name = "x"}, %y: tensor<?xf32>)
    -> (tensor<4xf32> {amp.name = "bn.running_mean"}, tensor<f32>,
        tensor<4xf32> {amp.name = "w"}) {
  %l = arith.constant dense<1.0> : tensor<f32>
  %s = amp.seed %l : tensor<f32>
  %m = arith.addf %mean, %w : tensor<4xf32>
  %n = amp.update grads(%w : tensor<4xf32>) state(%w : tensor<4xf32>) {
  ^bb0(%g: tensor<4xf32>, %w0: tensor<4xf32>):
    amp.yield %w0 : tensor<4xf32>
  } : tensor<4xf32>
  return %m, %l, %n : tensor<4xf32>, tensor<f32>, tensor<4xf32>
}
)mlir";

TEST_F(StepSignatureTest, ReadsBuffersNamesAndADynamicBatch) {
  FailureOr<StepSignature> sig = read(kBufferStep);
  ASSERT_TRUE(succeeded(sig)) << error;
  EXPECT_EQ(sig->arguments[0].role, ArgumentRole::Parameter);
  EXPECT_EQ(sig->arguments[0].name, "w");
  EXPECT_EQ(sig->arguments[0].nextResult, 2u);
  EXPECT_EQ(sig->arguments[1].role, ArgumentRole::Buffer);
  EXPECT_EQ(sig->arguments[1].name, "bn.running_mean");
  EXPECT_EQ(sig->arguments[1].nextResult, 0u);
  EXPECT_EQ(sig->arguments[1].init.kind, Initializer::Kind::Ones);
  EXPECT_EQ(sig->arguments[2].role, ArgumentRole::Data);
  EXPECT_EQ(sig->arguments[3].name, "arg3");
  EXPECT_TRUE(sig->dynamicBatch);
  EXPECT_EQ(sig->lossResult, 1u);
  EXPECT_EQ(sig->getModelArguments(), llvm::SmallVector<unsigned>({0, 1}));
}

TEST_F(StepSignatureTest, RejectsTwoArgumentsWithOneName) {
  std::string source = kBufferStep.str();
  source.replace(source.find("\"x\""), 3, "\"w\"");
  EXPECT_TRUE(failed(read(source)));
  EXPECT_NE(error.find("arguments #0 and #2 are both named 'w'"),
            std::string::npos)
      << error;
}

TEST_F(StepSignatureTest, RejectsANamedResultThatIsNotTheUpdatesResult) {
  std::string source = kBufferStep.str();
  // The forward's value under the name of the updated parameter.
  llvm::StringRef buffer = "{amp.name = \"bn.running_mean\"}, tensor<f32>";
  source.replace(source.find(buffer.str()), buffer.size(),
                 "{amp.name = \"w\"}, tensor<f32>");
  EXPECT_TRUE(failed(read(source)));
  EXPECT_NE(error.find("result #0 is named 'w' like argument #0, which an "
                       "'amp.update' replaces"),
            std::string::npos)
      << error;
}

TEST_F(StepSignatureTest, RejectsAnUpdateResultUnderABuffersName) {
  std::string source = kBufferStep.str();
  source.replace(source.find("%m, %l, %n"), 10, "%n, %l, %m");
  EXPECT_TRUE(failed(read(source)));
  EXPECT_NE(error.find("result #0 is named 'bn.running_mean' like argument "
                       "#1 but is the new value of another 'amp.update' "
                       "state operand"),
            std::string::npos)
      << error;
}

TEST_F(StepSignatureTest, RejectsDataOfStaticAndDynamicBatches) {
  std::string source = kBufferStep.str();
  source.replace(source.find("tensor<?xf32>"), 13, "tensor<3xf32>");
  EXPECT_TRUE(failed(read(source)));
  EXPECT_NE(error.find("argument #3 has a static batch dimension but data "
                       "argument #2 a dynamic one"),
            std::string::npos)
      << error;
}

TEST_F(StepSignatureTest, RejectsDynamicDimensionsBeyondTheBatch) {
  std::string source = kBufferStep.str();
  source.replace(source.find("tensor<?x4xf32>"), 15, "tensor<?x?xf32>");
  EXPECT_TRUE(failed(read(source)));
  EXPECT_NE(error.find("the only dimension that may be dynamic"),
            std::string::npos)
      << error;
}

TEST_F(StepSignatureTest, RejectsAModuleWithoutUpdate) {
  EXPECT_TRUE(failed(read("func.func @f() { return }")));
  EXPECT_NE(error.find("no function contains an 'amp.update'"),
            std::string::npos)
      << error;
}

} // namespace
