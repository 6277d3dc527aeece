//===- ErrorTest.cpp - Status reporting and the sticky error --------------===//

#include "Error.h"

#include "gtest/gtest.h"

using namespace amp::runtime;

namespace {

class ErrorTest : public ::testing::Test {
protected:
  void SetUp() override { ampRuntimeClearError(); }
  void TearDown() override { ampRuntimeClearError(); }
};

TEST_F(ErrorTest, NamesTheCalledFunction) {
  EXPECT_EQ(calledFunction("cu->cuMemAlloc(&pointer, sizeBytes)"),
            "cuMemAlloc");
  EXPECT_EQ(calledFunction("cu.cuInit(0)"), "cuInit");
  EXPECT_EQ(calledFunction("cublasLtCreate(&device->cublasLt)"),
            "cublasLtCreate");
  EXPECT_EQ(calledFunction("::cublasLtMatmul(a, b)"), "cublasLtMatmul");
}

TEST_F(ErrorTest, FormatsCallStatusAndEntryPoint) {
  EXPECT_EQ(formatCallError("cu->cuMemAlloc(&p, n)", "mgpuMemAlloc",
                            "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"),
            "cuMemAlloc failed in mgpuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out "
            "of memory)");
}

TEST_F(ErrorTest, CublasStatusIsNamedAndSticky) {
  setEntryPoint("ampMatmul");
  EXPECT_TRUE(AMP_CHECK(CUBLAS_STATUS_SUCCESS));
  EXPECT_FALSE(hasPendingError());
  EXPECT_FALSE(checkStatus(CUBLAS_STATUS_NOT_SUPPORTED,
                           "cublasLtMatmul(handle, desc, ...)"));
  EXPECT_TRUE(hasPendingError());
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_CUBLAS);
  std::string message = ampRuntimeGetLastErrorMessage();
  EXPECT_EQ(message.rfind("cublasLtMatmul failed in ampMatmul: "
                          "CUBLAS_STATUS_NOT_SUPPORTED (",
                          0),
            0u)
      << message;
}

TEST_F(ErrorTest, FirstErrorWinsUntilCleared) {
  recordError(AMP_RUNTIME_ERROR_INVALID_ARGUMENT, "first");
  recordError(AMP_RUNTIME_ERROR_CUDA, "second");
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(), "first");
  ampRuntimeClearError();
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_SUCCESS);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(), "");
  recordError(AMP_RUNTIME_ERROR_CUDA, "third");
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(), "third");
}

// Without a loaded driver there is no cuGetErrorName; the number is shown.
TEST_F(ErrorTest, CudaStatusWithoutDriverShowsNumber) {
  ASSERT_EQ(ampRuntimeLoadDriver("/nonexistent/libcuda.so.1"),
            AMP_RUNTIME_ERROR_NO_DEVICE);
  ampRuntimeClearError();
  setEntryPoint("mgpuMemcpy");
  EXPECT_FALSE(checkStatus(CUDA_ERROR_ILLEGAL_ADDRESS,
                           "cu->cuMemcpyAsync(dst, src, n, stream)"));
  EXPECT_EQ(ampRuntimeGetLastError(), AMP_RUNTIME_ERROR_CUDA);
  EXPECT_STREQ(ampRuntimeGetLastErrorMessage(),
               "cuMemcpyAsync failed in mgpuMemcpy: CUresult 700 (no "
               "description)");
}

} // namespace
